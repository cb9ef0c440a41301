// What the one-sided communication calls of the binding share: the native
// fast path's decoding of a call's handles (mpi/win_ops.cpp put and get,
// win_acc.cpp, win_atomics.cpp) and the checked path's argument checks
// (win_args.cpp; also win_requests.cpp). The binding checks handles,
// counts, buffers and which ops and types each call takes; rma/ checks the
// epoch, the target rank and the target's window range.
#pragma once
#include <cstddef>

#include "coll/op.hpp"
#include "mpi/win.hpp"
#include "mpi/win_direct.hpp"
#include "rma/native_fast.hpp"

namespace adi3::mpi {

// ---- the native fast path straight from the binding ----
// An operation of predefined data on a window whose target memory is mapped
// here goes to rma/native_fast.hpp before any argument check: it takes only
// what it can prove valid (a predefined type, counts, buffers, the target's
// rank and range, the epoch) and leaves everything else, every error
// included, to the checked path, which raises it.

// The ops the fast path combines (MPI_SUM, MPI_REPLACE, MPI_NO_OP); false for the others.
inline bool fast_kind(MPI_Op h, coll::OpKind* k) {
  if (h == MPI_SUM) {
    *k = coll::OpKind::Sum;
  } else if (h == MPI_REPLACE) {
    *k = coll::OpKind::Replace;
  } else if (h == MPI_NO_OP) {
    *k = coll::OpKind::NoOp;
  } else {
    return false;
  }
  return true;
}

// The fast atomics' record of predefined type handle h (Runtime::builtin_atom),
// else an empty one (size 0: not taken).
inline rma::native::FastElem fast_elem(Runtime& rt, MPI_Datatype h) {
  const auto i = static_cast<std::size_t>(handle_index(h));
  return is_kind(h, Kind::Datatype, HandleClass::Builtin) && i < rt.builtin_atom.size() ? rt.builtin_atom[i]
                                                                                        : rma::native::FastElem{};
}

// The window of handle win and its state when the target's byte says an
// operation to it takes the fast path (WinObj::direct), else nullptr: the
// accumulates' entry points then call their _slow form, which asks
// fast_target and remembers its answer. Calls nothing, so those entry
// points need no frame on a hit.
[[gnu::always_inline]] inline rma::WindowState* direct_state(Runtime* rt, MPI_Win win, int target) {
  if (!rt) [[unlikely]]
    return nullptr;
  WinObj* w = find_win(*rt, win);
  if (!w) [[unlikely]]
    return nullptr;
  rma::WindowState& s = w->win->state();
  return direct_has(*w, s, target, kDirectOp) ? &s : nullptr;
}

// A call the fast path decoded (a valid window, a predefined op, a
// committed predefined type) whose other arguments pass the checked path's
// checks too goes straight to its Window call, without decoding them again
// (about 200 instructions at the origin of an accumulate, fetch_and_op or
// compare_and_swap to a window from create, whose target is reached as
// packets or by cross-memory attach). Window raises what remains (the
// epoch, the rank, the range), and an escaping exception is reported as
// the checked path reports it.
template <class F>
[[gnu::noinline]] int window_call(WinObj* w, MPI_Win win, const char* fn, F&& call) noexcept {
  w->forget_direct();  // a call off the fast paths (see WinObj::direct)
  try {
    return win_error(w, call(*w->win), fn);
  } catch (...) {
    return Escaped<int>{fn}(win);
  }
}

// ---- the checked path's argument checks (mpi/win_args.cpp) ----

// One (buffer, count, datatype) of a call: count >= 0, a committed type,
// a buffer when there is something to access.
int side(Runtime& rt, const void* buf, int count, MPI_Datatype h, const char* what, const Datatype** out);

// The op of an accumulate: predefined (MPI-3.1 11.3.4), and MPI_NO_OP only
// where a result is fetched.
int acc_op(Runtime& rt, MPI_Op h, bool fetches, coll::Op* out);

// Fetch_and_op and compare_and_swap take one element of a predefined type;
// compare_and_swap only integer, logical and byte types (MPI-3.1 11.3.4).
// Whether MPI_Compare_and_swap takes elements of b: C or Fortran integer,
// logical, byte (and the multi-language types).
bool cas_takes(Builtin b);
int single_type(Runtime& rt, MPI_Datatype h, bool cas, const Datatype** out);

// A predefined type the checked path accepts for one element (single_type).
inline bool one_element_type(const Datatype* t, bool cas) {
  Builtin b;
  if (!t->is_committed() || !t->builtin_id(&b)) return false;
  return !cas || cas_takes(b);
}

// The argument checks of put and get (and rput/rget).
int rw_args(Runtime& rt, const void* obuf, int ocount, MPI_Datatype otype, int tcount, MPI_Datatype ttype,
            const Datatype** ot, const Datatype** tt);

// The argument checks of get_accumulate (and rget_accumulate): with
// MPI_NO_OP the origin arguments are ignored.
int gacc_args(Runtime& rt, const void* obuf, int ocount, MPI_Datatype otype, void* rbuf, int rcount, MPI_Datatype rtype,
              int tcount, MPI_Datatype ttype, MPI_Op op, const Datatype** ot, const Datatype** rt_, const Datatype** tt,
              coll::Op* o);

}  // namespace adi3::mpi
