// Internal: the per-device part of greq/. One request of its own sits in the
// device's pollable list for the device's life and drives every generalized
// request that has a poll function, so the core never unlinks or releases a
// user's request from inside its progress loop.
#pragma once
#include <atomic>
#include <cstdint>

#include "adi3/device.hpp"

namespace adi3 {

class GreqHub {
 public:
  explicit GreqHub(Device& dev);
  ~GreqHub();
  GreqHub(const GreqHub&) = delete;
  GreqHub& operator=(const GreqHub&) = delete;

  // The device's hub, made on first use: call from a thread that may call
  // into the device (it registers with the progress engine).
  static GreqHub& of(Device& dev);

  // Calls r's poll function from the progress engine until r completes. The
  // caller has given the hub one reference and one hold of r's state.
  void watch(Request* r);
  // Drops a reference from any thread. While the device's threads are off
  // the pool is not locked, so a last reference dropped here is returned to the pool by
  // the device's own progress.
  void drop_ref(Request* r);
  // Sequence number of the next nonblocking barrier (tags its messages).
  uint32_t next_barrier() { return barrier_seq_.fetch_add(1, std::memory_order_relaxed); }

 private:
  static int drive(Request& self, Status& status);
  void poll_all();

  Device& dev_;
  Request driver_;  // in the device's pollable list
  SpinLock lock_;   // always taken: completions come from any thread
  RequestList<QueueTag> polled_;
  RequestList<QueueTag> reap_;
  std::atomic<bool> queued_{false};  // either list may be non-empty: idle passes skip the lock
  bool running_ = false;             // a poll function that makes progress must not recurse
  std::atomic<uint32_t> barrier_seq_{0};
};

}  // namespace adi3
