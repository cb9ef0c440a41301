// The shared-memory segment of one communicator whose members are all on
// this host: the flags and buffers the collectives of
// shm_coll.cpp run on, instead of point-to-point messages.
//
// Rank 0 allocates the segment from the channel's one-sided part (a shared
// mapping, channels/onesided.hpp) on the first collective that can use it,
// sends its key to the others over the collective context, they attach,
// and all agree on the outcome; a communicator whose setup fails anywhere
// keeps the point-to-point algorithms for good.
//
// Synchronization: every rank owns one flag (its own 128-byte line) that
// only grows. Each collective takes a fixed number of *stages* from a
// counter every rank advances alike (all call the same collectives in the
// same order); "rank r posted stage s" is flag[r] >= s, so nothing is
// ever reset (the epoch form of sense reversal). A flag at the first stage
// of call c also says that its rank finished reading everything of the
// calls before c, which is what lets a writer reuse a buffer. A waiter
// waits as every blocking call does (Device::block_until) and may sleep on
// its channel's doorbell: a poster rings its peers' (OneSided::wake).
//
// Buffers: two tiers of rotating slots per rank, chosen per call from
// the bytes it puts in a slot (the same on every rank): kShmRing sets of
// kShmSmall bytes and kShmDepth sets of kShmSlot bytes (a call c of a tier
// with d sets writes set c % d once all ranks entered call c - d + 1), and
// one large area per rank for the reduce-scatter of long reductions. The
// small tier is deep so that a rooted call (bcast, reduce) whose root or
// leaves run ahead waits for the slowest rank only every kShmRing calls:
// with more ranks than cores, each such wait costs every rank a trip
// through the scheduler. A slot starts with
// its own stamp (the stage its data is for) in the line of its first
// bytes: a reader of small data waits on the stamp and finds the data in
// the same cache line, one transfer between cores instead of two (flag,
// then slot).
//
// Values read from the segment come from other processes: flags are only
// compared, data only combined or copied; no size, offset or pointer is
// ever taken from it.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "adi3/device.hpp"
#include "channels/onesided.hpp"
#include "channels/shm/store_choice.hpp"
#include "channels/shm/stream_copy.hpp"

namespace adi3 {
class OneSided;
struct Region;
struct RemoteRegion;
}  // namespace adi3

namespace adi3::coll::detail {

inline constexpr std::size_t kShmLine = 128;     // two cache lines: no false sharing with the prefetcher's pair
inline constexpr std::size_t kShmSlot = 17408;   // small-message slot per rank, with its stamp
inline constexpr std::size_t kShmSlotHead = 16;  // the stamp; keeps the data 16-byte aligned
inline constexpr std::size_t kShmSlotData = kShmSlot - kShmSlotHead;  // data bytes a slot holds
// What a call puts in a slot when every member has a core of its own; the
// whole slot (16 KiB of data) only when members outnumber the processors:
// then one stage instead of a long reduction's three (each costs every rank
// a trip through the scheduler) pays for the root folding alone.
inline constexpr std::size_t kShmSlotOwnCores = 8192 - kShmSlotHead;
inline constexpr std::size_t kShmDepth = 4;     // rotating slot sets
inline constexpr std::size_t kShmSmall = 1024;  // small-tier slot per rank, with its stamp
inline constexpr std::size_t kShmSmallData = kShmSmall - kShmSlotHead;
inline constexpr std::size_t kShmRing = 64;  // small-tier sets (a power of two, and the depth of first_)
static_assert(kShmRing % kShmDepth == 0 && kShmRing > kShmDepth);
static_assert((kShmRing & (kShmRing - 1)) == 0 && (kShmDepth & (kShmDepth - 1)) == 0);  // sets picked by a mask
inline constexpr std::size_t kShmChunk = 1024 * 1024;  // large area per rank (one round of a long reduction)
inline constexpr std::size_t kShmPieces = 4;           // long bcast: pieces of an area in flight
inline constexpr std::size_t kShmPiece = 64 * 1024;    // the first kShmPieces * kShmPiece bytes of the area
inline constexpr int kShmMaxRanks = 64;                // flat algorithms read every member's flag
// Looks at the awaited flags alone, with a pause between, before a wait
// enters Device::block_until, whose progress pass between two looks (a
// poll of every p2p ring) delays noticing a peer that arrives a few lines'
// time later. Only when every member has a core of its own; bounded so the
// p2p traffic a waiting rank must still serve waits a few microseconds at
// most.
inline constexpr int kShmFlagSpin = 64;

// Writes into a large area (or a long bcast's piece) that other ranks read:
// with streaming stores (channels/shm/stream_copy.hpp, ends with a store
// fence, so a post() after it publishes the data). The area's lines sit in
// the caches of the cores that read them last round; ordinary stores take
// each line back first (a read for ownership across cores), which ran the
// writer's copy at 2-3 GB/s on the 2-core host (bench/shm/xcopy
// pipe-plain) and made a 2-rank 1 MiB bcast cost two p2p messages;
// streaming stores write at 28-39 GB/s whatever the other core holds.
// Slots keep ordinary stores: their small data is read at once, from the
// writer's cache.
inline void to_area(std::byte* area, const std::byte* src, std::size_t n) { shm::stream_copy(area, src, n); }
// An allgather's or alltoall's block copies into a slot from this size on
// take the stores the node's chooser times (store(), channels/shm/
// store_choice.hpp, the p2p ring's rule and threshold): which ones win
// depends on the VM's state, which flips while a job runs. Areas keep
// streaming: with the chooser, 2-rank allgather and alltoall of 16 and
// 64 KiB (area rounds) ran bimodal, 2x slower in the median (7 alternated
// rounds against main, loaded host).
inline constexpr std::size_t kShmChosenMin = 2048;
inline constexpr uint32_t kShmSlowMbps = 15000;  // ordinary copies timed slower than this stream

class ShmNode {
 public:
  ~ShmNode();
  ShmNode(const ShmNode&) = delete;
  ShmNode& operator=(const ShmNode&) = delete;

  // The node of comm, made (collectively) on first use; nullptr when the
  // members cannot share memory or t.shm is off. *err is set when the
  // setup's messages failed (a dead peer): the caller returns it.
  static ShmNode* of(Device& dev, const Comm& comm, bool enabled, int* err);
  // of() for one collective call: *taken says whether the call is done
  // (a node, or a setup whose messages failed with *err).
  static ShmNode* for_call(Device& dev, const Comm& comm, bool enabled, int* err, bool* taken) {
    ShmNode* n = of(dev, comm, enabled, err);
    *taken = n || *err;
    return n;
  }
  // The node an earlier of() made for comm (*ready: its setup succeeded),
  // or nullptr: none yet. Not collective (coll/express.hpp).
  static ShmNode* made(Device& dev, const Comm& comm, bool* ready);
  // The context's communicator was freed.
  static void forget(Device& dev, uint32_t context);

  int rank() const { return me_; }
  // The channel's one-sided part the segment came from, and the channel
  // rank of member r (for attach()).
  OneSided& onesided() const { return *os_; }
  int peer(int r) const { return comm_.to_peer(r); }
  // Direct reads of the other members' buffers (shm_direct.hpp), a
  // reduce's apart: this rank's moving average of their rate (MB/s; 0
  // before the first), and whether the members last agreed that one read
  // slowly (the same on every member); and the calls that could have used
  // them (the same count on every member).
  struct DirectVerdict {
    uint32_t mbps = 0;
    bool slow = false;
  };
  DirectVerdict direct_verdict, reduce_verdict;
  uint64_t direct_calls = 0;
  int size() const { return p_; }
  // The most a call of this node puts in a slot (the same on every member:
  // they share the host): kShmSlotData or kShmSlotOwnCores.
  std::size_t slot_limit() const { return slot_limit_; }
  // Whether every member has a processor of its own (the same on every member).
  bool own_cores() const { return slot_limit_ == kShmSlotOwnCores; }
  // Members per processor, rounded up (1: own cores; the same on every member).
  int crowding() const { return crowding_; }

  // Copies n bytes of this rank's data into its slot (area: its area),
  // which the others read in this call (see kShmChosenMin).
  void store(std::byte* to, const std::byte* from, std::size_t n, bool area) {
    if (area) {
      to_area(to, from, n);
    } else if (n >= kShmChosenMin) {
      chooser_.copy(to, from, n, call_ > kShmRing);  // the first calls fault the sets' pages in
    } else {
      std::memcpy(to, from, n);
    }
  }

  // Starts a collective taking `stages` stages, whose slot (if it uses
  // one) holds slot_bytes <= kShmSlotData: the tier of its slots. Returns
  // its first stage.
  uint64_t begin(uint64_t stages, std::size_t slot_bytes = 0);
  // A barrier's one stage: no slot, so not counted among the calls whose
  // sets rotate (a later call's set is free once every rank posted the
  // first stage of the call after the set's last user; a barrier between
  // them only moves that stage later). Every rank's barrier takes it.
  uint64_t begin_barrier() { return ++stage_; }
  // This call's slot of rank r, and mine once every rank is done with the
  // call that last used it (may wait).
  std::byte* slot(int r) const { return slot_base(r) + kShmSlotHead; }
  int claim_slot(std::byte** mine);
  // Stamps my slot with stage s (its data is written), then posts s.
  void publish(uint64_t s);
  // Until rank r's slot (every other rank's) is stamped s: the data is then
  // readable.
  int wait_slot(int r, uint64_t s) {
    if (stamp(r).load(std::memory_order_acquire) < s) return wait_slot_slow(r, s);
    ring_owed();
    return 0;
  }
  int wait_slots(uint64_t s) {
    for (int r = 0; r < p_; ++r) {
      if (r != me_ && stamp(r).load(std::memory_order_acquire) < s) return wait_slots_from(r, s);
    }
    ring_owed();
    return 0;
  }
  // Rank r's large area (kShmChunk bytes), and mine once every rank is done
  // with the previous long reduction's last stage (may wait).
  std::byte* area(int r) const { return areas_ + static_cast<std::size_t>(r) * kShmChunk; }
  int claim_area(std::byte** mine);
  // After the last stage of a round that read others' areas: they may be
  // rewritten once every rank posted `stage`.
  void areas_free_at(uint64_t stage) { area_free_ = stage; }
  // A long bcast streams through a ring of kShmPieces pieces of the root's
  // area, numbered across calls (every rank takes the same numbers), so a
  // root runs ahead into the next call while the readers still copy out
  // of this one. take_pieces(n) numbers a call's n pieces (returns the
  // first); claim_piece(g) waits until every rank is done with what piece
  // g's place held (a piece read, or another collective's use of the
  // area) and returns it in area(r); piece_read_at(g, s) says that once
  // every rank posted s, piece g was read.
  uint64_t take_pieces(uint64_t n) {
    const uint64_t g = pieces_;
    pieces_ += n;
    return g;
  }
  int claim_piece(int r, uint64_t g, std::byte** at);
  void piece_read_at(uint64_t g, uint64_t stage) {
    piece_free_[g % kShmPieces] = stage;
    pieces_free_ = stage;
  }

  // Publishes stage s for this rank and wakes members asleep on it.
  void post(uint64_t s);
  // post(s) then wait_all(s), and publish(s) then wait_slots(s), with the
  // wake rung by the wait once it has seen the others (or before it could
  // sleep): the wake's fence would stall this rank until its store owned
  // the line the others spin on, a round trip between cores spent before
  // it even looks at their flags; by then the store has long drained and
  // the fence is cheap.
  int post_wait_all(uint64_t s) {
    post_owed(s);
    return wait_all(s);
  }
  int publish_wait_slots(uint64_t s) {
    stamp(me_).store(s, std::memory_order_release);
    post_owed(s);
    return wait_slots(s);
  }
  // Until rank r (every rank) posted stage s, waiting as every blocking
  // call of the device does (Device::block_until). Returns 0, or the
  // device's failure error when a peer died and nothing moved for ~100 ms.
  int wait_one(int r, uint64_t s);
  int wait_all(uint64_t s) {
    if (!all_reached(s)) return wait_all_slow(s);
    ring_owed();
    return 0;
  }

 private:
  // The flag store of post(), its wake owed to the wait that follows.
  void post_owed(uint64_t s) {
    flag(me_).store(s, std::memory_order_release);
    owe_wake_ = true;
  }
  void ring_owed() {
    if (owe_wake_) {
      owe_wake_ = false;
      ring();
    }
  }
  ShmNode(Device& dev, const Comm& comm);
  int setup();
  void layout(std::byte* base);
  std::atomic<uint64_t>& flag(int r) const {
    return *reinterpret_cast<std::atomic<uint64_t>*>(flags_ + static_cast<std::size_t>(r) * kShmLine);
  }
  std::byte* slot_base(int r) const { return set_ + static_cast<std::size_t>(r) * slot_size_; }
  std::atomic<uint64_t>& stamp(int r) const { return *reinterpret_cast<std::atomic<uint64_t>*>(slot_base(r)); }
  int wait_slots_from(int r, uint64_t s);
  int wait_slot_slow(int r, uint64_t s);
  int wait_all_slow(uint64_t s);
  bool reached(int r, uint64_t s) const;
  bool all_reached(uint64_t s) {
    if (known_all_ >= s) return true;
    uint64_t low = UINT64_MAX;
    for (int r = 0; r < p_; ++r) {
      const uint64_t v = flag(r).load(std::memory_order_acquire);
      if (v < s) return false;
      if (v < low) low = v;
    }
    known_all_ = low;
    return true;
  }
  template <class Ready>
  int wait(Ready&& ready);
  void ring() {
    for (const int peer : others_) os_->wake(peer);
  }

  Device& dev_;
  Comm comm_;  // its members, for the setup's messages and liveness checks
  uint32_t context_;
  std::vector<int> peers_;   // comm rank -> channel rank
  std::vector<int> others_;  // the channel ranks of the other members (post() wakes them)
  int me_, p_;
  OneSided* os_ = nullptr;
  Region* region_ = nullptr;        // rank 0: the segment
  RemoteRegion* remote_ = nullptr;  // the others: rank 0's segment, mapped
  bool ready_ = false;              // setup succeeded everywhere
  std::size_t slot_limit_ = kShmSlotOwnCores;
  int crowding_ = 1;
  shm::StoreChooser chooser_{kShmSlowMbps};  // for store(); watches the next rank's flag
  bool owe_wake_ = false;                    // post_owed()'s wake has not rung yet

  std::byte* flags_ = nullptr;   // p lines, a flag at the start of each
  std::byte* slots_ = nullptr;   // kDepth * p * kShmSlot
  std::byte* smalls_ = nullptr;  // kRing * p * kShmSmall
  std::byte* areas_ = nullptr;   // p * kShmChunk

  uint64_t stage_ = 0;                    // the last stage taken
  uint64_t call_ = 0;                     // collectives run
  std::byte* set_ = nullptr;              // this call's slot set
  std::size_t slot_size_ = 0;             // and its slots' size
  uint64_t slot_free_ = 0;                // the set is free once every rank posted this
  uint64_t first_[kShmRing] = {};         // first stage of the last kRing calls, by call % kRing
  uint64_t known_all_ = 0;                // every rank has posted at least this
  uint64_t area_free_ = 0;                // the areas' last use by a collective other than bcast
  uint64_t pieces_ = 0;                   // long bcast pieces numbered
  uint64_t piece_free_[kShmPieces] = {};  // by piece number % kShmPieces
  uint64_t pieces_free_ = 0;              // the last piece read

  friend struct ShmNodes;
};

// Member j's term of a fold over the slots of a call in which this rank
// published the `bytes` at `in`: `in` itself for this rank, unless the
// fold's output overlaps it (in place; or erroneous aliasing, which must
// not change the answer). A load from one's own slot just after publishing
// it waited for the line to be owned, about one cache line crossing (2
// ranks on this host, a bare stamp-and-data exchange: 0.13-0.14 us per
// call without that load, 0.21-0.23 us with it; the peer's slot: 0.01-0.02).
inline const void* own_term(const ShmNode& n, int j, const void* in, const void* out, std::size_t bytes) {
  if (j != n.rank()) return n.slot(j);
  const auto a = reinterpret_cast<std::uintptr_t>(in), b = reinterpret_cast<std::uintptr_t>(out);
  return a + bytes <= b || b + bytes <= a ? in : n.slot(j);
}

// The per-call steps every collective takes, inline: the express path
// (coll/express.hpp) is little else.
inline uint64_t ShmNode::begin(uint64_t stages, std::size_t slot_bytes) {
  ++call_;
  const uint64_t first = stage_ + 1;
  stage_ += stages;
  first_[call_ & (kShmRing - 1)] = first;
  const bool small = slot_bytes <= kShmSmallData;
  const std::size_t sets = small ? kShmRing : kShmDepth;
  slot_size_ = small ? kShmSmall : kShmSlot;
  set_ = (small ? smalls_ : slots_) + (call_ & (sets - 1)) * static_cast<std::size_t>(p_) * slot_size_;
  // The call that last used this set is call_ - sets; every rank is past
  // it once it posted the first stage of the call after it.
  slot_free_ = call_ > sets ? first_[(call_ - sets + 1) & (kShmRing - 1)] : 0;
  return first;
}

inline int ShmNode::claim_slot(std::byte** mine) {
  if (slot_free_ > known_all_) [[unlikely]] {
    if (int e = wait_all(slot_free_)) return e;
  }
  *mine = slot(me_);
  return 0;
}

inline void ShmNode::post(uint64_t s) {
  flag(me_).store(s, std::memory_order_release);
  // A member asleep in its wait sleeps on its channel's doorbell, which a
  // store into the segment does not ring (each ring orders this store
  // before its look for sleepers: see Doorbell).
  owe_wake_ = false;
  ring();
}

inline void ShmNode::publish(uint64_t s) {
  // Release: the data before the stamp; post() rings after both.
  stamp(me_).store(s, std::memory_order_release);
  post(s);
}

}  // namespace adi3::coll::detail
