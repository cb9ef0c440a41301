// MPI_Win_fence and MPI_Win_sync.
//  - Emulated: one Fence packet to every rank, carrying the count of
//    operations sent to it; a rank leaves when every rank's fence packet
//    arrived and everything they announced is applied, and its own gets
//    have their data.
//  - Native (every rank agreed at creation): the same conditions read from
//    the control blocks' counters (rma/native_active.cpp), no packet.
// NOPRECEDE skips the wait (the next operations wait for the peers' fence
// instead), NOPRECEDE|NOSUCCEED skips the fence entirely, NOSTORE skips the
// memory fence of local stores. The common native fence runs from the
// binding (native::fast_fence).
#include "rma/native_fast.hpp"
#include "rma/sync.hpp"

namespace adi3 {

using namespace rma::sync;
using rma::Target;
using rma::WindowState;

namespace {

constexpr int kFenceAsserts = kModeNoStore | kModeNoPut | kModeNoPrecede | kModeNoSucceed;

// Fence k is complete here: every rank entered it, what they announced is
// applied, our gets have their data and we owe no replies.
bool fence_done(WindowState& w, uint64_t k, bool native) {
  if (native) rma::native::refresh_all(w);
  for (int r = 0; r < w.comm.size; ++r) {
    const Target& t = w.targets[static_cast<std::size_t>(r)];
    const rma::Origin& o = w.origins[static_cast<std::size_t>(r)];
    if (!t.q.empty() || t.replies || t.rndv_out || t.fences < k || o.applied < o.announced || !o.out.empty())
      return false;
  }
  return true;
}

// Whether every queue to a target is empty (our emulated operations left).
bool queues_empty(const WindowState& w) {
  for (const Target& t : w.targets) {
    if (!t.q.empty()) return false;
  }
  return true;
}

// Waits until fence k is done. The epoch's state is settled in the same
// section. done() may run again once true: the first error taken is kept.
int fence_wait(WindowState& w, uint64_t k, bool native) {
  int err = 0;
  if (int e = wait_for(w, [&] {
        if (!fence_done(w, k, native)) return false;
        // As enter_fence does for a native fence (Target::fenced).
        if (!native) {
          for (Target& t : w.targets) t.fenced();
        }
        if (int d = w.take_error(); d && !err) err = d;
        return true;
      })) {
    return e;
  }
  return err;
}

}  // namespace

namespace rma::native {

namespace {

// Whether nothing of ours towards r is in the emulation and nothing is owed
// to it (fence_done's conditions but the counts): the count we announce is
// final.
bool quiet(const WindowState& w, std::size_t r) {
  const Target& t = w.targets[r];
  // One test of them all (each is usually zero), not a branch per field.
  const bool busy = !t.q.empty() | t.hold | t.emul_inflight | !w.origins[r].out.empty();
  return ((t.queued_ops ^ t.settled_ops) | static_cast<uint64_t>(static_cast<unsigned>(t.replies | t.rndv_out)) |
          static_cast<uint64_t>(busy)) == 0;
}

// Window::fence's native entry, the epoch checked (enter_fence's
// Target::fenced changes nothing here: queued_ops == settled_ops).
uint64_t open_fence(WindowState& w) {
  w.fence_ops = 0;
  const uint64_t k = ++w.fence_no;
  w.access = A::Fence;
  w.fence_lazy = false;
  return k;
}

bool epoch_allows(const WindowState& w) {
  return (w.access == A::None || w.access == A::Fence) && !w.exposed &&
         !w.deferred_error.load(std::memory_order_relaxed);
}

// fast_fence on a window of two ranks: the same steps for the one peer,
// without the loops over the ranks and their calls. It takes no mutex when
// no other thread writes what it touches: no agent runs, or nothing of ours
// is in the emulation (emul_inflight, written by this thread only, false
// for both: no queued item, reply or grant due, so the agent touches none
// of our targets' state, the rule of the fast operations,
// rma/native_fast.hpp) and the peers announced no emulated operation since
// a fence found them all applied and answered (pair_applied): then the
// agent's records of them (Origin::applied, out) are not read. On a native
// active window no Fence or Complete packet comes (the agent's writers of
// Origin::announced and Target::fences).
// NativeWin::pair, found at the first fence.
const NativeWin::PairWords& pair_words(WindowState& w) {
  NativeWin& nw = *w.native;
  NativeWin::PairWords& p = nw.pair;
  if (!p.theirs) [[unlikely]] {
    const auto me = static_cast<std::size_t>(w.comm.rank), peer = me ^ 1;
    p.theirs = &nw.peers[peer].ctl->fences;
    p.told = &nw.peers[peer].ctl->announced[me];
    p.peer = static_cast<int>(peer);
    p.bell = w.comm.to_peer(p.peer);
  }
  return p;
}

int pair_fence(WindowState& w, bool agent) {
  NativeWin& nw = *w.native;
  const NativeWin::PairWords& p = pair_words(w);
  const auto peer = static_cast<std::size_t>(p.peer), me = peer ^ 1;
  Target& tp = w.targets[peer];
  Target& ts = w.targets[me];
  const bool lean = !agent || (!tp.emul_inflight && !ts.emul_inflight);
  uint64_t* announced = nw.ctl->announced;
  uint64_t k;
  {
    MaybeLock g(w.mu, !lean);
    if (!epoch_allows(w) || !quiet(w, 0) || !quiet(w, 1)) return -1;
    k = open_fence(w);
    announce_at(*p.told, tp.sent_ops);
    announce_at(announced[me], ts.sent_ops);
    at(nw.ctl->fences).store(k, std::memory_order_release);
  }
  // One look before the ring, whose fence then overlaps its miss.
  bool here = at(*p.theirs).load(std::memory_order_acquire) >= k;
  nw.os.wake(p.bell);
  if (!here) here = await_fences(w, k, p.theirs);
  if (!here) return fence_wait(w, k, true);
  // fence_settled for the two: the peer's count first, then what the ranks
  // announced before theirs.
  const uint64_t f = at(*p.theirs).load(std::memory_order_acquire);
  const uint64_t a0 = at(announced[0]).load(std::memory_order_acquire);
  const uint64_t a1 = at(announced[1]).load(std::memory_order_acquire);
  if (lean && a0 <= nw.pair_applied[0] && a1 <= nw.pair_applied[1]) {
    // Origin::announced is at least pair_applied: nothing to take.
    if (tp.fences < f) tp.fences = f;
    if (ts.fences < k) ts.fences = k;
    return w.take_error();
  }
  {
    MaybeLock g(w.mu, agent);
    if (tp.fences < f) tp.fences = f;
    if (ts.fences < k) ts.fences = k;
    bool settled = true;
    for (std::size_t i = 0; i < 2; ++i) {
      Origin& o = w.origins[i];
      const uint64_t a = i ? a1 : a0;
      if (o.announced < a) o.announced = a;
      settled = settled && o.applied >= o.announced && o.out.empty();
    }
    if (settled) {
      nw.pair_applied[0] = w.origins[0].announced;
      nw.pair_applied[1] = w.origins[1].announced;
      return w.take_error();
    }
  }
  return fence_wait(w, k, true);
}

}  // namespace

int fast_fence(WindowState& w, int assert) {
  // NOSTORE and NOPUT change nothing on a native fence (the release store
  // of our count orders every store); NOPRECEDE and NOSUCCEED change the
  // epoch: the general path.
  if (assert & ~(kModeNoStore | kModeNoPut)) return -1;
  if (!w.native_active() || w.dev.config().thread_multiple) return -1;
  const NativeWin& nw = *w.native;
  if (!w.mapped() || !nw.fast_fence || nw.others_emulate || nw.partial) return -1;
  if (int e = w.dev.check_alive(w.comm, -1, "Win_fence")) return e;
  // The agent may apply a peer's emulated operation meanwhile: the mutex.
  // Without it no other thread touches the window (not THREAD_MULTIPLE; it
  // starts only from this thread's calls), and a section needs none.
  const bool agent = w.dev.port().agent_running();
  if (w.comm.size == 2) return pair_fence(w, agent);
  uint64_t k;
  {
    MaybeLock g(w.mu, agent);
    if (!epoch_allows(w)) return -1;
    for (int r = 0; r < w.comm.size; ++r) {
      if (!quiet(w, static_cast<std::size_t>(r))) return -1;
    }
    k = open_fence(w);
    enter_fence(w, k);
  }
  // One look before the ring, whose fence then overlaps its miss
  // (ring_fenced).
  const bool here = fences_reached(w, k);
  ring_fenced(w);
  if (here || await_fences(w, k)) {
    MaybeLock g(w.mu, agent);
    if (fence_settled(w, k)) return w.take_error();
  }
  return fence_wait(w, k, true);
}

}  // namespace rma::native

int Window::fence(int assert) {
  WindowState& w = *st_;
  if (int e = bad_assert(w, "Win_fence", assert, kFenceAsserts)) return e;
  // Native fences meet in the control blocks, which outlive a dead rank.
  if (int e = w.dev.check_alive(w.comm, -1, "Win_fence")) return e;
  const bool noprecede = assert &kModeNoPrecede, nosucceed = assert &kModeNoSucceed;
  uint64_t k;
  bool native, entered = false, done_now = false;
  int early = 0;
  {
    std::lock_guard g(w.mu);
    if (w.access != A::None && w.access != A::Fence) {
      return sync_error(w, "Win_fence", "a start, lock or lock_all epoch is open");
    }
    if (w.exposed) return sync_error(w, "Win_fence", "a post epoch is open (call Win_wait first)");
    if (noprecede && w.fence_ops) {
      return w.dev.errors().raise(ErrorClass::RmaSync,
                                  "Win_fence on rank %d: MPI_MODE_NOPRECEDE asserted but %llu operations precede it",
                                  w.comm.rank, static_cast<unsigned long long>(w.fence_ops));
    }
    // Our native stores into the peers' memory are ordered before the
    // fence whatever NOSTORE says (it only speaks of local stores). A native
    // fence orders them, and the local ones, by the release store of our
    // count, which every peer acquires before it leaves the fence or
    // touches our memory after it: no seq_cst fence there.
    const bool native_fence = w.native_active();
    if (!native_fence && (!(assert& kModeNoStore) || w.native_usable)) w.memory_fence();
    w.fence_ops = 0;
    if (noprecede && nosucceed) {
      // Neither completes nor opens anything: every rank asserts the same.
      w.access = A::None;
      return w.take_error();
    }
    k = ++w.fence_no;
    native = native_fence;
    if (!native) {
      for (int r = 0; r < w.comm.size; ++r) push_sync(w, r, rma::Msg::Fence, rma::Gate{});
    } else if (noprecede || queues_empty(w)) {
      // Nothing precedes it, or nothing of ours is left in the emulation:
      // the count we announce is final at once.
      rma::native::enter_fence(w, k);
      entered = true;
    }
    w.access = nosucceed ? A::None : A::Fence;
    w.fence_lazy = noprecede;
    // The peers are there already (they usually are): done in this section.
    // (A native fence settled emul_inflight when it entered: enter_fence.)
    if (entered && !noprecede && fence_done(w, k, native)) {
      done_now = true;
      early = w.take_error();
    }
  }
  // After the first look at the peers' counts (ring_fenced says why).
  if (entered) rma::native::ring_fenced(w);
  if (done_now) return early;
  if (noprecede) return finish(w);
  if (native && !entered) {
    // Our emulated operations (forced ones, or ones that waited for a
    // gate) leave first, so the count we announce is final.
    if (int e = wait_for(w, [&] { return queues_empty(w); })) return e;
    {
      std::lock_guard g(w.mu);
      rma::native::enter_fence(w, k);
    }
    rma::native::ring_fenced(w);
  }
  // The peers' counts are what a native fence usually waits for.
  if (native) rma::native::await_fences(w, k);
  return fence_wait(w, k, native);
}

int Window::sync() {
  // One copy of the memory (unified model): a full memory fence makes our
  // stores and the agent's visible to each other.
  st_->memory_fence();
  st_->dev.progress();
  return 0;
}

}  // namespace adi3
