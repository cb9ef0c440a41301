// Active target on native windows (issue 11): fence and post/start/
// complete/wait through the control blocks' counters, with some operations
// of the same epochs forced to the emulation (adi3_emulate_ops) or falling
// back (accumulates into a window from create reached by cross-memory
// attach), so both kinds of completion meet in one synchronization. Over
// thread-ranks (inproc: everything emulated) and as processes over shm
// (native unless the setup forces the emulation: ShmForceActive keeps the
// packets for fence and PSCW, ShmEmulated for everything).
#include <cstring>
#include <vector>

#include "adi3/device.hpp"
#include "rma/route.hpp"
#include "rma/window_state.hpp"
#include "tests/rma/rma_harness.hpp"

namespace {

using namespace rma_test;
using adi3::coll::Op;
using adi3::coll::OpKind;

class RmaActive : public core_test::CoreTest {};

constexpr int kIters = 30;

// Whether fence and PSCW should go through the counters on this device.
bool counters_expected(Device& dev) {
  return dev.channel().onesided() != nullptr && !dev.config().forced(adi3::kActiveRma);
}

struct Win64 {
  Device& dev;
  Window* win = nullptr;
  int64_t* mem = nullptr;
  std::vector<int64_t> own;
  Win64(Device& d, std::size_t n, bool create, const adi3::WinInfo& info) : dev(d) {
    int e;
    if (create) {
      own.assign(n, 0);
      mem = own.data();
      e = Window::create(dev, mem, static_cast<std::ptrdiff_t>(n * 8), 8, info, win_comm(dev), &win);
    } else {
      void* base = nullptr;
      e = Window::allocate(dev, static_cast<std::ptrdiff_t>(n * 8), 8, info, win_comm(dev), &base, &win);
      mem = static_cast<int64_t*>(base);
    }
    EXPECT_EQ(e, 0) << why(dev, e);
  }
  ~Win64() {
    if (win) {
      int e = Window::free(&win);
      EXPECT_EQ(e, 0) << why(dev, e);
    }
  }
};

// Odd ranks force puts and accumulates to the emulation.
adi3::WinInfo mixed_info(Device& dev) {
  adi3::WinInfo info;
  if (dev.rank() % 2) {
    EXPECT_TRUE(info.set("adi3_emulate_ops", "put,accumulate"));
  }
  return info;
}

// Fence epochs: every rank puts into its right neighbour's slot [me],
// accumulates into slot n of every rank and gets its left neighbour's
// slot n + 1 (written by the owner itself before the fence). The first
// fence of each round asserts NOPRECEDE every other round (operations then
// wait for each target's fence count).
void fences(Device& dev, bool create) {
  const int n = dev.size(), me = dev.rank();
  const auto N = static_cast<std::size_t>(n);
  Win64 w(dev, N + 2, create, mixed_info(dev));
  ASSERT_NE(w.win, nullptr);
  adi3::rma::WindowState& st = w.win->state();
  EXPECT_EQ(adi3::rma::route_active(st).path == adi3::rma::Path::Native, counters_expected(dev))
      << adi3::rma::route_active(st).why;
  const auto* i64 = dt(adi3::Builtin::kInt64);
  const Op sum(OpKind::Sum);
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  ASSERT_EQ(w.win->fence(adi3::kModeNoPrecede), 0);
  for (int i = 0; i < kIters; ++i) {
    // Local stores of the owner, published by the fence.
    w.mem[N + 1] = 1000 * i + me;
    ASSERT_EQ(w.win->fence(i % 2 ? adi3::kModeNoPrecede : 0), 0);
    const int64_t v = 100 * i + me, one = 1;
    int64_t got = -1;
    ASSERT_EQ(w.win->put(&v, 1, i64, right, me, 1, i64), 0);
    for (int r = 0; r < n; ++r) ASSERT_EQ(w.win->accumulate(&one, 1, i64, r, n, 1, i64, sum), 0);
    ASSERT_EQ(w.win->get(&got, 1, i64, left, n + 1, 1, i64), 0);
    ASSERT_EQ(w.win->fence(0), 0);
    EXPECT_EQ(got, 1000 * i + left) << "round " << i;
    EXPECT_EQ(w.mem[left], 100 * i + left) << "round " << i;
    EXPECT_EQ(w.mem[N], int64_t{n} * (i + 1)) << "round " << i;
    if (i % 2) {
      // NOPRECEDE|NOSUCCEED between rounds: no fence at all.
      ASSERT_EQ(w.win->fence(adi3::kModeNoSucceed), 0);
      ASSERT_EQ(w.win->fence(adi3::kModeNoPrecede | adi3::kModeNoSucceed), 0);
      ASSERT_EQ(w.win->fence(adi3::kModeNoPrecede), 0);
    }
  }
  ASSERT_EQ(w.win->fence(adi3::kModeNoSucceed), 0);
  // Even ranks' operations go native once the target's fence is counted
  // (after a NOPRECEDE fence some wait in the emulation's queue instead);
  // odd ranks force theirs.
  if (counters_expected(dev) && me % 2 == 0 && !create) {
    EXPECT_GT(st.native_ops, 0u);
  }
  if (!counters_expected(dev) || me % 2) {
    EXPECT_GT(st.emulated_ops, 0u);
  }
}

TEST_P(RmaActive, FenceAllocateNp2) {
  run(2, [](Device& d) { fences(d, false); });
}
TEST_P(RmaActive, FenceAllocateNp3) {
  run(3, [](Device& d) { fences(d, false); });
}
TEST_P(RmaActive, FenceCreateNp3) {
  run(3, [](Device& d) { fences(d, true); });
}

// PSCW: each rank exposes to its left neighbour and accesses its right one
// (a ring: every rank is origin and target at once), puts, accumulates and
// gets in the epoch; after wait, the owner sees every value.
void pscw(Device& dev, bool create, bool nocheck) {
  const int n = dev.size(), me = dev.rank();
  const auto N = static_cast<std::size_t>(n);
  Win64 w(dev, N + 2, create, mixed_info(dev));
  ASSERT_NE(w.win, nullptr);
  const auto* i64 = dt(adi3::Builtin::kInt64);
  const Op sum(OpKind::Sum);
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  const int to[] = {right}, from[] = {left};
  const int assert = nocheck ? adi3::kModeNoCheck : 0;
  ASSERT_EQ(dev.barrier(), 0);
  for (int i = 0; i < kIters; ++i) {
    w.mem[N + 1] = 1000 * i + me;
    if (nocheck) {
      ASSERT_EQ(dev.barrier(), 0);  // NOCHECK: the start comes after the post
    }
    ASSERT_EQ(w.win->post(from, assert), 0);
    if (nocheck) {
      ASSERT_EQ(dev.barrier(), 0);
    }
    ASSERT_EQ(w.win->start(to, assert), 0);
    const int64_t v = 100 * i + me, one = 1;
    int64_t got = -1;
    ASSERT_EQ(w.win->put(&v, 1, i64, right, 0, 1, i64), 0);
    ASSERT_EQ(w.win->accumulate(&one, 1, i64, right, n, 1, i64, sum), 0);
    ASSERT_EQ(w.win->get(&got, 1, i64, right, n + 1, 1, i64), 0);
    ASSERT_EQ(w.win->complete(), 0);
    EXPECT_EQ(got, 1000 * i + right) << "round " << i;
    if (i % 2) {
      ASSERT_EQ(w.win->wait(), 0);
    } else {
      bool done = false;
      while (!done) ASSERT_EQ(w.win->test(&done), 0);
    }
    EXPECT_EQ(w.mem[0], 100 * i + left) << "round " << i;
    EXPECT_EQ(w.mem[N], i + 1) << "round " << i;
  }
  ASSERT_EQ(dev.barrier(), 0);
}

TEST_P(RmaActive, PscwAllocateNp2) {
  run(2, [](Device& d) { pscw(d, false, false); });
}
TEST_P(RmaActive, PscwAllocateNp3) {
  run(3, [](Device& d) { pscw(d, false, false); });
}
TEST_P(RmaActive, PscwCreateNp3) {
  run(3, [](Device& d) { pscw(d, true, false); });
}
TEST_P(RmaActive, PscwNoCheckNp3) {
  run(3, [](Device& d) { pscw(d, false, true); });
}

INSTANTIATE_TEST_SUITE_P(Rma, RmaActive, ::testing::ValuesIn(core_test::setups()), core_test::SetupName());

}  // namespace
