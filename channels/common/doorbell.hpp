// A doorbell a sleeping rank waits on and its senders ring: a futex word,
// rung only when someone sleeps, so the fast path stays a load and a branch.
// Works between processes when the Doorbell lives in shared memory.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>

namespace adi3 {

class Doorbell {
 public:
  // The sleeper: announce, re-check for work (`idle` returns true when there
  // is none), then sleep until rung or timeout. Whatever a waker publishes
  // before ring() is visible to `idle` (both sides order through sleepers_
  // with seq_cst read-modify-writes), so a condition checked in `idle` (a
  // request's completion, see Channel::wait_until) cannot be missed.
  template <class Idle>
  void sleep_if(Idle&& idle, std::chrono::microseconds timeout) {
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    uint32_t seen = bell_.load(std::memory_order_seq_cst);
    if (idle()) futex_wait(seen, timeout);
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
  }
  // The waker, after publishing its work.
  void ring() {
#if defined(__SANITIZE_THREAD__)
    // A read-modify-write (TSan cannot model fences) orders the published
    // work against the sleeper's announcement.
    if (sleepers_.fetch_add(0, std::memory_order_seq_cst) & kCount) ring_always();
#else
    // A fence and a load: the same order, but the line stays shared between
    // the sleeper and every waker (a read-modify-write took it exclusive, so
    // it moved between cores at every packet and every local notify).
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_relaxed) & kCount) ring_always();
#endif
  }
  // The waker of a doorbell whose sleeper runs a barrier on every waker's
  // CPU (channels/shm/process_fence.hpp) between announcing itself and its
  // last look for work: that barrier orders the published work against
  // the load below, so the waker needs no fence of its own. Unless the
  // doorbell is heavy (set_heavy): then its sleepers run no barrier and
  // the waker fences. A waker that read it light did so before the barrier
  // that followed set_heavy reached its CPU, so its work, published before,
  // is visible to every later sleeper.
  void ring_light() {
#if defined(__SANITIZE_THREAD__)
    ring();
#else
    std::atomic_signal_fence(std::memory_order_seq_cst);
    int32_t s = sleepers_.load(std::memory_order_relaxed);
    if (s & kHeavy) {
      std::atomic_thread_fence(std::memory_order_seq_cst);
      s = sleepers_.load(std::memory_order_relaxed);
    }
    if (s & kCount) ring_always();
#endif
  }
  void ring_always();
  // Light wakers fence from now on (the caller then runs one barrier on
  // every CPU before a sleep relies on it), or no longer (the caller's
  // sleeps run their barrier again).
  void set_heavy(bool on) {
    if (on) {
      sleepers_.fetch_or(kHeavy, std::memory_order_seq_cst);
    } else {
      sleepers_.fetch_and(~kHeavy, std::memory_order_seq_cst);
    }
  }
  bool heavy() const { return (sleepers_.load(std::memory_order_seq_cst) & kHeavy) != 0; }

 private:
  void futex_wait(uint32_t seen, std::chrono::microseconds timeout);

  // The sleepers' count, and the heavy bit (in the same word: a light
  // waker reads both with one load of the line it reads anyway).
  static constexpr int32_t kHeavy = 1 << 30;
  static constexpr int32_t kCount = kHeavy - 1;
  std::atomic<uint32_t> bell_{0};
  std::atomic<int32_t> sleepers_{0};
};

}  // namespace adi3
