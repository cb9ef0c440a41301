// ShmOneSided::attentive, the hint route_op asks before an operation on
// memory reached by cross-memory attach: a packet while the target polls
// or sleeps in a blocking wait during a stream, the system call otherwise.
// The peer's header words (InboxHeader::activity, ::calls and ::waiting)
// are plain atomics here and the clock is one the test steps (100 ns a reading), so
// every case is deterministic: no second process, and a test descheduled
// between two looks sees no time pass.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <vector>

#include "channels/shm/shm_onesided.hpp"

namespace {

struct Peer {
  std::atomic<uint64_t> activity{1};
  std::atomic<uint32_t> calls{0}, waiting{0};
};

// The stepped clock: starts at one second, 100 ns per reading.
std::atomic<int64_t> fake_ns{1'000'000'000};
int64_t stepped_ns() { return fake_ns.fetch_add(100, std::memory_order_relaxed); }

// Rank 0's view of peer 1, whose header words are p's; with cma, both
// ranks are process pid (cross-memory attach to oneself is allowed).
std::unique_ptr<adi3::shm::ShmOneSided> view_of(Peer& p, pid_t pid = 0, bool cma = false) {
  std::vector<const std::atomic<uint64_t>*> activity{nullptr, &p.activity};
  std::vector<adi3::shm::ShmOneSided::Calls> calls{{}, {&p.waiting, &p.calls}};
  return std::make_unique<adi3::shm::ShmOneSided>("attentive-test", 0, std::vector<pid_t>(2, pid), cma,
                                                  std::move(activity), std::vector<adi3::Doorbell*>(2, nullptr),
                                                  std::move(calls), stepped_ns);
}

TEST(ShmAttentive, PollingPeerTakesPackets) {
  Peer p;
  auto os = view_of(p);
  os->attentive(1);  // first look
  for (int i = 0; i < 100; ++i) {
    p.activity.fetch_add(1);  // it polled since our last look
    EXPECT_TRUE(os->attentive(1)) << "look " << i;
  }
}

TEST(ShmAttentive, ComputingPeerIsNeverWoken) {
  // Counter still, nobody asleep in a blocking wait (its agent's idle sleep
  // has no condition): every operation takes cross-memory attach.
  Peer p;
  auto os = view_of(p);
  for (int i = 0; i < 1000; ++i) ASSERT_FALSE(os->attentive(1)) << "look " << i;
}

TEST(ShmAttentive, StreamWakesPeerAsleepInBlockingWait) {
  Peer p;
  p.waiting.store(1);
  auto os = view_of(p);
  // An isolated operation, or the first of a stream, never waits for a
  // wake-up: the first eight take cross-memory attach whatever the timing.
  for (int i = 0; i < 8; ++i) ASSERT_FALSE(os->attentive(1)) << "look " << i;
  // Then the ninth wakes it with a packet.
  EXPECT_TRUE(os->attentive(1)) << "a stream to a peer asleep in a blocking wait never sent the packet that wakes it";
  // Awake, it polls: packets from then on.
  p.waiting.store(0);
  for (int i = 0; i < 100; ++i) {
    p.activity.fetch_add(1);
    EXPECT_TRUE(os->attentive(1)) << "look " << i << " after the wake-up";
  }
  // Asleep again: the next wake-up waits for a new run of eight.
  p.waiting.store(1);
  for (int i = 0; i < 8; ++i) ASSERT_FALSE(os->attentive(1)) << "look " << i << " of the second stream";
}

TEST(ShmAttentive, PeerAwakeInBlockingCallTakesPackets) {
  // In MPI_Barrier, say, spinning or yielding: it polls, though its
  // counter is not looked at (it stays still here).
  Peer p;
  p.calls.store(1);
  auto os = view_of(p);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(os->attentive(1)) << "look " << i;
  // Two threads wait, one asleep: the other polls.
  p.calls.store(2);
  p.waiting.store(1);
  EXPECT_TRUE(os->attentive(1));
  // It left the call and computes: cross-memory attach again.
  p.calls.store(0);
  p.waiting.store(0);
  for (int i = 0; i < 100; ++i) ASSERT_FALSE(os->attentive(1)) << "look " << i << " after the call";
}

TEST(ShmAttentive, StreamWakesPeerAsleepInBlockingCall) {
  // Every waiting thread asleep: isolated operations keep cross-memory
  // attach (no wake-up to wait for), a stream wakes it once.
  Peer p;
  p.calls.store(1);
  p.waiting.store(1);
  auto os = view_of(p);
  for (int i = 0; i < 8; ++i) ASSERT_FALSE(os->attentive(1)) << "look " << i;
  EXPECT_TRUE(os->attentive(1)) << "a stream to a peer asleep in a blocking call never sent the packet that wakes it";
  // Woken, it polls in its call: packets.
  p.waiting.store(0);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(os->attentive(1)) << "look " << i << " after the wake-up";
  // Asleep again: a new run of eight first.
  p.waiting.store(1);
  for (int i = 0; i < 8; ++i) ASSERT_FALSE(os->attentive(1)) << "look " << i << " of the second stream";
}

TEST(ShmAttentive, StreamOfLongCopiesWakesSleeper) {
  // Copies by cross-memory attach that each take longer than the stream's
  // gap (1 MiB: ~100 us): the gap runs from the end of the last copy, so
  // they still make a stream. Rank 0 exposes memory; its view of "peer 1"
  // is this process too (cross-memory attach to oneself is allowed).
  Peer p;
  p.calls.store(1);
  p.waiting.store(1);
  auto view = view_of(p, getpid(), true);
  adi3::shm::ShmOneSided& os = *view;
  std::vector<char> mem(64, 0);
  adi3::Region* mine = os.expose(mem.data(), mem.size());
  ASSERT_NE(mine, nullptr);
  adi3::RemoteRegion* r = os.attach(1, mine->key, mine->key_bytes);
  ASSERT_NE(r, nullptr);
  if (!(r->ops & adi3::kOsPut) || os.put(*r, 0, "x", 1) != 0) {
    os.detach(r);
    os.release(mine);
    GTEST_SKIP() << "cross-memory attach is not permitted here";
  }
  fake_ns.fetch_add(1'000'000);  // a new stream
  for (int i = 0; i < 8; ++i) {
    ASSERT_FALSE(os.attentive(1)) << "look " << i;
    fake_ns.fetch_add(150'000);  // the copy takes 150 us
    ASSERT_EQ(os.put(*r, 0, "y", 1), 0);
  }
  EXPECT_TRUE(os.attentive(1)) << "a stream of long copies to a sleeper never woke it";
  EXPECT_EQ(mem[0], 'y');
  os.detach(r);
  os.release(mine);
}

TEST(ShmAttentive, UnknownPeerIsNotAttentive) {
  Peer p;
  auto os = view_of(p);
  EXPECT_FALSE(os->attentive(0));  // no counter published
  EXPECT_FALSE(os->attentive(2));
  EXPECT_FALSE(os->attentive(-1));
}

}  // namespace
