#include "adi3/request_pool.hpp"

#include <algorithm>
#include <new>

namespace adi3 {

RequestPool::RequestPool(bool thread_safe, std::size_t max_requests)
    : thread_safe_(thread_safe),
      chunks_(new std::atomic<Chunk*>[kMaxChunks]()),
      max_chunks_(std::clamp<std::size_t>((max_requests + kChunk - 1) / kChunk, 1, kMaxChunks)) {}

RequestPool::~RequestPool() {
  // The slots' members need no destructor (their hooks are unlinked, or
  // their lists are gone with the device).
  for (std::size_t i = 0; i < nchunks_; ++i) {
    Chunk* c = chunks_[i].load(std::memory_order_relaxed);
    ::operator delete (c->slots, std::align_val_t{64});
    delete c;
  }
}

bool RequestPool::grow() noexcept {
  if (nchunks_ == max_chunks_) return false;
  auto* c = new (std::nothrow) Chunk{nullptr};
  if (!c) return false;
  c->slots = static_cast<char*>(::operator new (kSlot* kChunk, std::align_val_t{64}, std::nothrow));
  if (!c->slots) {
    delete c;
    return false;
  }
  const std::size_t base = nchunks_ * kChunk;
  for (std::size_t i = kChunk; i-- > 0;) {
    auto* r = new (c->slots + i * kSlot) Request();
    r->wire_id = base + i + 1;  // generation 0: free
    r->pool_next = free_;
    free_ = r;
  }
  chunks_[nchunks_].store(c, std::memory_order_release);
  ++nchunks_;
  return true;
}

Request* RequestPool::get_slow(Device* dev, RequestKind kind) noexcept {
  Request* r;
  {
    MaybeLock g(lock_, thread_safe_.load(std::memory_order_relaxed));
    if (!free_ && !grow()) return nullptr;
    r = free_;
    free_ = r->pool_next;
    live_.store(live_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  start(r, dev, kind);
  return r;
}

void RequestPool::put_locked(Request* r) {
  retire(r);
  MaybeLock g(lock_, true);
  r->pool_next = free_;
  free_ = r;
  live_.store(live_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
}

Request* RequestPool::lookup(uint64_t id) const {
  const uint64_t low = id & 0xffffffffu;
  const auto gen = static_cast<uint32_t>(id >> 32);
  if (low == 0 || !(gen & 1)) return nullptr;
  return lookup_slot(static_cast<std::size_t>(low) - 1, gen, 0xffffffffu);
}

}  // namespace adi3
