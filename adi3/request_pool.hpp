// Per-device pool of requests: chunks carved once, a free list after, so
// steady-state messaging does no malloc.
//
// Requests travel on the wire as ids, never as addresses: an id names a
// slot of the pool and the generation of its current occupant (bumped at
// every get and put, odd while live). lookup() answers only for a live
// request of exactly that generation, so a forged, stale or reused id from
// another process finds nothing instead of memory.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "adi3/request.hpp"
#include "adi3/spin_lock.hpp"

namespace adi3 {

class RequestPool {
 public:
  // At most max_requests live (rounded up to a multiple of 64, capped at
  // 1 Mi): ADI3_MAX_REQUESTS.
  explicit RequestPool(bool thread_safe = false, std::size_t max_requests = kMaxChunks * kChunk);
  // Takes its lock from now on (Device::enable_threads, while no other
  // thread uses it).
  void enable_threads() { thread_safe_.store(true, std::memory_order_relaxed); }
  ~RequestPool();
  RequestPool(const RequestPool&) = delete;
  RequestPool& operator=(const RequestPool&) = delete;

  // A fresh request with refs = 1 and cc = 1, or nullptr when the pool is
  // at its cap or memory for a new chunk cannot be had (callers turn it
  // into ERR_NO_MEM). Never throws.
  Request* get(Device* dev, RequestKind kind) noexcept;
  // The most requests that can be live at once.
  std::size_t capacity() const { return max_chunks_ * kChunk; }
  void put(Request* r);
  // Read from any thread (error messages name it): a relaxed atomic,
  // changed only under lock_ (a plain load and store, no locked instruction).
  std::size_t live() const { return live_.load(std::memory_order_relaxed); }
  // The live request an id from the wire names, or nullptr.
  Request* lookup(uint64_t id) const;
  // The live request in slot `index` (the low half of its id, minus 1)
  // whose generation agrees with gen in the bits of mask, or nullptr: for
  // names with fewer generation bits than the wire's (the MPI binding's
  // MPI_Request handles). Lock-free, like lookup.
  Request* lookup_slot(std::size_t index, uint32_t gen, uint32_t mask) const {
    if (index >= kMaxChunks * kChunk) return nullptr;
    Chunk* c = chunks_[index / kChunk].load(std::memory_order_acquire);
    if (!c) [[unlikely]]
      return nullptr;
    const uint32_t g = c->gens[index % kChunk].load(std::memory_order_acquire);
    if (!(g & 1) || ((g ^ gen) & mask)) return nullptr;
    return reinterpret_cast<Request*>(c->slots + (index % kChunk) * kSlot);
  }
  // Slots there can ever be (ADI3_MAX_REQUESTS is capped at it).
  static constexpr std::size_t kMaxSlots = std::size_t{16384} * 64;

 private:
  struct FreeNode {
    FreeNode* next;
    std::size_t index;  // the slot's place in the pool
  };
  struct Chunk {
    char* slots;                  // kChunk requests
    std::atomic<uint32_t>* gens;  // their generations
  };
  static constexpr std::size_t kChunk = 64;
  static constexpr std::size_t kMaxChunks = kMaxSlots / kChunk;  // 1 Mi live requests
  static constexpr std::size_t kSlot = (sizeof(Request) + 63) / 64 * 64;
  bool grow() noexcept;

  std::atomic<bool> thread_safe_{false};
  SpinLock lock_;
  FreeNode* free_ = nullptr;
  // Written once per chunk (under lock_), read by lookup without it.
  std::unique_ptr<std::atomic<Chunk*>[]> chunks_;
  std::size_t nchunks_ = 0;
  std::size_t max_chunks_ = kMaxChunks;
  std::atomic<std::size_t> live_{0};
};

}  // namespace adi3
