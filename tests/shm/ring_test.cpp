// The shared-memory ring as an untrusting reader and writer: records pass
// intact across laps, and whatever the other side writes where it should
// not (a stamp, a length, a kind, the consumer's head) breaks the ring with
// a named reason instead of being followed.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "channels/shm/shm_ring.hpp"

namespace {

using adi3::Payload;
using adi3::shm::RingConsumer;
using adi3::shm::RingProducer;
using adi3::shm::ShmRing;
namespace fmt = adi3::shm::ring_format;

constexpr std::size_t kCap = 4096;
constexpr std::size_t kMaxHeader = 64;

struct Ring {
  ShmRing shared;
  alignas(64) std::vector<char> mem = std::vector<char>(kCap + 64, 0);
  char* data = mem.data() + (64 - reinterpret_cast<uintptr_t>(mem.data()) % 64) % 64;
  RingProducer prod{&shared, data, kCap};
  RingConsumer cons{&shared, data, kCap, kMaxHeader};

  RingProducer::Push push(std::size_t hdr_bytes, std::size_t payload_bytes, unsigned char seed) {
    std::vector<unsigned char> hdr(hdr_bytes, seed), payload(payload_bytes, static_cast<unsigned char>(seed + 1));
    return prod.push(hdr.data(), hdr.size(), Payload{payload.data(), payload.size(), nullptr, 0});
  }
  // Drains everything; returns the packets' (hdr_bytes, payload_bytes), or -1 entries on a break.
  int drain(std::vector<std::pair<std::size_t, std::size_t>>* got = nullptr) {
    return cons.drain(1000, [&](const void* h, std::size_t hb, const void* p, std::size_t pb) {
      (void)h;
      (void)p;
      if (got) got->push_back({hb, pb});
    });
  }
  // The record at ring position pos (the consumer's head when nothing is pending).
  fmt::Record* record_at(uint64_t pos) { return fmt::at(data, pos & (kCap - 1)); }
};

// Mid-size payloads go through StoreChooser: whichever stores it picks
// (every ordinary copy slow: streaming; 0: never streaming), they arrive
// intact across laps.
TEST(ShmRing, ChosenStoresKeepPayloadsIntact) {
  for (uint32_t slow_mbps : {UINT32_MAX, 0u}) {
    Ring r;
    r.prod = RingProducer(&r.shared, r.data, kCap, SIZE_MAX, 512, slow_mbps);
    std::vector<unsigned char> hdr(48, 3), payload(1500);
    for (int i = 0; i < 200; ++i) {
      const std::size_t pb = 512 + static_cast<std::size_t>(i * 97) % 900;
      for (std::size_t k = 0; k < pb; ++k) payload[k] = static_cast<unsigned char>(i * 31 + k);
      ASSERT_EQ(r.prod.push(hdr.data(), hdr.size(), Payload{payload.data(), pb, nullptr, 0}), RingProducer::Push::Sent);
      int got = 0;
      ASSERT_EQ(r.cons.drain(10,
                             [&](const void*, std::size_t, const void* p, std::size_t n) {
                               ASSERT_EQ(n, pb);
                               EXPECT_EQ(std::memcmp(p, payload.data(), n), 0) << "packet " << i;
                               ++got;
                             }),
                1);
      ASSERT_EQ(got, 1);
    }
  }
}

TEST(StoreChooser, StreamsOnlyWhileOrdinaryCopiesAreSlow) {
  std::vector<char> src(4096, 'x'), dst(4096 + 64);
  char* d = dst.data() + (64 - reinterpret_cast<uintptr_t>(dst.data()) % 64) % 64;
  adi3::shm::StoreChooser always_slow(UINT32_MAX), never_slow(0);
  for (uint32_t i = 0; i < adi3::shm::StoreChooser::kSampleEvery + 1; ++i) {
    always_slow.copy(d, src.data(), 4000);
    never_slow.copy(d, src.data(), 4000);
  }
  EXPECT_TRUE(always_slow.streaming());
  EXPECT_FALSE(never_slow.streaming());
  EXPECT_EQ(std::memcmp(d, src.data(), 4000), 0);
}

// Copies into a ring's first lap (cold pages) are never timed.
TEST(StoreChooser, ColdCopiesAreNotTimed) {
  std::vector<char> src(4096, 'y'), dst(4096 + 64);
  char* d = dst.data() + (64 - reinterpret_cast<uintptr_t>(dst.data()) % 64) % 64;
  adi3::shm::StoreChooser always_slow(UINT32_MAX);
  for (uint32_t i = 0; i < 3 * adi3::shm::StoreChooser::kSampleEvery; ++i) always_slow.copy(d, src.data(), 4000, false);
  EXPECT_FALSE(always_slow.streaming());
  always_slow.copy(d, src.data(), 4000, true);
  EXPECT_TRUE(always_slow.streaming());
  EXPECT_EQ(std::memcmp(d, src.data(), 4000), 0);
}

// A watched line that moves is timed; while it reads fast (here this thread
// writes it, so it is in our cache, unless a preemption intervenes: not
// asserted) slow copies do not stream. One that never moves times nothing,
// and the copies' timing decides alone.
TEST(StoreChooser, FastCrossingsKeepOrdinaryStores) {
  std::vector<char> src(4096, 'z'), dst(4096 + 64);
  char* d = dst.data() + (64 - reinterpret_cast<uintptr_t>(dst.data()) % 64) % 64;
  std::atomic<uint64_t> moving{0}, still{0};
  adi3::shm::StoreChooser watched(UINT32_MAX), unwatched(UINT32_MAX);
  watched.watch(&moving);
  unwatched.watch(&still);
  for (uint32_t i = 0; i < 8 * adi3::shm::StoreChooser::kSampleEvery; ++i) {
    moving.store(i + 1, std::memory_order_relaxed);
    watched.copy(d, src.data(), 4000, true, 0);
    unwatched.copy(d, src.data(), 4000, true, 0);
  }
  EXPECT_TRUE(!watched.line_fast() || !watched.streaming());
  EXPECT_FALSE(unwatched.line_fast());
  EXPECT_TRUE(unwatched.streaming());
  EXPECT_EQ(std::memcmp(d, src.data(), 4000), 0);
}

TEST(ShmRing, RecordsSurviveManyLaps) {
  Ring r;
  std::size_t sent = 0, received = 0;
  for (int i = 0; i < 2000; ++i) {
    const std::size_t hb = 1 + static_cast<std::size_t>(i) % kMaxHeader;
    const std::size_t pb = static_cast<std::size_t>(i * 37) % 1500;
    auto res = r.push(hb, pb, static_cast<unsigned char>(i));
    if (res == RingProducer::Push::Full) {
      std::vector<std::pair<std::size_t, std::size_t>> got;
      ASSERT_GT(r.drain(&got), 0);
      received += got.size();
      res = r.push(hb, pb, static_cast<unsigned char>(i));
    }
    ASSERT_EQ(res, RingProducer::Push::Sent) << "packet " << i;
    ++sent;
  }
  std::vector<std::pair<std::size_t, std::size_t>> got;
  ASSERT_GE(r.drain(&got), 0);
  received += got.size();
  EXPECT_EQ(sent, received);
  EXPECT_EQ(r.cons.fault().what, nullptr);
}

TEST(ShmRing, HeaderIsCopiedOutOfSharedMemory) {
  Ring r;
  ASSERT_EQ(r.push(48, 10, 7), RingProducer::Push::Sent);
  const char* seen = nullptr;
  r.cons.drain(1, [&](const void* h, std::size_t, const void*, std::size_t) { seen = static_cast<const char*>(h); });
  ASSERT_NE(seen, nullptr);
  EXPECT_FALSE(seen >= r.data && seen < r.data + kCap) << "the handler reads the header where the peer can change it";
}

// Payloads written with streaming stores (stream_copy.hpp) arrive byte for
// byte whatever their length and the alignment of their source and of
// their place in the ring (header lengths move it within a line).
TEST(ShmRing, StreamedPayloadsArriveIntact) {
  ShmRing shared;
  std::vector<char> mem(kCap + 64, 0);
  char* data = mem.data() + (64 - reinterpret_cast<uintptr_t>(mem.data()) % 64) % 64;
  RingProducer prod{&shared, data, kCap, 1};
  RingConsumer cons{&shared, data, kCap, kMaxHeader};
  std::vector<unsigned char> src(2048 + 64);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 131 + 7);
  int checked = 0;
  for (std::size_t bytes : {1u, 15u, 63u, 64u, 65u, 127u, 128u, 129u, 200u, 1000u, 1500u, 1900u}) {
    for (std::size_t src_off : {0u, 1u, 8u, 33u}) {
      for (std::size_t hb : {1u, 8u, 40u, 48u}) {
        std::vector<unsigned char> hdr(hb, 1);
        ASSERT_EQ(prod.push(hdr.data(), hb, Payload{src.data() + src_off, bytes, nullptr, 0}),
                  RingProducer::Push::Sent);
        int n = cons.drain(1, [&](const void*, std::size_t, const void* p, std::size_t pb) {
          ASSERT_EQ(pb, bytes);
          EXPECT_EQ(std::memcmp(p, src.data() + src_off, bytes), 0)
              << bytes << " bytes from source offset " << src_off << " after a " << hb << "-byte header";
          ++checked;
        });
        ASSERT_EQ(n, 1) << (cons.fault().what ? cons.fault().what : "");
      }
    }
  }
  EXPECT_EQ(checked, 12 * 4 * 4);
}

// A corrupt record at the head: never followed, the ring breaks for good.
void expect_broken(Ring& r, const char* what) {
  EXPECT_FALSE(r.cons.empty()) << "a corrupt record must be looked at, not waited on";
  int calls = 0;
  int n = r.cons.drain(100, [&](const void*, std::size_t, const void*, std::size_t) { ++calls; });
  EXPECT_EQ(n, -1);
  EXPECT_EQ(calls, 0);
  ASSERT_NE(r.cons.fault().what, nullptr);
  EXPECT_NE(std::string(r.cons.fault().what).find(what), std::string::npos) << r.cons.fault().what;
  EXPECT_EQ(r.cons.drain(100, [&](const void*, std::size_t, const void*, std::size_t) { ++calls; }), -1);
  EXPECT_EQ(calls, 0);
}

TEST(ShmRing, WrongStampIsRefused) {
  Ring r;
  ASSERT_EQ(r.push(48, 0, 1), RingProducer::Push::Sent);
  r.record_at(0)->stamp.store(12345);
  expect_broken(r, "stamp");
}

TEST(ShmRing, StampOfAnotherLapIsRefused) {
  Ring r;
  ASSERT_EQ(r.push(48, 0, 1), RingProducer::Push::Sent);
  r.record_at(0)->stamp.store(kCap + 1);
  expect_broken(r, "stamp");
}

TEST(ShmRing, LengthBeyondTheRingIsRefused) {
  Ring r;
  ASSERT_EQ(r.push(48, 0, 1), RingProducer::Push::Sent);
  r.record_at(0)->payload_bytes = 0xfffffff0u;
  expect_broken(r, "longer than the ring");
}

TEST(ShmRing, RecordCrossingTheEndIsRefused) {
  Ring r;
  // One-line records up to the last line of the ring, then claim a record
  // longer than what is left before the end.
  for (std::size_t i = 0; i < kCap / 64 - 1; ++i) {
    ASSERT_EQ(r.push(8, 0, 1), RingProducer::Push::Sent);
    ASSERT_EQ(r.drain(), 1);
  }
  ASSERT_EQ(r.push(8, 0, 2), RingProducer::Push::Sent);  // exactly one line: the last
  r.record_at(kCap - 64)->payload_bytes = 200;
  expect_broken(r, "longer than the ring");
}

TEST(ShmRing, HeaderLengthOutOfRangeIsRefused) {
  for (uint16_t bad : {uint16_t{0}, uint16_t{kMaxHeader + 1}, uint16_t{65535}}) {
    Ring r;
    ASSERT_EQ(r.push(48, 0, 1), RingProducer::Push::Sent);
    r.record_at(0)->hdr_bytes = bad;
    expect_broken(r, "header length");
  }
}

TEST(ShmRing, UnknownKindIsRefused) {
  Ring r;
  ASSERT_EQ(r.push(48, 0, 1), RingProducer::Push::Sent);
  r.record_at(0)->kind = 9;
  expect_broken(r, "kind");
}

TEST(ShmRing, WrapAtTheStartIsRefused) {
  Ring r;
  ASSERT_EQ(r.push(48, 0, 1), RingProducer::Push::Sent);
  r.record_at(0)->kind = fmt::kWrap;  // would skip a whole lap
  expect_broken(r, "wrap");
}

// The consumer's head is in shared memory: the producer refuses one that
// moved backwards or past what was written, instead of overwriting
// unread records or writing past the ring.
TEST(ShmRing, ProducerRefusesAnImpossibleHead) {
  for (uint64_t bad : {uint64_t{1} << 40, uint64_t{64 * 1000}}) {
    Ring r;
    while (r.push(48, 500, 1) == RingProducer::Push::Sent) {
    }
    r.shared.head.store(bad);
    EXPECT_EQ(r.push(48, 500, 1), RingProducer::Push::Broken);
    ASSERT_NE(r.prod.fault().what, nullptr);
    EXPECT_EQ(r.push(8, 0, 1), RingProducer::Push::Broken);
  }
}

TEST(ShmRing, ProducerRefusesAHeadThatMovedBack) {
  Ring r;
  while (r.push(48, 500, 1) == RingProducer::Push::Sent) {
  }
  ASSERT_GT(r.drain(), 0);
  ASSERT_EQ(r.push(48, 500, 1), RingProducer::Push::Sent);  // saw the new head
  while (r.push(48, 500, 1) == RingProducer::Push::Sent) {
  }
  r.shared.head.store(0);
  EXPECT_EQ(r.push(48, 500, 1), RingProducer::Push::Broken);
}

}  // namespace
