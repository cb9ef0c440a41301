// A single-producer single-consumer ring of variable-size packets for
// shared memory, tuned for the receiver's latency.
//
// Unlike channels/common/spsc_ring.hpp, the consumer never reads the
// producer's index: every record starts on a cache line with a stamp
// (its ring position + 1), written last with release order. The consumer
// polls the line of the next record itself, so a message costs it one
// cache miss on the critical path instead of two dependent ones (index,
// then record). A stamp can only be mistaken if stale bytes of an earlier
// lap sit where the next record will start; the producer therefore zeroes
// that word before it publishes each record (the word is inside the room
// it checked for). Memory must be zero at init (a fresh shm segment is).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "channels/channel.hpp"

namespace adi3::shm {

class ShmRing {
 public:
  void init(std::size_t bytes) {  // a power of two, >= 4096
    cap_ = cap_seen_by_consumer_ = bytes;
    head_.store(0, std::memory_order_relaxed);
    tail_ = cached_head_ = 0;
  }
  // The largest record that always fits eventually.
  std::size_t max_record() const { return cap_ / 2; }
  // Bytes a record of this header and payload takes (for max_payload).
  static std::size_t record_bytes(std::size_t hdr_bytes, std::size_t payload_bytes) {
    return round_up(kRecordHeader + round_up(hdr_bytes, 8) + payload_bytes, kLine);
  }

  // Producer. Returns false when there is no room now.
  bool push(char* data, const void* hdr, std::size_t hdr_bytes, const Payload& p) {
    const std::size_t need = record_bytes(hdr_bytes, p.bytes);
    std::size_t off = tail_ & (cap_ - 1);
    const std::size_t wrap = off + need > cap_ ? cap_ - off : 0;
    // + 8: the stamp of the slot after this record, cleared below.
    if (!room(wrap + need + 8)) return false;
    if (wrap) {
      stamp_at(data, 0).store(0, std::memory_order_relaxed);
      Record* w = at(data, off);
      w->kind = kWrap;
      w->stamp.store(tail_ + 1, std::memory_order_release);
      tail_ += wrap;
      off = 0;
    }
    Record* r = at(data, off);
    r->payload_bytes = static_cast<uint32_t>(p.bytes);
    r->hdr_bytes = static_cast<uint16_t>(hdr_bytes);
    r->kind = kPacket;
    char* body = reinterpret_cast<char*>(r) + kRecordHeader;
    std::memcpy(body, hdr, hdr_bytes);
    p.copy_to(body + round_up(hdr_bytes, 8));
    stamp_at(data, (off + need) & (cap_ - 1)).store(0, std::memory_order_relaxed);
    r->stamp.store(tail_ + 1, std::memory_order_release);
    tail_ += need;
    return true;
  }

  // Consumer: nothing to take now.
  bool empty(const char* data) const {
    uint64_t head = head_.load(std::memory_order_relaxed);
    return stamp_at(data, head & (cap_seen_by_consumer_ - 1)).load(std::memory_order_acquire) != head + 1;
  }

  // Consumer: hands up to `max` packets to f(hdr, hdr_bytes, payload, bytes),
  // each read in place and released after f returns.
  template <class F>
  int drain(char* data, int max, F&& f) {
    const std::size_t cap = cap_seen_by_consumer_;
    uint64_t head = head_.load(std::memory_order_relaxed);
    int n = 0;
    while (n < max) {
      std::size_t off = head & (cap - 1);
      Record* r = at(data, off);
      if (r->stamp.load(std::memory_order_acquire) != head + 1) break;
      if (r->kind == kWrap) {
        head += cap - off;
        continue;
      }
      const char* body = reinterpret_cast<const char*>(r) + kRecordHeader;
      f(body, r->hdr_bytes, body + round_up(r->hdr_bytes, 8), r->payload_bytes);
      head += record_bytes(r->hdr_bytes, r->payload_bytes);
      head_.store(head, std::memory_order_release);
      ++n;
    }
    return n;
  }

 private:
  struct Record {
    std::atomic<uint64_t> stamp;  // ring position + 1 once complete
    uint32_t payload_bytes;
    uint16_t hdr_bytes;
    uint16_t kind;
  };
  static constexpr std::size_t kRecordHeader = 16;
  static constexpr std::size_t kLine = 64;
  static constexpr uint16_t kPacket = 0, kWrap = 1;
  static_assert(sizeof(Record) == kRecordHeader);

  static std::size_t round_up(std::size_t n, std::size_t a) { return (n + a - 1) & ~(a - 1); }
  static Record* at(char* data, std::size_t off) { return reinterpret_cast<Record*>(data + off); }
  static std::atomic<uint64_t>& stamp_at(char* data, std::size_t off) { return at(data, off)->stamp; }
  static const std::atomic<uint64_t>& stamp_at(const char* data, std::size_t off) {
    return reinterpret_cast<const Record*>(data + off)->stamp;
  }

  bool room(std::size_t need) {
    if (tail_ + need - cached_head_ <= cap_) return true;
    cached_head_ = head_.load(std::memory_order_acquire);
    return tail_ + need - cached_head_ <= cap_;
  }

  // Consumer line.
  alignas(64) std::atomic<uint64_t> head_{0};
  std::size_t cap_seen_by_consumer_ = 0;
  // Producer line.
  alignas(64) uint64_t tail_ = 0;
  uint64_t cached_head_ = 0;
  std::size_t cap_ = 0;
};

}  // namespace adi3::shm
