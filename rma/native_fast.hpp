// The common native operation without the general machinery: a put or get
// of predefined contiguous data (or a flush) to a target whose window
// memory is mapped here, inside a native lock or a plain fence epoch, in a
// process whose application threads do not call in concurrently (not
// MPI_THREAD_MULTIPLE nor LayerPort::enable_threads:
// config().thread_multiple is false). Everything it does not
// handle, including every error, goes the general way (check_op, route_op,
// native::run), which raises the error with its message; so this path only
// ever answers "done". The checks are the general path's, in the cheap
// form the common case allows.
//
// It takes no mutex, even while the agent runs (a window from create
// started it): the agent touches a window only under its mutex, in packet
// handlers and in pumps of queued emulated operations, and of the state
// read and written here it writes none that this path reads for a target
// with nothing emulated in flight (emul_inflight false: no queued item, no
// reply or grant due), except deferred_error, which is atomic. Origin
// epoch state (access, the targets' lock flags, fence and op counts) is
// written by the application's calls only; the agent reads access while it
// pumps another target's queue, so fast_lock writes it only when it
// changes (from None, when no queue holds anything).
#pragma once
#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "adi3/device.hpp"
#include "channels/common/bulk_copy.hpp"
#include "coll/op.hpp"
#include "rma/fast_elem.hpp"
#include "rma/native_sync.hpp"
#include "rma/window_state.hpp"

namespace adi3::rma::native {

using FastPeer = NativeWin::FastPeer;

// The target's entry when the epoch lets the fast path serve it (a native
// lock or a plain fence, nothing emulated in flight to it), its memory
// mapped or not (a flush to memory reached by cross-memory attach completes
// the same way: every native operation completed when it returned), else
// nullptr.
// Whether the epoch lets a lean path serve target tg of native window nw:
// a native lock (taken as a nocheck one: no emulated grant to wait for) or
// a plain fence, nothing emulated in flight to it.
[[gnu::always_inline]] inline bool lean_epoch(const WindowState& w, const NativeWin& nw, const Target& tg) {
  if (tg.emul_inflight) return false;
  switch (w.access) {
    case WindowState::Access::Lock:
    case WindowState::Access::LockAll:
      return nw.passive && tg.locked && tg.lock_nocheck;
    case WindowState::Access::Fence:
      return !w.fence_lazy && nw.fast_fence;
    default:
      return false;
  }
}

[[gnu::always_inline]] inline FastPeer* fast_epoch(WindowState& w, int target) {
  if (!w.native_usable) return nullptr;
  NativeWin& nw = *w.native;
  const auto t = static_cast<std::size_t>(target);                       // kProcNull and negatives: huge
  if (t >= nw.fast_n || w.dev.config().thread_multiple) return nullptr;  // fast_n: 0 unless nw.fast
  return lean_epoch(w, nw, w.targets[t]) ? &nw.fastp[t] : nullptr;
}

// The target's state when an operation to it may take the fast path (its
// memory mapped here), else nullptr.
[[gnu::always_inline]] inline FastPeer* fast_target(WindowState& w, int target) {
  FastPeer* p = fast_epoch(w, target);
  return p && p->mem ? p : nullptr;
}

// Where [disp * unit, + bytes) of the target's window starts in its mapped
// memory: the range check of check_op. nullptr when outside or when the
// product overflows (the caller then leaves the operation to the checked
// path, which says which).
[[gnu::always_inline]] inline char* fast_at(const FastPeer& p, std::ptrdiff_t disp, uint64_t bytes) {
  uint64_t off;
  if (disp < 0 || __builtin_mul_overflow(static_cast<uint64_t>(disp), p.unit, &off) || off > p.size ||
      bytes > p.size - off) {
    return nullptr;
  }
  return p.mem + off;
}

// Calls f with a zero of the 8- or 4-byte unsigned word of an element of es bytes.
// Inlined with f: an out-of-line call took the closure's captures through
// the stack (about 45 instructions per accumulate).
template <class F>
[[gnu::always_inline]] inline void by_word(std::size_t es, F&& f) {
  if (es == 8) {
    f(uint64_t{});
  } else {
    f(uint32_t{});
  }
}

// stripe_lock with its first attempt inline: a free stripe (the common
// case) costs the one locked instruction, not a call.
// Its first attempt: true when taken.
[[gnu::always_inline]] inline bool fast_stripe_try(uint32_t& s) {
  // The builtin: atomic_ref's member was left out of line (a call per accumulate).
  uint32_t z = 0;
  return __atomic_compare_exchange_n(&s, &z, 1u, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}
[[gnu::always_inline]] inline void fast_stripe_lock(uint32_t& s) {
  if (!fast_stripe_try(s)) [[unlikely]]
    stripe_lock(s);
}

// An operation the fast path completed: counted as native (and into the
// fence epoch's count).
inline bool fast_done(WindowState& w) {
  ++w.native_ops;
  if (w.access == WindowState::Access::Fence) ++w.fence_ops;
  return true;
}

// WindowState::before_load with its fence out of line, so that the fast
// paths that inline it call nothing in the common case (no frame).
[[gnu::noinline, gnu::cold]] inline void fence_before_load(WindowState& w) { w.memory_fence(); }
[[gnu::always_inline]] inline void fast_before_load(WindowState& w) {
  if constexpr (WindowState::kDeferFence) {
    if (w.unfenced->load(std::memory_order_relaxed)) [[unlikely]]
      fence_before_load(w);
  }
}

// Put (into the target) or get (from it) of count elements of one
// predefined contiguous type on both sides. True when done.
// With p fast_target's answer for the target (the binding may have it
// cached) and es the size of the one predefined type of both sides, when it
// is one contiguous run from its address.
[[gnu::always_inline]] inline bool fast_copy_plain(WindowState& w, FastPeer* p, bool put, void* buf, int64_t ocount,
                                                   uint64_t es, std::ptrdiff_t disp, int64_t tcount) {
  uint64_t bytes;
  if (ocount != tcount || tcount <= 0 || !buf || !p ||
      __builtin_mul_overflow(static_cast<uint64_t>(tcount), es, &bytes))
    return false;
  char* at = fast_at(*p, disp, bytes);
  if (!at || bytes >= p->split_min) return false;
  char* dst = put ? at : static_cast<char*>(buf);
  const char* src = put ? static_cast<const char*>(buf) : at;
  if (!put) fast_before_load(w);  // not ahead of a store before a flush (WindowState::before_load)
  if (bytes == 8) {
    // The common 8-byte element: a load and a store, not a libc call.
    uint64_t v;
    std::memcpy(&v, src, 8);
    std::memcpy(dst, &v, 8);
  } else {
    bulk_move(dst, src, static_cast<std::size_t>(bytes));
  }
  if (put) w.stored();
  return fast_done(w);
}
[[gnu::always_inline]] inline bool fast_copy(WindowState& w, bool put, void* buf, int64_t ocount, const Datatype* otype,
                                             int target, std::ptrdiff_t disp, int64_t tcount, const Datatype* ttype) {
  if (otype != ttype || !ttype || !ttype->is_predefined() || ttype->true_lb() != 0 || !ttype->is_contiguous()) {
    return false;
  }
  return fast_copy_plain(w, fast_target(w, target), put, buf, ocount, ttype->size(), disp, tcount);
}

// f applied to the 4- or 8-byte word at p with operand v (the caller holds
// its stripe); returns the old word. A floating sum is in + inout, as the
// op's kernel computes it: 4-byte floating types are float and 8-byte ones
// double.
template <class W>
inline W fast_element(W* p, W v, FastOp f) {
  const W cur = *p;
  switch (f) {
    case FastOp::Add:
      *p = static_cast<W>(cur + v);
      break;
    case FastOp::Replace:
      *p = v;
      break;
    case FastOp::FloatAdd: {
      using F = std::conditional_t<sizeof(W) == 8, double, float>;
      F in, old;
      std::memcpy(&in, &v, sizeof in);
      std::memcpy(&old, &cur, sizeof old);
      const F sum = in + old;
      std::memcpy(p, &sum, sizeof sum);
      break;
    }
    default:
      break;
  }
  return cur;
}

// The record of predefined type t (rma/fast_elem.hpp). The last type
// asked about is remembered in nw (its class takes two calls into the
// core library).
inline FastElem fast_elem(NativeWin& nw, const Datatype* t) {
  if (t == nw.elem_type && t) [[likely]]
    return nw.elem;
  const FastElem e = fast_elem_of(t);
  // Only a predefined type is remembered: it is never freed, so its address
  // never comes to name another type.
  if (e.size) {
    nw.elem_type = t;
    nw.elem = e;
  }
  return e;
}

// Whether the origin holds target's exclusive lock (then nobody else
// accumulates there: no stripes).
inline bool fast_exclusive(const WindowState& w, int target) {
  return w.native->held[static_cast<std::size_t>(target)] == 2;
}

// Fetch_and_op (cas false; op: Sum on C integers and floating types,
// Replace, NoOp) or compare_and_swap (cas true, op unused) of one 4- or
// 8-byte predefined element on its alignment, under the element's stripe
// (as cas_element and combine_atomic). True when done.
// With e the record of the element's predefined type.
[[gnu::always_inline]] inline bool fast_atomic(WindowState& w, FastPeer* p, const void* origin, const void* compare,
                                               void* result, FastElem e, int target, std::ptrdiff_t disp, bool cas,
                                               coll::OpKind op) {
  if (!p || !result || !e.size) return false;
  const std::size_t es = e.size;
  FastOp f = FastOp::None;
  if (cas) {
    if (!compare || !origin || !e.cas) return false;
  } else {
    f = fast_op(op, e);
    if (f == FastOp::None || (f != FastOp::Read && !origin)) return false;
  }
  char* at = fast_at(*p, disp, es);
  if (!at || (reinterpret_cast<uintptr_t>(at) & (es - 1))) return false;  // es: 4 or 8 (no division)
  uint32_t& stripe = stripe_of(*p->ctl, static_cast<std::size_t>(at - p->mem));
  const bool excl = fast_exclusive(w, target);
  // The stripe's compare-and-swap, a locked instruction, fences on x86.
  if (excl) fast_before_load(w);
  auto apply = [&](auto word) __attribute__((always_inline)) {
    using W = decltype(word);
    W v = 0, prev;
    if (origin && f != FastOp::Read) std::memcpy(&v, origin, sizeof v);
    if (!excl) fast_stripe_lock(stripe);
    if (cas) {
      std::memcpy(&prev, at, sizeof prev);
      W c;
      std::memcpy(&c, compare, sizeof c);
      if (prev == c) std::memcpy(at, &v, sizeof v);
    } else {
      prev = fast_element(reinterpret_cast<W*>(at), v, f);
    }
    if (!excl) stripe_unlock(stripe);
    std::memcpy(result, &prev, sizeof prev);
  };
  by_word(es, apply);
  w.stored();
  return fast_done(w);
}
[[gnu::always_inline]] inline bool fast_atomic(WindowState& w, const void* origin, const void* compare, void* result,
                                               const Datatype* t, int target, std::ptrdiff_t disp, bool cas,
                                               coll::OpKind op) {
  FastPeer* p = fast_target(w, target);  // set only when w.native is (fast_elem reads it)
  return p && fast_atomic(w, p, origin, compare, result, fast_elem(*w.native, t), target, disp, cas, op);
}

// Accumulate of up to 64 aligned 4- or 8-byte predefined elements (Sum on
// C integers and floating types, Replace), the same type and count on both
// sides: under the stripes of the range, taken once. True when done.
// With e the record of the one predefined type of both sides.
// fast_acc's checks: where the elements lie in the target's mapped memory
// (nullptr: not taken here) and what is done to each (*f).
[[gnu::always_inline]] inline char* fast_acc_at(FastPeer* p, const void* origin, int64_t ocount, FastElem e,
                                                std::ptrdiff_t disp, int64_t tcount, coll::OpKind op, FastOp* f) {
  if (ocount != tcount || tcount <= 0 || tcount > 64 || !origin || !p || !e.size) return nullptr;
  *f = fast_op(op, e);
  if (*f == FastOp::None || *f == FastOp::Read) return nullptr;  // NO_OP: not an accumulate's op
  char* at = fast_at(*p, disp, e.size * static_cast<uint64_t>(tcount));
  if (!at || (reinterpret_cast<uintptr_t>(at) & (e.size - 1u))) return nullptr;
  return at;
}
[[gnu::always_inline]] inline bool fast_acc(WindowState& w, FastPeer* p, const void* origin, int64_t ocount, FastElem e,
                                            int target, std::ptrdiff_t disp, int64_t tcount, coll::OpKind op) {
  FastOp f;
  char* at = fast_acc_at(p, origin, ocount, e, disp, tcount, op, &f);
  if (!at) return false;
  const std::size_t es = e.size;
  const std::size_t bytes = es * static_cast<std::size_t>(tcount);
  const bool excl = fast_exclusive(w, target);
  const std::size_t off = static_cast<std::size_t>(at - p->mem);
  auto apply = [&](auto word) __attribute__((always_inline)) {
    using W = decltype(word);
    for (int64_t i = 0; i < tcount; ++i) {
      W v;
      std::memcpy(&v, static_cast<const char*>(origin) + static_cast<std::size_t>(i) * sizeof(W), sizeof v);
      fast_element(reinterpret_cast<W*>(at + static_cast<std::size_t>(i) * sizeof(W)), v, f);
    }
  };
  if (excl) {
    fast_before_load(w);
    by_word(es, apply);
  } else if (off % 64 + bytes <= 64) {
    // One block (an 8-byte accumulate): one stripe.
    uint32_t& stripe = stripe_of(*p->ctl, off);
    fast_stripe_lock(stripe);
    by_word(es, apply);
    stripe_unlock(stripe);
  } else {
    const StripeRange s(*p->ctl, off, bytes);
    s.lock();
    by_word(es, apply);
    s.unlock();
  }
  w.stored();
  return fast_done(w);
}
// fast_acc of one element (the binding's entry point: rmabench's and most
// programs' accumulate) calling nothing, so that the entry point needs no
// frame: false also when its stripe is taken or we hold the target's
// exclusive lock (the caller's fast_acc then takes them).
[[gnu::always_inline]] inline bool fast_acc_one(WindowState& w, FastPeer* p, const void* origin, int64_t ocount,
                                                FastElem e, int target, std::ptrdiff_t disp, int64_t tcount,
                                                coll::OpKind op) {
  FastOp f;
  char* at = tcount == 1 ? fast_acc_at(p, origin, ocount, e, disp, 1, op, &f) : nullptr;
  if (!at || fast_exclusive(w, target)) return false;
  // Aligned, the element lies in one 64-byte block: one stripe.
  uint32_t& stripe = stripe_of(*p->ctl, static_cast<std::size_t>(at - p->mem));
  if (!fast_stripe_try(stripe)) return false;
  by_word(
      e.size, [&](auto word) __attribute__((always_inline)) {
        using W = decltype(word);
        W v;
        std::memcpy(&v, origin, sizeof v);
        fast_element(reinterpret_cast<W*>(at), v, f);
      });
  stripe_unlock(stripe);
  w.stored();
  return fast_done(w);
}
[[gnu::always_inline]] inline bool fast_acc(WindowState& w, const void* origin, int64_t ocount, const Datatype* otype,
                                            int target, std::ptrdiff_t disp, int64_t tcount, const Datatype* ttype,
                                            coll::OpKind op) {
  FastPeer* p = otype == ttype ? fast_target(w, target) : nullptr;  // set only when w.native is
  return p && fast_acc(w, p, origin, ocount, fast_elem(*w.native, ttype), target, disp, tcount, op);
}

// Win_flush(target) with nothing in the emulation: every operation
// completed when it returned; the memory fence that orders them before our
// later loads is left to the next load on x86 (WindowState::before_load),
// done here elsewhere. True when done.
// The flush's own work once nothing is left to complete.
[[gnu::always_inline]] inline void fast_flush_fence(WindowState& w) {
  if constexpr (WindowState::kDeferFence) {
    std::atomic_signal_fence(std::memory_order_seq_cst);  // the compiler keeps the stores before the return
  } else {
    w.memory_fence();
  }
}
// Whether a flush to target has nothing to complete (but deferred_error,
// which the agent may set at any time); the target's memory may be reached
// by cross-memory attach (after such copies, or packets all answered).
inline bool fast_flush_settled(WindowState& w, int target) {
  if (w.access != WindowState::Access::Lock && w.access != WindowState::Access::LockAll) return false;
  if (!fast_epoch(w, target)) return false;
  const Target& t = w.targets[static_cast<std::size_t>(target)];
  return t.queued_ops == t.flushed_ops && t.q.empty() && t.replies == 0;
}
inline bool fast_flush(WindowState& w, int target) {
  if (!fast_flush_settled(w, target) || w.deferred_error) return false;
  fast_flush_fence(w);
  return true;
}

// Win_fence(0, NOSTORE or NOPUT) on a native allocate or shared window,
// nothing of ours in the emulation: the general native fence without the
// device's wait loop, the refresh of every counter and the binding's
// lookup that forgets the per-target bytes (mpi/win_direct.hpp: the epoch
// stays a plain fence, so what they say holds). -1: not handled here, else
// the fence's result (rma/fence.cpp).
int fast_fence(WindowState& w, int assert);

// Win_lock on a native passive window, the target not locked yet: the
// state the general path would set, then the target's lock word (waiting
// as the general path does when it is held). -1: not handled here.
inline int fast_lock(WindowState& w, LockType type, int rank, int assert) {
  if (!w.native_usable || w.dev.config().thread_multiple || (assert & ~kModeNoCheck)) return -1;
  if (type != LockType::Exclusive && type != LockType::Shared) return -1;
  NativeWin& nw = *w.native;
  const auto r = static_cast<std::size_t>(rank);
  if (!nw.passive || nw.nic || w.info.no_locks || r >= static_cast<std::size_t>(w.comm.size) || !nw.peers[r].ctl)
    return -1;
  if (w.access != WindowState::Access::None && w.access != WindowState::Access::Lock) return -1;
  Target& t = w.targets[r];
  if (t.locked) return -1;
  const bool excl = type == LockType::Exclusive;
  if (w.access != WindowState::Access::Lock) w.access = WindowState::Access::Lock;  // see the top
  ++w.locks_held;
  t.locked = true;
  t.lock_nocheck = true;  // native: no emulated grant (see Window::lock)
  t.lock_kind = excl ? LockKind::Exclusive : LockKind::Shared;
  t.lock_pending = false;
  if (assert & kModeNoCheck) {
    fast_before_load(w);  // no lock word's locked instruction: the caller may load next
    return 0;
  }
  // The lock word (native::lock without the call): a free lock costs its
  // ticket and, for a reader, one store.
  Control& c = *nw.peers[r].ctl;
  const uint32_t ticket = lock_ticket(c);
  if (!lock_held(c, excl, ticket)) {
    if (int e = lock_wait(w, c, excl, ticket)) return e;
  }
  lock_entered(c, excl, ticket);
  nw.held[r] = excl ? 2 : 1;
  return 0;
}

// Win_unlock with nothing sent through the emulation to the target: the
// lock word's release (a locked read-modify-write, after our stores in
// program order: whoever takes the lock next sees them; on x86 also a full
// fence). Without a lock word (NOCHECK) the stores stay unfenced
// (WindowState::before_load). -1: not handled here.
inline int fast_unlock(WindowState& w, int rank) {
  if (!w.native_usable || w.dev.config().thread_multiple || w.access != WindowState::Access::Lock || w.deferred_error)
    return -1;
  NativeWin& nw = *w.native;
  const auto r = static_cast<std::size_t>(rank);
  if (!nw.passive || nw.nic || r >= static_cast<std::size_t>(w.comm.size)) return -1;
  Target& t = w.targets[r];
  if (!t.locked || !t.lock_nocheck || t.lock_pending || t.emul_inflight || t.queued_ops != t.flushed_ops ||
      !t.q.empty() || t.replies != 0) {
    return -1;
  }
  t.locked = false;
  t.lock_nocheck = false;
  if (--w.locks_held == 0) w.access = WindowState::Access::None;
  if constexpr (!WindowState::kDeferFence) w.memory_fence();
  if (int8_t& h = nw.held[r]) {
    lock_release(*nw.peers[r].ctl, h == 2);  // native::unlock without the call (not a NIC window)
    h = 0;
  }
  return 0;
}

}  // namespace adi3::rma::native
