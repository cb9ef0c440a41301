// Device::block_until: the wait loop of every blocking call (spin, yield,
// then sleep on the channel's doorbell), kept apart from device.hpp.
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
  while (!done()) {
    if (progress()) {
      idle = 0;
      give_up = {};
      continue;
    }
    ++idle;
    if (idle < config_.spin_count) {
      cpu_relax();
    } else if (idle < config_.spin_count + config_.yield_count) {
      sched_yield();
      if (patience_over()) return peer_failure_error();
    } else {
      sleep_until(WaitCondition::of(done));
      if (patience_over()) return peer_failure_error();
    }
  }
  return 0;
}

}  // namespace adi3
