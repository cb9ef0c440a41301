#include "adi3/request_pool.hpp"

#include <new>

namespace adi3 {

namespace {
constexpr std::size_t kSlot = (sizeof(Request) + 63) / 64 * 64;
}

RequestPool::~RequestPool() {
  for (void* c : chunks_) ::operator delete (c, std::align_val_t{64});
}

void RequestPool::grow() {
  auto* chunk = static_cast<char*>(::operator new (kSlot* kChunk, std::align_val_t{64}));
  chunks_.push_back(chunk);
  for (std::size_t i = kChunk; i-- > 0;) {
    auto* n = reinterpret_cast<FreeNode*>(chunk + i * kSlot);
    n->next = free_;
    free_ = n;
  }
}

Request* RequestPool::get(Device* dev, RequestKind kind) {
  void* mem;
  {
    MaybeLock g(lock_, thread_safe_.load(std::memory_order_relaxed));
    if (!free_) grow();
    mem = free_;
    free_ = free_->next;
    ++live_;
  }
  auto* r = new (mem) Request();
  r->dev = dev;
  r->kind = kind;
  r->refs.store(1, std::memory_order_relaxed);
  r->cc.store(1, std::memory_order_relaxed);
  return r;
}

void RequestPool::put(Request* r) {
  r->~Request();
  MaybeLock g(lock_, thread_safe_.load(std::memory_order_relaxed));
  auto* n = reinterpret_cast<FreeNode*>(r);
  n->next = free_;
  free_ = n;
  --live_;
}

}  // namespace adi3
