// The emulation's short paths for accumulates and lock epochs (emul/quick.cpp
// quick_acc_now, emul/apply.cpp plain_acc; emul/origin.cpp and
// emul/target.cpp: a small put or accumulate that carries its epoch's lock
// request and unlock, parked at the target until the lock is granted).
// Every result is exact; the same assertions hold on the native paths, so
// every setup runs them (the emulated ones take the paths under test).
#include <algorithm>
#include <chrono>
#include <vector>
#include <cstring>
#include <thread>

#include "tests/rma/rma_harness.hpp"

namespace {

using namespace rma_test;
using adi3::LockType;
using adi3::coll::Op;
using adi3::coll::OpKind;
using core_test::await;
using core_test::notify;

class RmaEmulPaths : public core_test::CoreTest {};

adi3::Comm ctl(Device& dev) { return core_test::ctl_comm(dev, 0x6400); }

// Every rank, kIters times: lock rank 0 (shared and exclusive in turn), add
// 1 to an int64 with one accumulate, unlock; then lock, put its own slot,
// unlock. Concurrent lock/op/unlock rounds lose no update and every put
// lands.
void lock_rides(Device& dev) {
  constexpr int kIters = 60;
  const int n = dev.size(), me = dev.rank();
  void* base = nullptr;
  Window* win = nullptr;
  int e = Window::allocate(dev, (2 + n) * static_cast<std::ptrdiff_t>(sizeof(int64_t)), sizeof(int64_t), {},
                           win_comm(dev), &base, &win);
  ASSERT_EQ(e, 0) << why(dev, e);
  auto* mem = static_cast<int64_t*>(base);
  const auto* i64 = dt(adi3::Builtin::kInt64);
  const auto* f64 = dt(adi3::Builtin::kDouble);
  ASSERT_EQ(dev.barrier(), 0);
  const int64_t one = 1;
  const double half = 0.5;
  for (int i = 0; i < kIters; ++i) {
    const LockType kind = i % 2 ? LockType::Exclusive : LockType::Shared;
    ASSERT_EQ(win->lock(kind, 0, 0), 0);
    ASSERT_EQ(win->accumulate(&one, 1, i64, 0, 0, 1, i64, Op(OpKind::Sum)), 0);
    ASSERT_EQ(win->unlock(0), 0);
    ASSERT_EQ(win->lock(kind, 0, 0), 0);
    ASSERT_EQ(win->accumulate(&half, 1, f64, 0, 1, 1, f64, Op(OpKind::Sum)), 0);
    ASSERT_EQ(win->unlock(0), 0);
    const int64_t mine = 1000 * me + i;
    ASSERT_EQ(win->lock(LockType::Exclusive, 0, 0), 0);
    ASSERT_EQ(win->put(&mine, 1, i64, 0, 2 + me, 1, i64), 0);
    ASSERT_EQ(win->unlock(0), 0);
  }
  ASSERT_EQ(dev.barrier(), 0);
  if (me == 0) {
    EXPECT_EQ(mem[0], n * kIters);
    double d;
    std::memcpy(&d, &mem[1], sizeof d);
    EXPECT_EQ(d, 0.5 * n * kIters);
    for (int r = 0; r < n; ++r) EXPECT_EQ(mem[2 + r], 1000 * r + kIters - 1) << "rank " << r;
  }
  ASSERT_EQ(dev.barrier(), 0);
  ASSERT_EQ(Window::free(&win), 0);
}

TEST_P(RmaEmulPaths, LockRidesExactNp2) { run(2, lock_rides); }
TEST_P(RmaEmulPaths, LockRidesExactNp3) { run(3, lock_rides); }
TEST_P(RmaEmulPaths, LockRidesExactNp4) { run(4, lock_rides); }

// Rank 0 holds the exclusive lock of its own window while every other rank
// runs lock(exclusive)/accumulate/unlock on it (one packet that waits at
// rank 0 for the lock): nothing lands while rank 0 holds it, rank 0's own
// store under the lock is kept, and every accumulate lands after it.
void parked_until_granted(Device& dev) {
  const int n = dev.size(), me = dev.rank();
  IntWin w(dev, 4, Flavor::Create);
  adi3::Comm c = ctl(dev);
  w.mem[0] = 0;
  ASSERT_EQ(dev.barrier(), 0);
  if (me == 0) {
    ASSERT_EQ(w.win->lock(LockType::Exclusive, 0, 0), 0);
    for (int r = 1; r < n; ++r) notify(dev, c, r);
    // Their packets arrive meanwhile and wait for the lock.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const int seen = __atomic_load_n(&w.mem[0], __ATOMIC_ACQUIRE);
    EXPECT_EQ(seen, 0) << "an accumulate landed under rank 0's exclusive lock";
    __atomic_store_n(&w.mem[0], 1000, __ATOMIC_RELEASE);
    ASSERT_EQ(w.win->unlock(0), 0);
  } else {
    const int add = me;
    await(dev, c, 0);  // rank 0 holds its lock
    ASSERT_EQ(w.win->lock(LockType::Exclusive, 0, 0), 0);
    ASSERT_EQ(w.win->accumulate(&add, 1, int_t(), 0, 0, 1, int_t(), Op(OpKind::Sum)), 0);
    ASSERT_EQ(w.win->unlock(0), 0);
  }
  ASSERT_EQ(dev.barrier(), 0);
  if (me == 0) {
    EXPECT_EQ(w.mem[0], 1000 + n * (n - 1) / 2);
  }
  // A lock epoch whose first small put meets something other than its
  // unlock: a flush (the lock request goes first, then the put), a second
  // put, a progress pass (a barrier) before the unlock.
  ASSERT_EQ(dev.barrier(), 0);
  const int t = (me + 1) % n;
  const int a = 7 + me, b = 70 + me, d = 700 + me;
  ASSERT_EQ(w.win->lock(LockType::Exclusive, t, 0), 0);
  ASSERT_EQ(w.win->put(&a, 1, int_t(), t, 1, 1, int_t()), 0);
  ASSERT_EQ(w.win->flush(t), 0);
  ASSERT_EQ(w.win->put(&b, 1, int_t(), t, 2, 1, int_t()), 0);
  ASSERT_EQ(w.win->unlock(t), 0);
  ASSERT_EQ(w.win->lock(LockType::Shared, t, 0), 0);
  ASSERT_EQ(w.win->put(&d, 1, int_t(), t, 3, 1, int_t()), 0);
  ASSERT_EQ(dev.barrier(), 0);
  ASSERT_EQ(w.win->accumulate(&d, 1, int_t(), t, 3, 1, int_t(), Op(OpKind::Sum)), 0);
  ASSERT_EQ(w.win->unlock(t), 0);
  ASSERT_EQ(dev.barrier(), 0);
  const int from = (me + n - 1) % n;
  EXPECT_EQ(w.mem[1], 7 + from);
  EXPECT_EQ(w.mem[2], 70 + from);
  EXPECT_EQ(w.mem[3], 2 * (700 + from));
}

TEST_P(RmaEmulPaths, ParkedUntilGrantedNp2) { run(2, parked_until_granted); }
TEST_P(RmaEmulPaths, ParkedUntilGrantedNp3) { run(3, parked_until_granted); }

// Accumulates of one predefined type on both sides (the short path) in a
// fence epoch and flushed after each one: SUM, PROD, MAX, REPLACE and BXOR
// on int, double and int64, counts of 1 to 300, one misaligned double run
// (a window of disp_unit 1), mixed with the general path (a derived origin
// type) and with a get_accumulate that must see every one before it.
void quick_accumulates(Device& dev) {
  const int n = dev.size(), me = dev.rank();
  constexpr int kN = 300;
  const std::ptrdiff_t bytes = 4096;
  void* base = nullptr;
  Window* win = nullptr;
  int e = Window::allocate(dev, bytes, 1, {}, win_comm(dev), &base, &win);
  ASSERT_EQ(e, 0) << why(dev, e);
  auto* mem = static_cast<char*>(base);
  std::memset(mem, 0, static_cast<std::size_t>(bytes));
  const auto* i32 = int_t();
  const auto* f64 = dt(adi3::Builtin::kDouble);
  const auto* i64 = dt(adi3::Builtin::kInt64);
  std::vector<int> ones(kN, 1);
  // Fence epoch: every rank adds 1 to kN ints at rank 0 and ORs its bit
  // into an int64 there, in several accumulates each.
  ASSERT_EQ(win->fence(0), 0);
  ASSERT_EQ(win->accumulate(ones.data(), 1, i32, 0, 0, 1, i32, Op(OpKind::Sum)), 0);
  ASSERT_EQ(win->accumulate(ones.data() + 1, 15, i32, 0, 4, 15, i32, Op(OpKind::Sum)), 0);
  ASSERT_EQ(win->accumulate(ones.data() + 16, kN - 16, i32, 0, 64, kN - 16, i32, Op(OpKind::Sum)), 0);
  const int64_t bit = int64_t{1} << me;
  ASSERT_EQ(win->accumulate(&bit, 1, i64, 0, 2048, 1, i64, Op(OpKind::Bxor)), 0);
  ASSERT_EQ(win->fence(0), 0);
  if (me == 0) {
    for (int i = 0; i < kN; ++i) {
      int v;
      std::memcpy(&v, mem + 4 * i, sizeof v);
      ASSERT_EQ(v, n) << "int " << i;
    }
    int64_t x;
    std::memcpy(&x, mem + 2048, sizeof x);
    EXPECT_EQ(x, (int64_t{1} << n) - 1);
  }
  ASSERT_EQ(win->fence(0), 0);
  // Flushed after each: rank 1 (or 0 alone) is the target; every rank
  // replaces, multiplies, maxes and sums doubles at its own 8-byte slot
  // (misaligned by 1 byte) and int64s, checked by get_accumulate.
  const int t = n > 1 ? 1 : 0;
  const std::ptrdiff_t slot = 2560 + 40 * me;
  ASSERT_EQ(win->lock_all(0), 0);
  for (int i = 0; i < 20; ++i) {
    const double two = 2.0, start = 1.5 + i;
    ASSERT_EQ(win->accumulate(&start, 1, f64, t, slot + 1, 1, f64, Op(OpKind::Replace)), 0);
    ASSERT_EQ(win->flush(t), 0);
    ASSERT_EQ(win->accumulate(&two, 1, f64, t, slot + 1, 1, f64, Op(OpKind::Prod)), 0);
    ASSERT_EQ(win->flush(t), 0);
    const int64_t v[2] = {i, -i};
    ASSERT_EQ(win->accumulate(v, 2, i64, t, slot + 16, 2, i64, Op(OpKind::Replace)), 0);
    ASSERT_EQ(win->flush(t), 0);
    const int64_t big[2] = {5, -100};
    ASSERT_EQ(win->accumulate(big, 2, i64, t, slot + 16, 2, i64, Op(OpKind::Max)), 0);
    ASSERT_EQ(win->flush(t), 0);
    // The general path: a derived origin type of the same signature.
    adi3::Datatype* c2 = nullptr;
    ASSERT_EQ(adi3::type_contiguous(2, i64, &c2), adi3::ErrorClass::Success);
    ASSERT_EQ(adi3::type_commit(c2), adi3::ErrorClass::Success);
    const int64_t add[2] = {10, 10};
    ASSERT_EQ(win->accumulate(add, 1, c2, t, slot + 16, 2, i64, Op(OpKind::Sum)), 0);
    ASSERT_EQ(adi3::type_free(&c2), adi3::ErrorClass::Success);
    ASSERT_EQ(win->flush(t), 0);
    double got = 0;
    int64_t got2[2] = {0, 0};
    const double zero = 0;
    ASSERT_EQ(win->get_accumulate(&zero, 1, f64, &got, 1, f64, t, slot + 1, 1, f64, Op(OpKind::NoOp)), 0);
    ASSERT_EQ(win->get_accumulate(nullptr, 0, i64, got2, 2, i64, t, slot + 16, 2, i64, Op(OpKind::NoOp)), 0);
    ASSERT_EQ(win->flush(t), 0);
    EXPECT_EQ(got, 2 * start) << i;
    EXPECT_EQ(got2[0], std::max<int64_t>(i, 5) + 10) << i;
    EXPECT_EQ(got2[1], -i + 10) << i;
  }
  ASSERT_EQ(win->unlock_all(), 0);
  ASSERT_EQ(dev.barrier(), 0);
  ASSERT_EQ(Window::free(&win), 0);
}

TEST_P(RmaEmulPaths, QuickAccumulatesNp1) { run(1, quick_accumulates); }
TEST_P(RmaEmulPaths, QuickAccumulatesNp2) { run(2, quick_accumulates); }
TEST_P(RmaEmulPaths, QuickAccumulatesNp3) { run(3, quick_accumulates); }

// Puts and gets larger than one packet travel as point-to-point messages
// when emulated, where the core may fetch them in one copy (emul/rndv.cpp
// rndv_fits; else as packets): a request-based put with a strided origin type
// (its buffer free after flush_local), a put then a get to the same target
// before one flush (the get's reply must not end that flush before the
// put's message landed: a get after it reads the put's last element), a
// get into a strided origin type under fence, a request-based get with a
// strided target type under an exclusive lock. Every byte lands where the
// types say and nowhere else.
void large_messages(Device& dev) {
  constexpr int kN = 1 << 16;  // ints: 256 KiB
  const int n = dev.size(), me = dev.rank(), t = (me + 1) % n, o = (me - 1 + n) % n;
  IntWin w(dev, 2 * kN);
  Type strided(vector_of_ints(kN, 1, 2));
  auto val = [](int rank, int i) { return 1000000 * (rank + 1) + i; };
  std::vector<int> src(2 * kN), back(2 * kN, -1);
  for (int i = 0; i < 2 * kN; ++i) src[static_cast<std::size_t>(i)] = val(me, i);
  ASSERT_EQ(dev.barrier(), 0);
  ASSERT_EQ(w.win->lock_all(0), 0);
  adi3::Request* r = nullptr;
  ASSERT_EQ(w.win->rput(src.data(), 1, strided, t, 0, kN, int_t(), &r), 0);  // src[2i] -> t[i]
  ASSERT_EQ(dev.wait(&r, nullptr), 0);
  ASSERT_EQ(w.win->flush_local(t), 0);
  ASSERT_EQ(w.win->flush(t), 0);
  ASSERT_EQ(w.win->put(src.data() + kN, kN, int_t(), t, kN, kN, int_t()), 0);  // src[kN + i] -> t[kN + i]
  ASSERT_EQ(w.win->get(back.data(), kN, int_t(), t, 0, kN, int_t()), 0);
  ASSERT_EQ(w.win->flush(t), 0);
  int last = -1;
  ASSERT_EQ(w.win->get(&last, 1, int_t(), t, 2 * kN - 1, 1, int_t()), 0);
  ASSERT_EQ(w.win->flush(t), 0);
  EXPECT_EQ(last, val(me, 2 * kN - 1));
  ASSERT_EQ(w.win->unlock_all(), 0);
  for (int i = 0; i < kN; ++i) ASSERT_EQ(back[static_cast<std::size_t>(i)], val(me, 2 * i)) << i;
  ASSERT_EQ(dev.barrier(), 0);
  for (int i = 0; i < kN; ++i) {
    ASSERT_EQ(w.mem[i], val(o, 2 * i)) << i;
    ASSERT_EQ(w.mem[kN + i], val(o, kN + i)) << i;
  }
  // t[kN + i] -> back[2i] under fence; the odd elements stay untouched.
  std::fill(back.begin(), back.end(), -1);
  ASSERT_EQ(w.win->fence(0), 0);
  ASSERT_EQ(w.win->get(back.data(), 1, strided, t, kN, kN, int_t()), 0);
  ASSERT_EQ(w.win->fence(adi3::kModeNoSucceed), 0);
  for (int i = 0; i < kN; ++i) {
    ASSERT_EQ(back[static_cast<std::size_t>(2 * i)], val(me, kN + i)) << i;
    ASSERT_EQ(back[static_cast<std::size_t>(2 * i + 1)], -1) << i;
  }
  // t[2i] -> back[i], request-based under an exclusive lock.
  ASSERT_EQ(w.win->lock(LockType::Exclusive, t, 0), 0);
  ASSERT_EQ(w.win->rget(back.data(), kN, int_t(), t, 0, 1, strided, &r), 0);
  ASSERT_EQ(dev.wait(&r, nullptr), 0);
  ASSERT_EQ(w.win->unlock(t), 0);
  for (int i = 0; i < kN; ++i) {
    ASSERT_EQ(back[static_cast<std::size_t>(i)], 2 * i < kN ? val(me, 4 * i) : val(me, 2 * i)) << i;
  }
  ASSERT_EQ(dev.barrier(), 0);
}

TEST_P(RmaEmulPaths, LargeMessagesNp2) { run(2, large_messages); }
TEST_P(RmaEmulPaths, LargeMessagesNp3) { run(3, large_messages); }

// A large put or get the target refuses (past a dynamic window's attached
// region: only the target knows) fails with RMA_RANGE and changes nothing;
// its message is drained, so the large put and get after it land.
void large_refused(Device& dev) {
  constexpr std::size_t kN = std::size_t{1} << 16;  // ints: 256 KiB
  const int me = dev.rank(), t = 1 - me;
  IntWin w(dev, kN, Flavor::Dynamic);
  const auto bases = exchange_bases(dev, w);
  std::vector<int> src(kN, 7 + me), back(kN, -1);
  ASSERT_EQ(dev.barrier(), 0);
  const std::ptrdiff_t half = w.disp(kN / 2, bases, t);
  ASSERT_EQ(w.win->lock(LockType::Exclusive, t, 0), 0);
  ASSERT_EQ(w.win->put(src.data(), kN, int_t(), t, half, kN, int_t()), 0);
  int e = w.win->unlock(t);
  ASSERT_TRUE(e && adi3::error_class_of(e) == adi3::ErrorClass::RmaRange) << why(dev, e);
  ASSERT_EQ(w.win->lock(LockType::Shared, t, 0), 0);
  ASSERT_EQ(w.win->get(back.data(), kN, int_t(), t, half, kN, int_t()), 0);
  e = w.win->unlock(t);
  ASSERT_TRUE(e && adi3::error_class_of(e) == adi3::ErrorClass::RmaRange) << why(dev, e);
  EXPECT_EQ(back[0], -1);
  EXPECT_EQ(back[kN - 1], -1);
  ASSERT_EQ(dev.barrier(), 0);
  for (std::size_t i = 0; i < kN; ++i) ASSERT_EQ(w.mem[i], static_cast<int>(100 * me + i)) << i;
  ASSERT_EQ(dev.barrier(), 0);
  ASSERT_EQ(w.win->lock(LockType::Exclusive, t, 0), 0);
  ASSERT_EQ(w.win->put(src.data(), kN, int_t(), t, w.disp(0, bases, t), kN, int_t()), 0);
  ASSERT_EQ(w.win->unlock(t), 0);
  ASSERT_EQ(w.win->lock(LockType::Shared, t, 0), 0);
  ASSERT_EQ(w.win->get(back.data(), kN, int_t(), t, w.disp(0, bases, t), kN, int_t()), 0);
  ASSERT_EQ(w.win->unlock(t), 0);
  for (std::size_t i = 0; i < kN; ++i) ASSERT_EQ(back[i], 7 + me) << i;
  ASSERT_EQ(dev.barrier(), 0);
}

TEST_P(RmaEmulPaths, LargeRefusedNp2) { run(2, large_refused); }

// Puts and gets of more than 1 MiB whose data is one run on both sides go
// as messages of 1 MiB when emulated (emul/rndv.cpp, pieces; the last one
// shorter): a put and a get of 3 MiB + 12 bytes at an odd displacement,
// then under fence, then request-based ones (rput, flush, rget) in
// lock_all, and a strided origin of 1.5 MiB (one message). Every byte lands where it should and none around it.
void large_pieces(Device& dev) {
  constexpr int kN = (3 << 18) + 3;  // ints: 3 MiB + 12 bytes
  constexpr int kW = kN + 8;
  const int n = dev.size(), me = dev.rank(), t = (me + 1) % n, o = (me - 1 + n) % n;
  IntWin w(dev, kW, Flavor::Create);
  auto val = [](int rank, int i, int round) { return 100000000 * round + 10000000 * (rank + 1) + i; };
  std::vector<int> src(kN), back(kN + 2, -1);
  auto fill = [&](int round) {
    for (int i = 0; i < kN; ++i) src[static_cast<std::size_t>(i)] = val(me, i, round);
  };
  auto landed = [&](int round) {
    ASSERT_EQ(w.mem[0], 100 * me) << round;
    for (int i = 0; i < kN; ++i) ASSERT_EQ(w.mem[1 + i], val(o, i, round)) << round << " " << i;
    for (int i = kN + 1; i < kW; ++i) ASSERT_EQ(w.mem[i], 100 * me + i) << round << " " << i;
  };
  auto fetched = [&](int round) {
    ASSERT_EQ(back[0], -1);
    for (int i = 0; i < kN; ++i)
      ASSERT_EQ(back[static_cast<std::size_t>(1 + i)], val(me, i, round)) << round << " " << i;
    ASSERT_EQ(back[kN + 1], -1);
    std::fill(back.begin(), back.end(), -1);
  };
  ASSERT_EQ(dev.barrier(), 0);
  fill(1);
  ASSERT_EQ(w.win->lock(LockType::Exclusive, t, 0), 0);
  ASSERT_EQ(w.win->put(src.data(), kN, int_t(), t, 1, kN, int_t()), 0);
  ASSERT_EQ(w.win->unlock(t), 0);
  ASSERT_EQ(w.win->lock(LockType::Shared, t, 0), 0);
  ASSERT_EQ(w.win->get(back.data() + 1, kN, int_t(), t, 1, kN, int_t()), 0);
  ASSERT_EQ(w.win->unlock(t), 0);
  fetched(1);
  ASSERT_EQ(dev.barrier(), 0);
  landed(1);
  ASSERT_EQ(dev.barrier(), 0);
  fill(2);
  adi3::Request* r[2] = {nullptr, nullptr};
  ASSERT_EQ(w.win->fence(0), 0);
  ASSERT_EQ(w.win->put(src.data(), kN, int_t(), t, 1, kN, int_t()), 0);
  ASSERT_EQ(w.win->fence(0), 0);
  landed(2);
  ASSERT_EQ(w.win->get(back.data() + 1, kN, int_t(), t, 1, kN, int_t()), 0);
  ASSERT_EQ(w.win->fence(adi3::kModeNoSucceed), 0);
  fetched(2);
  ASSERT_EQ(dev.barrier(), 0);
  fill(3);
  ASSERT_EQ(w.win->lock_all(0), 0);
  ASSERT_EQ(w.win->rput(src.data(), kN, int_t(), t, 1, kN, int_t(), &r[0]), 0);
  ASSERT_EQ(dev.wait(&r[0], nullptr), 0);
  ASSERT_EQ(w.win->flush(t), 0);
  ASSERT_EQ(w.win->rget(back.data() + 1, kN, int_t(), t, 1, kN, int_t(), &r[1]), 0);
  ASSERT_EQ(dev.wait(&r[1], nullptr), 0);
  ASSERT_EQ(w.win->unlock_all(), 0);
  fetched(3);
  ASSERT_EQ(dev.barrier(), 0);
  landed(3);
  ASSERT_EQ(dev.barrier(), 0);
  // 1.5 MiB from every other int of src: one message, not pieces.
  constexpr int kHalf = 3 << 17;
  Type strided(vector_of_ints(kHalf, 1, 2));
  ASSERT_EQ(w.win->lock(LockType::Exclusive, t, 0), 0);
  ASSERT_EQ(w.win->put(src.data(), 1, strided, t, 1, kHalf, int_t()), 0);
  ASSERT_EQ(w.win->unlock(t), 0);
  ASSERT_EQ(dev.barrier(), 0);
  for (int i = 0; i < kHalf; ++i) ASSERT_EQ(w.mem[1 + i], val(o, 2 * i, 3)) << i;
  ASSERT_EQ(w.mem[1 + kHalf], val(o, kHalf, 3));
  ASSERT_EQ(dev.barrier(), 0);
}

TEST_P(RmaEmulPaths, LargePiecesNp2) { run(2, large_pieces); }
TEST_P(RmaEmulPaths, LargePiecesNp3) { run(3, large_pieces); }

INSTANTIATE_TEST_SUITE_P(Rma, RmaEmulPaths, ::testing::ValuesIn(core_test::setups()), core_test::SetupName());

}  // namespace
