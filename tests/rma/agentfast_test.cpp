// The native fast path (rma/native_fast.hpp) beside the agent thread on one
// window. The last rank forces all its operations to the emulation, so
// every other rank runs its agent, which applies that rank's packets to its
// memory while the application thread keeps taking the fast path into the
// same memory and the same window state (puts, gets, fetch_and_op,
// accumulates, compare-and-swap, flushes; no window mutex). Over processes
// on shm the TSan preset runs it (label "threaded"): a field or an element
// both threads touch without the agreed exclusion is a reported race.
// Everywhere the counts end exact and each fetched value is seen once.
#include <algorithm>
#include <cstring>

#include "adi3/device.hpp"
#include "rma/native_fast.hpp"
#include "rma/route.hpp"
#include "rma/window_state.hpp"
#include "tests/rma/rma_harness.hpp"

namespace {

using namespace rma_test;
using adi3::coll::Op;
using adi3::coll::OpKind;

class RmaAgentFast : public core_test::CoreTest {};

constexpr int kIters = 200, kCasEvery = 8;
constexpr int kFop = 0, kAcc = 1, kCas = 2, kPuts = 3;  // slots; kPuts + r: rank r's puts

// One compare-and-swap increment of slot kCas at target t.
void cas_increment(Window* win, int t) {
  const auto* i64 = dt(adi3::Builtin::kInt64);
  int64_t cur = 0;
  for (;;) {
    const int64_t next = cur + 1;
    int64_t old = -1;
    ASSERT_EQ(win->compare_and_swap(&next, &cur, &old, i64, t, kCas), 0);
    ASSERT_EQ(win->flush(t), 0);
    if (old == cur) return;
    cur = old;
  }
}

void agent_beside_fast(Device& dev) {
  const int n = dev.size(), me = dev.rank(), targets = std::min(n, 2);
  const bool emulating = me == n - 1;
  adi3::WinInfo info;
  if (emulating) {
    ASSERT_TRUE(info.set("adi3_emulate_ops", "all"));
  }
  const int slots = kPuts + n;
  void* base = nullptr;
  Window* win = nullptr;
  int e = Window::allocate(dev, slots * 8, 8, info, win_comm(dev), &base, &win);
  ASSERT_EQ(e, 0) << why(dev, e);
  auto* mem = static_cast<int64_t*>(base);
  std::fill(mem, mem + slots, 0);
  const auto* i64 = dt(adi3::Builtin::kInt64);
  const Op sum(OpKind::Sum);
  const int64_t one = 1;
  // Results and origins of emulated operations are used at the flush: they
  // outlive the loop body.
  std::vector<int64_t> fetched(static_cast<std::size_t>(kIters * targets)), puts(fetched.size());
  ASSERT_EQ(dev.barrier(), 0);
  ASSERT_EQ(win->lock_all(0), 0);
  for (int i = 0; i < kIters; ++i) {
    for (int t = 0; t < targets; ++t) {
      const auto k = static_cast<std::size_t>(i * targets + t);
      ASSERT_EQ(win->fetch_and_op(&one, &fetched[k], i64, t, kFop, sum), 0);
      ASSERT_EQ(win->accumulate(&one, 1, i64, t, kAcc, 1, i64, sum), 0);
      puts[k] = i;
      ASSERT_EQ(win->put(&puts[k], 1, i64, t, kPuts + me, 1, i64), 0);
      ASSERT_EQ(win->flush(t), 0);
      // Only this rank writes its put slot: the value is the last put.
      int64_t got = -1;
      ASSERT_EQ(win->get(&got, 1, i64, t, kPuts + me, 1, i64), 0);
      ASSERT_EQ(win->flush(t), 0);
      EXPECT_EQ(got, i);
      if (i % kCasEvery == kCasEvery - 1) cas_increment(win, t);
    }
  }
  ASSERT_EQ(win->unlock_all(), 0);
  const adi3::rma::WindowState& st = win->state();
  const adi3::OneSided* os = dev.channel().onesided();
  if (os && (os->caps().native_ops & adi3::kOsLoadStore) && !dev.config().forced(adi3::kPassiveRma)) {
    // Native ranks took every operation natively, the agent running beside them.
    if (emulating) {
      EXPECT_EQ(st.native_ops, 0u);
    } else {
      EXPECT_EQ(st.emulated_ops, 0u);
      EXPECT_GT(st.native_ops, 0u);
      EXPECT_TRUE(adi3::rma::passive_needs_agent(st)) << "the agent serves the emulating rank's packets";
    }
  }
  ASSERT_EQ(dev.barrier(), 0);
  if (me < targets) {
    EXPECT_EQ(mem[kFop], int64_t{n} * kIters);
    EXPECT_EQ(mem[kAcc], int64_t{n} * kIters);
    EXPECT_EQ(mem[kCas], int64_t{n} * (kIters / kCasEvery));
    for (int r = 0; r < n; ++r) EXPECT_EQ(mem[kPuts + r], kIters - 1) << "rank " << r << "'s last put";
  }
  // Each target's fetched values are 0 .. n * kIters - 1, each once.
  int64_t mine = 0;
  for (int64_t x : fetched) mine += x;
  const int64_t total = core_test::sum_at_root(dev, core_test::ctl_comm(dev, 0x6600), mine, 4);
  if (me == 0) {
    const int64_t k = int64_t{n} * kIters;
    EXPECT_EQ(total, targets * (k * (k - 1) / 2));
  }
  ASSERT_EQ(Window::free(&win), 0);
}

// The native fence of a 2-rank window (rma/fence.cpp pair_fence, what
// MPI_Win_fence takes from the binding) with the agent running: it takes
// no window mutex while nothing is emulated. Each rank puts i into its slot
// at the peer, fences, and finds the peer's i in its own memory; under
// emulation (forced) the agent applies those puts, and the fence waits for
// them under the mutex.
void fence_beside_agent(Device& dev) {
  const int me = dev.rank(), peer = me ^ 1;
  dev.port().require_agent("test: a fence beside the agent");
  void* base = nullptr;
  Window* win = nullptr;
  int e = Window::allocate(dev, 2 * 8, 8, adi3::WinInfo{}, win_comm(dev), &base, &win);
  ASSERT_EQ(e, 0) << why(dev, e);
  auto* mem = static_cast<int64_t*>(base);
  mem[0] = mem[1] = -1;
  const auto* i64 = dt(adi3::Builtin::kInt64);
  ASSERT_EQ(dev.barrier(), 0);
  ASSERT_EQ(win->fence(0), 0);
  // A fence from the binding's path, else the general one.
  int fast = 0;
  auto fence = [&] {
    const int f = adi3::rma::native::fast_fence(win->state(), 0);
    if (f >= 0) ++fast;
    return f >= 0 ? f : win->fence(0);
  };
  for (int i = 0; i < 5 * kIters; ++i) {
    const int64_t v = i;
    ASSERT_EQ(win->put(&v, 1, i64, peer, me, 1, i64), 0);
    ASSERT_EQ(e = fence(), 0) << why(dev, e);
    ASSERT_EQ(mem[peer], i) << "after fence " << i;
    // The read's epoch ends before the peer's next put.
    ASSERT_EQ(e = fence(), 0) << why(dev, e);
  }
  ASSERT_EQ(win->fence(adi3::kModeNoSucceed), 0);
  const adi3::OneSided* os = dev.channel().onesided();
  if (os && (os->caps().native_ops & adi3::kOsLoadStore) && !dev.config().forced(adi3::kActiveRma)) {
    EXPECT_EQ(fast, 10 * kIters) << "every fence took the native fast fence";
  }
  ASSERT_EQ(Window::free(&win), 0);
}

TEST_P(RmaAgentFast, AgentBesideFastPathNp2) { run(2, agent_beside_fast); }
TEST_P(RmaAgentFast, AgentBesideFastPathNp3) { run(3, agent_beside_fast); }
TEST_P(RmaAgentFast, FenceBesideAgentNp2) { run(2, fence_beside_agent); }

INSTANTIATE_TEST_SUITE_P(Rma, RmaAgentFast, ::testing::ValuesIn(core_test::setups()), core_test::SetupName());

}  // namespace
