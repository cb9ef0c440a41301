// Passive target: MPI_Win_lock / unlock, lock_all / unlock_all, flush,
// flush_all, flush_local, flush_local_all.
//  - Emulated: the lock request of a lock taken alone leaves with the
//    first operation (a lock with no operation sends nothing); locks held
//    together (a second Win_lock, lock_all) are taken at once in program
//    order (rank order for lock_all), so that programs locking in one
//    order never deadlock. Unlock and Flush carry the count and are
//    answered by an Ack once the target applied everything.
//  - Native (every rank agreed at creation): the target's lock word in its
//    control block (rma/native_sync.hpp); flush is a memory fence, plus
//    the emulated flush when emulated operations are pending.
//  - A window spanning hosts: every lock is the target's queue (one lock
//    authority whatever host the origin is on), but a same-host target is
//    asked at once and, granted, takes our operations natively
//    (rma/route.hpp queue_lock_native); its Unlock packet, sent after a
//    memory fence, releases the queue.
#include <algorithm>
#include <vector>

#include "rma/native.hpp"
#include "rma/native_fast.hpp"
#include "rma/route.hpp"
#include "rma/sync.hpp"

namespace adi3 {

using namespace rma::sync;
using rma::Gate;
using rma::Item;
using rma::Msg;
using rma::Target;
using rma::WindowState;

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

// Queues a flush of one locked target; 0 when nothing needs one.
uint64_t flush_target(WindowState& w, int rank) {
  Target& t = w.targets[static_cast<std::size_t>(rank)];
  if (t.lock_pending || t.queued_ops == t.flushed_ops) return 0;
  // The last operation left asking for an Ack (emul/origin.cpp, ask_ack):
  // the target acknowledges it after everything before it, so this flush
  // sends nothing. One operation since the last flush: the next ones ask.
  const uint64_t asked = t.spec_ops == t.queued_ops ? t.spec_seq : 0;
  t.flush_each_op = t.queued_ops == t.flushed_ops + 1;
  t.spec_seq = 0;
  t.flushed_ops = t.queued_ops;
  if (asked) return asked;
  uint64_t seq = ++t.sync_seq;
  if (t.tail_fetch) {
    emul::flush_on_reply(w, rank, seq);  // (what emul::push does with it, without the queue item)
    return seq;
  }
  push_sync(w, rank, Msg::Flush, t.lock_nocheck ? Gate{} : Gate{Gate::Lock, t.lock_epoch}, seq);
  return seq;
}

// Queues the unlock of one target; returns the sequence number to wait
// for, or 0 when nothing was ever sent (no operation: no traffic at all).
uint64_t unlock_target(WindowState& w, int rank) {
  Target& t = w.targets[static_cast<std::size_t>(rank)];
  uint64_t seq = 0;
  if (t.lock_nocheck) {
    // No lock of the target's queue to release (NOCHECK, or a native lock
    // word, which release_native frees): the target answers such an
    // Unlock as a Flush, so it is one, and needs no packet of its own when
    // the last operation asked for the Ack or fetches (its reply says the
    // target applied everything before it): lock/fetch_and_op/unlock to a
    // polling target is one round trip, not two.
    seq = flush_target(w, rank);
  } else if (!t.lock_pending) {
    // Our native operations under the queue's lock come before the release.
    w.memory_fence();
    seq = ++t.sync_seq;
    push_sync(w, rank, Msg::Unlock, Gate{Gate::Lock, t.lock_epoch}, seq);
  }
  t.locked = false;
  t.lock_pending = false;
  t.lock_nocheck = false;
  t.flushed_ops = t.queued_ops;
  return seq;
}

// Sends the lock request of a locked target now (not with its first item);
// returns the number of grants to wait for.
uint64_t request_now(WindowState& w, int rank) {
  Target& t = w.targets[static_cast<std::size_t>(rank)];
  t.lock_pending = false;
  t.lock_epoch = ++t.lock_reqs;
  Item req;
  req.kind = Msg::LockReq;
  req.op = static_cast<uint8_t>(t.lock_kind);
  emul::push(w, rank, std::move(req));
  return t.lock_epoch;
}

// Locks of the targets' queues are acquired in program order, so that
// programs that lock in one global order never deadlock: a lazy lock's
// request leaves with its first operation and nobody waits for its grant,
// so while it is the only lock held that is safe, but a rank holding a
// granted lock while its earlier request waits behind another rank's
// exclusive lock (which waits for ours) is a cycle. So when a second lock
// is taken, the locks held before it are asked now (if still lazy) and
// their grants waited for, and the new one is taken at once (locks with
// MPI_MODE_NOCHECK or native lock words take no part). Returns -1 when no
// other lock of a queue is held, else whether one is still to be granted
// (*need: the grants to wait for per target).
int order_locks(WindowState& w, int rank, std::vector<uint64_t>* need) {
  int held = -1;
  for (int r = 0; r < w.comm.size; ++r) {
    Target& o = w.targets[static_cast<std::size_t>(r)];
    if (r == rank || !o.locked || o.lock_nocheck) continue;
    held = std::max(held, 0);
    if (o.lock_pending) request_now(w, r);
    if (o.hold_lock) emul::pump(w, r);  // the request its held operation owes goes now
    if (o.grants >= o.lock_epoch) continue;
    if (need->empty()) need->resize(static_cast<std::size_t>(w.comm.size));
    (*need)[static_cast<std::size_t>(r)] = o.lock_epoch;
    held = 1;
  }
  return held;
}

bool granted(const WindowState& w, const std::vector<uint64_t>& need) {
  for (std::size_t r = 0; r < need.size(); ++r) {
    if (w.targets[r].grants < need[r]) return false;
  }
  return true;
}

}  // namespace

int Window::lock(LockType type, int rank, int assert) {
  WindowState& w = *st_;
  if (int e = rma::native::fast_lock(w, type, rank, assert); e >= 0) {
    return e ? e : w.dev.check_alive(w.comm, rank, "Win_lock");  // its lock word outlives it
  }
  if (int e = bad_assert(w, "Win_lock", assert, kModeNoCheck)) return e;
  if (assert & kModeNoCheck) w.before_load();  // no lock word fences: the caller may load next
  if (type != LockType::Exclusive && type != LockType::Shared) {
    return w.dev.errors().raise(
        ErrorClass::Locktype, "Win_lock on rank %d: lock type %d is neither exclusive (%d) nor shared (%d)",
        w.comm.rank, static_cast<int>(type), static_cast<int>(LockType::Exclusive), static_cast<int>(LockType::Shared));
  }
  if (rank == kProcNull) return 0;
  if (int e = check_rank(w, "Win_lock", rank)) return e;
  if (int e = w.dev.check_alive(w.comm, rank, "Win_lock")) return e;
  const auto kind = type == LockType::Exclusive ? rma::LockKind::Exclusive : rma::LockKind::Shared;
  uint64_t need = 0;
  bool take_native = false, eager = false;
  std::vector<uint64_t> earlier;  // grants of the locks held before this one (order_locks)
  {
    std::lock_guard g(w.mu);
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
    // The lock must really be held when this returns for our own memory
    // (the caller will load and store it directly) and for a same-host
    // target of a window spanning hosts (our operations to it then move its
    // memory natively, rma/route.hpp queue_lock_native): ask at once.
    const int before =
        !(assert& kModeNoCheck) && !take_native && w.locks_held > 1 ? order_locks(w, rank, &earlier) : -1;
    if (before == 1) {
      eager = true;  // asked below, once the earlier ones are granted
    } else if (!(assert& kModeNoCheck) && !take_native &&
               (before == 0 || rank == w.comm.rank || rma::queue_lock_native(w, rank))) {
      need = request_now(w, rank);
    }
  }
  if (eager) {
    if (int e = wait_for(w, [&] { return granted(w, earlier); })) return e;
    std::lock_guard g(w.mu);
    need = request_now(w, rank);
  }
  if (need) {
    if (int e = wait_for(w, [&] { return w.targets[static_cast<std::size_t>(rank)].grants >= need; })) return e;
  }
  if (take_native) {
    const bool excl = kind == rma::LockKind::Exclusive;
    if (int e = rma::native::lock(w, rank, excl)) return e;
    std::lock_guard g(w.mu);
    w.native->held[static_cast<std::size_t>(rank)] = excl ? 2 : 1;
  }
  return 0;
}

namespace {
// After the emulated part of an unlock: every native operation finished
// when it returned; a release fence orders them before the lock word.
void release_native_locked(WindowState& w, int rank) {
  Target& t = w.targets[static_cast<std::size_t>(rank)];
  t.settle();
  if (!w.native) return;
  int8_t& h = w.native->held[static_cast<std::size_t>(rank)];
  w.memory_fence();
  if (h) rma::native::unlock(w, rank, h == 2);
  h = 0;
}
void release_native(WindowState& w, int rank) {
  std::lock_guard g(w.mu);
  release_native_locked(w, rank);
}
}  // namespace

int Window::unlock(int rank) {
  WindowState& w = *st_;
  if (int e = rma::native::fast_unlock(w, rank); e >= 0) {
    return e ? e : w.dev.check_alive(w.comm, rank, "Win_unlock");  // (see below)
  }
  if (rank == kProcNull) return 0;
  if (int e = check_rank(w, "Win_unlock", rank)) return e;
  // A native unlock only writes the target's lock word, which stays mapped
  // after its process died: ask whether it lives.
  if (int e = w.dev.check_alive(w.comm, rank, "Win_unlock")) return e;
  uint64_t seq;
  bool one_op;
  {
    std::lock_guard g(w.mu);
    if (w.access != A::Lock || !w.targets[static_cast<std::size_t>(rank)].locked) {
      return w.dev.errors().raise(ErrorClass::RmaSync, "Win_unlock on rank %d: rank %d is not locked by Win_lock",
                                  w.comm.rank, rank);
    }
    const Target& u = w.targets[static_cast<std::size_t>(rank)];
    one_op = u.queued_ops == u.flushed_ops + 1;
    seq = unlock_target(w, rank);
    if (--w.locks_held == 0) w.access = A::None;
    // Nothing went through the emulation (the native path's usual case):
    // release the word now, without another round on the mutex.
    if (seq == 0 && locally_done(w.targets[static_cast<std::size_t>(rank)])) {
      release_native_locked(w, rank);
      return w.take_error();
    }
  }
  Target& t = w.targets[static_cast<std::size_t>(rank)];
  if (int e = wait_answer(w, rank, one_op, [&] { return t.acked >= seq && locally_done(t); })) return e;
  release_native(w, rank);
  return finish(w);
}

int Window::lock_all(int assert) {
  WindowState& w = *st_;
  if (int e = bad_assert(w, "Win_lock_all", assert, kModeNoCheck)) return e;
  if (assert & kModeNoCheck) w.before_load();  // (see Window::lock)
  bool take_native, queued;
  {
    std::lock_guard g(w.mu);
    if (w.info.no_locks) return sync_error(w, "Win_lock_all", "the window was created with no_locks=true");
    if (!access_free(w)) return sync_error(w, "Win_lock_all", "another access epoch is open");
    w.access = A::LockAll;
    const bool native = rma::route_passive(w).path == rma::Path::Native;
    for (int r = 0; r < w.comm.size; ++r) {
      lock_target(w, r, rma::LockKind::Shared, native || (assert& kModeNoCheck));
    }
    take_native = native && !(assert& kModeNoCheck);
    queued = !native && !(assert& kModeNoCheck);
  }
  // The targets' queues: every shared lock now, in rank order, each once
  // the one before is granted, as the native path takes its lock words. A
  // lock taken lazily with the first operation would let this rank hold a
  // later target's lock while an earlier one waits behind another rank's
  // exclusive lock, which waits for ours (that rank locking in rank order,
  // as Window::lock keeps it). (A window spanning hosts also needs the
  // same-host targets granted before their operations go natively.)
  for (int r = 0; queued && r < w.comm.size; ++r) {
    uint64_t need;
    {
      std::lock_guard g(w.mu);
      need = request_now(w, r);
    }
    if (int e = wait_for(w, [&] { return w.targets[static_cast<std::size_t>(r)].grants >= need; })) return e;
  }
  if (!take_native) return 0;
  // Shared locks on every target, in rank order.
  for (int r = 0; r < w.comm.size; ++r) {
    if (int e = rma::native::lock(w, r, false)) return e;
    std::lock_guard g(w.mu);
    w.native->held[static_cast<std::size_t>(r)] = 1;
  }
  return 0;
}

int Window::unlock_all() {
  WindowState& w = *st_;
  if (int e = w.dev.check_alive(w.comm, -1, "Win_unlock_all")) return e;
  std::vector<uint64_t> seqs(static_cast<std::size_t>(w.comm.size));
  {
    std::lock_guard g(w.mu);
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

// No emulated operation to `only` (every target: -1) since its last flush.
bool quiet(const WindowState& w, int only) {
  auto idle = [](const Target& t) {
    return t.queued_ops == t.flushed_ops && t.q.empty() && t.replies == 0 && t.rndv_out == 0;
  };
  if (only != -1) return idle(w.targets[static_cast<std::size_t>(only)]);
  for (const Target& t : w.targets) {
    if (!idle(t)) return false;
  }
  return true;
}

int passive_check(WindowState& w, const char* call, int rank) {
  if (w.access != A::Lock && w.access != A::LockAll) return sync_error(w, call, "no passive-target epoch is open");
  if (rank >= 0 && !w.targets[static_cast<std::size_t>(rank)].locked) {
    return w.dev.errors().raise(ErrorClass::RmaSync, "%s on rank %d: rank %d is not locked", call, w.comm.rank, rank);
  }
  return 0;
}

// Win_flush(_local) of one target (not MPI_PROC_NULL): no allocation and
// no loop over the ranks (flush after every operation is the common
// pattern: about 150 of the origin's instructions of a flush behind a
// fetch_and_op that went as a packet).
int flush_one(WindowState& w, const char* call, int rank, bool local) {
  if (int e = check_rank(w, call, rank)) return e;
  // A native flush is a memory fence: it would complete on the memory of a
  // target whose process died.
  if (int e = w.dev.check_alive(w.comm, rank, call)) return e;
  Target& t = w.targets[static_cast<std::size_t>(rank)];
  uint64_t seq = 0;
  bool one_op = false;  // flushing one target after one operation
  {
    std::lock_guard g(w.mu);
    if (int e = passive_check(w, call, rank)) return e;
    // Native operations completed when they returned: with none pending in
    // the emulation, completion is a memory fence (one lock, no allocation).
    if (w.native_usable && quiet(w, rank)) {
      w.memory_fence();
      return w.take_error();
    }
    if (!local) {
      seq = flush_target(w, rank);
      one_op = seq != 0 && t.flush_each_op;
    }
  }
  if (int e = wait_answer(w, rank, one_op, [&] { return t.acked >= seq && locally_done(t); })) return e;
  // Native operations completed when they returned: a fence orders them
  // before whatever follows; the emulated ones were acknowledged.
  std::lock_guard g(w.mu);
  if (w.native_usable) w.memory_fence();
  if (!local) t.settle();
  return w.take_error();
}

// Win_flush(_local)_all: every locked target.
int flush_every(WindowState& w, const char* call, bool local) {
  if (w.dev.check_alive(w.comm, -1, call)) {
    std::vector<int> locked;
    {
      std::lock_guard g(w.mu);
      for (int r = 0; r < w.comm.size; ++r) {
        if (w.targets[static_cast<std::size_t>(r)].locked) locked.push_back(r);
      }
    }
    if (int f = w.dev.check_alive(w.comm, locked, call)) return f;
  }
  std::vector<uint64_t> seqs;
  {
    std::lock_guard g(w.mu);
    if (int e = passive_check(w, call, -1)) return e;
    if (w.native_usable && quiet(w, -1)) {
      w.memory_fence();
      return w.take_error();
    }
    seqs.resize(static_cast<std::size_t>(w.comm.size));
    if (!local) {
      for (int r = 0; r < w.comm.size; ++r) {
        if (w.targets[static_cast<std::size_t>(r)].locked) seqs[static_cast<std::size_t>(r)] = flush_target(w, r);
      }
    }
  }
  if (int e = wait_answer(w, -1, false, [&] {
        for (int r = 0; r < w.comm.size; ++r) {
          const Target& t = w.targets[static_cast<std::size_t>(r)];
          if (t.acked < seqs[static_cast<std::size_t>(r)] || !locally_done(t)) return false;
        }
        return true;
      })) {
    return e;
  }
  std::lock_guard g(w.mu);
  if (w.native_usable) w.memory_fence();
  if (!local) {
    for (int r = 0; r < w.comm.size; ++r) w.targets[static_cast<std::size_t>(r)].settle();
  }
  return w.take_error();
}

}  // namespace

int Window::flush(int rank) {
  // A memory fence: it would complete on a dead rank's memory, still mapped.
  if (rma::native::fast_flush(*st_, rank)) return st_->dev.check_alive(st_->comm, rank, "Win_flush");
  if (rank == kProcNull) return 0;
  return flush_one(*st_, "Win_flush", rank, false);
}
int Window::flush_all() { return flush_every(*st_, "Win_flush_all", false); }
int Window::flush_local(int rank) {
  if (rank == kProcNull) return 0;
  return flush_one(*st_, "Win_flush_local", rank, true);
}
int Window::flush_local_all() { return flush_every(*st_, "Win_flush_local_all", true); }

}  // namespace adi3
