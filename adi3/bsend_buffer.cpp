#include "adi3/bsend_buffer.hpp"

#include <cstdlib>

namespace adi3 {

bool BsendBuffer::attach(void* buf, std::size_t bytes) {
  auto addr = reinterpret_cast<uintptr_t>(buf);
  uintptr_t aligned = (addr + kAlign - 1) & ~uintptr_t{kAlign - 1};
  std::size_t lost = aligned - addr;
  if (bytes < lost + kHeader + kAlign) return false;
  state_ = State::User;
  user_ = buf;
  user_bytes_ = bytes;
  base_ = reinterpret_cast<Block*>(aligned);
  base_->size = (bytes - lost - kHeader) & ~std::size_t{kAlign - 1};
  base_->next = base_->prev = nullptr;
  base_->owner = this;
  base_->free = true;
  base_->heap = false;
  return true;
}

void BsendBuffer::attach_automatic(void* tag) {
  state_ = State::Automatic;
  user_ = tag;
  user_bytes_ = 0;
  base_ = nullptr;
}

void BsendBuffer::detach(void** buf, std::size_t* bytes) {
  *buf = user_;
  *bytes = user_bytes_;
  state_ = State::Detached;
  user_ = nullptr;
  user_bytes_ = 0;
  base_ = nullptr;
}

void* BsendBuffer::allocate(std::size_t bytes) {
  std::size_t need = (bytes + kAlign - 1) & ~std::size_t{kAlign - 1};
  Block* got = nullptr;
  if (state_ == State::Automatic) {
    // Blocks of its own (aligned_alloc wants a multiple of the alignment).
    got = static_cast<Block*>(std::aligned_alloc(kAlign, kHeader + need));
    if (!got) return nullptr;
    got->size = need;
    got->next = got->prev = nullptr;
    got->owner = this;
    got->heap = true;
  }
  for (Block* b = base_; b && !got; b = b->next) {
    if (!b->free || b->size < need) continue;
    if (b->size >= need + kHeader + kAlign) {  // split off the rest
      auto* rest = reinterpret_cast<Block*>(reinterpret_cast<char*>(b) + kHeader + need);
      rest->size = b->size - need - kHeader;
      rest->free = true;
      rest->owner = this;
      rest->heap = false;
      rest->next = b->next;
      rest->prev = b;
      if (b->next) b->next->prev = rest;
      b->next = rest;
      b->size = need;
    }
    got = b;
  }
  if (!got) return nullptr;
  got->free = false;
  got->ticket = next_ticket_++;
  ++live_;
  return reinterpret_cast<char*>(got) + kHeader;
}

BsendBuffer* BsendBuffer::owner_of(void* block) { return header(block)->owner; }

uint64_t BsendBuffer::ticket_of(void* block) { return header(block)->ticket; }

void BsendBuffer::release(void* block) { owner_of(block)->give_back(header(block)); }

void BsendBuffer::give_back(Block* b) {
  --live_;
  if (b->heap) {
    std::free(b);
    return;
  }
  b->free = true;
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
