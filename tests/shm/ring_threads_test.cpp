// The shared-memory ring with its three users in one process, as when a
// rank sends to itself under MPI_THREAD_MULTIPLE: a producer, the thread
// that drains, and a thread asking empty() before it sleeps (the channel's
// wait() beside poll()). Run by the TSan preset (label threaded): empty()
// must never read a line the producer may be rewriting, and it must never
// report "empty" while a record it could have seen is pending.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "channels/shm/shm_ring.hpp"

namespace {

using adi3::Payload;
using adi3::shm::RingConsumer;
using adi3::shm::RingProducer;
using adi3::shm::ShmRing;

constexpr std::size_t kCap = 4096;  // the smallest ring: laps come quickly
constexpr std::size_t kMaxHeader = 64;

struct Ring {
  ShmRing shared;
  std::vector<char> mem = std::vector<char>(kCap + 64, 0);
  char* data = mem.data() + (64 - reinterpret_cast<uintptr_t>(mem.data()) % 64) % 64;
  RingProducer prod{&shared, data, kCap};
  RingConsumer cons{&shared, data, kCap, kMaxHeader};
};

// Whatever lies behind the head, empty() answers from what was pushed and
// drained: a pushed record (wrap records included) is never "empty".
TEST(ShmRingThreads, EmptyFollowsPushAndDrain) {
  Ring r;
  EXPECT_TRUE(r.cons.empty());
  unsigned char hdr[16] = {1};
  std::vector<unsigned char> payload(1500, 2);
  for (int i = 0; i < 200; ++i) {
    const std::size_t bytes = static_cast<std::size_t>(i * 97) % payload.size();
    ASSERT_EQ(r.prod.push(hdr, sizeof hdr, Payload{payload.data(), bytes, nullptr, 0}), RingProducer::Push::Sent);
    EXPECT_FALSE(r.cons.empty()) << "record " << i;
    ASSERT_EQ(r.cons.drain(16, [](const void*, std::size_t, const void*, std::size_t) {}), 1);
    EXPECT_TRUE(r.cons.empty()) << "record " << i;
  }
}

TEST(ShmRingThreads, PeekWhileProducerLapsAndConsumerDrains) {
  Ring r;
  constexpr uint32_t kRecords = 10000;
  std::atomic<bool> done{false};
  std::atomic<uint64_t> not_empty{0};

  std::thread producer([&] {
    std::vector<unsigned char> payload(1200);
    for (uint32_t i = 0; i < kRecords; ++i) {
      // Sizes vary so that record bodies cover where earlier stamps were.
      const std::size_t bytes = (i * 389u) % payload.size();
      std::memset(payload.data(), static_cast<int>(i & 0xff), bytes);
      uint32_t hdr[2] = {i, static_cast<uint32_t>(bytes)};
      while (r.prod.push(hdr, sizeof hdr, Payload{payload.data(), bytes, nullptr, 0}) == RingProducer::Push::Full) {
        std::this_thread::yield();
      }
    }
  });
  std::thread peeker([&] {
    while (!done.load(std::memory_order_acquire)) {
      if (!r.cons.empty()) not_empty.fetch_add(1, std::memory_order_relaxed);
    }
  });

  uint32_t next = 0;
  bool intact = true;
  while (next < kRecords && intact) {
    int n = r.cons.drain(16, [&](const void* h, std::size_t hb, const void* p, std::size_t pb) {
      uint32_t hdr[2];
      std::memcpy(hdr, h, sizeof hdr);
      const auto* bytes = static_cast<const unsigned char*>(p);
      if (hb != sizeof hdr || hdr[0] != next || hdr[1] != pb ||
          (pb && (bytes[0] != (next & 0xff) || bytes[pb - 1] != (next & 0xff)))) {
        intact = false;
      }
      ++next;
    });
    ASSERT_GE(n, 0) << r.cons.fault().what;
    if (n == 0) std::this_thread::yield();
  }
  producer.join();
  EXPECT_TRUE(intact) << "record " << next << " arrived damaged or out of order";
  EXPECT_EQ(next, kRecords);
  EXPECT_TRUE(r.cons.empty()) << "all drained";
  done.store(true, std::memory_order_release);
  peeker.join();
}

}  // namespace
