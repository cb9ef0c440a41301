// The per-target descriptor of the native fast paths (WinObj::direct): an
// operation or a flush to a target tests one byte instead of the epoch's
// state spread over WindowState, NativeWin and Target (about 20 tests in
// rma/native_fast.hpp fast_target, 10 more in fast_flush). A byte is set
// only from those functions' yes and holds until a call on the window
// leaves the fast paths (get_win forgets every byte; a fast fence keeps
// them: the epoch stays a plain fence) or a fast unlock ends the target's
// epoch: nothing else changes what they test, except what is
// still tested on a hit (thread_multiple, which LayerPort::enable_threads sets
// at any time, and deferred_error, which the agent sets).
#pragma once
#include <cstddef>
#include <cstdint>
#include <new>

#include "mpi/win.hpp"
#include "rma/native_fast.hpp"

namespace adi3::mpi {

// Sets bit for target r (whose fast_target said yes).
[[gnu::noinline]] inline void direct_remember(WinObj& w, const rma::WindowState& s, std::size_t r, uint8_t bit) {
  if (w.direct.size() != static_cast<std::size_t>(s.comm.size)) {
    try {
      w.direct.assign(static_cast<std::size_t>(s.comm.size), 0);
    } catch (const std::bad_alloc&) {
      w.direct.clear();  // only a cache: without memory the next call looks again
      return;
    }
  }
  w.direct[r] |= bit;
  w.direct_set = true;
}

// Whether target's byte has bit, on a thread the fast paths serve.
[[gnu::always_inline]] inline bool direct_has(const WinObj& w, const rma::WindowState& s, int target, uint8_t bit) {
  const auto r = static_cast<std::size_t>(target);  // kProcNull and negatives: huge
  return r < w.direct.size() && (w.direct[r] & bit) && !s.dev.config().thread_multiple;
}

// fast_target's answer for target, from its byte when set.
[[gnu::noinline]] inline rma::native::FastPeer* direct_miss(WinObj& w, rma::WindowState& s, int target) {
  rma::native::FastPeer* p = rma::native::fast_target(s, target);
  if (p) direct_remember(w, s, static_cast<std::size_t>(target), kDirectOp);
  return p;
}
[[gnu::always_inline]] inline rma::native::FastPeer* direct_peer(WinObj& w, rma::WindowState& s, int target) {
  if (direct_has(w, s, target, kDirectOp)) [[likely]]
    return &s.native->fastp[static_cast<std::size_t>(target)];
  return direct_miss(w, s, target);
}

// Whether a flush to target has nothing to do (rma::native::fast_flush,
// whose yes its byte remembers); its fence done when so.
[[gnu::noinline]] inline bool direct_flush_miss(WinObj& w, rma::WindowState& s, int target) {
  if (!rma::native::fast_flush_settled(s, target)) return false;
  // kDirectOp only for mapped memory (fast_target's yes). A flush to
  // memory reached by cross-memory attach ends the interval whose first put
  // or get takes it (rma/native_cma.cpp cma_copy_route): it counts (so does
  // a hit, direct_flush).
  const bool mapped = s.native->fastp[static_cast<std::size_t>(target)].mem != nullptr;
  direct_remember(w, s, static_cast<std::size_t>(target), mapped ? kDirectOp | kDirectFlush : kDirectFlush);
  ++w.syncs;
  if (s.deferred_error) return false;
  rma::native::fast_flush_fence(s);
  return true;
}
[[gnu::always_inline]] inline bool direct_flush(WinObj& w, rma::WindowState& s, int target) {
  if (direct_has(w, s, target, kDirectFlush) && !s.deferred_error) [[likely]] {
    ++w.syncs;
    rma::native::fast_flush_fence(s);
    return true;
  }
  return direct_flush_miss(w, s, target);
}

// A fast lock took target's lock (rma::native::fast_lock said 0): the
// byte fast_target (memory mapped here) or cma_epoch (memory reached by
// cross-memory attach: FastPeer::cma) would set on the first operation,
// set here from the tests the lock left (nothing emulated in flight to
// it), so that operation needs no miss.
[[gnu::always_inline]] inline void direct_locked(WinObj& w, const rma::WindowState& s, int target) {
  const auto r = static_cast<std::size_t>(target);
  const rma::NativeWin& nw = *s.native;
  if (r >= nw.fast_n || s.targets[r].emul_inflight) return;
  const uint8_t bit = nw.fastp[r].mem ? kDirectOp : nw.fastp[r].cma ? kDirectCma : 0;
  if (!bit) return;
  if (r < w.direct.size()) [[likely]] {
    w.direct[r] |= bit;
    w.direct_set = true;
  } else {
    direct_remember(w, s, r, bit);
  }
}

// A fast unlock ended target's epoch.
inline void direct_forget(WinObj& w, int target) {
  const auto r = static_cast<std::size_t>(target);
  if (r < w.direct.size()) w.direct[r] = 0;
}

}  // namespace adi3::mpi
