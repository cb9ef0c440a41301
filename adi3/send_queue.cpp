#include "adi3/send_queue.hpp"

#include <cstring>
#include <new>

#include "adi3/device.hpp"

namespace adi3 {

OutPacket* OutPacket::make(const void* hdr, std::size_t hdr_bytes, const Payload& payload) {
  std::size_t hdr_room = (hdr_bytes + 7) & ~std::size_t{7};
  void* mem = scratch_alloc(sizeof(OutPacket) + hdr_room + payload.bytes);
  if (!mem) return nullptr;
  auto* p = new (mem) OutPacket{static_cast<uint32_t>(hdr_bytes), static_cast<uint32_t>(payload.bytes)};
  std::memcpy(const_cast<char*>(p->hdr()), hdr, hdr_bytes);
  payload.copy_to(const_cast<char*>(p->payload()));
  return p;
}

void OutPacket::destroy(OutPacket* p) { scratch_free(p); }

SendQueue::~SendQueue() {
  // Packets nobody could deliver (a dead peer, a device torn down early).
  for (; !empty(); pop_front()) {
    if (front().pkt) OutPacket::destroy(front().pkt);
  }
}

bool SendQueue::push_back(OutItem item) noexcept {
  if (size() == slots_.size()) {
    std::vector<OutItem> bigger;
    try {
      bigger.resize(slots_.empty() ? 16 : slots_.size() * 2);
    } catch (const std::bad_alloc&) {
      return false;
    }
    std::size_t n = size();
    for (std::size_t i = 0; i < n; ++i) bigger[i] = slots_[(head_ + i) & (slots_.size() - 1)];
    slots_.swap(bigger);
    head_ = 0;
    tail_ = n;
  }
  slots_[tail_++ & (slots_.size() - 1)] = item;
  return true;
}

bool SendQueue::remove(const Request* r) {
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = head_; i != tail_; ++i) {
    if (slots_[i & mask].req != r) continue;
    for (std::size_t j = i; j + 1 != tail_; ++j) slots_[j & mask] = slots_[(j + 1) & mask];
    --tail_;
    return true;
  }
  return false;
}

}  // namespace adi3
