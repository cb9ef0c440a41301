// The lost wakeup: a request completed by another thread of the rank (here
// a generalized request, as MPI_Grequest_complete does) after the waiter's
// last check but before it sleeps. The completer's wake() finds no sleeper
// announced, so nothing rings; the waiter must still not sleep its whole
// quantum: block_until hands its condition to the channel, which checks it
// again under the doorbell. With a 20-second quantum, a lost wakeup shows
// as a wait of 20 s; the bound is 5 s, so a loaded machine (a wake that
// takes a while to be scheduled) does not fail it. Runs under TSan (label
// threaded).
#include <atomic>
#include <chrono>
#include <thread>

#include "harness.hpp"

namespace {

using namespace core_test;
using adi3::Request;
using adi3::RequestKind;

TEST(Wakeup, CompletionBetweenTheCheckAndTheSleepIsNotLost) {
  auto fabric = std::make_shared<adi3::InprocFabric>(1);
  adi3::Config c;
  c.thread_multiple = true;
  c.spin_count = 1;  // straight to sleep after one idle pass
  c.yield_count = 0;
  c.sleep_us = 20000000;
  Device dev(fabric->channel(0), c);
  for (int round = 0; round < 20; ++round) {
    Request* r = nullptr;
    ASSERT_EQ(dev.new_request(RequestKind::Generalized, "the test's request", &r), 0);
    r->refs.fetch_add(1, std::memory_order_relaxed);  // the completer's
    std::atomic<int> stage{0};                        // 1: complete now, 2: completed and woken
    std::thread completer([&] {
      while (stage.load() != 1) std::this_thread::yield();
      dev.complete(r);  // cc 1 -> 0, then wake(): nobody sleeps yet
      stage.store(2);
    });
    int checks = 0;
    const auto t0 = std::chrono::steady_clock::now();
    const int e = dev.block_until([&] {
      const bool done = r->complete();
      if (++checks == 1) {
        // A stale answer: the completion (and its wake) happens right after
        // this check and before the sleep.
        stage.store(1);
        while (stage.load() != 2) std::this_thread::yield();
        return false;
      }
      return done || r->complete();
    });
    const auto waited = std::chrono::steady_clock::now() - t0;
    completer.join();
    EXPECT_EQ(e, 0);
    EXPECT_LT(waited, std::chrono::seconds(5))
        << "round " << round << ": the waiter slept through a completion ("
        << std::chrono::duration_cast<std::chrono::milliseconds>(waited).count() << " ms)";
    dev.release(r);  // the completer's reference; complete() dropped the other
  }
  EXPECT_EQ(dev.live_requests(), 0u);
}

}  // namespace
