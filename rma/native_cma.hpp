// Lean native paths to window memory reached by cross-memory attach (a
// window from create on shm) while the target does not poll: a put or get
// of one contiguous predefined type, and fetch_and_op / compare_and_swap of
// one element, without the general path's machinery (check_op, issue,
// route_op, native::run: about 2,500 instructions at the origin of a
// fetch_and_op around its two system calls, 1,300 of a put around its one).
// The atomics are acc_remote's operation: read, combine, write back under
// the element's stripe in the target's control block (none under our
// exclusive lock), the stripe every other path takes on that element, so
// they stay atomic with packets the target applies and other origins'
// copies.
#pragma once
#include <cstddef>
#include <cstdint>

#include "coll/op.hpp"
#include "rma/fast_elem.hpp"
#include "rma/protocol.hpp"
#include "segment/datatype.hpp"

namespace adi3::rma {
class WindowState;
}

namespace adi3::rma::native {

// Each returns 0 when done, an MPI error code when the system call failed,
// and -1 when the operation is not such a case (nothing done: the general
// path checks and routes it, and raises its errors). The target is one the
// window reaches by cross-memory attach only, in a native lock or plain
// fence epoch with nothing emulated in flight to it.

// Put (into the target) or get of count elements of predefined type t,
// contiguous from buf, on both sides.
int cma_copy(WindowState& w, bool put, void* buf, int64_t count, const Datatype* t, int target, std::ptrdiff_t disp);

// Whether cma_copy would take puts and gets to target now, but for their
// range: the window's part of its tests (the epoch, the target's memory,
// the operations it offers), which only calls on the window change, so
// the binding remembers the yes (kDirectCma, mpi/win_cma.cpp).
bool cma_epoch(const WindowState& w, int target);
// cma_copy of bytes (> 0) with a target cma_epoch said yes to and nothing
// on the window changed since, on the only thread that calls on the
// window (no w.mu, as the fast paths): the range check, the native path's
// counts, the system call. -1: outside the window (nothing done).
int cma_copy_known(WindowState& w, bool put, void* buf, uint64_t bytes, int target, std::ptrdiff_t disp);

// compare null: fetch_and_op with op (MPI_SUM on C integers and floating
// types, MPI_REPLACE, MPI_NO_OP); else compare_and_swap. Of one 4- or 8-byte
// predefined element t.
int cma_atomic(WindowState& w, const void* origin, const void* compare, void* result, const Datatype* t, int target,
               std::ptrdiff_t disp, coll::OpKind op);

// What the binding tells cma_atomic_known and learns from it.
struct LeanAtomic {
  // In: the first operation to the target of its interval (since its last
  // flush, unlock or fence), and whether the last lean compare_and_swap to
  // it wrote (its compare matched).
  bool first = false, cas_wrote = false;
  // Out: it went as a packet (the emulation's state changed, as
  // cma_atomic_route's); it took the lean read-modify-write, which wrote;
  // it took it as the first of the interval without a look (the ones
  // behind it look: their packets share one round trip).
  bool packet = false, lean = false, wrote = false, took_first = false;
};

// cma_atomic of kind Fop (compare unused) or Cas on one element of e (the
// binding's record of predefined type t) to a target cma_epoch said yes
// to, nothing on the window changed since, on the only thread that calls
// on the window (no w.mu, as cma_copy_known). The lean read-modify-write
// without a look at the target when the first of its interval is likely a
// read alone (MPI_NO_OP; a compare_and_swap unless the last lean one
// wrote: one system call beats the packet's round trip); else one look,
// then the packet while it polls or the lean one. -1: not such a case
// (nothing done).
int cma_atomic_known(WindowState& w, Msg kind, const void* origin, const void* compare, void* result, FastElem e,
                     const Datatype* t, int target, std::ptrdiff_t disp, coll::OpKind op, LeanAtomic* how);

// The binding's short way to such a target (mpi/win_ops.cpp, win_atomics.cpp, on a miss of
// its fast path), for the calls whose arguments it decoded (one predefined
// type on every side, counts that match). A put or get: the lean copy when
// *first (the first put or get to target of an interval, since its last
// flush, unlock or fence, where the call is cheap: NativeWindow::lean_first;
// the binding counts them, mpi/win_cma.hpp), which
// sets *first again only when it took it; else one look at the target
// (rma::polls_now), then the lean copy when it does not poll, the
// emulation's one packet when it does (emul/quick.cpp; a get's
// target answers at once). Fetch_and_op and compare_and_swap (kind Fop or
// Cas, compare non-null): the look, then the packet while it polls (one
// round trip beats the lean read-modify-write's two system calls), else
// the lean one. This skips the Window call, OpArgs and second fast-path
// try the general path would add (about 250 of the origin's ~1,000
// instructions per operation). -1: not such a case, or neither way took
// it (nothing done; the general path looks again, routes it, sends a put
// as a packet, and names any error).
int cma_copy_route(WindowState& w, bool put, void* buf, int64_t count, const Datatype* t, int target,
                   std::ptrdiff_t disp, bool* first);
int cma_atomic_route(WindowState& w, Msg kind, const void* origin, const void* compare, void* result, const Datatype* t,
                     int target, std::ptrdiff_t disp, coll::OpKind op);

}  // namespace adi3::rma::native
