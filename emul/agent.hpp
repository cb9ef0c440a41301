// Type 2 over type 1: a non-polling agent thread per device. It runs the
// device's progress (channel, per-peer queues, progress hooks) so that
// operations complete while the user's threads compute outside the
// library (passive-target RMA, send cancellation), and sleeps on the
// channel's doorbell when there is nothing to do, so an idle agent costs no
// core and oversubscribed ranks keep working.
//
// While a user thread polls inside the library the agent stays off the
// doorbell (it naps for ADI3_SLEEP_US instead): senders ring the doorbell
// only when someone sleeps on it, so an agent sleeping there during a busy
// exchange would cost every sender of this rank's traffic a system call.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

namespace adi3 {

class Device;

class Agent {
 public:
  // Starts the thread; the device must have threads enabled.
  explicit Agent(Device& dev);
  // Stops and joins the thread.
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Passes that did something, for tests and benchmarks.
  uint64_t busy_passes() const { return busy_.load(std::memory_order_relaxed); }
  // CPU time the agent's thread has used.
  double cpu_seconds() const;
  // Times the agent went to sleep on the doorbell.
  uint64_t doorbell_sleeps() const { return sleeps_.load(std::memory_order_relaxed); }
  // Passes cut short by an allocation that failed (retried after a nap).
  uint64_t out_of_memory() const { return out_of_memory_.load(std::memory_order_relaxed); }
  // The progress hooks' work, announced and not yet done (rma's Hub: set by
  // its pokes, cleared by its hook; it wakes the agent when it sets it).
  // With it clear the idle agent sleeps long although hooks are registered;
  // never watched, any registered hook keeps its sleeps short.
  void watch_hooks(const std::atomic<bool>* due) { hooks_due_.store(due, std::memory_order_release); }

 private:
  void run();
  void step(std::chrono::microseconds nap, uint64_t& seen_user);  // one look: a pass, a nap or a sleep

  Device& dev_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> busy_{0};
  std::atomic<uint64_t> sleeps_{0};
  std::atomic<uint64_t> out_of_memory_{0};
  std::atomic<const std::atomic<bool>*> hooks_due_{nullptr};
  // The user threads waiting in blocking calls (Channel::call_count), or
  // null where the channel does not count them.
  const std::atomic<uint32_t>* calls_;
  std::thread thread_;  // last: starts after the fields above exist
};

}  // namespace adi3
