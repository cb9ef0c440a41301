// The binding's short ways to window memory reached by cross-memory attach
// (a window from create on shm: rma/native_cma.hpp cma_*_route), taken on a
// miss of the native fast path (mpi/win_ops.cpp, win_atomics.cpp) for the calls whose
// arguments it decoded: one predefined type on every side, counts that
// match. Each returns the call's MPI result, or -1 when it did not take
// the call (nothing done: the caller goes on to its general path, which
// looks again and names any error).
#pragma once
#include <cstddef>

#include "coll/op.hpp"
#include "mpi/win.hpp"
#include "rma/native_cma.hpp"

namespace adi3::mpi {

// The predefined datatype of handle h, else nullptr.
inline const Datatype* fast_type(Runtime& rt, MPI_Datatype h) {
  const auto i = static_cast<std::size_t>(handle_index(h));
  return is_kind(h, Kind::Datatype, HandleClass::Builtin) && i < rt.builtin_types.size() ? rt.builtin_types[i]
                                                                                         : nullptr;
}

// route's answer for the window state of w, as window_call (mpi/win_ops.hpp)
// gives a Window call's, but -1 when it did not take the call. Inline, as
// the two below: they run on every miss of the fast path to such a target.
template <class F>
[[gnu::always_inline]] inline int cma_route(WinObj* w, MPI_Win win, const char* fn, F&& route) noexcept {
  try {
    const int e = route(w->win->state());
    if (e < 0) return -1;
    w->forget_direct();  // (see window_call)
    return win_error(w, e, fn);
  } catch (...) {
    return Escaped<int>{fn}(win);
  }
}

// MPI_Put (put) or MPI_Get of count elements of one predefined type on
// both sides.
int copy_route(MPI_Win win, bool put, const void* buf, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
               int tcount, MPI_Datatype ttype) noexcept;

// MPI_Fetch_and_op (kind Fop, op k) or MPI_Compare_and_swap (Cas) of one
// element of t (e: its record) to a target whose memory is reached by
// cross-memory attach (kDirectCma) on the window of handle win
// (rma::native::cma_atomic_known): a lean read-modify-write keeps the
// target's byte, so the flush behind it stays on its fast path.
int atomic_known(WinObj& w, MPI_Win win, rma::Msg kind, const void* origin, const void* compare, void* result,
                 rma::native::FastElem e, const Datatype* t, int target, MPI_Aint disp, coll::OpKind k) noexcept;

// MPI_Fetch_and_op with op k, and MPI_Compare_and_swap, of one element of
// t (w: the window of handle win).
[[gnu::always_inline]] inline int fop_route(WinObj* w, MPI_Win win, const Datatype* t, const void* origin, void* result,
                                            int target, MPI_Aint disp, coll::OpKind k) noexcept {
  return cma_route(w, win, "PMPI_Fetch_and_op", [&](rma::WindowState& s) {
    return rma::native::cma_atomic_route(s, rma::Msg::Fop, origin, nullptr, result, t, target, disp, k);
  });
}
[[gnu::always_inline]] inline int cas_route(WinObj* w, MPI_Win win, const Datatype* t, const void* origin,
                                            const void* compare, void* result, int target, MPI_Aint disp) noexcept {
  return cma_route(w, win, "PMPI_Compare_and_swap", [&](rma::WindowState& s) {
    return rma::native::cma_atomic_route(s, rma::Msg::Cas, origin, compare, result, t, target, disp,
                                         coll::OpKind::Replace);
  });
}

}  // namespace adi3::mpi
