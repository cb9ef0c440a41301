// NIC windows (verbs on the software device, rma/native_nic.cpp): every
// operation is native, so passive target needs no agent thread. Puts and
// gets over noncontiguous target types are RDMA runs; accumulates of any
// element size (1, 2, 4, unaligned 8 bytes, pairs) and compare-and-swap of
// 4 bytes stay exact when every rank does them at once (NIC stripe locks),
// and never undo a put to a neighbouring byte of the same 8-byte word.
// Built as processes (tests/shm/core_adapter.hpp) and run with the Verbs
// setup only.
#include <cstring>
#include <span>

#include "adi3/device.hpp"
#include "rma/window_state.hpp"
#include "tests/rma/rma_harness.hpp"

namespace {

using namespace rma_test;
using adi3::coll::Op;
using adi3::coll::OpKind;

class NicWindow : public core_test::CoreTest {};

// A NIC window (nothing mapped), not forced to the emulation.
bool nic_device(Device& dev) {
  const adi3::OneSided* os = dev.channel().onesided();
  return os && !(os->caps().native_ops & adi3::kOsLoadStore) && !dev.config().force_emulation &&
         dev.config().force_types == 0;
}

// Every operation took the NIC, and passive target progresses without the
// agent (none was started for the window).
void expect_all_native(Device& dev, Window* win, uint64_t ops) {
  adi3::rma::WindowState& st = win->state();
  EXPECT_TRUE(st.native_usable && st.native && st.native->nic);
  EXPECT_EQ(st.emulated_ops, 0u);
  EXPECT_EQ(st.native_ops, ops);
  EXPECT_TRUE(win->passive_progress());
  EXPECT_FALSE(dev.port().agent_running()) << "a NIC window started the agent";
}

// Puts and gets whose target type is a vector (strided ints), from a
// contiguous and from a noncontiguous origin, and request-based.
void noncontig(Device& dev) {
  if (!nic_device(dev)) GTEST_SKIP() << "not a NIC window";
  const int n = dev.size(), me = dev.rank(), right = (me + 1) % n;
  IntWin w(dev, 64);
  Window* win = w.win;
  Type every3(vector_of_ints(8, 1, 3));  // 8 ints, stride 3 (target)
  Type pairs(vector_of_ints(4, 2, 5));   // 4 blocks of 2, stride 5 (target)
  Type every2(vector_of_ints(8, 1, 2));  // 8 ints, stride 2 (origin)
  std::vector<int> src(8), back(8, -1), src2(16), back2(8, -1);
  for (int i = 0; i < 8; ++i) src[static_cast<std::size_t>(i)] = 1000 * (me + 1) + i;
  for (int i = 0; i < 16; ++i) src2[static_cast<std::size_t>(i)] = 2000 * (me + 1) + i;
  ASSERT_EQ(dev.barrier(), 0);
  ASSERT_EQ(win->lock_all(0), 0);
  ASSERT_EQ(win->put(src.data(), 8, int_t(), right, 0, 1, every3), 0);  // [0, 3, ..., 21]
  ASSERT_EQ(win->put(src2.data(), 1, every2, right, 30, 1, pairs), 0);  // [30,31, 35,36, 40,41, 45,46]
  ASSERT_EQ(win->flush(right), 0);
  ASSERT_EQ(win->get(back.data(), 8, int_t(), right, 0, 1, every3), 0);
  adi3::Request* req = nullptr;
  ASSERT_EQ(win->rget(back2.data(), 8, int_t(), right, 30, 1, pairs, &req), 0);
  ASSERT_EQ(dev.wait(&req, nullptr), 0);
  ASSERT_EQ(win->unlock_all(), 0);
  EXPECT_EQ(back, src);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(back2[static_cast<std::size_t>(i)], src2[static_cast<std::size_t>(2 * i)]);
  ASSERT_EQ(dev.barrier(), 0);
  const int left = (me + n - 1) % n;
  for (int i = 0; i < 64; ++i) {
    int want = 100 * me + i;  // untouched
    if (i % 3 == 0 && i < 24) want = 1000 * (left + 1) + i / 3;
    const int k = i - 30;
    if (k >= 0 && k < 20 && k % 5 < 2) want = 2000 * (left + 1) + 2 * (k / 5 * 2 + k % 5);
    EXPECT_EQ(w.mem[i], want) << "element " << i;
  }
  expect_all_native(dev, win, 4);
  ASSERT_EQ(dev.barrier(), 0);
}

TEST_P(NicWindow, NoncontiguousPutGetNp2) { run(2, noncontig); }
TEST_P(NicWindow, NoncontiguousPutGetNp3) { run(3, noncontig); }

// Every rank accumulates into rank 0 at once, kIters times, on elements
// the NIC's 8-byte atomics cannot take alone; rank n-1 meanwhile puts a
// byte into the same 8-byte word as the small elements.
void small_elements(Device& dev) {
  if (!nic_device(dev)) GTEST_SKIP() << "not a NIC window";
  const int n = dev.size(), me = dev.rank();
  constexpr int kIters = 40;  // n * kIters fits the int8 sum
  void* base = nullptr;
  Window* win = nullptr;
  int e = Window::allocate(dev, 128, 1, {}, win_comm(dev), &base, &win);
  ASSERT_EQ(e, 0) << why(dev, e);
  auto* mem = static_cast<char*>(base);
  const Op sum(OpKind::Sum), max(OpKind::Max), minloc(OpKind::Minloc);
  const auto *i8 = dt(adi3::Builtin::kInt8), *i16 = dt(adi3::Builtin::kInt16), *i32 = dt(adi3::Builtin::kInt32),
             *i64 = dt(adi3::Builtin::kInt64), *di = dt(adi3::Builtin::kDoubleInt);
  Type strided(vector_of_ints(4, 1, 2));  // ints at 64, 72, 80, 88
  const int8_t one8 = 1;
  const int16_t two = 2;
  const int32_t three = 3;
  const int64_t four = 4;
  const int32_t fours[4] = {1, 2, 3, 4};
  std::vector<int32_t> fetched(kIters), swapped(kIters, 0);
  struct {
    double v;
    int i;
  } loc{};
  if (me == 0) {
    loc.v = 1e9;  // above every rank's values: MINLOC replaces it
    loc.i = -1;
    std::memcpy(mem + 32, &loc, sizeof loc);
  }
  ASSERT_EQ(dev.barrier(), 0);
  ASSERT_EQ(win->lock_all(0), 0);
  uint64_t ops = 0;
  for (int i = 0; i < kIters; ++i) {
    ASSERT_EQ(win->accumulate(&one8, 1, i8, 0, 1, 1, i8, sum), 0);     // byte 1
    ASSERT_EQ(win->accumulate(&two, 1, i16, 0, 2, 1, i16, sum), 0);    // bytes 2-3
    ASSERT_EQ(win->accumulate(&three, 1, i32, 0, 4, 1, i32, sum), 0);  // bytes 4-7
    ASSERT_EQ(win->accumulate(&four, 1, i64, 0, 9, 1, i64, sum), 0);   // unaligned 8 bytes
    const int32_t v = 1000 * me + i;
    ASSERT_EQ(win->accumulate(&v, 1, i32, 0, 20, 1, i32, max), 0);
    const int32_t one32 = 1;
    ASSERT_EQ(win->fetch_and_op(&one32, &fetched[static_cast<std::size_t>(i)], i32, 0, 24, sum), 0);
    loc.v = 100.0 - me - 0.5 * i;
    loc.i = me * 1000 + i;
    ASSERT_EQ(win->accumulate(&loc, 1, di, 0, 32, 1, di, minloc), 0);
    ASSERT_EQ(win->accumulate(fours, 4, int_t(), 0, 64, 1, strided, sum), 0);
    // A counter incremented by compare-and-swap loops on 4 bytes.
    int32_t cur = 0;
    for (;;) {
      int32_t next = cur + 1, old = 0;
      ASSERT_EQ(win->compare_and_swap(&next, &cur, &old, i32, 0, 28), 0);
      ++ops;
      if (old == cur) break;
      cur = old;
    }
    ops += 8;
    if (me == n - 1) {
      const int8_t b = static_cast<int8_t>(i + 1);
      ASSERT_EQ(win->put(&b, 1, i8, 0, 0, 1, i8), 0);
      ASSERT_EQ(win->flush(0), 0);
      ++ops;
    }
  }
  ASSERT_EQ(win->unlock_all(), 0);
  ASSERT_EQ(dev.barrier(), 0);
  if (me == 0) {
    int8_t b0, b1;
    int16_t s16;
    int32_t s32, m32, f32, c32, v[4];
    int64_t s64;
    std::memcpy(&b0, mem + 0, 1);
    std::memcpy(&b1, mem + 1, 1);
    std::memcpy(&s16, mem + 2, 2);
    std::memcpy(&s32, mem + 4, 4);
    std::memcpy(&s64, mem + 9, 8);
    std::memcpy(&m32, mem + 20, 4);
    std::memcpy(&f32, mem + 24, 4);
    std::memcpy(&c32, mem + 28, 4);
    std::memcpy(&loc, mem + 32, sizeof loc);
    for (int k = 0; k < 4; ++k) std::memcpy(&v[k], mem + 64 + 8 * k, 4);
    EXPECT_EQ(b0, kIters) << "a put to a neighbouring byte was undone";
    EXPECT_EQ(b1, static_cast<int8_t>(n * kIters));
    EXPECT_EQ(s16, 2 * n * kIters);
    EXPECT_EQ(s32, 3 * n * kIters);
    EXPECT_EQ(s64, int64_t{4} * n * kIters);
    EXPECT_EQ(m32, 1000 * (n - 1) + kIters - 1);
    EXPECT_EQ(f32, n * kIters);
    EXPECT_EQ(c32, n * kIters);
    EXPECT_EQ(loc.v, 100.0 - (n - 1) - 0.5 * (kIters - 1));
    EXPECT_EQ(loc.i, (n - 1) * 1000 + kIters - 1);
    for (int k = 0; k < 4; ++k) EXPECT_EQ(v[k], (k + 1) * n * kIters) << "strided element " << k;
    for (int k = 0; k < 4; ++k) {
      int32_t gap;
      std::memcpy(&gap, mem + 68 + 8 * k, 4);
      EXPECT_EQ(gap, 0) << "the gap after strided element " << k;
    }
  }
  // fetch_and_op saw every value once: the sum of what all ranks fetched.
  int64_t mine = 0;
  for (int32_t x : fetched) mine += x;
  int64_t total = 0;
  const adi3::Comm c = core_test::ctl_comm(dev, 0x6600);
  if (me != 0) {
    ASSERT_EQ(dev.send(&mine, sizeof mine, adi3::Datatype::byte(), 0, 5, c), 0);
  } else {
    total = mine;
    for (int r = 1; r < n; ++r) {
      int64_t x = 0;
      ASSERT_EQ(dev.recv(&x, sizeof x, adi3::Datatype::byte(), r, 5, c, nullptr), 0);
      total += x;
    }
    const int64_t k = int64_t{n} * kIters;
    EXPECT_EQ(total, k * (k - 1) / 2);
  }
  expect_all_native(dev, win, ops);
  ASSERT_EQ(Window::free(&win), 0);
}

TEST_P(NicWindow, SmallElementsExactNp2) { run(2, small_elements); }
TEST_P(NicWindow, SmallElementsExactNp3) { run(3, small_elements); }

// get_accumulate over a noncontiguous target of 2-byte elements, and a
// window from create (the user's memory registered): fetched values are
// the ones before each rank's sum, exclusive-lock epochs in turn.
void get_acc_create(Device& dev) {
  if (!nic_device(dev)) GTEST_SKIP() << "not a NIC window";
  const int n = dev.size(), me = dev.rank();
  std::vector<int16_t> own(32, 0);
  Window* win = nullptr;
  int e = Window::create(dev, own.data(), 64, 2, {}, win_comm(dev), &win);
  ASSERT_EQ(e, 0) << why(dev, e);
  adi3::Datatype* t = nullptr;
  ASSERT_EQ(adi3::type_vector(5, 1, 3, dt(adi3::Builtin::kInt16), &t), adi3::ErrorClass::Success);
  Type every3(t);
  const int16_t add[5] = {1, 1, 1, 1, 1};
  int16_t before[5] = {};
  ASSERT_EQ(dev.barrier(), 0);
  ASSERT_EQ(win->lock(adi3::LockType::Exclusive, 0, 0), 0);
  ASSERT_EQ(win->get_accumulate(add, 5, dt(adi3::Builtin::kInt16), before, 5, dt(adi3::Builtin::kInt16), 0, 1, 1,
                                every3, Op(OpKind::Sum)),
            0);
  ASSERT_EQ(win->unlock(0), 0);
  for (int k = 1; k < 5; ++k) EXPECT_EQ(before[k], before[0]);
  EXPECT_GE(before[0], 0);
  EXPECT_LT(before[0], n);
  ASSERT_EQ(dev.barrier(), 0);
  if (me == 0) {
    for (int i = 0; i < 32; ++i)
      EXPECT_EQ(own[static_cast<std::size_t>(i)], (i >= 1 && i <= 13 && (i - 1) % 3 == 0) ? n : 0) << i;
  }
  expect_all_native(dev, win, 1);
  ASSERT_EQ(Window::free(&win), 0);
}

TEST_P(NicWindow, GetAccumulateCreateNp3) { run(3, get_acc_create); }

// A target type of many 4-byte runs (every other int). In a PSCW epoch the
// put goes to the emulation (ADI3_VERBS_PUT_MIN_RUN: the target serves
// packets until its wait anyway); under fence the get reads the covering
// span once; under lock_all (no agent) the puts stay RDMA chains and never
// write a gap: every rank puts the even ints of its right neighbour while
// that neighbour puts its own odd ints, and both survive.
void fragmented(Device& dev) {
  if (!nic_device(dev)) GTEST_SKIP() << "not a NIC window";
  constexpr int kN = 8192;
  const int n = dev.size(), me = dev.rank(), right = (me + 1) % n, left = (me + n - 1) % n;
  IntWin w(dev, 2 * kN);
  Window* win = w.win;
  Type strided(vector_of_ints(kN, 1, 2));
  std::vector<int> src(kN), back(kN, -1), odd(kN);
  for (int i = 0; i < kN; ++i) {
    src[static_cast<std::size_t>(i)] = 7 * me + 3 * i;
    odd[static_cast<std::size_t>(i)] = -(me + 1) * i;
  }
  adi3::rma::WindowState& st = win->state();
  ASSERT_EQ(dev.barrier(), 0);
  ASSERT_EQ(win->post(std::span<const int>(&left, 1), 0), 0);
  ASSERT_EQ(win->start(std::span<const int>(&right, 1), 0), 0);
  ASSERT_EQ(win->put(src.data(), kN, int_t(), right, 0, 1, strided), 0);
  ASSERT_EQ(win->complete(), 0);
  ASSERT_EQ(win->wait(), 0);
  EXPECT_EQ(st.emulated_ops, 1u) << "the fragmented put in a PSCW epoch did not take the emulation";
  ASSERT_EQ(win->fence(0), 0);
  for (int i = 0; i < kN; ++i) {
    ASSERT_EQ(w.mem[2 * i], 7 * left + 3 * i) << i;
    ASSERT_EQ(w.mem[2 * i + 1], 100 * me + 2 * i + 1) << i;
  }
  ASSERT_EQ(win->get(back.data(), kN, int_t(), right, 0, 1, strided), 0);
  ASSERT_EQ(win->fence(adi3::kModeNoSucceed), 0);
  EXPECT_EQ(back, src);
  EXPECT_EQ(st.emulated_ops, 1u) << "the strided get did not take the NIC";
  ASSERT_EQ(dev.barrier(), 0);
  ASSERT_EQ(win->lock_all(0), 0);
  for (int i = 0; i < kN; ++i) src[static_cast<std::size_t>(i)] += 1000000;
  ASSERT_EQ(win->put(src.data(), kN, int_t(), right, 0, 1, strided), 0);
  ASSERT_EQ(win->put(odd.data(), kN, int_t(), me, 1, 1, strided), 0);
  ASSERT_EQ(win->unlock_all(), 0);
  ASSERT_EQ(dev.barrier(), 0);
  for (int i = 0; i < kN; ++i) {
    ASSERT_EQ(w.mem[2 * i], 7 * left + 3 * i + 1000000) << i;
    ASSERT_EQ(w.mem[2 * i + 1], -(me + 1) * i) << i;
  }
  EXPECT_EQ(st.emulated_ops, 1u) << "a put in a passive epoch without an agent took the emulation";
  EXPECT_EQ(st.native_ops, 3u);
  EXPECT_FALSE(dev.port().agent_running());
  ASSERT_EQ(dev.barrier(), 0);
}

TEST_P(NicWindow, FragmentedPutGetNp2) { run(2, fragmented); }
TEST_P(NicWindow, FragmentedPutGetNp3) { run(3, fragmented); }

INSTANTIATE_TEST_SUITE_P(Verbs, NicWindow, ::testing::ValuesIn(core_test::setups()), core_test::SetupName());

}  // namespace
