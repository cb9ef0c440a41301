// The common native operation without the general machinery: a put or get
// of predefined contiguous data (or a flush) to a target whose window
// memory is mapped here, inside a native lock or a plain fence epoch, in a
// process where no other thread touches the device (no agent, not
// MPI_THREAD_MULTIPLE: threads_enabled() is false, so the window's state
// is the caller's alone and needs no mutex). Everything it does not
// handle, including every error, goes the general way (check_op, route_op,
// native::run), which raises the error with its message; so this path only
// ever answers "done". The checks are the general path's, in the cheap
// form the common case allows.
#pragma once
#include <cstring>

#include "adi3/device.hpp"
#include "rma/window_state.hpp"

namespace adi3::rma::native {

// The target's state when an operation to it may take the fast path, else
// nullptr.
inline NativePeer* fast_target(WindowState& w, int target) {
  if (!w.native_usable || w.dev.threads_enabled()) return nullptr;
  NativeWin& nw = *w.native;
  const auto t = static_cast<std::size_t>(target);  // kProcNull and negatives: huge
  if (!nw.fast || t >= nw.peers.size()) return nullptr;
  NativePeer& p = nw.peers[t];
  const Target& tg = w.targets[t];
  if (!p.mem || tg.emul_inflight) return nullptr;
  switch (w.access) {
    case WindowState::Access::Lock:
    case WindowState::Access::LockAll:
      // Native locks are taken as nocheck ones (no emulated grant to wait for).
      return nw.passive && tg.locked && tg.lock_nocheck ? &p : nullptr;
    case WindowState::Access::Fence:
      return !w.fence_lazy && nw.fast_fence ? &p : nullptr;
    default:
      return nullptr;
  }
}

// Put (into the target) or get (from it) of count elements of one
// predefined contiguous type on both sides. True when done.
inline bool fast_copy(WindowState& w, bool put, void* buf, int64_t ocount, const Datatype* otype, int target,
                      std::ptrdiff_t disp, int64_t tcount, const Datatype* ttype) {
  if (otype != ttype || ocount != tcount || tcount <= 0 || !buf || !ttype || !ttype->is_predefined() ||
      ttype->true_lb() != 0 || !ttype->is_contiguous()) {
    return false;
  }
  NativePeer* p = fast_target(w, target);
  if (!p) return false;
  const PeerWin& pw = w.peers[static_cast<std::size_t>(target)];
  // The range check of check_op: [disp * unit, + bytes) inside the window.
  if (disp < 0 || tcount > pw.size) return false;
  const auto bytes = static_cast<__int128>(tcount) * static_cast<__int128>(ttype->size());
  const auto off = static_cast<__int128>(disp) * pw.disp_unit;
  if (off + bytes > pw.size) return false;
  char* at = p->mem + static_cast<std::size_t>(off);
  char* dst = put ? at : static_cast<char*>(buf);
  const char* src = put ? static_cast<const char*>(buf) : at;
  if (bytes == 8) {
    // The common 8-byte element: a load and a store, not a libc call.
    uint64_t v;
    std::memcpy(&v, src, 8);
    std::memcpy(dst, &v, 8);
  } else {
    std::memmove(dst, src, static_cast<std::size_t>(bytes));
  }
  ++w.native_ops;
  if (w.access == WindowState::Access::Fence) ++w.fence_ops;
  return true;
}

// Win_flush(target) with nothing in the emulation: a memory fence. True
// when done.
inline bool fast_flush(WindowState& w, int target) {
  if (w.access != WindowState::Access::Lock && w.access != WindowState::Access::LockAll) return false;
  if (!fast_target(w, target) || w.deferred_error) return false;
  const Target& t = w.targets[static_cast<std::size_t>(target)];
  if (t.queued_ops != t.flushed_ops || !t.q.empty() || t.replies != 0) return false;
  w.memory_fence();
  return true;
}

}  // namespace adi3::rma::native
