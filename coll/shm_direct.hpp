// Direct reads for the shared-memory collectives (shm_gather.cpp,
// shm_coll.cpp): each member exposes the buffer it sends from and the
// readers copy out of it with cross-memory attach (one copy instead of the
// segment's two).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "adi3/device.hpp"
#include "adi3/steady_clock.hpp"
#include "channels/onesided.hpp"
#include "coll/shm_node.hpp"

namespace adi3::coll::detail {

// A member's entry in its slot in a direct call.
struct DirectEntry {
  uint32_t ok;      // exposed, and this rank can read the others' memory natively
  uint32_t fast;    // its direct reads ran fast enough (or were never timed)
  uint32_t writes;  // a bcast root of 2 ranks: writes the first half into an exposed receiver
  uint32_t pad;
  uint64_t stride;     // bytes between the blocks of its region (0: one block)
  uint64_t sent;       // bytes per block it sends
  uint64_t key_bytes;  // of key
  uint8_t key[kMaxKeyBytes];
};
// With a slow verdict the members test it again in runs of kDirectProbeRun
// calls every kDirectProbeEvery calls, and keep the last call's rate: the
// first reads of a run find the lines where the segment's copies left them
// (in the sender's cache), which says nothing of direct reads in steady
// state.
inline constexpr uint64_t kDirectProbeEvery = 64;
inline constexpr uint64_t kDirectProbeRun = 4;

// What a rank offers in a direct call: its send buffer where the type is
// contiguous, else a packed copy of it; none (base null) for a member that
// only reads (a bcast's receivers).
struct Offer {
  const std::byte* base = nullptr;
  std::size_t len = 0;
  std::size_t stride = 0;
  std::size_t sent = 0;
  std::vector<std::byte> packed;
  bool able = true;      // false: this member cannot take part (then all use the segment)
  bool writes = false;   // DirectEntry::writes
  uint64_t longest = 0;  // out: the most bytes per block a member read here sends
};

// Whether a call with blocks of `bytes` may read directly: from `min`
// bytes where every member has a core of its own, from `shared_min` where
// the members outnumber the processors up to `crowding` members per
// processor (0 never).
// Own cores: from 16 KiB (2 ranks, buffers reused: 64 KiB 18 -> 8-9 us per
// call, 16 KiB 5.2 -> 3.7-4.1; Open MPI, which reads directly, 9.7 / 4.7).
// Shared cores, alltoall only (Tuning::shm_direct_shared_min, _crowding):
// with 4 and 8 ranks on 2 cores allgather ran 20-25% slower (the segment
// writes a block once for all its readers, each direct read is a copy of
// its own), while an alltoall block has one reader either way, and the
// segment's two copies and the stage every rank must reach between them
// cost more than the direct read: 4 and 8 ranks on 2 cores, 16 KiB to 1
// MiB blocks, 1.2-2.1x faster (docs/collectives.md).
inline bool direct_fits(const ShmNode& n, std::size_t min, std::size_t bytes, std::size_t shared_min = 0,
                        int crowding = 0) {
  const std::size_t from = n.own_cores() ? min : n.crowding() <= crowding ? shared_min : 0;
  return from && bytes >= from && n.size() > 1;
}
// The rate verdict a direct call keeps and the least rate (MB/s) that
// keeps reading directly. A reduce keeps its own (ShmNode::reduce_verdict):
// its fallback, the pipeline, beats faster reads than the segment's two
// copies do (2 ranks, 64 KiB: buffers reused read at 14-22 GB/s, direct
// 7.0 us against the pipeline's 10.9; inputs rewritten before each call
// at 5.7-9.7 GB/s, 19.1 against 11.6).
struct Rate {
  ShmNode::DirectVerdict* v;
  std::size_t least;
};
// Reads from this size on are timed for the verdict (shorter ones say
// more about the system call than about the lines they read).
inline constexpr std::size_t kDirectTimedMin = 16384;

// Why one copy: through the segment a block costs its sender a streaming
// copy into memory and its reader a copy out of memory; read straight from
// the sender's buffer it costs the reader one copy (the kernel pins the
// pages, ~12 GB/s). The members agree in a first stage (slots): every one
// exposed its buffer and can read (else all use the segment), and none
// found its reads slow (they run at 2-4 GB/s in a VM state where the
// sender's core just wrote the lines; then every 64th call tests again).
inline constexpr int kReadAll = -1, kReadNone = -2;

// The agreeing first stage of a direct call of `stages` stages (this one
// included): expose, put the entry in the slot, read everyone's. Direct:
// all agreed to read directly (*first: the call's first stage, *region:
// this rank's exposed buffer, released by the caller; *fast: the verdict
// held). Segment: they chose the segment, nothing moved. Failed: *err.
enum class Agreed { Direct, Segment, Failed };
inline Agreed agree_direct(ShmNode& n, Offer& o, Rate rate, uint64_t stages, uint64_t* first, Region** region,
                           bool* fast, int* err) {
  const bool probe = ++n.direct_calls % kDirectProbeEvery < kDirectProbeRun;
  // The members agreed last time that reads run slow: the segment, without
  // the stage that would only agree again (each costs every rank a trip
  // through the scheduler where ranks outnumber cores).
  if (rate.v->slow && !probe) return Agreed::Segment;
  OneSided& os = n.onesided();
  *region = o.able && o.base ? os.expose(const_cast<std::byte*>(o.base), o.len) : nullptr;
  const uint64_t s = n.begin(stages, sizeof(DirectEntry));
  *first = s;
  std::byte* to = nullptr;
  if ((*err = n.claim_slot(&to))) return Agreed::Failed;
  DirectEntry mine{};
  const bool offered = o.base ? *region && (*region)->key_bytes <= kMaxKeyBytes : o.able;
  mine.ok = offered && (os.caps().native_ops & kOsGet) ? 1 : 0;
  mine.fast = rate.v->mbps == 0 || rate.v->mbps >= rate.least ? 1 : 0;
  mine.writes = o.writes ? 1 : 0;
  mine.stride = o.stride;
  mine.sent = o.sent;
  if (mine.ok && *region) {
    mine.key_bytes = (*region)->key_bytes;
    std::memcpy(mine.key, (*region)->key, (*region)->key_bytes);
  }
  std::memcpy(to, &mine, sizeof mine);
  n.publish(s);
  if ((*err = n.wait_slots(s))) return Agreed::Failed;
  bool ok = true;
  *fast = true;
  for (int j = 0; j < n.size(); ++j) {
    DirectEntry e;
    std::memcpy(&e, n.slot(j), sizeof e);
    ok = ok && e.ok == 1;
    *fast = *fast && e.fast == 1;
  }
  if (ok) rate.v->slow = !*fast;
  return ok && (*fast || probe) ? Agreed::Direct : Agreed::Segment;
}

// Member j's entry of the agreeing stage (its slot, until the next begin()).
inline DirectEntry entry_of(const ShmNode& n, int j) {
  DirectEntry e;
  std::memcpy(&e, n.slot(j), sizeof e);
  return e;
}

// Reads (put: writes) `len` bytes at offset `off` of member j's exposed
// buffer into (from) `local`. False, with *err raised, when it failed.
inline bool member_io(Device& dev, ShmNode& n, int j, uint64_t off, std::byte* local, std::size_t len, bool put,
                      int* err) {
  OneSided& os = n.onesided();
  const DirectEntry e = entry_of(n, j);
  const uint32_t need = put ? kOsPut : kOsGet;
  // The entry is the peer's word: attach() checks the key (it must name
  // that peer's process) and get()/put() the range.
  RemoteRegion* r = e.key_bytes <= kMaxKeyBytes ? os.attach(n.peer(j), e.key, e.key_bytes) : nullptr;
  const bool done =
      r && (r->ops & need) && (len == 0 || (put ? os.put(*r, off, local, len) : os.get(*r, off, local, len)) == 0);
  if (r) os.detach(r);
  if (!done) {
    *err = dev.errors().raise(ErrorClass::Other, "collective: %s %zu bytes of rank %d's buffer failed",
                              put ? "writing" : "reading", len, j);
  }
  return done;
}

// Reads `take` bytes from offset `from` of member j's exposed buffer into
// `at`; reads from kDirectTimedMin on feed the rate's average (*first:
// start it afresh). False, with *err raised, when the read failed.
inline bool read_member(Device& dev, ShmNode& n, int j, uint64_t from, std::byte* at, std::size_t take, Rate rate,
                        bool* first, int* err) {
  const int64_t t0 = steady_ns();
  if (!member_io(dev, n, j, from, at, take, false, err)) return false;
  const int64_t ns = steady_ns() - t0;
  if (take >= kDirectTimedMin) {
    const auto mbps = static_cast<uint32_t>(std::min<uint64_t>(take * 1000 / std::max<int64_t>(ns, 1), UINT32_MAX));
    uint32_t& avg = rate.v->mbps;
    avg = *first || avg == 0 ? mbps : static_cast<uint32_t>((3ull * avg + mbps) / 4);
    *first = false;
  }
  return true;
}

// Then each reader reads its block of every other member's buffer
// (`source` kReadAll: allgather, alltoall, a reduce's root), or of one
// member's (a bcast's root), posts, does its local part (`local`: its own
// block, or the fold), and waits until all are done reading its buffer.
// Returns false, having moved nothing, when they chose the segment.
template <class RecvBlock, class Local>
bool direct(Device& dev, ShmNode& n, Offer& o, std::size_t bytes, RecvBlock&& recv_block, Local&& local, Rate rate,
            int* err, int source = kReadAll) {
  OneSided& os = n.onesided();
  const int me = n.rank(), p = n.size();
  uint64_t s = 0;
  Region* region = nullptr;
  bool fast = true;
  const Agreed a = agree_direct(n, o, rate, 2, &s, &region, &fast, err);
  if (a != Agreed::Direct) {
    if (region) os.release(region);
    return a == Agreed::Failed;
  }
  std::vector<std::byte> bounce;  // for a non-contiguous receive type
  bool first = !fast;             // each call of a probe run starts the average afresh
  for (int k = 1; source != kReadNone && k < p && !*err; ++k) {
    const int j = (me + k) % p;  // not every reader at rank 0 first
    if (source >= 0 && j != source) continue;
    const DirectEntry e = entry_of(n, j);
    auto block = recv_block(j);
    std::byte* at = block.contiguous();
    if (!at) {
      bounce.resize(bytes);
      at = bounce.data();
    }
    const std::size_t take = std::min<uint64_t>(bytes, e.sent);
    o.longest = std::max(o.longest, e.sent);
    if (!read_member(dev, n, j, static_cast<uint64_t>(me) * e.stride, at, take, rate, &first, err)) break;
    // A shorter send than the receive (erroneous) arrives zero-padded.
    if (take < bytes) std::memset(at + take, 0, bytes - take);
    if (at == bounce.data()) block.in(0, bytes, at);
  }
  // Even after a failed read: the others wait for this post. Before the
  // local part: a member that only waits to be read is let go sooner.
  n.post(s + 1);
  if (!*err) local();
  const int e = n.wait_all(s + 1);
  if (!*err) *err = e;
  if (region) os.release(region);
  return true;
}

}  // namespace adi3::coll::detail
