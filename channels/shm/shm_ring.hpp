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
//
// The other process is not trusted. Shared memory holds only the records,
// the consumer's published head and the producer's published tail
// (ShmRing; the tail only for RingConsumer::empty()); each side keeps its own
// position and the capacity in private memory (RingProducer, RingConsumer),
// so nothing the peer writes can move where this side reads or writes.
// The consumer checks every record before following it: the stamp at its
// head is 0 (nothing yet) or head + 1 (published), never anything else;
// the kind is known; a record fits between its offset and the ring's end.
// The producer checks the head it reads: never behind what it saw before,
// never ahead of what it wrote. A failed check breaks the ring for good and
// names what was wrong; the channel then treats that peer as failed.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "channels/channel.hpp"
#include "channels/shm/store_choice.hpp"
#include "channels/shm/stream_copy.hpp"

namespace adi3::shm {

// The shared part of a ring: the consumer's head and the producer's tail,
// each on its own cache line. The tail is read only by RingConsumer::empty()
// (a rank about to sleep) and more_published() (a rendezvous offer choosing
// its copy), never on the drain path, so the producer's store to it stays
// in its own cache while the receiver polls.
struct alignas(64) ShmRing {
  std::atomic<uint64_t> head{0};
  alignas(64) std::atomic<uint64_t> tail{0};
};

namespace ring_format {
struct Record {
  std::atomic<uint64_t> stamp;  // ring position + 1 once complete
  uint32_t payload_bytes;
  uint16_t hdr_bytes;
  uint16_t kind;
};
// Forced inline only when optimising: at -O0 (the asan preset) GCC does not
// fold the header-length branches of an inlined push, so it checks the 32-
// and 48-byte copies against a caller's shorter header (-Wstringop-overread).
#if defined(__OPTIMIZE__)
#define ADI3_RING_PUSH_INLINE [[gnu::always_inline]]
#else
#define ADI3_RING_PUSH_INLINE
#endif

inline constexpr std::size_t kRecordHeader = 16;
inline constexpr std::size_t kLine = 64;
inline constexpr uint16_t kPacket = 0, kWrap = 1;
static_assert(sizeof(Record) == kRecordHeader);

inline std::size_t round_up(std::size_t n, std::size_t a) { return (n + a - 1) & ~(a - 1); }
// Bytes a record of this header and payload takes.
inline std::size_t record_bytes(std::size_t hdr_bytes, std::size_t payload_bytes) {
  return round_up(kRecordHeader + round_up(hdr_bytes, 8) + payload_bytes, kLine);
}
inline Record* at(char* data, std::size_t off) { return reinterpret_cast<Record*>(data + off); }
}  // namespace ring_format

// What a broken ring saw (for the error message).
struct RingFault {
  const char* what = nullptr;  // null: the ring is sound
  uint64_t position = 0;       // ring position of the bad record (or our tail)
  uint64_t value = 0;          // the bad value
};

class RingProducer {
 public:
  RingProducer() = default;
  // cap: a power of two, >= 4096. A contiguous payload of at least
  // stream_min bytes is written with streaming stores (stream_copy.hpp);
  // one of at least adapt_min bytes with the stores StoreChooser picks
  // (slow_mbps: see store_choice.hpp).
  RingProducer(ShmRing* shared, char* data, std::size_t cap, std::size_t stream_min = SIZE_MAX,
               std::size_t adapt_min = SIZE_MAX, uint32_t slow_mbps = 0)
      : shared_(shared), data_(data), cap_(cap), stream_min_(stream_min), adapt_min_(adapt_min), chooser_(slow_mbps) {
    if (shared_) chooser_.watch(&shared_->head);
  }
  // The largest record that always fits eventually.
  std::size_t max_record() const { return cap_ / 2; }

  enum class Push { Sent, Full, Broken };
  // Inline: the channel's send is mostly this, and a call costs the small
  // messages ~25 instructions each (bench/mpi/cost.sh rate).
  ADI3_RING_PUSH_INLINE Push push(const void* hdr, std::size_t hdr_bytes, const Payload& p) {
    using namespace ring_format;
    if (fault_.what) return Push::Broken;
    const std::size_t need = record_bytes(hdr_bytes, p.bytes);
    std::size_t off = tail_ & (cap_ - 1);
    const std::size_t wrap = off + need > cap_ ? cap_ - off : 0;
    // + 8: the stamp of the slot after this record, cleared below.
    if (!room(wrap + need + 8)) return fault_.what ? Push::Broken : Push::Full;
    if (wrap) {
      at(data_, 0)->stamp.store(0, std::memory_order_relaxed);
      Record* w = at(data_, off);
      w->kind = kWrap;
      w->stamp.store(tail_ + 1, std::memory_order_release);
      tail_ += wrap;
      off = 0;
    }
    Record* r = at(data_, off);
    r->payload_bytes = static_cast<uint32_t>(p.bytes);
    r->hdr_bytes = static_cast<uint16_t>(hdr_bytes);
    r->kind = kPacket;
    char* body = reinterpret_cast<char*>(r) + kRecordHeader;
    // The core's two header lengths as fixed-size copies (a few moves, not
    // a call).
    if (hdr_bytes == 32) {
      std::memcpy(body, hdr, 32);
    } else if (hdr_bytes == 48) {
      std::memcpy(body, hdr, 48);
    } else {
      std::memcpy(body, hdr, hdr_bytes);
    }
    if (!p.seg && p.bytes >= stream_min_) {
      stream_copy(body + round_up(hdr_bytes, 8), p.data, p.bytes);
    } else if (!p.seg && p.bytes >= adapt_min_) {
      chooser_.copy(body + round_up(hdr_bytes, 8), p.data, p.bytes, tail_ >= cap_, cached_head_);
    } else {
      p.copy_to(body + round_up(hdr_bytes, 8));
    }
    at(data_, (off + need) & (cap_ - 1))->stamp.store(0, std::memory_order_relaxed);
    r->stamp.store(tail_ + 1, std::memory_order_release);
    tail_ += need;
    shared_->tail.store(tail_, std::memory_order_release);
    prefetch_ahead(off + need, need);
    return Push::Sent;
  }
  const RingFault& fault() const { return fault_; }

 private:
  // Stores leave in order, so a store that misses (a ring line last
  // touched a lap ago, often by the consumer) holds back the stamp after
  // it: the next push clears the stamp past its record before publishing.
  // Fetching, owned, the lines the coming records will write takes those
  // misses off the messages' path (bench/mpi bw, msgrate and bibw at 1-128 B:
  // up to 2x in the VM's slow state). For records of up to kPrefetchLines
  // (larger ones gained nothing), as many lines as this one took,
  // kPrefetchAhead lines past its end. Hints: a line may be outside our room, and a prefetch
  // neither writes nor faults.
  static constexpr std::size_t kPrefetchAhead = 4, kPrefetchLines = 4;
  void prefetch_ahead(std::size_t end, std::size_t need) const {
    using ring_format::kLine;
    if (need > kPrefetchLines * kLine) return;
    for (std::size_t i = 0; i < need / kLine; ++i) {
      const char* p = data_ + ((end + (kPrefetchAhead + i) * kLine) & (cap_ - 1));
#if defined(__x86_64__)
      asm volatile("prefetchw %0" : : "m"(*p));
#else
      __builtin_prefetch(p, 1);
#endif
    }
  }

  bool room(std::size_t need) {
    if (tail_ + need - cached_head_ <= cap_) return true;
    const uint64_t head = shared_->head.load(std::memory_order_acquire);
    // The consumer only moves forward, and never past what we wrote.
    if (head < cached_head_ || head > tail_) {
      fault_ = {"the consumer's head moved outside what was written", tail_, head};
      return false;
    }
    cached_head_ = head;
    return tail_ + need - cached_head_ <= cap_;
  }

  ShmRing* shared_ = nullptr;
  char* data_ = nullptr;
  std::size_t cap_ = 0;
  std::size_t stream_min_ = SIZE_MAX;
  std::size_t adapt_min_ = SIZE_MAX;
  StoreChooser chooser_;
  uint64_t tail_ = 0;
  uint64_t cached_head_ = 0;
  RingFault fault_;
};

class RingConsumer {
 public:
  RingConsumer() = default;
  static constexpr std::size_t kMaxHeader = 256;
  // max_header: the largest header a sender may write (the channel's caps),
  // at most kMaxHeader.
  RingConsumer(ShmRing* shared, char* data, std::size_t cap, std::size_t max_header)
      : shared_(shared), data_(data), cap_(cap), max_header_(max_header < kMaxHeader ? max_header : kMaxHeader) {}
  // Copied only while set up, before any other thread looks at it.
  RingConsumer(const RingConsumer& o) { *this = o; }
  RingConsumer& operator=(const RingConsumer& o) {
    shared_ = o.shared_;
    data_ = o.data_;
    cap_ = o.cap_;
    max_header_ = o.max_header_;
    head_ = o.head_;
    fault_ = o.fault_;
    head_pub_.store(o.head_pub_.load(std::memory_order_relaxed), std::memory_order_relaxed);
    broken_.store(o.broken_.load(std::memory_order_relaxed), std::memory_order_relaxed);
    return *this;
  }

  // Nothing to take now. Any thread may ask (the channel's wait() runs
  // beside poll()), so this reads no record: a line behind the head may
  // already be the producer's again (drain() releases each record at once)
  // and be rewritten while we look. It compares the producer's published
  // tail with the head drain() published: a record pushed before the
  // caller announced its sleep (Doorbell) is seen; a stale head (another
  // thread is draining) or a tail the peer garbled only means "not empty",
  // a wasted look, never a missed record.
  bool empty() const {
    if (broken_.load(std::memory_order_acquire)) return true;
    const uint64_t tail = shared_->tail.load(std::memory_order_acquire);
    return tail == head_pub_.load(std::memory_order_acquire);
  }

  // Whether drain() would find a record (or a corrupt stamp) now: one load,
  // inline, so a poll passes over the idle senders' rings cheaply. Only
  // for the thread that drains.
  bool ready() const { return ring_format::at(data_, head_ & (cap_ - 1))->stamp.load(std::memory_order_acquire) != 0; }

  // Hands up to `max` packets to f(hdr, hdr_bytes, payload, bytes), each
  // read in place and released after f returns. Returns how many, or -1
  // when the ring broke (see fault()); a broken ring stays broken.
  template <class F>
  int drain(int max, F&& f) {
    using namespace ring_format;
    if (fault_.what) return -1;
    int n = 0;
    while (n < max) {
      const std::size_t off = head_ & (cap_ - 1);
      Record* r = at(data_, off);
      const uint64_t stamp = r->stamp.load(std::memory_order_acquire);
      if (stamp == 0) break;
      if (stamp != head_ + 1) return broken("a record's stamp is not its position + 1", stamp);
      // Each field once: the peer may change them while we look.
      const uint16_t kind = r->kind;
      if (kind == kWrap) {
        // Written only where a record did not fit before the end.
        if (off == 0) return broken("a wrap record at the start of the ring", 0);
        head_ += cap_ - off;
        continue;
      }
      if (kind != kPacket) return broken("a record of unknown kind", kind);
      const std::size_t hdr_bytes = r->hdr_bytes;
      const std::size_t payload_bytes = r->payload_bytes;
      if (hdr_bytes == 0 || hdr_bytes > max_header_) return broken("a header length out of range", hdr_bytes);
      const std::size_t need = record_bytes(hdr_bytes, payload_bytes);
      if (need > cap_ / 2 || need > cap_ - off) return broken("a record longer than the ring allows", payload_bytes);
      // The header is copied out: the handlers check it, then use it, and
      // the peer must not change it in between. The payload is only copied.
      const char* body = reinterpret_cast<const char*>(r) + kRecordHeader;
      alignas(16) char hdr[kMaxHeader];
      // A fixed-size copy for the core's headers (a record spans at least
      // a line, so 48 bytes after its 16-byte head are inside it).
      if (hdr_bytes <= 48) {
        std::memcpy(hdr, body, 48);
      } else {
        std::memcpy(hdr, body, hdr_bytes);
      }
      f(static_cast<const void*>(hdr), hdr_bytes, static_cast<const void*>(body + round_up(hdr_bytes, 8)),
        payload_bytes);
      head_ += need;
      shared_->head.store(head_, std::memory_order_release);
      ++n;
    }
    head_pub_.store(head_, std::memory_order_release);
    return n;
  }
  const RingFault& fault() const { return fault_; }

  // Whether the producer published more than the record at the head
  // drain() published: inside a handler that is the record in hand (the
  // head moves after the handler returns), between drains the next one. A
  // sender that runs ahead of us. Reads the tail's line and the record's
  // head, and costs drain() nothing; a hint only (the peer may garble
  // either), never used for what a record holds.
  bool more_published() const {
    using namespace ring_format;
    uint64_t at_pos = shared_->head.load(std::memory_order_relaxed);
    const uint64_t tail = shared_->tail.load(std::memory_order_acquire);
    const Record* r = at(data_, at_pos & (cap_ - 1));
    if (tail <= at_pos || r->stamp.load(std::memory_order_acquire) != at_pos + 1) return false;
    if (r->kind == kWrap) {  // drain() skips it without publishing the head
      at_pos += cap_ - (at_pos & (cap_ - 1));
      r = at(data_, 0);
      if (tail <= at_pos || r->stamp.load(std::memory_order_acquire) != at_pos + 1) return false;
    }
    return tail - at_pos > record_bytes(r->hdr_bytes, r->payload_bytes);
  }

 private:
  int broken(const char* what, uint64_t value) {
    fault_ = {what, head_, value};
    broken_.store(true, std::memory_order_release);
    return -1;
  }

  ShmRing* shared_ = nullptr;
  char* data_ = nullptr;
  std::size_t cap_ = 0;
  std::size_t max_header_ = 0;
  uint64_t head_ = 0;  // drain()'s own position
  RingFault fault_;
  // What empty() reads from other threads: head_ as of the last drain(),
  // and whether the ring broke. A stale head is harmless: it can only be
  // stale while another thread drains (and so delivers); empty() then
  // answers "not empty".
  std::atomic<uint64_t> head_pub_{0};
  std::atomic<bool> broken_{false};
};

}  // namespace adi3::shm
