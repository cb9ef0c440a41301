// Semantics beyond one operation: concurrent accumulates and fetch_and_op
// to one location are exact, exclusive locks exclude and shared locks run
// together, PSCW with overlapping groups, large streamed transfers with
// derived types, puts and gets on the emulation's short path mixed with
// the general one, accumulate ordering, every predefined op, attributes.
#include <chrono>
#include <numeric>
#include <thread>

#include "tests/rma/rma_harness.hpp"

namespace {

using namespace rma_test;
using adi3::LockType;
using adi3::coll::Op;
using adi3::coll::OpKind;
using core_test::await;
using core_test::notify;

class RmaSemantics : public core_test::CoreTest {};

adi3::Comm ctl(Device& dev) { return core_test::ctl_comm(dev, 0x6300); }

// Every rank adds 1 a hundred times with accumulate and with fetch_and_op
// to rank 0's elements 0 and 1: the totals are exact, and the values the
// fetches saw are all different (each increment was atomic).
void concurrent_atomics(Device& dev) {
  const int n = dev.size();
  constexpr int kIters = 100;
  void* base = nullptr;
  Window* win = nullptr;
  int e = Window::allocate(dev, 2 * sizeof(int64_t), sizeof(int64_t), {}, win_comm(dev), &base, &win);
  ASSERT_EQ(e, 0) << why(dev, e);
  auto* mem = static_cast<int64_t*>(base);
  const auto* i64 = dt(adi3::Builtin::kInt64);
  const Op sum(OpKind::Sum);
  ASSERT_EQ(dev.barrier(), 0);
  std::vector<int64_t> seen(kIters);
  ASSERT_EQ(win->lock_all(0), 0);
  const int64_t one = 1;
  for (int i = 0; i < kIters; ++i) {
    ASSERT_EQ(win->accumulate(&one, 1, i64, 0, 0, 1, i64, sum), 0);
    ASSERT_EQ(win->fetch_and_op(&one, &seen[static_cast<std::size_t>(i)], i64, 0, 1, sum), 0);
    if (i % 10 == 9) {
      ASSERT_EQ(win->flush(0), 0);
    }
  }
  ASSERT_EQ(win->unlock_all(), 0);
  ASSERT_EQ(dev.barrier(), 0);
  adi3::Comm c = ctl(dev);
  if (dev.rank() == 0) {
    EXPECT_EQ(mem[0], n * kIters);
    EXPECT_EQ(mem[1], n * kIters);
    std::vector<int64_t> all(seen);
    for (int r = 1; r < n; ++r) {
      std::vector<int64_t> theirs(kIters);
      ASSERT_EQ(dev.recv(theirs.data(), kIters * sizeof(int64_t), adi3::Datatype::byte(), r, 1, c, nullptr), 0);
      all.insert(all.end(), theirs.begin(), theirs.end());
    }
    std::sort(all.begin(), all.end());
    for (std::size_t i = 0; i < all.size(); ++i) ASSERT_EQ(all[i], static_cast<int64_t>(i)) << "fetch " << i;
  } else {
    ASSERT_EQ(dev.send(seen.data(), kIters * sizeof(int64_t), adi3::Datatype::byte(), 0, 1, c), 0);
  }
  ASSERT_EQ(Window::free(&win), 0);
}

TEST_P(RmaSemantics, ConcurrentAtomicsExactNp2) { run(2, concurrent_atomics); }
TEST_P(RmaSemantics, ConcurrentAtomicsExactNp3) { run(3, concurrent_atomics); }
TEST_P(RmaSemantics, ConcurrentAtomicsExactNp4) { run(4, concurrent_atomics); }

// Read-modify-write by get + put under an exclusive lock: exact only if
// the lock excludes.
void exclusive_counter(Device& dev) {
  constexpr int kIters = 30;
  IntWin w(dev, 4, Flavor::Create);
  w.mem[0] = 0;
  ASSERT_EQ(dev.barrier(), 0);
  for (int i = 0; i < kIters; ++i) {
    int v = -1;
    ASSERT_EQ(w.win->lock(LockType::Exclusive, 0, 0), 0);
    ASSERT_EQ(w.win->get(&v, 1, int_t(), 0, 0, 1, int_t()), 0);
    ASSERT_EQ(w.win->flush(0), 0);
    ++v;
    ASSERT_EQ(w.win->put(&v, 1, int_t(), 0, 0, 1, int_t()), 0);
    ASSERT_EQ(w.win->unlock(0), 0);
  }
  ASSERT_EQ(dev.barrier(), 0);
  if (dev.rank() == 0) {
    EXPECT_EQ(w.mem[0], dev.size() * kIters);
  }
}

TEST_P(RmaSemantics, ExclusiveLocksExcludeNp2) { run(2, exclusive_counter); }
TEST_P(RmaSemantics, ExclusiveLocksExcludeNp4) { run(4, exclusive_counter); }

// Rank 0 holds a lock on itself; rank 1 asks for one on rank 0. A shared
// request is granted while rank 0 holds its shared lock (rank 1 answers
// before rank 0 lets go); an exclusive one waits until rank 0 unlocks, and
// then sees what rank 0 stored under its lock.
void shared_and_exclusive(Device& dev) {
  IntWin w(dev, 4, Flavor::Allocate);
  adi3::Comm c = ctl(dev);
  ASSERT_EQ(dev.barrier(), 0);
  if (dev.rank() == 0) {
    ASSERT_EQ(w.win->lock(LockType::Shared, 0, 0), 0);
    notify(dev, c, 1);
    await(dev, c, 1);  // rank 1 got its shared lock and read while we hold ours
    ASSERT_EQ(w.win->unlock(0), 0);

    ASSERT_EQ(w.win->lock(LockType::Exclusive, 0, 0), 0);
    notify(dev, c, 1, 2);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    w.mem[1] = 4242;  // a store under our exclusive lock
    ASSERT_EQ(w.win->unlock(0), 0);
  } else if (dev.rank() == 1) {
    await(dev, c, 0);
    int v = -1;
    ASSERT_EQ(w.win->lock(LockType::Shared, 0, 0), 0);
    ASSERT_EQ(w.win->get(&v, 1, int_t(), 0, 0, 1, int_t()), 0);
    ASSERT_EQ(w.win->flush(0), 0);
    EXPECT_EQ(v, 0);
    notify(dev, c, 0);
    ASSERT_EQ(w.win->unlock(0), 0);

    await(dev, c, 0, 2);
    ASSERT_EQ(w.win->lock(LockType::Exclusive, 0, 0), 0);
    ASSERT_EQ(w.win->get(&v, 1, int_t(), 0, 1, 1, int_t()), 0);
    ASSERT_EQ(w.win->unlock(0), 0);
    EXPECT_EQ(v, 4242) << "the exclusive lock was granted while rank 0 held it";
  }
  ASSERT_EQ(dev.barrier(), 0);
}

TEST_P(RmaSemantics, SharedConcurrentExclusiveExcludesNp2) { run(2, shared_and_exclusive); }
TEST_P(RmaSemantics, SharedConcurrentExclusiveExcludesNp3) { run(3, shared_and_exclusive); }

// PSCW where every rank exposes to and accesses its two neighbours (the
// groups overlap), twice in a row with no barrier between epochs.
void pscw_overlap(Device& dev) {
  const int n = dev.size(), me = dev.rank();
  IntWin w(dev, static_cast<std::size_t>(n));
  std::vector<int> group;
  for (int d : {-1, 1}) {
    int r = (me + d + n) % n;
    if (r != me && std::find(group.begin(), group.end(), r) == group.end()) group.push_back(r);
  }
  ASSERT_EQ(dev.barrier(), 0);
  for (int round = 0; round < 2; ++round) {
    ASSERT_EQ(w.win->post(group, 0), 0);
    ASSERT_EQ(w.win->start(group, 0), 0);
    int v = 1000 * round + me;
    for (int r : group) ASSERT_EQ(w.win->put(&v, 1, int_t(), r, me, 1, int_t()), 0);
    ASSERT_EQ(w.win->complete(), 0);
    ASSERT_EQ(w.win->wait(), 0);
    for (int r : group) EXPECT_EQ(w.mem[r], 1000 * round + r) << "round " << round << " from rank " << r;
  }
  ASSERT_EQ(dev.barrier(), 0);
}

TEST_P(RmaSemantics, PscwOverlappingGroupsNp3) { run(3, pscw_overlap); }
TEST_P(RmaSemantics, PscwOverlappingGroupsNp4) { run(4, pscw_overlap); }

// Win_test polls the exposure epoch to its end.
TEST_P(RmaSemantics, PscwTestNp2) {
  run(2, [](Device& dev) {
    IntWin w(dev, 4);
    const int other = 1 - dev.rank();
    std::vector<int> g{other};
    ASSERT_EQ(w.win->post(g, 0), 0);
    ASSERT_EQ(w.win->start(g, 0), 0);
    int v = 77;
    ASSERT_EQ(w.win->put(&v, 1, int_t(), other, 2, 1, int_t()), 0);
    ASSERT_EQ(w.win->complete(), 0);
    bool flag = false;
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!flag && std::chrono::steady_clock::now() < end) {
      ASSERT_EQ(w.win->test(&flag), 0);
      if (!flag) std::this_thread::yield();
    }
    EXPECT_TRUE(flag);
    EXPECT_EQ(w.mem[2], 77);
  });
}

// 1 MiB transfers with a strided target type stream in many packets.
void large(Device& dev) {
  constexpr int kN = 1 << 17;  // ints moved (512 KiB), spread over 1 MiB
  const int n = dev.size(), me = dev.rank(), t = (me + 1) % n, o = (me - 1 + n) % n;
  IntWin w(dev, 2 * kN);
  Type strided(vector_of_ints(kN, 1, 2));
  std::vector<int> src(kN), back(kN, -1);
  std::iota(src.begin(), src.end(), me * 10);
  ASSERT_EQ(dev.barrier(), 0);
  // put under lock, get under fence, accumulate under lock_all
  ASSERT_EQ(w.win->lock(LockType::Exclusive, t, 0), 0);
  ASSERT_EQ(w.win->put(src.data(), kN, int_t(), t, 0, 1, strided), 0);
  ASSERT_EQ(w.win->unlock(t), 0);
  ASSERT_EQ(dev.barrier(), 0);
  for (int i = 0; i < kN; ++i) {
    ASSERT_EQ(w.mem[2 * i], o * 10 + i) << i;
    ASSERT_EQ(w.mem[2 * i + 1], 100 * me + 2 * i + 1) << i;
  }
  ASSERT_EQ(w.win->fence(0), 0);
  ASSERT_EQ(w.win->get(back.data(), kN, int_t(), t, 0, 1, strided), 0);
  ASSERT_EQ(w.win->fence(0), 0);
  for (int i = 0; i < kN; ++i) ASSERT_EQ(back[static_cast<std::size_t>(i)], me * 10 + i) << i;
  ASSERT_EQ(w.win->fence(adi3::kModeNoSucceed), 0);
  ASSERT_EQ(w.win->lock_all(0), 0);
  ASSERT_EQ(w.win->accumulate(src.data(), kN, int_t(), t, 0, 1, strided, Op(OpKind::Sum)), 0);
  ASSERT_EQ(w.win->unlock_all(), 0);
  ASSERT_EQ(dev.barrier(), 0);
  for (int i = 0; i < kN; ++i) ASSERT_EQ(w.mem[2 * i], 2 * (o * 10 + i)) << i;
}

TEST_P(RmaSemantics, LargeStreamedNp2) { run(2, large); }

// Contiguous puts and gets of one predefined type leave at once as one
// packet when nothing waits ahead of them (emul/quick.cpp), the general way
// otherwise: mixed with small puts (held for the flush behind them),
// accumulates, puts of bytes, more gets than the 64 spare reply records and
// a fence epoch whose operations wait for the target's fence, every byte
// lands, every get reads what the epoch before left, and a put or get past
// the window still fails with ERR_RMA_RANGE, changing nothing.
void short_path_mix(Device& dev) {
  constexpr int kBlock = 256;  // ints: 1 KiB
  constexpr int kBlocks = 80;
  constexpr int kN = kBlock * kBlocks;
  const int me = dev.rank(), t = 1 - me;
  IntWin w(dev, kN);
  std::vector<int> src(kN), back(kN, -1);
  for (int i = 0; i < kN; ++i) src[static_cast<std::size_t>(i)] = 1000000 * (me + 1) + i;
  ASSERT_EQ(dev.barrier(), 0);
  ASSERT_EQ(w.win->lock_all(0), 0);
  for (int b = 0; b < kBlocks; ++b) {
    const int at = b * kBlock;
    int* from = src.data() + at;
    switch (b % 4) {
      case 0:
        ASSERT_EQ(w.win->put(from, kBlock, int_t(), t, at, kBlock, int_t()), 0);
        break;
      case 1:  // two small puts, then the rest behind them
        ASSERT_EQ(w.win->put(from, 2, int_t(), t, at, 2, int_t()), 0);
        ASSERT_EQ(w.win->put(from + 2, 2, int_t(), t, at + 2, 2, int_t()), 0);
        ASSERT_EQ(w.win->put(from + 4, kBlock - 4, int_t(), t, at + 4, kBlock - 4, int_t()), 0);
        break;
      case 2:
        ASSERT_EQ(w.win->accumulate(from, kBlock, int_t(), t, at, kBlock, int_t(), Op(OpKind::Replace)), 0);
        break;
      default: {
        const adi3::Datatype* byte = adi3::Datatype::byte();
        const int bytes = kBlock * static_cast<int>(sizeof(int));
        ASSERT_EQ(w.win->put(from, bytes, byte, t, at, bytes, byte), 0);
        break;
      }
    }
    if (b % 16 == 15) {
      ASSERT_EQ(w.win->flush(t), 0);
    }
  }
  ASSERT_EQ(w.win->unlock_all(), 0);
  ASSERT_EQ(dev.barrier(), 0);
  const int other = 1000000 * (t + 1);
  for (int i = 0; i < kN; ++i) ASSERT_EQ(w.mem[i], other + i) << i;
  ASSERT_EQ(dev.barrier(), 0);
  // Every block back in one epoch, one flush: my data, in the target.
  ASSERT_EQ(w.win->lock_all(0), 0);
  for (int b = 0; b < kBlocks; ++b) {
    ASSERT_EQ(w.win->get(back.data() + b * kBlock, kBlock, int_t(), t, b * kBlock, kBlock, int_t()), 0);
  }
  ASSERT_EQ(w.win->flush(t), 0);
  ASSERT_EQ(w.win->unlock_all(), 0);
  for (int i = 0; i < kN; ++i) ASSERT_EQ(back[static_cast<std::size_t>(i)], src[static_cast<std::size_t>(i)]) << i;
  // A fence epoch opened with NOPRECEDE: the operations wait for the
  // target's fence (or find it arrived).
  std::vector<int> fresh(kBlock, 7 + me), old(kBlock, -1);
  ASSERT_EQ(w.win->fence(adi3::kModeNoPrecede), 0);
  ASSERT_EQ(w.win->put(fresh.data(), kBlock, int_t(), t, 0, kBlock, int_t()), 0);
  ASSERT_EQ(w.win->get(old.data(), kBlock, int_t(), t, kBlock, kBlock, int_t()), 0);
  ASSERT_EQ(w.win->fence(adi3::kModeNoSucceed), 0);
  for (int i = 0; i < kBlock; ++i) {
    ASSERT_EQ(w.mem[i], 7 + t) << i;
    ASSERT_EQ(old[static_cast<std::size_t>(i)], src[static_cast<std::size_t>(kBlock + i)]) << i;
  }
  // Past the window's end: refused at the origin, nothing sent.
  ASSERT_EQ(w.win->lock(LockType::Shared, t, 0), 0);
  int e = w.win->put(src.data(), kBlock, int_t(), t, kN - kBlock + 1, kBlock, int_t());
  EXPECT_EQ(adi3::error_class_of(e), adi3::ErrorClass::RmaRange) << why(dev, e);
  e = w.win->get(back.data(), kBlock, int_t(), t, -1, kBlock, int_t());
  EXPECT_EQ(adi3::error_class_of(e), adi3::ErrorClass::RmaRange) << why(dev, e);
  ASSERT_EQ(w.win->unlock(t), 0);
  ASSERT_EQ(dev.barrier(), 0);
  EXPECT_EQ(w.mem[kN - 1], other + kN - 1);
}

TEST_P(RmaSemantics, ShortPathMixNp2) { run(2, short_path_mix); }

// Small contiguous puts and gets of a passive epoch are coalesced into
// batches (emul/batch.cpp): more than one batch holds (it spills), a put of
// bytes between them, an unlock that rides on the last batch; every block
// read back by batched gets; then a batch that only a later progress pass
// sends (flush_local, then the barrier's progress) and a flush: every byte
// lands where it was put.
void batch_spill(Device& dev) {
  constexpr int kPut = 25;  // ints: 100 bytes
  constexpr int kPuts = 400;
  constexpr int kN = kPut * kPuts;
  const int me = dev.rank(), t = 1 - me;
  IntWin w(dev, kN);
  std::vector<int> src(kN);
  for (int i = 0; i < kN; ++i) src[static_cast<std::size_t>(i)] = 3000000 * (me + 1) + i;
  ASSERT_EQ(dev.barrier(), 0);
  ASSERT_EQ(w.win->lock(LockType::Shared, t, 0), 0);
  for (int k = kPuts - 1; k >= 0; --k) {
    int* from = src.data() + k * kPut;
    if (k % 7 == 3) {
      const int bytes = kPut * static_cast<int>(sizeof(int));
      ASSERT_EQ(w.win->put(from, bytes, adi3::Datatype::byte(), t, k * kPut, bytes, adi3::Datatype::byte()), 0);
    } else {
      ASSERT_EQ(w.win->put(from, kPut, int_t(), t, k * kPut, kPut, int_t()), 0);
    }
  }
  ASSERT_EQ(w.win->unlock(t), 0);
  ASSERT_EQ(dev.barrier(), 0);
  const int other = 3000000 * (t + 1);
  for (int i = 0; i < kN; ++i) ASSERT_EQ(w.mem[i], other + i) << i;
  ASSERT_EQ(dev.barrier(), 0);
  // Every block back, batched gets (more than the 64 spare reply records),
  // a put among them to a block already read, one flush.
  std::vector<int> back(kN, -1);
  ASSERT_EQ(w.win->lock_all(0), 0);
  for (int k = 0; k < kPuts; ++k) {
    ASSERT_EQ(w.win->get(back.data() + k * kPut, kPut, int_t(), t, k * kPut, kPut, int_t()), 0);
    if (k == 100) {
      ASSERT_EQ(w.win->put(src.data(), kPut, int_t(), t, 0, kPut, int_t()), 0);
    }
  }
  ASSERT_EQ(w.win->flush(t), 0);
  ASSERT_EQ(w.win->unlock_all(), 0);
  for (int i = 0; i < kN; ++i) ASSERT_EQ(back[static_cast<std::size_t>(i)], src[static_cast<std::size_t>(i)]) << i;
  ASSERT_EQ(dev.barrier(), 0);
  std::vector<int> twice(kPut * 2);
  for (int i = 0; i < kPut * 2; ++i) twice[static_cast<std::size_t>(i)] = -i - me;
  ASSERT_EQ(w.win->lock_all(0), 0);
  ASSERT_EQ(w.win->put(twice.data(), kPut * 2, int_t(), t, 0, kPut * 2, int_t()), 0);
  ASSERT_EQ(w.win->flush_local(t), 0);
  ASSERT_EQ(dev.barrier(), 0);
  ASSERT_EQ(w.win->flush(t), 0);
  ASSERT_EQ(w.win->unlock_all(), 0);
  ASSERT_EQ(dev.barrier(), 0);
  for (int i = 0; i < kPut * 2; ++i) ASSERT_EQ(w.mem[i], -i - t) << i;
  EXPECT_EQ(w.mem[kN - 1], other + kN - 1);
}

TEST_P(RmaSemantics, BatchedPutsNp2) { run(2, batch_spill); }

// Accumulates from one origin to one location apply in order (the default
// accumulate_ordering), and a get_accumulate sees the ones before it.
TEST_P(RmaSemantics, AccumulateOrderingNp2) {
  run(2, [](Device& dev) {
    IntWin w(dev, 4);
    ASSERT_EQ(dev.barrier(), 0);
    if (dev.rank() == 0) {
      ASSERT_EQ(w.win->lock(LockType::Shared, 1, 0), 0);
      for (int i = 0; i < 50; ++i) {
        int five = 5, three = 3, got = -1, zero = 0;
        ASSERT_EQ(w.win->accumulate(&five, 1, int_t(), 1, 0, 1, int_t(), Op(OpKind::Replace)), 0);
        ASSERT_EQ(w.win->accumulate(&three, 1, int_t(), 1, 0, 1, int_t(), Op(OpKind::Sum)), 0);
        ASSERT_EQ(w.win->get_accumulate(&zero, 1, int_t(), &got, 1, int_t(), 1, 0, 1, int_t(), Op(OpKind::NoOp)), 0);
        ASSERT_EQ(w.win->flush(1), 0);
        ASSERT_EQ(got, 8) << "iteration " << i;
      }
      ASSERT_EQ(w.win->unlock(1), 0);
    }
    ASSERT_EQ(dev.barrier(), 0);
  });
}

// Every predefined op through accumulate on its types.
TEST_P(RmaSemantics, EveryPredefinedOpNp2) {
  run(2, [](Device& dev) {
    const int t = 1 - dev.rank();
    void* base = nullptr;
    Window* win = nullptr;
    ASSERT_EQ(Window::allocate(dev, 256, 1, {}, win_comm(dev), &base, &win), 0);
    auto* m = static_cast<unsigned char*>(base);
    struct IntCase {
      OpKind op;
      int a, b, want;  // target a, origin b
    } ints[] = {{OpKind::Max, 3, 9, 9},  {OpKind::Min, 3, 9, 3},  {OpKind::Sum, 3, 9, 12},   {OpKind::Prod, 3, 9, 27},
                {OpKind::Land, 3, 0, 0}, {OpKind::Lor, 0, 9, 1},  {OpKind::Lxor, 3, 9, 0},   {OpKind::Band, 6, 3, 2},
                {OpKind::Bor, 6, 3, 7},  {OpKind::Bxor, 6, 3, 5}, {OpKind::Replace, 3, 9, 9}};
    const int k = static_cast<int>(std::size(ints));
    auto* mi = reinterpret_cast<int*>(m);
    for (int i = 0; i < k; ++i) mi[i] = ints[i].a;
    auto* md = reinterpret_cast<double*>(m + 128);
    md[0] = 1.5;
    struct DI {
      double v;
      int i;
    };
    auto* pair = reinterpret_cast<DI*>(m + 192);
    pair[0] = {2.0, 7};
    pair[1] = {2.0, 7};
    ASSERT_EQ(dev.barrier(), 0);
    ASSERT_EQ(win->fence(0), 0);
    for (int i = 0; i < k; ++i) {
      ASSERT_EQ(win->accumulate(&ints[i].b, 1, int_t(), t, i * 4, 1, int_t(), Op(ints[i].op)), 0) << i;
    }
    const double d = 2.25;
    const auto* dbl = dt(adi3::Builtin::kDouble);
    ASSERT_EQ(win->accumulate(&d, 1, dbl, t, 128, 1, dbl, Op(OpKind::Sum)), 0);
    const DI mx{3.0, 1}, mn{2.0, 3};
    const auto* di = dt(adi3::Builtin::kDoubleInt);
    ASSERT_EQ(win->accumulate(&mx, 1, di, t, 192, 1, di, Op(OpKind::Maxloc)), 0);
    ASSERT_EQ(win->accumulate(&mn, 1, di, t, 192 + 16, 1, di, Op(OpKind::Minloc)), 0);
    ASSERT_EQ(win->fence(0), 0);
    for (int i = 0; i < k; ++i) EXPECT_EQ(mi[i], ints[i].want) << Op(ints[i].op).name();
    EXPECT_EQ(md[0], 3.75);
    EXPECT_EQ(pair[0].v, 3.0);
    EXPECT_EQ(pair[0].i, 1);
    EXPECT_EQ(pair[1].v, 2.0);
    EXPECT_EQ(pair[1].i, 3);  // equal values: the smaller index
    ASSERT_EQ(Window::free(&win), 0);
  });
}

// Attributes and info of the three flavors.
TEST_P(RmaSemantics, AttributesAndInfoNp2) {
  run(2, [](Device& dev) {
    adi3::WinInfo info;
    ASSERT_TRUE(info.set("accumulate_ordering", "rar,waw"));
    ASSERT_TRUE(info.set("same_size", "true"));
    ASSERT_FALSE(info.set("no_locks", "maybe"));
    ASSERT_TRUE(info.set("unknown_key", "x"));
    std::vector<char> mem(40);
    Window* a = nullptr;
    ASSERT_EQ(Window::create(dev, mem.data(), 40, 4, info, win_comm(dev), &a), 0);
    EXPECT_EQ(a->base(), mem.data());
    EXPECT_EQ(a->size(), 40);
    EXPECT_EQ(a->disp_unit(), 4);
    EXPECT_EQ(a->flavor(), adi3::WinFlavor::Create);
    EXPECT_EQ(a->model(), adi3::WinModel::Unified);
    EXPECT_EQ(a->comm().size, dev.size());
    auto pairs = a->info().pairs();
    auto get = [&](const std::string& k) {
      for (auto& [key, v] : pairs) {
        if (key == k) return v;
      }
      return std::string("?");
    };
    EXPECT_EQ(get("accumulate_ordering"), "rar,waw");
    EXPECT_EQ(get("same_size"), "true");
    EXPECT_EQ(get("no_locks"), "false");
    ASSERT_EQ(Window::free(&a), 0);
    EXPECT_EQ(a, nullptr);
    Window* d = nullptr;
    ASSERT_EQ(Window::create_dynamic(dev, {}, win_comm(dev), &d), 0);
    EXPECT_EQ(d->flavor(), adi3::WinFlavor::Dynamic);
    EXPECT_EQ(d->size(), 0);
    EXPECT_EQ(d->base(), nullptr);
    ASSERT_EQ(Window::free(&d), 0);
  });
}

// MPI_THREAD_MULTIPLE: two threads of every rank issue fetch_and_op and
// flush on one window inside one lock_all epoch; the total is exact.
class RmaThreads : public core_test::CoreTest {};

void threads_fetch(Device& dev) {
  constexpr int kIters = 100;
  void* base = nullptr;
  Window* win = nullptr;
  ASSERT_EQ(Window::allocate(dev, sizeof(int64_t), sizeof(int64_t), {}, win_comm(dev), &base, &win), 0);
  const auto* i64 = dt(adi3::Builtin::kInt64);
  ASSERT_EQ(dev.barrier(), 0);
  ASSERT_EQ(win->lock_all(0), 0);
  auto work = [&] {
    const int64_t one = 1;
    int64_t old = 0;
    for (int i = 0; i < kIters; ++i) {
      EXPECT_EQ(win->fetch_and_op(&one, &old, i64, 0, 0, Op(OpKind::Sum)), 0);
      if (i % 10 == 9) {
        EXPECT_EQ(win->flush(0), 0);
      }
    }
  };
  std::thread other(work);
  work();
  other.join();
  ASSERT_EQ(win->unlock_all(), 0);
  ASSERT_EQ(dev.barrier(), 0);
  if (dev.rank() == 0) {
    EXPECT_EQ(*static_cast<int64_t*>(base), 2 * kIters * dev.size());
  }
  ASSERT_EQ(Window::free(&win), 0);
}

TEST_P(RmaThreads, FetchAndOpFromTwoThreadsNp2) { run(2, threads_fetch); }
TEST_P(RmaThreads, FetchAndOpFromTwoThreadsNp3) { run(3, threads_fetch); }

INSTANTIATE_TEST_SUITE_P(Rma, RmaThreads, ::testing::ValuesIn(core_test::threaded_setups()), core_test::SetupName());

INSTANTIATE_TEST_SUITE_P(Rma, RmaSemantics, ::testing::ValuesIn(core_test::setups()), core_test::SetupName());

}  // namespace
