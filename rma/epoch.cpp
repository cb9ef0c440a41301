// Synchronization: the epoch state machines of the origin and the target.
//  - fence: one Fence packet to every rank, carrying the count of
//    operations sent to it; a rank leaves when every rank's fence packet
//    arrived and everything they announced is applied, and its own gets
//    have their data. NOPRECEDE skips the wait (the next operations wait
//    for the peers' fence packets instead), NOPRECEDE|NOSUCCEED skips the
//    fence entirely, NOSTORE skips the memory fence.
//  - post/start/complete/wait: Post packets open the origins' gates,
//    Complete packets carry the counts; NOCHECK skips the Post.
//  - lock/unlock/flush: the lock request leaves with the first operation
//    (a lock with no operation sends nothing), Unlock and Flush carry the
//    count and are answered by an Ack once the target applied everything.
#include <algorithm>
#include <atomic>

#include "adi3/device.hpp"
#include "emul/emul.hpp"
#include "rma/hub.hpp"
#include "rma/route.hpp"
#include "rma/window_state.hpp"

namespace adi3 {

using rma::Gate;
using rma::Item;
using rma::Msg;
using rma::Target;
using rma::WindowState;
using A = WindowState::Access;

namespace {

constexpr int kFenceAsserts = kModeNoStore | kModeNoPut | kModeNoPrecede | kModeNoSucceed;

int bad_assert(WindowState& w, const char* call, int assert, int allowed) {
  if (assert & ~allowed) {
    return w.dev.errors().raise(ErrorClass::Assert, "%s on rank %d: assertion %#x is not valid here (allowed: %#x)",
                                call, w.comm.rank, assert, allowed);
  }
  return 0;
}

int sync_error(WindowState& w, const char* call, const char* why) {
  return w.dev.errors().raise(ErrorClass::RmaSync, "%s on rank %d: %s", call, w.comm.rank, why);
}

// Waits (without the mutex) until done() holds (checked with it).
template <class Done>
int wait_for(WindowState& w, Done&& done) {
  return w.dev.block_until([&] {
    std::lock_guard<std::mutex> g(w.mu);
    return done();
  });
}

// Operations to t have left (the origin buffers are free) and the gets
// have their data.
bool locally_done(const Target& t) {
  for (const Item& it : t.q) {
    if (it.is_op()) return false;
  }
  return t.replies == 0;
}

void push_sync(WindowState& w, int to, Msg kind, Gate gate, uint64_t token = 0, uint8_t flags = 0) {
  Item it;
  it.kind = kind;
  it.gate = gate;
  it.token = token;
  it.flags = flags;
  emul::push(w, to, std::move(it));
}

// A fence epoch that issued nothing ends quietly when another kind starts.
bool access_free(const WindowState& w) { return w.access == A::None || (w.access == A::Fence && w.fence_ops == 0); }

int finish(WindowState& w) {
  std::lock_guard<std::mutex> g(w.mu);
  return w.take_error();
}

}  // namespace

// ---- fence ----

int Window::fence(int assert) {
  WindowState& w = *st_;
  if (int e = bad_assert(w, "Win_fence", assert, kFenceAsserts)) return e;
  const bool noprecede = assert &kModeNoPrecede, nosucceed = assert &kModeNoSucceed;
  uint64_t k;
  {
    std::lock_guard<std::mutex> g(w.mu);
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
    // fence packets whatever NOSTORE says (it only speaks of local stores).
    if (!(assert& kModeNoStore) || w.native_usable) w.memory_fence();
    w.fence_ops = 0;
    if (noprecede && nosucceed) {
      // Neither completes nor opens anything: every rank asserts the same.
      w.access = A::None;
      return w.take_error();
    }
    k = ++w.fence_no;
    for (int r = 0; r < w.comm.size; ++r) push_sync(w, r, Msg::Fence, Gate{});
    w.access = nosucceed ? A::None : A::Fence;
    w.fence_lazy = noprecede;
  }
  if (!noprecede) {
    int e = wait_for(w, [&] {
      for (int r = 0; r < w.comm.size; ++r) {
        const Target& t = w.targets[static_cast<std::size_t>(r)];
        const rma::Origin& o = w.origins[static_cast<std::size_t>(r)];
        if (!t.q.empty() || t.replies || t.fences < k || o.applied < o.announced || !o.out.empty()) return false;
      }
      return true;
    });
    if (e) return e;
    std::lock_guard<std::mutex> g(w.mu);
    for (Target& t : w.targets) t.emul_inflight = false;
  }
  return finish(w);
}

// ---- post / start / complete / wait ----

namespace {
int check_group(WindowState& w, const char* call, std::span<const int> group) {
  std::vector<char> seen(static_cast<std::size_t>(w.comm.size), 0);
  for (int r : group) {
    if (r < 0 || r >= w.comm.size) {
      return w.dev.errors().raise(ErrorClass::Group,
                                  "%s on rank %d: group member %d is not a rank of the window (0..%d)", call,
                                  w.comm.rank, r, w.comm.size - 1);
    }
    if (seen[static_cast<std::size_t>(r)]++) {
      return w.dev.errors().raise(ErrorClass::Group, "%s on rank %d: rank %d appears twice in the group", call,
                                  w.comm.rank, r);
    }
  }
  return 0;
}
}  // namespace

int Window::post(std::span<const int> group, int assert) {
  WindowState& w = *st_;
  if (int e = bad_assert(w, "Win_post", assert, kModeNoCheck | kModeNoStore | kModeNoPut)) return e;
  if (int e = check_group(w, "Win_post", group)) return e;
  std::lock_guard<std::mutex> g(w.mu);
  if (w.exposed) return sync_error(w, "Win_post", "an exposure epoch is already open (call Win_wait first)");
  if (w.access == A::Fence && w.fence_ops) return sync_error(w, "Win_post", "a fence epoch with operations is open");
  if (w.access == A::Fence) w.access = A::None;
  if (!(assert& kModeNoStore)) w.memory_fence();
  w.exposed = true;
  w.post_group.assign(group.begin(), group.end());
  for (int r : group) {
    ++w.origins[static_cast<std::size_t>(r)].expected;
    // With NOCHECK the origins' start does not wait for us: no packet.
    if (!(assert& kModeNoCheck)) {
      rma::Header h{};
      h.kind = Msg::Post;
      emul::send(w, r, h);
    }
  }
  return 0;
}

int Window::start(std::span<const int> group, int assert) {
  WindowState& w = *st_;
  if (int e = bad_assert(w, "Win_start", assert, kModeNoCheck)) return e;
  if (int e = check_group(w, "Win_start", group)) return e;
  std::lock_guard<std::mutex> g(w.mu);
  if (!access_free(w)) return sync_error(w, "Win_start", "another access epoch is open");
  w.access = A::Pscw;
  w.fence_ops = 0;
  w.start_group.assign(group.begin(), group.end());
  for (int r : group) {
    Target& t = w.targets[static_cast<std::size_t>(r)];
    // Start does not block: the operations wait for the target's post.
    t.epoch_gate = (assert& kModeNoCheck) ? Gate{} : Gate{Gate::Post, ++t.posts_claimed};
  }
  return 0;
}

int Window::complete() {
  WindowState& w = *st_;
  std::vector<int> group;
  {
    std::lock_guard<std::mutex> g(w.mu);
    if (w.access != A::Pscw) return sync_error(w, "Win_complete", "no Win_start epoch is open");
    group = std::move(w.start_group);
    w.start_group.clear();
    w.access = A::None;
    if (w.native_usable) w.memory_fence();  // native stores before the Complete packets
    for (int r : group) {
      Target& t = w.targets[static_cast<std::size_t>(r)];
      push_sync(w, r, Msg::Complete, t.epoch_gate);
      // The target's next Post comes after it applied everything: the next
      // epoch's operations cannot overtake these.
      t.emul_inflight = false;
    }
  }
  if (int e = wait_for(w, [&] {
        for (int r : group) {
          if (!locally_done(w.targets[static_cast<std::size_t>(r)])) return false;
        }
        return true;
      })) {
    return e;
  }
  return finish(w);
}

namespace {
bool exposure_done(const WindowState& w) {
  for (int r : w.post_group) {
    const rma::Origin& o = w.origins[static_cast<std::size_t>(r)];
    if (o.completes < o.expected || o.applied < o.announced || !o.out.empty()) return false;
  }
  return true;
}
}  // namespace

int Window::wait() {
  WindowState& w = *st_;
  {
    std::lock_guard<std::mutex> g(w.mu);
    if (!w.exposed) return sync_error(w, "Win_wait", "no Win_post epoch is open");
  }
  if (int e = wait_for(w, [&] { return exposure_done(w); })) return e;
  std::lock_guard<std::mutex> g(w.mu);
  w.exposed = false;
  w.post_group.clear();
  return w.take_error();
}

int Window::test(bool* flag) {
  WindowState& w = *st_;
  if (!flag) return w.dev.errors().raise(ErrorClass::Arg, "Win_test: the flag argument is null");
  {
    std::lock_guard<std::mutex> g(w.mu);
    if (!w.exposed) return sync_error(w, "Win_test", "no Win_post epoch is open");
  }
  w.dev.progress();
  std::lock_guard<std::mutex> g(w.mu);
  *flag = exposure_done(w);
  if (!*flag) return 0;
  w.exposed = false;
  w.post_group.clear();
  return w.take_error();
}

// ---- lock / unlock / flush ----

namespace {

int lock_target(WindowState& w, int rank, rma::LockKind kind, bool nocheck) {
  Target& t = w.targets[static_cast<std::size_t>(rank)];
  t.locked = true;
  t.lock_nocheck = nocheck;
  t.lock_kind = kind;
  // Lazy: the request leaves with the first item to this target.
  t.lock_pending = !nocheck;
  return 0;
}

// Queues the unlock of one target; returns the sequence number to wait
// for, or 0 when nothing was ever sent (no operation: no traffic at all).
uint64_t unlock_target(WindowState& w, int rank) {
  Target& t = w.targets[static_cast<std::size_t>(rank)];
  uint64_t seq = 0;
  if (!t.lock_pending && !(t.lock_nocheck && t.queued_ops == t.flushed_ops)) {
    seq = ++t.sync_seq;
    push_sync(w, rank, Msg::Unlock, t.lock_nocheck ? Gate{} : Gate{Gate::Lock, t.lock_epoch}, seq,
              t.lock_nocheck ? rma::kNoCheck : 0);
  }
  t.locked = false;
  t.lock_pending = false;
  t.lock_nocheck = false;
  t.flushed_ops = t.queued_ops;
  return seq;
}

int check_rank(WindowState& w, const char* call, int rank) {
  if (rank < 0 || rank >= w.comm.size) {
    return w.dev.errors().raise(ErrorClass::Rank, "%s on rank %d: rank %d is not a rank of the window (0..%d)", call,
                                w.comm.rank, rank, w.comm.size - 1);
  }
  return 0;
}

}  // namespace

int Window::lock(LockType type, int rank, int assert) {
  WindowState& w = *st_;
  if (int e = bad_assert(w, "Win_lock", assert, kModeNoCheck)) return e;
  if (type != LockType::Exclusive && type != LockType::Shared) {
    return w.dev.errors().raise(
        ErrorClass::Locktype, "Win_lock on rank %d: lock type %d is neither exclusive (%d) nor shared (%d)",
        w.comm.rank, static_cast<int>(type), static_cast<int>(LockType::Exclusive), static_cast<int>(LockType::Shared));
  }
  if (rank == kProcNull) return 0;
  if (int e = check_rank(w, "Win_lock", rank)) return e;
  const auto kind = type == LockType::Exclusive ? rma::LockKind::Exclusive : rma::LockKind::Shared;
  uint64_t need = 0;
  bool take_native = false;
  {
    std::lock_guard<std::mutex> g(w.mu);
    if (w.info.no_locks) return sync_error(w, "Win_lock", "the window was created with no_locks=true");
    if (w.access == A::LockAll) return sync_error(w, "Win_lock", "the window is in a lock_all epoch");
    if (w.access != A::Lock && !access_free(w)) return sync_error(w, "Win_lock", "a fence or start epoch is open");
    if (w.targets[static_cast<std::size_t>(rank)].locked) {
      return w.dev.errors().raise(ErrorClass::RmaSync, "Win_lock on rank %d: rank %d is already locked by this rank",
                                  w.comm.rank, rank);
    }
    w.access = A::Lock;
    ++w.locks_held;
    if (rma::route_passive(w).path == rma::Path::Native) {
      // The target's lock word; emulated operations (forced ones) then go
      // without a lock request of their own.
      lock_target(w, rank, kind, true);
      take_native = !(assert& kModeNoCheck);
    } else {
      lock_target(w, rank, kind, assert& kModeNoCheck);
    }
    // Our own memory: the caller will load and store it directly after
    // this returns, so the lock must really be held.
    if (rank == w.comm.rank && !(assert& kModeNoCheck) && !take_native) {
      Target& t = w.targets[static_cast<std::size_t>(rank)];
      t.lock_pending = false;
      t.lock_epoch = ++t.lock_reqs;
      Item req;
      req.kind = Msg::LockReq;
      req.op = static_cast<uint8_t>(kind);
      emul::push(w, rank, std::move(req));
      need = t.lock_epoch;
    }
  }
  if (need) {
    if (int e = wait_for(w, [&] { return w.targets[static_cast<std::size_t>(rank)].grants >= need; })) return e;
  }
  if (take_native) {
    const bool excl = kind == rma::LockKind::Exclusive;
    if (int e = rma::native::lock(w, rank, excl)) return e;
    std::lock_guard<std::mutex> g(w.mu);
    w.native->held[static_cast<std::size_t>(rank)] = excl ? 2 : 1;
  }
  return 0;
}

namespace {
// After the emulated part of an unlock: every native operation finished
// when it returned; a release fence orders them before the lock word.
void release_native(WindowState& w, int rank) {
  std::lock_guard<std::mutex> g(w.mu);
  Target& t = w.targets[static_cast<std::size_t>(rank)];
  t.emul_inflight = false;
  if (!w.native) return;
  int8_t& h = w.native->held[static_cast<std::size_t>(rank)];
  w.memory_fence();
  if (h) rma::native::unlock(w, rank, h == 2);
  h = 0;
}
}  // namespace

int Window::unlock(int rank) {
  WindowState& w = *st_;
  if (rank == kProcNull) return 0;
  if (int e = check_rank(w, "Win_unlock", rank)) return e;
  uint64_t seq;
  {
    std::lock_guard<std::mutex> g(w.mu);
    if (w.access != A::Lock || !w.targets[static_cast<std::size_t>(rank)].locked) {
      return w.dev.errors().raise(ErrorClass::RmaSync, "Win_unlock on rank %d: rank %d is not locked by Win_lock",
                                  w.comm.rank, rank);
    }
    seq = unlock_target(w, rank);
    if (--w.locks_held == 0) w.access = A::None;
  }
  Target& t = w.targets[static_cast<std::size_t>(rank)];
  if (int e = wait_for(w, [&] { return t.acked >= seq && locally_done(t); })) return e;
  release_native(w, rank);
  return finish(w);
}

int Window::lock_all(int assert) {
  WindowState& w = *st_;
  if (int e = bad_assert(w, "Win_lock_all", assert, kModeNoCheck)) return e;
  bool take_native;
  {
    std::lock_guard<std::mutex> g(w.mu);
    if (w.info.no_locks) return sync_error(w, "Win_lock_all", "the window was created with no_locks=true");
    if (!access_free(w)) return sync_error(w, "Win_lock_all", "another access epoch is open");
    w.access = A::LockAll;
    const bool native = rma::route_passive(w).path == rma::Path::Native;
    for (int r = 0; r < w.comm.size; ++r) {
      lock_target(w, r, rma::LockKind::Shared, native || (assert& kModeNoCheck));
    }
    take_native = native && !(assert& kModeNoCheck);
  }
  if (!take_native) return 0;
  // Shared locks on every target, in rank order.
  for (int r = 0; r < w.comm.size; ++r) {
    if (int e = rma::native::lock(w, r, false)) return e;
    std::lock_guard<std::mutex> g(w.mu);
    w.native->held[static_cast<std::size_t>(r)] = 1;
  }
  return 0;
}

int Window::unlock_all() {
  WindowState& w = *st_;
  std::vector<uint64_t> seqs(static_cast<std::size_t>(w.comm.size));
  {
    std::lock_guard<std::mutex> g(w.mu);
    if (w.access != A::LockAll) return sync_error(w, "Win_unlock_all", "no Win_lock_all epoch is open");
    for (int r = 0; r < w.comm.size; ++r) seqs[static_cast<std::size_t>(r)] = unlock_target(w, r);
    w.access = A::None;
  }
  if (int e = wait_for(w, [&] {
        for (int r = 0; r < w.comm.size; ++r) {
          const Target& t = w.targets[static_cast<std::size_t>(r)];
          if (t.acked < seqs[static_cast<std::size_t>(r)] || !locally_done(t)) return false;
        }
        return true;
      })) {
    return e;
  }
  for (int r = 0; r < w.comm.size; ++r) release_native(w, r);
  return finish(w);
}

namespace {

// Queues a flush of one locked target; 0 when nothing needs one.
uint64_t flush_target(WindowState& w, int rank) {
  Target& t = w.targets[static_cast<std::size_t>(rank)];
  if (t.lock_pending || t.queued_ops == t.flushed_ops) return 0;
  t.flushed_ops = t.queued_ops;
  uint64_t seq = ++t.sync_seq;
  push_sync(w, rank, Msg::Flush, t.lock_nocheck ? Gate{} : Gate{Gate::Lock, t.lock_epoch}, seq);
  return seq;
}

int passive_check(WindowState& w, const char* call, int rank) {
  if (w.access != A::Lock && w.access != A::LockAll) return sync_error(w, call, "no passive-target epoch is open");
  if (rank >= 0 && !w.targets[static_cast<std::size_t>(rank)].locked) {
    return w.dev.errors().raise(ErrorClass::RmaSync, "%s on rank %d: rank %d is not locked", call, w.comm.rank, rank);
  }
  return 0;
}

int flush_some(WindowState& w, const char* call, int only, bool local) {
  if (only != -1) {
    if (int e = check_rank(w, call, only)) return e;
  }
  std::vector<uint64_t> seqs(static_cast<std::size_t>(w.comm.size));
  {
    std::lock_guard<std::mutex> g(w.mu);
    if (int e = passive_check(w, call, only)) return e;
    if (!local) {
      for (int r = 0; r < w.comm.size; ++r) {
        if ((only == -1 || r == only) && w.targets[static_cast<std::size_t>(r)].locked) {
          seqs[static_cast<std::size_t>(r)] = flush_target(w, r);
        }
      }
    }
  }
  if (int e = wait_for(w, [&] {
        for (int r = 0; r < w.comm.size; ++r) {
          if (only != -1 && r != only) continue;
          const Target& t = w.targets[static_cast<std::size_t>(r)];
          if (t.acked < seqs[static_cast<std::size_t>(r)] || !locally_done(t)) return false;
        }
        return true;
      })) {
    return e;
  }
  {
    // Native operations completed when they returned: a fence orders them
    // before whatever follows; the emulated ones were acknowledged.
    std::lock_guard<std::mutex> g(w.mu);
    if (w.native_usable) w.memory_fence();
    if (!local) {
      for (int r = 0; r < w.comm.size; ++r) {
        if (only == -1 || r == only) w.targets[static_cast<std::size_t>(r)].emul_inflight = false;
      }
    }
  }
  return finish(w);
}

}  // namespace

int Window::flush(int rank) {
  if (rank == kProcNull) return 0;
  return flush_some(*st_, "Win_flush", rank, false);
}
int Window::flush_all() { return flush_some(*st_, "Win_flush_all", -1, false); }
int Window::flush_local(int rank) {
  if (rank == kProcNull) return 0;
  return flush_some(*st_, "Win_flush_local", rank, true);
}
int Window::flush_local_all() { return flush_some(*st_, "Win_flush_local_all", -1, true); }

int Window::sync() {
  // One copy of the memory (unified model): a full memory fence makes our
  // stores and the agent's visible to each other.
  st_->memory_fence();
  st_->dev.progress();
  return 0;
}

}  // namespace adi3
