// Per-device pool of requests: chunks carved once, a free list after, so
// steady-state messaging does no malloc.
#pragma once
#include <atomic>
#include <cstddef>
#include <vector>

#include "adi3/request.hpp"
#include "adi3/spin_lock.hpp"

namespace adi3 {

class RequestPool {
 public:
  explicit RequestPool(bool thread_safe = false) : thread_safe_(thread_safe) {}
  // Takes its lock from now on (Device::enable_threads, while no other
  // thread uses it).
  void enable_threads() { thread_safe_.store(true, std::memory_order_relaxed); }
  ~RequestPool();
  RequestPool(const RequestPool&) = delete;
  RequestPool& operator=(const RequestPool&) = delete;

  // A fresh request with refs = 1 and cc = 1.
  Request* get(Device* dev, RequestKind kind);
  void put(Request* r);
  std::size_t live() const { return live_; }

 private:
  struct FreeNode {
    FreeNode* next;
  };
  static constexpr std::size_t kChunk = 64;
  void grow();

  std::atomic<bool> thread_safe_{false};
  SpinLock lock_;
  FreeNode* free_ = nullptr;
  std::vector<void*> chunks_;
  std::size_t live_ = 0;
};

}  // namespace adi3
