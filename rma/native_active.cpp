// Native active target: fence and post/start/complete/wait through counters
// in the ranks' control blocks (shared memory), no packets.
//
//  - fence k: every rank announces to every other how many operations it
//    sent it through the emulation (forced or fallen-back ones), then
//    release-stores k into its own `fences`; a rank leaves fence k when
//    every rank's `fences` reached k, it applied every emulated operation
//    announced to it and its gets have their data. With NOPRECEDE it only
//    counts: the next operations to a target wait for the target's count.
//  - post: adds one to posts[me] in each origin's block (release, after the
//    memory fence of our stores); an origin's operations wait until it saw
//    as many posts from the target as it started epochs towards it.
//  - complete: once its emulated operations left and its gets arrived, the
//    origin announces its count, then adds one to completes[me] in each
//    target's block; wait/test end when completes reached the posts made
//    and the announced operations are applied.
// Counts are cumulative over the window's life and 64-bit, so no word is
// reset and a late reader never confuses epochs. The acquire loads here
// pair with the release stores of the writers; a count written by another
// process can only make us wait (a dead peer fails the wait), never write.
#include <algorithm>

#include "rma/native.hpp"
#include "rma/window_state.hpp"

namespace adi3::rma::native {
namespace {
inline uint64_t load(uint64_t& x) { return at(x).load(std::memory_order_acquire); }
}  // namespace

void refresh(WindowState& w, int r) {
  NativeWin& nw = *w.native;
  const auto i = static_cast<std::size_t>(r);
  Control& mine = *nw.ctl;
  Target& t = w.targets[i];
  Origin& o = w.origins[i];
  // The counts first, then what their writer stored before them.
  t.fences = std::max(t.fences, load(nw.peers[i].ctl->fences));
  t.posts = std::max(t.posts, load(mine.posts[i]));
  o.completes = std::max(o.completes, load(mine.completes[i]));
  o.announced = std::max(o.announced, load(mine.announced[i]));
}

void refresh_all(WindowState& w) {
  for (int r = 0; r < w.comm.size; ++r) refresh(w, r);
}

void announce(WindowState& w, int r) {
  const auto i = static_cast<std::size_t>(r);
  announce_at(w.native->peers[i].ctl->announced[static_cast<std::size_t>(w.comm.rank)], w.targets[i].sent_ops);
}

namespace {
// A rank waiting for our count may sleep on its doorbell (Device::block_until
// sleeps after spinning and yielding): ring it after the store, or it
// would see the count only at its sleep's timeout.
void wake(WindowState& w, int r) {
  if (r != w.comm.rank) w.native->os.wake(w.comm.to_peer(r));
}
}  // namespace

void enter_fence(WindowState& w, uint64_t k) {
  for (int r = 0; r < w.comm.size; ++r) {
    // A target applies what we sent it through the emulation this epoch
    // before it leaves fence k, but we may leave first: our next operation
    // to it, native, could overtake those packets (a put by cross-memory
    // attach landing before the previous epoch's put packet): the rule
    // the emulated fence uses too (Target::fenced).
    w.targets[static_cast<std::size_t>(r)].fenced();
    announce(w, r);
  }
  // No cldemote of the line after the store (a hint that the peers' miss
  // would find it in the shared cache): on this Xeon (a VM) it cost the
  // storing rank ~130 ns per fence (a 1-rank fence 165-190 -> 36-40 ns),
  // and two ranks' put + fence did not get slower without it.
  at(w.native->ctl->fences).store(k, std::memory_order_release);
}

void ring_fenced(WindowState& w) {
  for (int r = 0; r < w.comm.size; ++r) wake(w, r);
}

bool fences_reached(const WindowState& w, uint64_t k) {
  const NativeWin& nw = *w.native;
  for (const NativePeer& p : nw.peers) {
    // Not our own count (k already): its line is on its way to the peers.
    if (p.ctl != nw.ctl && load(p.ctl->fences) < k) return false;
  }
  return true;
}

bool await_fences(const WindowState& w, uint64_t k, uint64_t* only) {
  // Plain loads first: a pause takes ~140 cycles on recent Xeons, which
  // a fence on the critical path paid again as a late look at the last
  // count; then paused looks (another process may want a core).
  constexpr int kFenceLooks = 256, kFenceSpin = 64;
  // Only where every operation was a load or store: on a create window the
  // peer may be waiting for this rank's answer to a packet, which the look
  // alone would hold back (fop/cas fence rows 0.2-0.3 us slower with it).
  if (!w.native->own_cores || !w.mapped()) return false;
  for (int i = 0; i < kFenceLooks + kFenceSpin; ++i) {
    if (only ? load(*only) >= k : fences_reached(w, k)) return true;
    if (i >= kFenceLooks) cpu_relax();
  }
  return false;
}

bool fence_settled(WindowState& w, uint64_t k) {
  NativeWin& nw = *w.native;
  // The vectors' data once: the acquire loads would reload them per rank.
  const NativePeer* peers = nw.peers.data();
  uint64_t* announced = nw.ctl->announced;
  Target* targets = w.targets.data();
  Origin* origins = w.origins.data();
  const std::size_t n = nw.peers.size();
  for (std::size_t i = 0; i < n; ++i) {
    // The peer's count first, then what it announced before it.
    const uint64_t f = peers[i].ctl == nw.ctl ? k : load(peers[i].ctl->fences);
    const uint64_t a = load(announced[i]);
    Target& t = targets[i];
    Origin& o = origins[i];
    if (t.fences < f) t.fences = f;
    if (o.announced < a) o.announced = a;
    if (t.fences < k || o.applied < o.announced || !o.out.empty()) return false;
  }
  return true;
}

void post_to(WindowState& w, int r) {
  Control& c = *w.native->peers[static_cast<std::size_t>(r)].ctl;
  at(c.posts[static_cast<std::size_t>(w.comm.rank)]).fetch_add(1, std::memory_order_acq_rel);
  wake(w, r);
}

void complete_at(WindowState& w, int r) {
  announce(w, r);
  Control& c = *w.native->peers[static_cast<std::size_t>(r)].ctl;
  at(c.completes[static_cast<std::size_t>(w.comm.rank)]).fetch_add(1, std::memory_order_acq_rel);
  wake(w, r);
}

}  // namespace adi3::rma::native
