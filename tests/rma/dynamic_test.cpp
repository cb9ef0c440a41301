// Dynamic windows (MPI_Win_create_dynamic, attach, detach) natively and
// emulated: over thread-ranks (inproc: emulated) and as processes over shm
// (puts, gets and accumulates go by the target's table of attached
// regions unless the setup forces the emulation).
#include <cstdio>
#include <cstring>
#include <thread>

#include "adi3/device.hpp"
#include "rma/memory.hpp"
#include "rma/window_state.hpp"
#include "tests/rma/rma_harness.hpp"

namespace {

using namespace rma_test;
using adi3::ErrorClass;
using adi3::LockType;
using adi3::coll::Op;
using adi3::coll::OpKind;

class RmaDynamic : public core_test::CoreTest {};

const adi3::Datatype* i64() { return dt(adi3::Builtin::kInt64); }

// Every rank's value of `mine` (point-to-point on a control comm).
std::vector<std::ptrdiff_t> all_of(Device& dev, std::ptrdiff_t mine, int tag) {
  const adi3::Comm c = core_test::ctl_comm(dev, 0x6600);
  std::vector<std::ptrdiff_t> all(static_cast<std::size_t>(dev.size()));
  for (int r = 0; r < dev.size(); ++r) {
    if (r != dev.rank()) {
      EXPECT_EQ(dev.send(&mine, sizeof mine, adi3::Datatype::byte(), r, tag, c), 0);
    }
  }
  for (int r = 0; r < dev.size(); ++r) {
    auto& x = all[static_cast<std::size_t>(r)];
    if (r == dev.rank()) {
      x = mine;
    } else {
      EXPECT_EQ(dev.recv(&x, sizeof x, adi3::Datatype::byte(), r, tag, c, nullptr), 0);
    }
  }
  return all;
}

// The paths a put or get on a dynamic window may take here: native when
// the channel has a one-sided part and passive target is not forced.
bool native_passive(Device& dev) {
  if (std::strcmp(dev.channel().name(), "shm") == 0) {
    EXPECT_NE(dev.channel().onesided(), nullptr) << "the shm channel's one-sided part is not reachable";
  }
  return dev.channel().onesided() != nullptr && !dev.config().forced(adi3::kPassiveRma);
}

constexpr std::size_t kWords = 4096;  // 32 KiB per region
constexpr std::size_t kBig = 2048;    // 16 KiB: larger than what goes as a packet to a polling target

// Two regions per rank (heap memory, reached by cross-memory attach, and
// MPI_Alloc_mem memory, mapped): big and small puts and gets to the right
// neighbour under lock_all and fence, accumulates to rank 0, all exact.
void paths(Device& dev) {
  const int n = dev.size(), me = dev.rank(), right = (me + 1) % n, left = (me + n - 1) % n;
  std::vector<int64_t> heap(kWords, -1);
  void* am = nullptr;
  ASSERT_EQ(adi3::alloc_mem(dev, kWords * sizeof(int64_t), &am), 0);
  auto* mapped = static_cast<int64_t*>(am);
  for (std::size_t i = 0; i < kWords; ++i) mapped[i] = -1;
  Window* win = nullptr;
  int e = Window::create_dynamic(dev, {}, win_comm(dev), &win);
  ASSERT_EQ(e, 0) << why(dev, e);
  ASSERT_EQ(win->attach(heap.data(), kWords * sizeof(int64_t)), 0);
  ASSERT_EQ(win->attach(mapped, kWords * sizeof(int64_t)), 0);
  const auto H = all_of(dev, reinterpret_cast<std::ptrdiff_t>(heap.data()), 1);
  const auto A = all_of(dev, reinterpret_cast<std::ptrdiff_t>(mapped), 2);
  auto at = [](const std::vector<std::ptrdiff_t>& b, int r, std::size_t i) {
    return b[static_cast<std::size_t>(r)] + static_cast<std::ptrdiff_t>(i * sizeof(int64_t));
  };
  std::vector<int64_t> src(kBig), back(kBig, 0);
  for (std::size_t i = 0; i < kBig; ++i) src[i] = 10000 * me + static_cast<int64_t>(i);
  const int64_t small = 7000 + me, one = 1;
  const Op sum(OpKind::Sum);
  ASSERT_EQ(dev.barrier(), 0);
  // passive target
  ASSERT_EQ(win->lock_all(0), 0);
  ASSERT_EQ(win->put(src.data(), kBig, i64(), right, at(H, right, 0), kBig, i64()), 0);
  ASSERT_EQ(win->put(src.data(), kBig, i64(), right, at(A, right, 0), kBig, i64()), 0);
  ASSERT_EQ(win->put(&small, 1, i64(), right, at(H, right, 3000), 1, i64()), 0);
  ASSERT_EQ(win->put(&small, 1, i64(), right, at(A, right, 3000), 1, i64()), 0);
  ASSERT_EQ(win->accumulate(&one, 1, i64(), 0, at(H, 0, 4000), 1, i64(), sum), 0);
  ASSERT_EQ(win->accumulate(&one, 1, i64(), 0, at(A, 0, 4000), 1, i64(), sum), 0);
  ASSERT_EQ(win->flush_all(), 0);
  ASSERT_EQ(win->get(back.data(), kBig, i64(), right, at(H, right, 0), kBig, i64()), 0);
  ASSERT_EQ(win->flush(right), 0);
  EXPECT_EQ(back, src);
  std::fill(back.begin(), back.end(), 0);
  ASSERT_EQ(win->get(back.data(), kBig, i64(), right, at(A, right, 0), kBig, i64()), 0);
  ASSERT_EQ(win->unlock_all(), 0);
  EXPECT_EQ(back, src);
  ASSERT_EQ(dev.barrier(), 0);
  for (std::size_t i = 0; i < kBig; ++i) {
    ASSERT_EQ(heap[i], 10000 * left + static_cast<int64_t>(i)) << i;
    ASSERT_EQ(mapped[i], 10000 * left + static_cast<int64_t>(i)) << i;
  }
  EXPECT_EQ(heap[kBig], -1);
  EXPECT_EQ(mapped[kBig], -1);
  EXPECT_EQ(heap[3000], 7000 + left);
  EXPECT_EQ(mapped[3000], 7000 + left);
  if (me == 0) {
    EXPECT_EQ(heap[4000], n - 1);  // -1 + one from every rank
    EXPECT_EQ(mapped[4000], n - 1);
  }
  // active target
  ASSERT_EQ(win->fence(0), 0);
  ASSERT_EQ(win->put(src.data(), kBig, i64(), right, at(A, right, kBig), kBig, i64()), 0);
  ASSERT_EQ(win->fence(0), 0);
  ASSERT_EQ(win->get(back.data(), kBig, i64(), right, at(A, right, kBig), kBig, i64()), 0);
  ASSERT_EQ(win->fence(adi3::kModeNoSucceed), 0);
  EXPECT_EQ(back, src);
  for (std::size_t i = 0; i < kBig; ++i) ASSERT_EQ(mapped[kBig + i], 10000 * left + static_cast<int64_t>(i)) << i;
  adi3::rma::WindowState& st = win->state();
  EXPECT_EQ(st.native_usable, dev.channel().onesided() != nullptr && !dev.config().force_emulation);
  if (!st.native_usable) {
    EXPECT_EQ(st.native_ops, 0u);
  } else if (native_passive(dev)) {
    // The big copies into mapped memory always go natively (those into
    // heap memory too where the kernel permits cross-memory attach; small
    // ones and the accumulates may go as packets while the target polls).
    EXPECT_GE(st.native_ops, 4u);
  }
  EXPECT_EQ(st.native_ops + st.emulated_ops, 10u);
  if (me == 0)
    std::printf("dynamic paths: %llu native, %llu emulated\n", static_cast<unsigned long long>(st.native_ops),
                static_cast<unsigned long long>(st.emulated_ops));
  ASSERT_EQ(dev.barrier(), 0);
  ASSERT_EQ(win->detach(heap.data()), 0);
  ASSERT_EQ(win->detach(mapped), 0);
  ASSERT_EQ(Window::free(&win), 0);
  ASSERT_EQ(adi3::free_mem(dev, am), 0);
}

TEST_P(RmaDynamic, PathsNp2) { run(2, paths); }
TEST_P(RmaDynamic, PathsNp3) { run(3, paths); }

// Accumulates from every other rank at once into rank 0's heap region
// (reached by cross-memory attach) and MPI_Alloc_mem region (mapped), the
// even origins forcing theirs to the emulation (adi3_emulate_ops), so rank
// 0 applies packets while the odd origins combine natively into the same
// elements: int64 sums of 1,100 elements (8,800 bytes: native whatever the
// target does), double and int16 sums, and fetch_and_op, all exact. (Rank
// 0 does not accumulate into itself: under TSan its large packets through
// its own ring meet a known report in the ring's empty(), which reads a
// stale head another thread publishes late.)
void acc_exact(Device& dev) {
  const int n = dev.size(), me = dev.rank();
  constexpr int kIters = 40;
  constexpr std::size_t kLong = 1100, kD = kLong, kS = kLong + 1, kF = kLong + 2;
  std::vector<int64_t> heap(kWords, 0);
  void* am = nullptr;
  ASSERT_EQ(adi3::alloc_mem(dev, kWords * sizeof(int64_t), &am), 0);
  auto* mapped = static_cast<int64_t*>(am);
  std::memset(mapped, 0, kWords * sizeof(int64_t));
  adi3::WinInfo info;
  const bool forced = me != 0 && me % 2 == 0;
  if (forced) {
    ASSERT_TRUE(info.set("adi3_emulate_ops", "accumulate,get_accumulate,fetch_and_op,compare_and_swap"));
  }
  Window* win = nullptr;
  int e = Window::create_dynamic(dev, info, win_comm(dev), &win);
  ASSERT_EQ(e, 0) << why(dev, e);
  ASSERT_EQ(win->attach(heap.data(), kWords * sizeof(int64_t)), 0);
  ASSERT_EQ(win->attach(mapped, kWords * sizeof(int64_t)), 0);
  const auto H = all_of(dev, reinterpret_cast<std::ptrdiff_t>(heap.data()), 6);
  const auto A = all_of(dev, reinterpret_cast<std::ptrdiff_t>(mapped), 7);
  const std::ptrdiff_t base[2] = {A[0], H[0]};  // mapped first: its long sum after a flush is native
  const std::vector<int64_t> ones(kLong, 1);
  const double half = 0.5;
  const int16_t two = 2;
  const int64_t one = 1;
  const auto* f64 = dt(adi3::Builtin::kDouble);
  const auto* i16 = dt(adi3::Builtin::kInt16);
  const Op sum(OpKind::Sum);
  std::vector<int64_t> seen(2 * kIters);  // written at the flush: outlives the epoch
  ASSERT_EQ(dev.barrier(), 0);
  ASSERT_EQ(win->lock_all(0), 0);
  for (int i = 0; i < kIters && me != 0; ++i) {
    for (int r = 0; r < 2; ++r) {
      const std::ptrdiff_t b = base[r];
      ASSERT_EQ(win->accumulate(ones.data(), kLong, i64(), 0, b, kLong, i64(), sum), 0);
      ASSERT_EQ(win->accumulate(&half, 1, f64, 0, b + kD * 8, 1, f64, sum), 0);
      ASSERT_EQ(win->accumulate(&two, 1, i16, 0, b + kS * 8 + 2, 1, i16, sum), 0);
      ASSERT_EQ(win->fetch_and_op(&one, &seen[static_cast<std::size_t>(2 * i + r)], i64(), 0, b + kF * 8, sum), 0);
    }
    // After a flush nothing emulated is in flight, so the next long sum
    // goes natively (the small ones may then go as packets while rank 0
    // polls, and what follows them in the epoch stays behind them).
    ASSERT_EQ(win->flush(0), 0);
  }
  ASSERT_EQ(win->unlock_all(), 0);
  adi3::rma::WindowState& st = win->state();
  EXPECT_EQ(st.native_ops + st.emulated_ops, me == 0 ? 0u : 8u * kIters);
  if (st.native_usable && native_passive(dev) && me != 0) {
    if (forced) {
      EXPECT_EQ(st.native_ops, 0u);
    } else {
      // The first long sum after each flush at least (into mapped memory).
      EXPECT_GE(st.native_ops, static_cast<uint64_t>(kIters));
    }
  }
  if (me == 1)
    std::printf("dynamic accumulates: %llu native, %llu emulated\n", static_cast<unsigned long long>(st.native_ops),
                static_cast<unsigned long long>(st.emulated_ops));
  ASSERT_EQ(dev.barrier(), 0);
  if (me == 0) {
    for (const int64_t* m : {static_cast<const int64_t*>(heap.data()), static_cast<const int64_t*>(mapped)}) {
      for (std::size_t i = 0; i < kLong; ++i) ASSERT_EQ(m[i], int64_t{n - 1} * kIters) << i;
      double d;
      int16_t s;
      std::memcpy(&d, m + kD, 8);
      std::memcpy(&s, reinterpret_cast<const char*>(m + kS) + 2, 2);
      EXPECT_EQ(d, 0.5 * (n - 1) * kIters);
      EXPECT_EQ(s, 2 * (n - 1) * kIters);
      EXPECT_EQ(m[kF], int64_t{n - 1} * kIters);
    }
  }
  // Every fetched value of each counter is distinct: their sum over all
  // ranks is twice 0 + 1 + ... + k - 1 (k = (n - 1) * kIters).
  int64_t mine = 0;
  for (int64_t x : seen) mine += x;  // rank 0's stay 0
  const auto all = all_of(dev, static_cast<std::ptrdiff_t>(mine), 8);
  if (me == 0) {
    int64_t total = 0;
    for (std::ptrdiff_t x : all) total += x;
    const int64_t k = int64_t{n - 1} * kIters;
    EXPECT_EQ(total, k * (k - 1));
  }
  ASSERT_EQ(dev.barrier(), 0);
  ASSERT_EQ(win->detach(heap.data()), 0);
  ASSERT_EQ(win->detach(mapped), 0);
  ASSERT_EQ(Window::free(&win), 0);
  ASSERT_EQ(adi3::free_mem(dev, am), 0);
}

TEST_P(RmaDynamic, AccumulateExactNp2) { run(2, acc_exact); }
TEST_P(RmaDynamic, AccumulateExactNp3) { run(3, acc_exact); }

// An address the target never attached (or detached): RMA_RANGE at the
// next synchronization, nothing written or read, and natively the message
// names the address.
TEST_P(RmaDynamic, UnattachedAddressNp2) {
  run(2, [](Device& dev) {
    const int me = dev.rank(), t = 1 - me;
    std::vector<int64_t> mem(2 * kWords, -1);
    Window* win = nullptr;
    ASSERT_EQ(Window::create_dynamic(dev, {}, win_comm(dev), &win), 0);
    // Only the first half is attached; then a region is attached and
    // detached again.
    ASSERT_EQ(win->attach(mem.data(), kWords * sizeof(int64_t)), 0);
    std::vector<int64_t> gone(kWords, -1);
    ASSERT_EQ(win->attach(gone.data(), kWords * sizeof(int64_t)), 0);
    ASSERT_EQ(win->detach(gone.data()), 0);
    const auto B = all_of(dev, reinterpret_cast<std::ptrdiff_t>(mem.data()), 3);
    const auto G = all_of(dev, reinterpret_cast<std::ptrdiff_t>(gone.data()), 4);
    ASSERT_EQ(dev.barrier(), 0);
    std::vector<int64_t> v(kBig, 5), back(kBig, -2);
    const std::ptrdiff_t past = B[static_cast<std::size_t>(t)] + static_cast<std::ptrdiff_t>(kWords * sizeof(int64_t));
    ASSERT_EQ(win->lock(LockType::Exclusive, t, 0), 0);
    ASSERT_EQ(win->put(v.data(), kBig, i64(), t, past, kBig, i64()), 0);
    int e = win->unlock(t);
    ASSERT_TRUE(e && adi3::error_class_of(e) == ErrorClass::RmaRange) << why(dev, e);
    if (win->state().native_usable && native_passive(dev)) {
      char addr[32];
      std::snprintf(addr, sizeof addr, "%#llx", static_cast<unsigned long long>(past));
      EXPECT_NE(why(dev, e).find(addr), std::string::npos) << why(dev, e) << " does not name " << addr;
    }
    // Straddling the attached region's end.
    ASSERT_EQ(win->lock(LockType::Shared, t, 0), 0);
    ASSERT_EQ(win->get(back.data(), kBig, i64(), t, past - 64, kBig, i64()), 0);
    e = win->unlock(t);
    EXPECT_TRUE(e && adi3::error_class_of(e) == ErrorClass::RmaRange) << why(dev, e);
    // Into the detached region.
    ASSERT_EQ(win->lock(LockType::Shared, t, 0), 0);
    ASSERT_EQ(win->get(back.data(), kBig, i64(), t, G[static_cast<std::size_t>(t)], kBig, i64()), 0);
    e = win->unlock(t);
    EXPECT_TRUE(e && adi3::error_class_of(e) == ErrorClass::RmaRange) << why(dev, e);
    EXPECT_EQ(back[0], -2);
    EXPECT_EQ(back[kBig - 1], -2);
    ASSERT_EQ(dev.barrier(), 0);
    for (std::size_t i = 0; i < mem.size(); ++i) ASSERT_EQ(mem[i], -1) << i;
    for (std::size_t i = 0; i < gone.size(); ++i) ASSERT_EQ(gone[i], -1) << i;
    ASSERT_EQ(win->detach(mem.data()), 0);
    ASSERT_EQ(Window::free(&win), 0);
  });
}

// Detach while an origin keeps writing (erroneous by the standard, but it
// must neither corrupt nor crash): rank 1 attaches and detaches a buffer
// over and over and, each time detach returned, fills it with a pattern
// that must survive until the next attach; rank 0 puts into it meanwhile.
// Each put either lands while attached or is refused (RMA_RANGE).
TEST_P(RmaDynamic, DetachUnderAccessNp2) {
  run(2, [](Device& dev) {
    const int me = dev.rank();
    constexpr int kCycles = 150, kPuts = 300;
    std::vector<int64_t> buf(kBig, 0);
    Window* win = nullptr;
    ASSERT_EQ(Window::create_dynamic(dev, {}, win_comm(dev), &win), 0);
    const auto B = all_of(dev, reinterpret_cast<std::ptrdiff_t>(buf.data()), 5);
    ASSERT_EQ(dev.barrier(), 0);
    if (me == 0) {
      std::vector<int64_t> v(kBig, 1);
      int landed = 0, refused = 0;
      ASSERT_EQ(win->lock_all(0), 0);
      for (int i = 0; i < kPuts; ++i) {
        ASSERT_EQ(win->put(v.data(), kBig, i64(), 1, B[1], kBig, i64()), 0);
        const int e = win->flush(1);
        if (e == 0) {
          ++landed;
        } else {
          ASSERT_EQ(adi3::error_class_of(e), ErrorClass::RmaRange) << why(dev, e);
          ++refused;
        }
      }
      ASSERT_EQ(win->unlock_all(), 0);
      EXPECT_EQ(landed + refused, kPuts);
      std::printf("detach under access: %d puts landed, %d refused (native %llu)\n", landed, refused,
                  static_cast<unsigned long long>(win->state().native_ops));
    } else {
      auto untouched = [&] {
        for (int64_t x : buf) {
          if (x != 0x5a5a) return false;
        }
        return true;
      };
      for (int c = 0; c < kCycles; ++c) {
        ASSERT_EQ(win->attach(buf.data(), kBig * sizeof(int64_t)), 0);
        std::this_thread::yield();
        ASSERT_EQ(win->detach(buf.data()), 0);
        std::fill(buf.begin(), buf.end(), 0x5a5a);
        std::this_thread::yield();
        ASSERT_TRUE(untouched()) << "written after detach returned (cycle " << c << ")";
      }
    }
    ASSERT_EQ(dev.barrier(), 0);
    if (me == 1) {
      for (int64_t x : buf) ASSERT_EQ(x, 0x5a5a);
    }
    ASSERT_EQ(Window::free(&win), 0);
  });
}

INSTANTIATE_TEST_SUITE_P(Rma, RmaDynamic, ::testing::ValuesIn(core_test::setups()), core_test::SetupName());

}  // namespace
