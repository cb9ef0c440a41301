#include "adi3/bsend_buffer.hpp"

#include <cstdint>

namespace adi3 {

bool BsendBuffer::attach(void* buf, std::size_t bytes) {
  auto addr = reinterpret_cast<uintptr_t>(buf);
  uintptr_t aligned = (addr + kAlign - 1) & ~uintptr_t{kAlign - 1};
  std::size_t lost = aligned - addr;
  if (bytes < lost + kHeader + kAlign) return false;
  user_ = buf;
  user_bytes_ = bytes;
  base_ = reinterpret_cast<Block*>(aligned);
  base_->size = (bytes - lost - kHeader) & ~std::size_t{kAlign - 1};
  base_->next = base_->prev = nullptr;
  base_->free = true;
  live_ = 0;
  return true;
}

void BsendBuffer::detach(void** buf, std::size_t* bytes) {
  *buf = user_;
  *bytes = user_bytes_;
  user_ = nullptr;
  user_bytes_ = 0;
  base_ = nullptr;
}

void* BsendBuffer::allocate(std::size_t bytes) {
  std::size_t need = (bytes + kAlign - 1) & ~std::size_t{kAlign - 1};
  for (Block* b = base_; b; b = b->next) {
    if (!b->free || b->size < need) continue;
    if (b->size >= need + kHeader + kAlign) {  // split off the rest
      auto* rest = reinterpret_cast<Block*>(reinterpret_cast<char*>(b) + kHeader + need);
      rest->size = b->size - need - kHeader;
      rest->free = true;
      rest->next = b->next;
      rest->prev = b;
      if (b->next) b->next->prev = rest;
      b->next = rest;
      b->size = need;
    }
    b->free = false;
    ++live_;
    return reinterpret_cast<char*>(b) + kHeader;
  }
  return nullptr;
}

void BsendBuffer::release(void* block) {
  auto* b = reinterpret_cast<Block*>(static_cast<char*>(block) - kHeader);
  b->free = true;
  --live_;
  // Coalesce with free neighbours so large messages fit again.
  if (b->next && b->next->free) {
    Block* n = b->next;
    b->size += kHeader + n->size;
    b->next = n->next;
    if (n->next) n->next->prev = b;
  }
  if (b->prev && b->prev->free) {
    Block* p = b->prev;
    p->size += kHeader + b->size;
    p->next = b->next;
    if (b->next) b->next->prev = p;
  }
}

std::size_t BsendBuffer::largest_free() const {
  std::size_t best = 0;
  for (Block* b = base_; b; b = b->next) {
    if (b->free && b->size > best) best = b->size;
  }
  return best;
}

}  // namespace adi3
