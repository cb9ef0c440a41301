// A test-and-test-and-set spin lock, and a guard that skips it entirely when
// the device is single-threaded (no locks on the single-threaded path).
#pragma once
#include <atomic>
#include <sched.h>

namespace adi3 {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

class SpinLock {
 public:
  void lock() {
    for (int spins = 0;; ++spins) {
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
      while (locked_.load(std::memory_order_relaxed)) {
        // Oversubscribed ranks: the holder may be descheduled, so yield soon.
        if (++spins > 64)
          sched_yield();
        else
          cpu_relax();
      }
    }
  }
  bool try_lock() {
    return !locked_.load(std::memory_order_relaxed) && !locked_.exchange(true, std::memory_order_acquire);
  }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

// Locks only when `enabled` (MPI_THREAD_MULTIPLE).
class MaybeLock {
 public:
  MaybeLock(SpinLock& l, bool enabled) : lock_(enabled ? &l : nullptr) {
    if (lock_) lock_->lock();
  }
  ~MaybeLock() {
    if (lock_) lock_->unlock();
  }
  MaybeLock(const MaybeLock&) = delete;
  MaybeLock& operator=(const MaybeLock&) = delete;

 private:
  SpinLock* lock_;
};

}  // namespace adi3
