#include "adi3/request_pool.hpp"

#include <algorithm>
#include <new>

namespace adi3 {

RequestPool::RequestPool(bool thread_safe, std::size_t max_requests)
    : thread_safe_(thread_safe),
      chunks_(new std::atomic<Chunk*>[kMaxChunks]()),
      max_chunks_(std::clamp<std::size_t>((max_requests + kChunk - 1) / kChunk, 1, kMaxChunks)) {}

RequestPool::~RequestPool() {
  for (std::size_t i = 0; i < nchunks_; ++i) {
    Chunk* c = chunks_[i].load(std::memory_order_relaxed);
    ::operator delete (c->slots, std::align_val_t{64});
    delete[] c->gens;
    delete c;
  }
}

bool RequestPool::grow() noexcept {
  if (nchunks_ == max_chunks_) return false;
  auto* c = new (std::nothrow) Chunk{nullptr, nullptr};
  if (!c) return false;
  c->slots = static_cast<char*>(::operator new (kSlot* kChunk, std::align_val_t{64}, std::nothrow));
  c->gens = new (std::nothrow) std::atomic<uint32_t>[kChunk]();
  if (!c->slots || !c->gens) {
    if (c->slots) ::operator delete (c->slots, std::align_val_t{64});
    delete[] c->gens;
    delete c;
    return false;
  }
  const std::size_t base = nchunks_ * kChunk;
  for (std::size_t i = kChunk; i-- > 0;) {
    auto* n = reinterpret_cast<FreeNode*>(c->slots + i * kSlot);
    n->next = free_;
    n->index = base + i;
    free_ = n;
  }
  chunks_[nchunks_].store(c, std::memory_order_release);
  ++nchunks_;
  return true;
}

Request* RequestPool::get(Device* dev, RequestKind kind) noexcept {
  void* mem;
  std::atomic<uint32_t>* slot_gen;
  uint64_t id;
  {
    MaybeLock g(lock_, thread_safe_.load(std::memory_order_relaxed));
    if (!free_ && !grow()) return nullptr;
    mem = free_;
    free_ = free_->next;
    live_.store(live_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    const std::size_t index = static_cast<FreeNode*>(mem)->index;
    slot_gen = &chunks_[index / kChunk].load(std::memory_order_relaxed)->gens[index % kChunk];
    // Only this thread changes a taken slot's generation until put().
    id = uint64_t{slot_gen->load(std::memory_order_relaxed) + 1} << 32 | (index + 1);  // odd: live
  }
  auto* r = new (mem) Request();
  r->dev = dev;
  r->kind = kind;
  r->wire_id = id;
  r->refs.store(1, std::memory_order_relaxed);
  r->cc.store(1, std::memory_order_relaxed);
  // Live for lookup() only once constructed: an id from the wire, even a
  // forged one, never finds a request whose construction is under way.
  slot_gen->store(static_cast<uint32_t>(id >> 32), std::memory_order_release);
  return r;
}

void RequestPool::put(Request* r) {
  const uint64_t id = r->wire_id;
  r->~Request();
  MaybeLock g(lock_, thread_safe_.load(std::memory_order_relaxed));
  const std::size_t index = static_cast<std::size_t>(id & 0xffffffffu) - 1;
  // Writers of a generation are serialized (one thread, or under lock_);
  // lookup only loads it: a plain increment, no locked instruction.
  std::atomic<uint32_t>& slot_gen = chunks_[index / kChunk].load(std::memory_order_relaxed)->gens[index % kChunk];
  slot_gen.store(slot_gen.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  auto* n = reinterpret_cast<FreeNode*>(r);
  n->next = free_;
  n->index = index;  // the request overwrote it
  free_ = n;
  live_.store(live_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
}

Request* RequestPool::lookup(uint64_t id) const {
  const uint64_t low = id & 0xffffffffu;
  const auto gen = static_cast<uint32_t>(id >> 32);
  if (low == 0 || !(gen & 1)) return nullptr;
  const std::size_t index = static_cast<std::size_t>(low) - 1;
  if (index / kChunk >= kMaxChunks) return nullptr;
  Chunk* c = chunks_[index / kChunk].load(std::memory_order_acquire);
  if (!c || c->gens[index % kChunk].load(std::memory_order_acquire) != gen) return nullptr;
  return reinterpret_cast<Request*>(c->slots + (index % kChunk) * kSlot);
}

}  // namespace adi3
