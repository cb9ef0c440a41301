// Native windows (issue 11): which path each operation takes, and that the
// paths mix on one window with accumulates still exact. Over thread-ranks
// (inproc: no one-sided part, everything emulated) and as processes over
// shm (native unless the setup forces the emulation).
#include <algorithm>
#include <cstring>

#include "adi3/device.hpp"
#include "rma/memory.hpp"
#include "rma/window_state.hpp"
#include "tests/rma/rma_harness.hpp"

namespace {

using namespace rma_test;
using adi3::LockType;
using adi3::coll::Op;
using adi3::coll::OpKind;

class RmaNative : public core_test::CoreTest {};

adi3::Comm ctl(Device& dev) { return core_test::ctl_comm(dev, 0x6500); }

// Whether this device takes native paths for windows at all (the shm
// channel must offer them: a wrapper that hides them fails here).
bool native_expected(Device& dev, uint32_t type) {
  if (std::strcmp(dev.channel().name(), "shm") == 0) {
    EXPECT_NE(dev.channel().onesided(), nullptr) << "the shm channel's one-sided part is not reachable";
  }
  return dev.channel().onesided() != nullptr && !dev.config().forced(type);
}

// Whether windows are mapped memory (shm); a NIC window (verbs) reaches
// every region through the device and takes fewer operations natively.
bool loads_stores(Device& dev) {
  const adi3::OneSided* os = dev.channel().onesided();
  return os && (os->caps().native_ops & adi3::kOsLoadStore);
}

// Every operation kind under lock_all and under fence, on an allocate
// window: the results are right and the path is the expected one.
void paths(Device& dev) {
  const int n = dev.size(), me = dev.rank();
  void* base = nullptr;
  Window* win = nullptr;
  int e = Window::allocate(dev, 16 * sizeof(int64_t), sizeof(int64_t), {}, win_comm(dev), &base, &win);
  ASSERT_EQ(e, 0) << why(dev, e);
  auto* mem = static_cast<int64_t*>(base);
  const auto* i64 = dt(adi3::Builtin::kInt64);
  const Op sum(OpKind::Sum);
  const int right = (me + 1) % n;
  ASSERT_EQ(dev.barrier(), 0);
  // passive target
  ASSERT_EQ(win->lock_all(0), 0);
  const int64_t v = 1000 + me, one = 1;
  int64_t got = -1, old = -1, cmp = 0, swp = 7;
  ASSERT_EQ(win->put(&v, 1, i64, right, 0, 1, i64), 0);
  ASSERT_EQ(win->flush(right), 0);
  ASSERT_EQ(win->get(&got, 1, i64, right, 0, 1, i64), 0);
  ASSERT_EQ(win->flush(right), 0);
  EXPECT_EQ(got, v);
  ASSERT_EQ(win->accumulate(&one, 1, i64, 0, 1, 1, i64, sum), 0);
  ASSERT_EQ(win->fetch_and_op(&one, &old, i64, 0, 2, sum), 0);
  ASSERT_EQ(win->compare_and_swap(&swp, &cmp, &old, i64, right, 3), 0);
  ASSERT_EQ(win->unlock_all(), 0);
  ASSERT_EQ(dev.barrier(), 0);
  EXPECT_EQ(mem[0], 1000 + (me + n - 1) % n);
  EXPECT_EQ(mem[3], 7);
  if (me == 0) {
    EXPECT_EQ(mem[1], n);
    EXPECT_EQ(mem[2], n);
  }
  // active target
  ASSERT_EQ(win->fence(0), 0);
  ASSERT_EQ(win->put(&v, 1, i64, right, 4, 1, i64), 0);
  ASSERT_EQ(win->accumulate(&one, 1, i64, 0, 5, 1, i64, sum), 0);
  ASSERT_EQ(win->fence(0), 0);
  EXPECT_EQ(mem[4], 1000 + (me + n - 1) % n);
  if (me == 0) {
    EXPECT_EQ(mem[5], n);
  }
  ASSERT_EQ(win->fence(adi3::kModeNoSucceed), 0);
  adi3::rma::WindowState& st = win->state();
  const bool native = native_expected(dev, adi3::kPassiveRma) && native_expected(dev, adi3::kActiveRma);
  EXPECT_EQ(st.native_usable, dev.channel().onesided() != nullptr && !dev.config().force_emulation);
  if (native) {
    EXPECT_EQ(st.emulated_ops, 0u);
    EXPECT_EQ(st.native_ops, 7u);
    // No agent thread is needed for passive target to progress.
    EXPECT_TRUE(win->passive_progress());
    EXPECT_EQ(win->info().passive_progress, 1);
  } else if (!dev.channel().onesided() || dev.config().force_emulation) {
    EXPECT_EQ(st.native_ops, 0u);
    EXPECT_EQ(st.emulated_ops, 7u);
  }
  ASSERT_EQ(Window::free(&win), 0);
}

TEST_P(RmaNative, PathsNp2) { run(2, paths); }
TEST_P(RmaNative, PathsNp3) { run(3, paths); }

// Some ranks force their accumulates to the emulation (adi3_emulate_ops)
// while the others accumulate natively into the same elements: sums of
// int64, double and int16 stay exact, and fetch_and_op (int64 and double)
// sees every value once.
// On a window from create (memory reached by cross-memory attach) the
// native accumulates read, combine and write back under the target's
// stripes, and the emulated ones the target applies take the same stripes.
void mixed(Device& dev, bool create) {
  const int n = dev.size(), me = dev.rank();
  constexpr int kIters = 200;
  adi3::WinInfo info;
  if (me % 2 == 0) {
    ASSERT_TRUE(info.set("adi3_emulate_ops", "accumulate,get_accumulate"));
  }
  void* base = nullptr;
  Window* win = nullptr;
  std::vector<int64_t> own(8, 0);  // create: the window's memory
  int e = create ? Window::create(dev, own.data(), 64, 1, info, win_comm(dev), &win)
                 : Window::allocate(dev, 64, 1, info, win_comm(dev), &base, &win);
  ASSERT_EQ(e, 0) << why(dev, e);
  auto* mem = create ? reinterpret_cast<char*>(own.data()) : static_cast<char*>(base);
  const auto* i64 = dt(adi3::Builtin::kInt64);
  const auto* f64 = dt(adi3::Builtin::kDouble);
  const auto* i16 = dt(adi3::Builtin::kInt16);
  const Op sum(OpKind::Sum);
  ASSERT_EQ(dev.barrier(), 0);
  const int64_t one = 1;
  const double half = 0.5;
  const int16_t two = 2;
  std::vector<int64_t> seen(kIters);
  // Results land when the epoch completes them (flush or unlock), not when
  // the call returns: they must outlive the loop body.
  std::vector<int64_t> prev(kIters);
  std::vector<double> seen_d(kIters);
  const double oned = 1.0;
  ASSERT_EQ(win->lock_all(0), 0);
  for (int i = 0; i < kIters; ++i) {
    ASSERT_EQ(win->accumulate(&one, 1, i64, 0, 0, 1, i64, sum), 0);
    ASSERT_EQ(win->accumulate(&half, 1, f64, 0, 8, 1, f64, sum), 0);
    ASSERT_EQ(win->accumulate(&two, 1, i16, 0, 18, 1, i16, sum), 0);
    ASSERT_EQ(win->get_accumulate(&one, 1, i64, &prev[static_cast<std::size_t>(i)], 1, i64, 0, 24, 1, i64, sum), 0);
    ASSERT_EQ(win->fetch_and_op(&one, &seen[static_cast<std::size_t>(i)], i64, 0, 32, sum), 0);
    ASSERT_EQ(win->fetch_and_op(&oned, &seen_d[static_cast<std::size_t>(i)], f64, 0, 40, sum), 0);
    if (i % 50 == 49) {
      ASSERT_EQ(win->flush(0), 0);
    }
  }
  ASSERT_EQ(win->unlock_all(), 0);
  adi3::rma::WindowState& st = win->state();
  // A NIC window takes int16 accumulates through the emulation (and what
  // follows them to the same target): only the results are checked there.
  // Cross-memory attach reaches rank 0's memory (the kernel may forbid it).
  const adi3::RemoteRegion* r0 = st.native_usable ? st.native->peers[0].mem_r : nullptr;
  const bool cma = r0 && (r0->ops & (adi3::kOsGet | adi3::kOsPut)) == (adi3::kOsGet | adi3::kOsPut);
  if (create && st.native_usable && loads_stores(dev)) {
    EXPECT_TRUE(st.native->cma_acc) << "every accumulate on a create window takes the stripes";
  }
  if (native_expected(dev, adi3::kPassiveRma) && loads_stores(dev)) {
    if (me % 2 == 0) {
      // Forced accumulates go first after every flush, so the operations
      // behind them follow them through the emulation (ordering).
      EXPECT_GT(st.emulated_ops, 0u);
    } else if (create && !cma && me != 0) {
      EXPECT_GT(st.emulated_ops, 0u);  // no cross-memory attach here: emulated
    } else if (create && me != 0) {
      // Cross-memory attach, or a packet while rank 0 polls (route_op).
      EXPECT_EQ(st.native_ops + st.emulated_ops, 6u * kIters);
    } else {
      EXPECT_EQ(st.emulated_ops, 0u);
      EXPECT_EQ(st.native_ops, 6u * kIters);
    }
  }
  ASSERT_EQ(dev.barrier(), 0);
  if (me == 0) {
    int64_t a, g, f;
    double d, fd;
    int16_t s;
    std::memcpy(&a, mem, 8);
    std::memcpy(&d, mem + 8, 8);
    std::memcpy(&s, mem + 18, 2);
    std::memcpy(&g, mem + 24, 8);
    std::memcpy(&f, mem + 32, 8);
    std::memcpy(&fd, mem + 40, 8);
    EXPECT_EQ(a, n * kIters);
    EXPECT_EQ(d, 0.5 * n * kIters);
    EXPECT_EQ(s, 2 * n * kIters);
    EXPECT_EQ(g, n * kIters);
    EXPECT_EQ(f, n * kIters);
    EXPECT_EQ(fd, 1.0 * n * kIters);
  }
  // Every fetched value is distinct: for fetch_and_op and for
  // get_accumulate alike, their sum is 0 + 1 + ... + nk - 1.
  int64_t mine = 0;
  for (int64_t x : seen) mine += x;
  for (int64_t x : prev) mine += x;
  int64_t mine_d = 0;  // whole numbers below 2^53: exact
  for (double x : seen_d) mine_d += static_cast<int64_t>(x);
  const int64_t total = core_test::sum_at_root(dev, ctl(dev), mine, 3);
  const int64_t total_d = core_test::sum_at_root(dev, ctl(dev), mine_d, 3);
  if (me == 0) {
    const int64_t k = int64_t{n} * kIters;
    EXPECT_EQ(total, k * (k - 1));
    EXPECT_EQ(total_d, k * (k - 1) / 2);
  }
  ASSERT_EQ(Window::free(&win), 0);
}

TEST_P(RmaNative, MixedPathsExactNp2) {
  run(2, [](Device& d) { mixed(d, false); });
}
TEST_P(RmaNative, MixedPathsExactNp3) {
  run(3, [](Device& d) { mixed(d, false); });
}
TEST_P(RmaNative, MixedPathsExactCreateNp3) {
  run(3, [](Device& d) { mixed(d, true); });
}

// Large and small accumulates from every rank into overlapping ranges of
// rank 0's window, odd ranks forcing theirs to the emulation (rank 0
// applies their packets) while even ranks combine natively: a whole-half
// sum of int64 and of doubles (one kernel call under the stripes of the
// range), fetch_and_op and 8-byte accumulates into single elements of both
// halves (one stripe each), get_accumulate through a strided vector (runs
// of one element), and a compare-and-swap increment loop. Every element of
// the window ends exact (doubles hold whole numbers below 2^53).
void large_small(Device& dev, bool create) {
  const int n = dev.size(), me = dev.rank();
  constexpr int kHalf = 4096, kRounds = 8, kSmall = 12, kStride = 16;
  adi3::WinInfo info;
  if (me % 2 == 1) {
    ASSERT_TRUE(info.set("adi3_emulate_ops", "accumulate,get_accumulate,fetch_and_op,compare_and_swap"));
  }
  void* base = nullptr;
  Window* win = nullptr;
  std::vector<int64_t> own(2 * kHalf, 0);  // create: the window's memory
  const std::ptrdiff_t bytes = 2 * kHalf * 8;
  int e = create ? Window::create(dev, own.data(), bytes, 8, info, win_comm(dev), &win)
                 : Window::allocate(dev, bytes, 8, info, win_comm(dev), &base, &win);
  ASSERT_EQ(e, 0) << why(dev, e);
  auto* ints = create ? own.data() : static_cast<int64_t*>(base);
  auto* dbls = reinterpret_cast<double*>(ints + kHalf);
  if (!create) std::fill(ints, ints + 2 * kHalf, 0);
  const auto* i64 = dt(adi3::Builtin::kInt64);
  const auto* f64 = dt(adi3::Builtin::kDouble);
  adi3::Datatype* vt = nullptr;
  ASSERT_EQ(adi3::type_vector(kHalf / kStride, 1, kStride, i64, &vt), adi3::ErrorClass::Success);
  const Type strided(vt);
  const Op sum(OpKind::Sum);
  // Where rank r's small operations land in round k.
  auto spot = [](int r, int k, int j) { return (r * 37 + k * 101 + j * 509) % kHalf; };
  const std::vector<int64_t> ones(kHalf, 1);
  const std::vector<double> halves(kHalf, 0.5);
  const std::vector<int64_t> twos(kHalf / kStride, 2);
  std::vector<int64_t> fetched(kRounds * kSmall), got(kHalf / kStride);
  // Origin buffers are read when the epoch completes the operations (an
  // emulated one: at the flush): they outlive the loop.
  const int64_t one = 1;
  const double oned = 1.0;
  ASSERT_EQ(dev.barrier(), 0);
  ASSERT_EQ(win->lock_all(0), 0);
  for (int k = 0; k < kRounds; ++k) {
    ASSERT_EQ(win->accumulate(ones.data(), kHalf, i64, 0, 0, kHalf, i64, sum), 0);
    ASSERT_EQ(win->accumulate(halves.data(), kHalf, f64, 0, kHalf, kHalf, f64, sum), 0);
    for (int j = 0; j < kSmall; ++j) {
      const int at = spot(me, k, j);
      ASSERT_EQ(win->fetch_and_op(&one, &fetched[static_cast<std::size_t>(k * kSmall + j)], i64, 0, at, sum), 0);
      ASSERT_EQ(win->accumulate(&oned, 1, f64, 0, kHalf + at, 1, f64, sum), 0);
    }
    ASSERT_EQ(win->get_accumulate(twos.data(), kHalf / kStride, i64, got.data(), kHalf / kStride, i64, 0, k % kStride,
                                  1, strided, sum),
              0);
    ASSERT_EQ(win->flush(0), 0);
    // One compare-and-swap increment of element kHalf - 1.
    int64_t seen = 0, prev = -1;
    ASSERT_EQ(win->fetch_and_op(nullptr, &seen, i64, 0, kHalf - 1, Op(OpKind::NoOp)), 0);
    ASSERT_EQ(win->flush(0), 0);
    for (int tries = 0;; ++tries) {
      const int64_t want = seen + 1;
      ASSERT_EQ(win->compare_and_swap(&want, &seen, &prev, i64, 0, kHalf - 1), 0);
      ASSERT_EQ(win->flush(0), 0);
      if (prev == seen) break;
      seen = prev;
      ASSERT_LT(tries, 1000000) << "compare_and_swap never succeeds";
    }
  }
  ASSERT_EQ(win->unlock_all(), 0);
  ASSERT_EQ(dev.barrier(), 0);
  if (me == 0) {
    // The expected window, replaying every rank's operations.
    std::vector<int64_t> want_i(kHalf, int64_t{n} * kRounds);
    std::vector<double> want_d(kHalf, 0.5 * n * kRounds);
    for (int r = 0; r < n; ++r) {
      for (int k = 0; k < kRounds; ++k) {
        for (int j = 0; j < kSmall; ++j) {
          want_i[static_cast<std::size_t>(spot(r, k, j))] += 1;
          want_d[static_cast<std::size_t>(spot(r, k, j))] += 1.0;
        }
        for (int i = k % kStride; i < kHalf; i += kStride) want_i[static_cast<std::size_t>(i)] += 2;
        want_i[kHalf - 1] += 1;
      }
    }
    int bad = 0;
    for (int i = 0; i < kHalf && bad < 5; ++i) {
      if (ints[i] != want_i[static_cast<std::size_t>(i)]) {
        ADD_FAILURE() << "int64 element " << i << ": " << ints[i] << ", want " << want_i[static_cast<std::size_t>(i)];
        ++bad;
      }
      if (dbls[i] != want_d[static_cast<std::size_t>(i)]) {
        ADD_FAILURE() << "double element " << i << ": " << dbls[i] << ", want " << want_d[static_cast<std::size_t>(i)];
        ++bad;
      }
    }
  }
  // Every fetched value is a state the element went through: positive
  // after the first round's whole-half sums reached it, never above its
  // final value.
  for (int64_t x : fetched) EXPECT_TRUE(x >= 0 && x <= int64_t{n} * (kRounds + 4 * kRounds * kSmall)) << x;
  ASSERT_EQ(dev.barrier(), 0);
  ASSERT_EQ(Window::free(&win), 0);
}

TEST_P(RmaNative, LargeSmallAccumulatesExactNp3) {
  run(3, [](Device& d) { large_small(d, false); });
}
TEST_P(RmaNative, LargeSmallAccumulatesExactCreateNp2) {
  run(2, [](Device& d) { large_small(d, true); });
}

// Exclusive locks exclude across the lock word: each rank increments a
// plain (non-atomic) counter with get + put under an exclusive lock.
void exclusive(Device& dev) {
  constexpr int kIters = 100;
  IntWin w(dev, 4);
  ASSERT_EQ(dev.barrier(), 0);
  if (dev.rank() == 0) w.mem[0] = 0;
  ASSERT_EQ(dev.barrier(), 0);
  for (int i = 0; i < kIters; ++i) {
    ASSERT_EQ(w.win->lock(LockType::Exclusive, 0, 0), 0);
    int x = 0;
    ASSERT_EQ(w.win->get(&x, 1, int_t(), 0, 0, 1, int_t()), 0);
    ASSERT_EQ(w.win->flush(0), 0);
    ++x;
    ASSERT_EQ(w.win->put(&x, 1, int_t(), 0, 0, 1, int_t()), 0);
    ASSERT_EQ(w.win->unlock(0), 0);
  }
  ASSERT_EQ(dev.barrier(), 0);
  if (dev.rank() == 0) {
    EXPECT_EQ(w.mem[0], dev.size() * kIters);
  }
  ASSERT_EQ(dev.barrier(), 0);
}

TEST_P(RmaNative, ExclusiveGetPutNp3) { run(3, exclusive); }

// allocate_shared, contiguous and not: every rank's part is mapped at
// every rank (shared_query), ranks store straight into each other's parts
// with plain stores, and after sync + barrier + sync every store is seen.
void shared_direct(Device& dev, bool contig) {
  const int n = dev.size(), me = dev.rank();
  adi3::WinInfo info;
  info.alloc_shared_noncontig = !contig;
  void* base = nullptr;
  Window* win = nullptr;
  const auto part = [](int r) { return static_cast<std::ptrdiff_t>(8 * sizeof(int64_t) * (r + 1)); };
  int e = Window::allocate_shared(dev, part(me), sizeof(int64_t), info, win_comm(dev), &base, &win);
  // A channel whose regions are not mapped (verbs) may still have a mapped
  // part for its host's ranks (OneSided::shared_part).
  adi3::OneSided* os = dev.channel().onesided();
  if (!native_expected(dev, 0) || !os || !os->shared_part() || dev.config().force_emulation) {
    EXPECT_EQ(adi3::error_class_of(e), adi3::ErrorClass::RmaShared) << why(dev, e);
    return;
  }
  ASSERT_EQ(e, 0) << why(dev, e);
  EXPECT_EQ(win->flavor(), adi3::WinFlavor::Shared);
  std::vector<int64_t*> parts(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    std::ptrdiff_t size = -1;
    int unit = 0;
    void* b = nullptr;
    ASSERT_EQ(win->shared_query(r, &size, &unit, &b), 0);
    EXPECT_EQ(size, part(r));
    EXPECT_EQ(unit, static_cast<int>(sizeof(int64_t)));
    ASSERT_NE(b, nullptr);
    parts[static_cast<std::size_t>(r)] = static_cast<int64_t*>(b);
    if (contig && r > 0) {
      EXPECT_EQ(static_cast<char*>(b), reinterpret_cast<char*>(parts[static_cast<std::size_t>(r - 1)]) + part(r - 1));
    }
  }
  EXPECT_EQ(parts[static_cast<std::size_t>(me)], base);
  ASSERT_EQ(win->lock_all(0), 0);
  for (int r = 0; r < n; ++r) parts[static_cast<std::size_t>(r)][me] = 1000 * me + r;
  ASSERT_EQ(win->sync(), 0);
  ASSERT_EQ(dev.barrier(), 0);
  ASSERT_EQ(win->sync(), 0);
  for (int k = 0; k < n; ++k) EXPECT_EQ(static_cast<int64_t*>(base)[k], 1000 * k + me) << "from rank " << k;
  // Atomics through the window on the same memory agree with the stores.
  const int64_t one = 1;
  int64_t old = 0;
  ASSERT_EQ(win->fetch_and_op(&one, &old, dt(adi3::Builtin::kInt64), 0, n, Op(OpKind::Sum)), 0);
  ASSERT_EQ(win->unlock_all(), 0);
  ASSERT_EQ(dev.barrier(), 0);
  EXPECT_EQ(parts[0][n], n);
  ASSERT_EQ(Window::free(&win), 0);
}

TEST_P(RmaNative, SharedContiguousNp3) {
  run(3, [](Device& d) { shared_direct(d, true); });
}
TEST_P(RmaNative, SharedNoncontigNp2) {
  run(2, [](Device& d) { shared_direct(d, false); });
}

// MPI_Alloc_mem's memory as a window from create: shared memory where the
// channel has a one-sided part, so every rank maps every other's part (no
// cross-memory attach) and every operation, accumulates included, is
// native; elsewhere heap memory, served by the emulation. The window covers
// the middle of the allocation: the bytes around it stay untouched.
void alloc_mem_window(Device& dev) {
  const int n = dev.size(), me = dev.rank();
  const auto N = static_cast<std::size_t>(n);
  void* base = nullptr;
  ASSERT_EQ(adi3::alloc_mem(dev, 64 * sizeof(int64_t), &base), 0);
  ASSERT_NE(base, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(base) % 64, 0u);
  auto* all = static_cast<int64_t*>(base);
  for (int i = 0; i < 64; ++i) all[i] = -1;
  int64_t* mem = all + 8;
  for (std::size_t i = 0; i < 32; ++i) mem[i] = 0;
  Window* win = nullptr;
  int e = Window::create(dev, mem, 32 * sizeof(int64_t), sizeof(int64_t), {}, win_comm(dev), &win);
  ASSERT_EQ(e, 0) << why(dev, e);
  adi3::rma::WindowState& st = win->state();
  // Where windows are mapped memory (shm) the allocation is a segment every
  // rank maps; a NIC window (verbs) reaches it through the device.
  const bool native = native_expected(dev, 0) && !dev.config().force_emulation;
  const bool shared = native && loads_stores(dev);
  EXPECT_EQ(st.native_usable, native);
  if (shared) {
    for (int r = 0; r < n; ++r) {
      EXPECT_NE(st.native->peers[static_cast<std::size_t>(r)].mem, nullptr)
          << "rank " << r << "'s memory is not mapped";
    }
  }
  const auto* i64 = dt(adi3::Builtin::kInt64);
  const Op sum(OpKind::Sum);
  std::vector<int64_t> vals(N), old(N, -1);
  ASSERT_EQ(dev.barrier(), 0);
  ASSERT_EQ(win->lock_all(0), 0);
  const int64_t one = 1;
  for (int r = 0; r < n; ++r) {
    vals[static_cast<std::size_t>(r)] = 1000 * me + r;
    ASSERT_EQ(win->put(&vals[static_cast<std::size_t>(r)], 1, i64, r, me, 1, i64), 0);
    ASSERT_EQ(win->accumulate(&one, 1, i64, r, n, 1, i64, sum), 0);
    ASSERT_EQ(win->fetch_and_op(&one, &old[static_cast<std::size_t>(r)], i64, r, n + 1, sum), 0);
  }
  ASSERT_EQ(win->unlock_all(), 0);
  ASSERT_EQ(dev.barrier(), 0);
  for (int k = 0; k < n; ++k) EXPECT_EQ(mem[k], 1000 * k + me) << "from rank " << k;
  EXPECT_EQ(mem[n], n);
  EXPECT_EQ(mem[n + 1], n);
  for (int64_t x : old) EXPECT_TRUE(x >= 0 && x < n) << x;
  for (int i = 0; i < 8; ++i) EXPECT_EQ(all[i], -1) << "byte before the window changed";
  for (int i = 40; i < 64; ++i) EXPECT_EQ(all[i], -1) << "byte after the window changed";
  if (shared && native_expected(dev, adi3::kPassiveRma)) {
    EXPECT_EQ(st.emulated_ops, 0u);
    EXPECT_EQ(st.native_ops, 3u * N);
    EXPECT_TRUE(win->passive_progress());
  }
  ASSERT_EQ(Window::free(&win), 0);
  ASSERT_EQ(dev.barrier(), 0);
  ASSERT_EQ(adi3::free_mem(dev, base), 0);
  // Heap memory of the fallback and null go back the same way.
  ASSERT_EQ(adi3::free_mem(dev, nullptr), 0);
}

TEST_P(RmaNative, AllocMemWindowNp2) { run(2, alloc_mem_window); }
TEST_P(RmaNative, AllocMemWindowNp3) { run(3, alloc_mem_window); }

INSTANTIATE_TEST_SUITE_P(Rma, RmaNative, ::testing::ValuesIn(core_test::setups()), core_test::SetupName());

}  // namespace
