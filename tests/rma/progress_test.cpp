// Passive-target progress (type 4 over type 2): the target computes without
// calling the library while the origin runs lock / put / get / unlock 1,000
// times, then puts a done mark; the agent (or the native path) serves the
// target's lock queue and operations, so the target sees the mark while it
// still computes. The target gives up after 25 s: no wall-clock bound tighter
// than that, so a loaded machine slows the test but does not fail it.
// Windows from create and from allocate.
#include <atomic>
#include <chrono>

#include "tests/rma/rma_harness.hpp"

namespace {

using namespace rma_test;
using Clock = std::chrono::steady_clock;

class RmaProgress : public core_test::CoreTest {};

void progress_while_computing(Device& dev, Flavor flavor) {
  IntWin w(dev, 16, flavor);
  ASSERT_NE(w.win, nullptr);
  if (!w.win->passive_progress()) {
    ASSERT_EQ(dev.barrier(), 0);
    GTEST_SKIP() << "no agent runs (ADI3_ASYNC_PROGRESS=off): passive target progresses only inside calls";
  }
  ASSERT_EQ(dev.barrier(), 0);
  constexpr auto kGiveUp = std::chrono::seconds(25);
  constexpr int kIters = 1000;
  constexpr int kDone = 0x600d;
  if (dev.rank() == 1) {
    // Compute, with no library call, until the origin's done mark lands.
    const auto start = Clock::now();
    std::atomic_ref<int> mark(w.mem[2]);
    volatile uint64_t x = 0;
    while (mark.load(std::memory_order_acquire) != kDone && Clock::now() - start < kGiveUp) {
      for (int i = 0; i < 1000; ++i) x = x + 1;
    }
    EXPECT_EQ(mark.load(std::memory_order_acquire), kDone)
        << "the origin's 1,000 epochs did not complete within 25 s while the target computed";
  } else if (dev.rank() == 0) {
    const auto start = Clock::now();
    for (int i = 0; i < kIters; ++i) {
      int v = i, back = -1;
      ASSERT_EQ(w.win->lock(adi3::LockType::Exclusive, 1, 0), 0);
      ASSERT_EQ(w.win->put(&v, 1, int_t(), 1, 0, 1, int_t()), 0);
      ASSERT_EQ(w.win->get(&back, 1, int_t(), 1, 1, 1, int_t()), 0);
      ASSERT_EQ(w.win->unlock(1), 0);
      ASSERT_EQ(back, 101);
    }
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    std::printf("[ rank 0 ] %d lock/put/get/unlock on a computing target: %.3f s (%.1f us each)\n", kIters, s,
                s * 1e6 / kIters);
    int done = kDone;
    ASSERT_EQ(w.win->lock(adi3::LockType::Exclusive, 1, 0), 0);
    ASSERT_EQ(w.win->put(&done, 1, int_t(), 1, 2, 1, int_t()), 0);
    ASSERT_EQ(w.win->unlock(1), 0);
  }
  ASSERT_EQ(dev.barrier(), 0);
  if (dev.rank() == 1) {
    EXPECT_EQ(w.mem[0], kIters - 1);
  }
}

TEST_P(RmaProgress, CreateWindowNp2) {
  run(2, [](Device& dev) { progress_while_computing(dev, Flavor::Create); });
}
TEST_P(RmaProgress, AllocateWindowNp2) {
  run(2, [](Device& dev) { progress_while_computing(dev, Flavor::Allocate); });
}

// The default configuration, and over processes the forced emulation too
// (progress by the agent; the shm and verbs entries ask for it). Setups list the default first.
std::vector<core_test::Setup> progress_setups() {
  std::vector<core_test::Setup> all = core_test::setups(), v{all[0]};
  for (const core_test::Setup& s : all) {
    if (s.processes && s.config.force_emulation) v.push_back(s);
  }
  return v;
}
INSTANTIATE_TEST_SUITE_P(Rma, RmaProgress, ::testing::ValuesIn(progress_setups()), core_test::SetupName());

}  // namespace
