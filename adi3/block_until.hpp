// Device::block_until: the wait loop of every blocking call (spin, yield
// when that may help the job: Config::yield_helps, then sleep on the
// channel's doorbell), kept apart from device.hpp.
#pragma once
#include <chrono>
#include <sched.h>

#include "adi3/device.hpp"

namespace adi3 {

template <class Done>
int Device::block_until(Done&& done) {
  int idle = 0;
  // A peer died: the wait may depend on it, so after kFailurePatience of
  // wall time without progress it fails rather than hang. Counted from the
  // first yield or sleep after the failure and restarted whenever progress
  // is made (a wait on live peers may take longer than the patience on a
  // loaded host); the clock is read only next to a system call (on a loaded
  // host the 200 yields alone took seconds), never while spinning.
  std::chrono::steady_clock::time_point give_up{};
  auto patience_over = [&] {
    if (!failed_peers_.load(std::memory_order_acquire)) return false;
    const auto now = std::chrono::steady_clock::now();
    if (give_up == std::chrono::steady_clock::time_point{}) give_up = now + kFailurePatience;
    return now >= give_up;
  };
  if (done()) return 0;
  // From here until it returns this thread waits in a blocking call: peers
  // that read the count (Channel::call_count) know it polls. Only the
  // application's threads wait here; one alone (not THREAD_MULTIPLE)
  // needs no locked instruction.
  struct Mark {
    std::atomic<uint32_t>* n;
    bool shared;
    Mark(std::atomic<uint32_t>* c, bool mt) : n(c), shared(mt) { add(1); }
    ~Mark() { add(~0u); }
    void add(uint32_t d) {
      if (!n) return;
      if (shared) {
        n->fetch_add(d, std::memory_order_relaxed);
      } else {
        n->store(n->load(std::memory_order_relaxed) + d, std::memory_order_relaxed);
      }
    }
  } mark(calls_, config_.thread_multiple);
  const int yields = config_.yield_helps || config_.thread_multiple ? config_.yield_count : 0;
  do {
    if (progress()) {
      idle = 0;
      give_up = {};
      continue;
    }
    ++idle;
    if (idle < config_.spin_count) {
      cpu_relax();
    } else if (idle < config_.spin_count + yields) {
      sched_yield();
      if (patience_over()) return peer_failure_error();
    } else {
      sleep_until(WaitCondition::of(done));
      if (patience_over()) return peer_failure_error();
    }
  } while (!done());
  return 0;
}

}  // namespace adi3
