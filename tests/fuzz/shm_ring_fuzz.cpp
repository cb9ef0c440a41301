// libFuzzer target: the shared-memory ring against a producer that writes
// anything. The input is a program of operations on one ring: correct
// pushes, drains, and raw writes of fuzzer bytes into the ring memory and
// the shared head (what a corrupt or hostile peer can do). Checked:
//  - the consumer never reads outside the ring (ASan: the ring is its own
//    allocation) and hands out headers from private memory;
//  - until the first raw write, every pushed packet comes out intact and in
//    order (the ring loses, duplicates or reorders nothing);
//  - a broken ring stays broken and delivers nothing more;
//  - until the first raw write, empty() (what a rank about to sleep asks)
//    says "empty" exactly when nothing pushed is left to drain; after one,
//    a garbled shared head or tail only makes it answer, never crash.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <vector>

#include "channels/shm/shm_ring.hpp"

namespace {

using adi3::Payload;
using adi3::shm::RingConsumer;
using adi3::shm::RingProducer;
using adi3::shm::ShmRing;

constexpr std::size_t kCap = 4096;
constexpr std::size_t kMaxHeader = 64;

struct Input {
  const uint8_t* p;
  std::size_t n;
  bool empty() const { return n == 0; }
  uint8_t byte() {
    if (!n) return 0;
    --n;
    return *p++;
  }
  uint16_t u16() { return static_cast<uint16_t>(byte() | byte() << 8); }
  uint64_t u64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t{byte()} << (8 * i);
    return v;
  }
};

struct Sent {
  std::vector<uint8_t> hdr, payload;
};

void trap(const char* why) {
  (void)why;
  __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  Input in{data, size};
  auto* ring = static_cast<char*>(std::aligned_alloc(64, kCap));
  std::memset(ring, 0, kCap);
  auto* shared = new ShmRing();
  RingProducer prod(shared, ring, kCap);
  RingConsumer cons(shared, ring, kCap, kMaxHeader);
  std::deque<Sent> expect;  // pushed, not yet drained
  bool tampered = false, broken = false;
  uint32_t seq = 0;
  while (!in.empty()) {
    switch (in.byte() % 4) {
      case 0: {  // a correct push
        Sent s;
        s.hdr.resize(1 + in.byte() % kMaxHeader);
        s.payload.resize(in.u16() % (kCap / 2 - kMaxHeader - 128 + 1));  // the channel's max_payload
        for (auto& b : s.hdr) b = static_cast<uint8_t>(seq * 31 + (&b - s.hdr.data()));
        for (auto& b : s.payload) b = static_cast<uint8_t>(seq * 17 + (&b - s.payload.data()));
        ++seq;
        auto r = prod.push(s.hdr.data(), s.hdr.size(), Payload{s.payload.data(), s.payload.size(), nullptr, 0});
        if (r == RingProducer::Push::Sent) expect.push_back(std::move(s));
        if (!tampered && r == RingProducer::Push::Broken) trap("producer broke on a sound ring");
        break;
      }
      case 1: {  // drain
        const int max = 1 + in.byte() % 16;
        int got = cons.drain(max, [&](const void* h, std::size_t hb, const void* p, std::size_t pb) {
          const auto* hp = static_cast<const char*>(h);
          const auto* pp = static_cast<const char*>(p);
          if (hp >= ring && hp < ring + kCap) trap("header handed out in shared memory");
          if (hb == 0 || hb > kMaxHeader) trap("header length beyond the limit");
          if (pb && (pp < ring || pp + pb > ring + kCap)) trap("payload outside the ring");
          volatile unsigned sum = 0;  // touch every byte (ASan checks the reads)
          for (std::size_t i = 0; i < hb; ++i) sum = sum + static_cast<unsigned char>(hp[i]);
          for (std::size_t i = 0; i < pb; ++i) sum = sum + static_cast<unsigned char>(pp[i]);
          if (broken) trap("a broken ring delivered a packet");
          if (tampered) return;
          if (expect.empty()) trap("a packet nobody pushed");
          const Sent& s = expect.front();
          if (hb != s.hdr.size() || pb != s.payload.size() || std::memcmp(hp, s.hdr.data(), hb) != 0 ||
              (pb && std::memcmp(pp, s.payload.data(), pb) != 0)) {
            trap("a packet changed in the ring");
          }
          expect.pop_front();
        });
        if (got < 0) {
          if (!tampered) trap("a sound ring reported corruption");
          if (!cons.fault().what) trap("broken without a reason");
          broken = true;
        } else if (broken) {
          trap("a broken ring recovered");
        }
        break;
      }
      case 2: {  // raw bytes into the ring, as a hostile producer
        std::size_t off = in.u16() % kCap;
        std::size_t len = 1 + in.byte() % 32;
        for (std::size_t i = 0; i < len && off + i < kCap; ++i) ring[off + i] = static_cast<char>(in.byte());
        tampered = true;
        break;
      }
      default: {  // the shared head (a hostile consumer) or tail (a hostile producer)
        uint64_t v = in.u64();
        const uint8_t how = in.byte();
        std::atomic<uint64_t>& word = how & 2 ? shared->tail : shared->head;
        if (how & 1) v = word.load() + (v % 256) * 64 - 8192;  // near the real one
        word.store(v);
        tampered = true;
        break;
      }
    }
    if (!tampered && cons.empty() != expect.empty()) trap("empty() disagrees with what is pending");
  }
  delete shared;
  std::free(ring);
  return 0;
}
