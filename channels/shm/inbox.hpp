// The layout of a rank's inbox: one shared segment per rank holding its
// doorbell and one SPSC ring (shm_ring.hpp: its head here, its records in
// the data area) per sender (itself included). Only offsets
// live in shared memory, so every process may map it at its own address.
//
//   [InboxHeader][Doorbell][RoomFlag x ranks][ShmRing x ranks]
//   [SplitAsk x ranks][pad][ring data x ranks]
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>

#include "channels/common/doorbell.hpp"
#include "channels/shm/shm_ring.hpp"

namespace adi3::shm {

inline constexpr uint64_t kInboxMagic = 0x314d48533349'4441ull;  // "ADI3SHM1"
// 5: ShmRing has the producer's tail; 6: crossing_slow; 7: ShmRing::streaming;
// 8: light_wake; 9: calls, and waiting moved to its line; 10: no
// ShmRing::streaming (crossing messages choose by timed rates); 11: no
// crossing_slow (they choose by size); 12: asks and SplitAsk (cma_split.cpp);
// 13: SplitAsk::dir (one-sided puts ask too); 14: SplitAsk::chunk and cut
// (chunks claimed from both ends)
inline constexpr uint32_t kInboxVersion = 14;

struct alignas(64) InboxHeader {
  uint64_t magic;
  uint32_t version;
  int32_t ranks;
  int32_t owner;  // rank
  int32_t pid;
  uint64_t ring_bytes;
  // A word in the owner's private memory, for peers to test CMA on.
  uint64_t cma_addr;
  uint64_t cma_value;
  // Nonzero when the owner runs process_fence() before each sleep, so its
  // senders may ring its doorbell without a fence (Doorbell::ring_light).
  uint32_t light_wake;
  // Bumped by the owner at every poll: peers see whether it is inside the
  // library right now (see ShmChannel::get). Its own line: only the owner
  // writes it, peers read it rarely.
  alignas(64) std::atomic<uint64_t> activity;
  // Nonzero while the owner copies a message with CMA: a system call that
  // bumps nothing, yet the owner is inside the library, not computing.
  std::atomic<uint32_t> cma_copies;
  // Threads of the owner inside a blocking call's wait (Device::block_until,
  // for the whole wait: spinning, yielding or asleep), and how many threads
  // sleep in a blocking wait (a call waiting for a condition,
  // Channel::wait_until: it polls again as soon as its doorbell rings), as
  // opposed to its agent's idle sleep. A thread that waits and does not
  // sleep polls: peers reaching the owner's memory by cross-memory attach
  // send packets instead, and a packet wakes a sleeper, which then polls
  // for the operations that follow (shm_onesided.cpp, attentive). Their own
  // line, written at the start and end of each wait and around each sleep:
  // peers read it at every such operation without the activity line's
  // bounce.
  alignas(64) std::atomic<uint32_t> calls;
  std::atomic<uint32_t> waiting;
  // Bumped by a peer that asked the owner to copy part of a message
  // (SplitAsk): the owner's poll reads this line, in its cache until a
  // peer asks, and looks at the asks only when it moved.
  alignas(64) std::atomic<uint32_t> asks;
};

// A peer copying between its memory and the owner's by cross-memory attach
// asks the owner to copy part of it (cma_split.cpp): a receiver of the
// owner's message, an origin reading or writing the owner's window. One
// per asking rank; the asker writes dir, src, dst, len, chunk and cut,
// then publishes state = sequence << 3 | phase.
struct alignas(64) SplitAsk {
  // kAskToAsker: the owner writes src (its memory: an offered send buffer
  // or window) into dst (the asker's). kAskToOwner: the owner reads src
  // (the asker's memory) into dst (its window).
  static constexpr uint64_t kAskToAsker = 0, kAskToOwner = 1;
  std::atomic<uint64_t> state{0};
  uint64_t src = 0;
  uint64_t dst = 0;
  uint64_t len = 0;
  uint64_t dir = kAskToAsker;
  uint64_t chunk = 0;  // bytes of each chunk (the last may be shorter)
  // front << 32 | back, in chunks: the asker copies the chunks it claims
  // from the front, the owner (once it took the ask) those from the back.
  alignas(64) std::atomic<uint64_t> cut{0};
};

// Set by a sender whose packet did not fit, cleared by the receiver when it
// made room (and then rings the sender's doorbell): a sender that sleeps on
// a full ring is woken, and nobody else is.
struct alignas(64) RoomFlag {
  std::atomic<uint32_t> wanted{0};
};

class InboxLayout {
 public:
  InboxLayout(int ranks, std::size_t ring_bytes) : ranks_(ranks), ring_bytes_(ring_bytes) {
    flags_ = round_up(sizeof(InboxHeader), 64) + round_up(sizeof(Doorbell), 64);
    rings_ = flags_ + sizeof(RoomFlag) * static_cast<std::size_t>(ranks);
    asks_ = rings_ + sizeof(ShmRing) * static_cast<std::size_t>(ranks);
    data_ = round_up(asks_ + sizeof(SplitAsk) * static_cast<std::size_t>(ranks), kPage);
    total_ = data_ + ring_bytes * static_cast<std::size_t>(ranks);
  }
  std::size_t total() const { return total_; }

  InboxHeader* header(char* base) const { return reinterpret_cast<InboxHeader*>(base); }
  Doorbell* bell(char* base) const { return reinterpret_cast<Doorbell*>(base + round_up(sizeof(InboxHeader), 64)); }
  RoomFlag* room(char* base, int sender) const { return reinterpret_cast<RoomFlag*>(base + flags_) + sender; }
  ShmRing* ring(char* base, int sender) const { return reinterpret_cast<ShmRing*>(base + rings_) + sender; }
  SplitAsk* ask(char* base, int asker) const { return reinterpret_cast<SplitAsk*>(base + asks_) + asker; }
  char* data(char* base, int sender) const { return base + data_ + ring_bytes_ * static_cast<std::size_t>(sender); }

  // The owner builds its inbox before anyone else may map it.
  void construct(char* base, int owner, int pid, uint64_t cma_addr, uint64_t cma_value, bool light_wake) const {
    auto* h = new (base) InboxHeader{};
    h->magic = kInboxMagic;
    h->version = kInboxVersion;
    h->ranks = ranks_;
    h->owner = owner;
    h->pid = pid;
    h->ring_bytes = ring_bytes_;
    h->cma_addr = cma_addr;
    h->cma_value = cma_value;
    h->light_wake = light_wake ? 1 : 0;
    new (bell(base)) Doorbell();
    for (int s = 0; s < ranks_; ++s) {
      new (room(base, s)) RoomFlag();
      new (ring(base, s)) ShmRing();
      new (ask(base, s)) SplitAsk();
    }
  }

 private:
  static constexpr std::size_t kPage = 4096;
  static std::size_t round_up(std::size_t n, std::size_t a) { return (n + a - 1) / a * a; }

  int ranks_;
  std::size_t ring_bytes_;
  std::size_t flags_ = 0, rings_ = 0, asks_ = 0, data_ = 0, total_ = 0;
};

}  // namespace adi3::shm
