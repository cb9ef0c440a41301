// A single-producer single-consumer ring of variable-size packets
// (header + payload written in place, read in place). Producer and consumer
// indices live on separate cache lines; each side caches the other's index
// so the fast path touches one shared line.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "channels/channel.hpp"

namespace adi3 {

class SpscRing {
 public:
  // Over caller-owned memory of `bytes` (a power of two, 8-aligned), which
  // may be shared between processes when the ring object is too.
  void init(std::size_t bytes) {
    cap_ = bytes;
    head_.store(0, std::memory_order_relaxed);
    tail_.store(0, std::memory_order_relaxed);
    cached_head_ = cached_tail_ = 0;
  }
  // The largest record that always fits eventually.
  std::size_t max_record() const { return cap_ / 2; }

  // Producer. Returns false when full.
  bool push(char* data, const void* hdr, std::size_t hdr_bytes, const Payload& p) {
    std::size_t need = kRecordHeader + round8(hdr_bytes) + round8(p.bytes);
    uint64_t tail = tail_.load(std::memory_order_relaxed);
    std::size_t off = tail & (cap_ - 1);
    std::size_t wrap = off + need > cap_ ? cap_ - off : 0;
    if (!room(tail, wrap + need)) return false;
    if (wrap) {
      auto* rec = reinterpret_cast<Record*>(data + off);
      rec->hdr_bytes = kWrap;
      tail += wrap;
      off = 0;
    }
    auto* rec = reinterpret_cast<Record*>(data + off);
    rec->payload_bytes = static_cast<uint32_t>(p.bytes);
    rec->hdr_bytes = static_cast<uint16_t>(hdr_bytes);
    char* body = data + off + kRecordHeader;
    std::memcpy(body, hdr, hdr_bytes);
    p.copy_to(body + round8(hdr_bytes));
    tail_.store(tail + need, std::memory_order_release);
    return true;
  }

  bool empty() const { return head_.load(std::memory_order_relaxed) == tail_.load(std::memory_order_acquire); }

  // Consumer: hands up to `max` packets to f(hdr, hdr_bytes, payload, bytes).
  template <class F>
  int drain(char* data, int max, F&& f) {
    uint64_t head = head_.load(std::memory_order_relaxed);
    int n = 0;
    while (n < max) {
      if (head == cached_tail_) {
        cached_tail_ = tail_.load(std::memory_order_acquire);
        if (head == cached_tail_) break;
      }
      std::size_t off = head & (cap_ - 1);
      auto* rec = reinterpret_cast<Record*>(data + off);
      if (rec->hdr_bytes == kWrap) {
        head += cap_ - off;
        continue;
      }
      const char* body = data + off + kRecordHeader;
      f(body, rec->hdr_bytes, body + round8(rec->hdr_bytes), rec->payload_bytes);
      head += kRecordHeader + round8(rec->hdr_bytes) + round8(rec->payload_bytes);
      // Publish after the handler: the payload was read in place.
      head_.store(head, std::memory_order_release);
      ++n;
    }
    return n;
  }

 private:
  struct Record {
    uint32_t payload_bytes;
    uint16_t hdr_bytes;
    uint16_t pad;
  };
  static constexpr std::size_t kRecordHeader = 8;
  static constexpr uint16_t kWrap = 0xffff;
  static std::size_t round8(std::size_t n) { return (n + 7) & ~std::size_t{7}; }

  bool room(uint64_t tail, std::size_t need) {
    if (tail + need - cached_head_ <= cap_) return true;
    cached_head_ = head_.load(std::memory_order_acquire);
    return tail + need - cached_head_ <= cap_;
  }

  // Consumer line.
  alignas(64) std::atomic<uint64_t> head_{0};
  uint64_t cached_tail_ = 0;
  // Producer line.
  alignas(64) std::atomic<uint64_t> tail_{0};
  uint64_t cached_head_ = 0;
  std::size_t cap_ = 0;
};

}  // namespace adi3
