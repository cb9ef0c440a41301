// One-sided communication calls: put, get, accumulate, get_accumulate,
// fetch_and_op, compare_and_swap and the request-based forms. The binding
// checks handles, counts, buffers and which ops and types each call takes;
// rma/ checks the epoch, the target rank and the target's window range.
#include "coll/op.hpp"
#include "emul/emul.hpp"
#include "mpi/coll_binding.hpp"
#include "mpi/win.hpp"
#include "mpi/win_cma.hpp"
#include "mpi/win_direct.hpp"
#include "rma/native_fast.hpp"

using namespace adi3;
using namespace adi3::mpi;

namespace {

// ---- the native fast path straight from the binding ----
// An operation of predefined data on a window whose target memory is mapped
// here goes to rma/native_fast.hpp before any argument check: it takes only
// what it can prove valid (a predefined type, counts, buffers, the target's
// rank and range, the epoch) and leaves everything else, every error
// included, to the checked path below, which raises it.

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

// Put (or get) of count elements of one predefined type on both sides, on
// the native fast path of window handle win. It calls nothing, so the
// entry point needs no frame; false: the entry point's tail call to
// copy_slow.
[[gnu::always_inline]] inline bool fast_copy(MPI_Win win, bool put, const void* buf, int ocount, MPI_Datatype otype,
                                             int target, MPI_Aint disp, int tcount, MPI_Datatype ttype) {
  Runtime* rt = g_runtime;
  if (!rt || otype != ttype) [[unlikely]]
    return false;
  WinObj* w = find_win(*rt, win);
  if (!w) [[unlikely]]
    return false;
  const auto i = static_cast<std::size_t>(handle_index(ttype));
  if (!is_kind(ttype, Kind::Datatype, HandleClass::Builtin) || i >= rt->builtin_plain.size()) [[unlikely]]
    return false;
  const uint32_t es = rt->builtin_plain[i];  // 0: not one plain run
  if (!es) [[unlikely]]
    return false;
  rma::WindowState& s = w->win->state();
  // A target whose memory is reached by cross-memory attach (kDirectCma)
  // is copy_route's without asking fast_target again.
  rma::native::FastPeer* p = direct_has(*w, s, target, kDirectOp) ? &s.native->fastp[static_cast<std::size_t>(target)]
                             : direct_has(*w, s, target, kDirectCma) ? nullptr
                                                                     : direct_miss(*w, s, target);
  return rma::native::fast_copy_plain(s, p, put, const_cast<void*>(buf), ocount, es, disp, tcount);
}

// What fast_copy left, on a window nobody maps: the emulation's one packet
// (emul/quick.cpp, the terms Window::put/get give it: the checked path
// would reach the same call after ~250 instructions of checks these cases
// pass). False: take the checked path.
[[gnu::noinline]] bool quick_copy(MPI_Win win, bool put, const void* buf, int ocount, MPI_Datatype otype, int target,
                                  MPI_Aint disp, int tcount, MPI_Datatype ttype) {
  Runtime* rt = g_runtime;
  WinObj* w = rt && otype == ttype ? find_win(*rt, win) : nullptr;
  const Datatype* t = w ? fast_type(*rt, ttype) : nullptr;
  if (!t) return false;
  w->forget_direct();  // the emulation's packet changes the target's state
  rma::WindowState& s = w->win->state();
  return put ? emul::quick_put(s, buf, ocount, t, target, disp, tcount, t)
             : emul::quick_get(s, const_cast<void*>(buf), ocount, t, target, disp, tcount, t);
}

// One (buffer, count, datatype) of a call: count >= 0, a committed type,
// a buffer when there is something to access.
int side(Runtime& rt, const void* buf, int count, MPI_Datatype h, const char* what, const Datatype** out) {
  if (count < 0) return raise(ErrorClass::Count, "invalid %s count %d: must be non-negative", what, count);
  if (int e = get_comm_type(rt, h, out)) return e;
  return check_buffer(buf, count, *out);
}

// The op of an accumulate: predefined (MPI-3.1 11.3.4), and MPI_NO_OP only
// where a result is fetched.
int acc_op(Runtime& rt, MPI_Op h, bool fetches, coll::Op* out) {
  if (int e = get_op(rt, h, out)) return e;
  if (!out->is_predefined()) {
    return raise(ErrorClass::Op, "op 0x%x is user-defined: one-sided accumulates take predefined ops only", h);
  }
  if (!fetches && out->kind() == coll::OpKind::NoOp) {
    return raise(ErrorClass::Op, "MPI_NO_OP is for MPI_Get_accumulate and MPI_Fetch_and_op only");
  }
  return 0;
}

// Fetch_and_op and compare_and_swap take one element of a predefined type;
// compare_and_swap only integer, logical and byte types (MPI-3.1 11.3.4).
// Whether MPI_Compare_and_swap takes elements of b: C or Fortran integer,
// logical, byte (and the multi-language types).
bool cas_takes(Builtin b) {
  const coll::TypeClass c = coll::type_class(b);
  return c == coll::TypeClass::CInteger || c == coll::TypeClass::Logical || c == coll::TypeClass::Byte ||
         c == coll::TypeClass::MultiLanguage;
}

int single_type(Runtime& rt, MPI_Datatype h, bool cas, const Datatype** out) {
  if (int e = get_comm_type(rt, h, out)) return e;
  Builtin b;
  if (!(*out)->builtin_id(&b)) {
    return raise(ErrorClass::Type, "datatype 0x%x is derived: %s takes one element of a predefined type", h,
                 cas ? "MPI_Compare_and_swap" : "MPI_Fetch_and_op");
  }
  if (cas && !cas_takes(b)) {
    return raise(ErrorClass::Type, "MPI_Compare_and_swap takes integer, logical or byte types, not datatype 0x%x", h);
  }
  return 0;
}

// A new MPI_Request for a request-based operation (errors in MPI_Wait go
// to MPI_COMM_WORLD's handler: requests carry no window).
int wrap_request(Runtime& rt, Request* r, MPI_Request* out) { return new_request(rt, r, MPI_COMM_WORLD, false, out); }

// The argument checks of put and get (and rput/rget).
int rw_args(Runtime& rt, const void* obuf, int ocount, MPI_Datatype otype, int tcount, MPI_Datatype ttype,
            const Datatype** ot, const Datatype** tt) {
  if (int e = side(rt, obuf, ocount, otype, "origin", ot)) return e;
  if (tcount < 0) return raise(ErrorClass::Count, "invalid target count %d: must be non-negative", tcount);
  return get_comm_type(rt, ttype, tt);
}

// The argument checks of get_accumulate (and rget_accumulate): with
// MPI_NO_OP the origin arguments are ignored.
int gacc_args(Runtime& rt, const void* obuf, int ocount, MPI_Datatype otype, void* rbuf, int rcount, MPI_Datatype rtype,
              int tcount, MPI_Datatype ttype, MPI_Op op, const Datatype** ot, const Datatype** rt_, const Datatype** tt,
              coll::Op* o) {
  if (int e = acc_op(rt, op, true, o)) return e;
  if (o->kind() == coll::OpKind::NoOp) {
    *ot = nullptr;
  } else if (int e = side(rt, obuf, ocount, otype, "origin", ot)) {
    return e;
  }
  if (int e = side(rt, rbuf, rcount, rtype, "result", rt_)) return e;
  if (tcount < 0) return raise(ErrorClass::Count, "invalid target count %d: must be non-negative", tcount);
  return get_comm_type(rt, ttype, tt);
}

}  // namespace

#define PUT_PARAMS                                                                                                 \
  (const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, \
   int target_count, MPI_Datatype target_datatype, MPI_Win win)
#define PUT_ARGS \
  (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win)
ADI3_WIN_CHECKED(Put, PUT_PARAMS, PUT_ARGS) {
  ADI3_WIN_ENTER(win);
  const Datatype *ot = nullptr, *tt = nullptr;
  if (int e = rw_args(*rt, origin_addr, origin_count, origin_datatype, target_count, target_datatype, &ot, &tt)) {
    return win_error(w, e, __func__);
  }
  return win_error(w, w->win->put(origin_addr, origin_count, ot, target_rank, target_disp, target_count, tt), __func__);
}
[[gnu::noinline]] static int put_slow PUT_PARAMS noexcept {
  if (int e = copy_route(win, true, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                         target_datatype);
      e >= 0) {
    return e;
  }
  if (quick_copy(win, true, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                 target_datatype)) {
    return MPI_SUCCESS;
  }
  return win_checked_Put PUT_ARGS;
}
ADI3_WIN_FAST(Put, PUT_PARAMS) {
  if (fast_copy(win, true, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                target_datatype)) {
    return MPI_SUCCESS;
  }
  return put_slow PUT_ARGS;
}
#undef PUT_PARAMS
#undef PUT_ARGS

#define GET_PARAMS                                                                                           \
  (void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, \
   int target_count, MPI_Datatype target_datatype, MPI_Win win)
#define GET_ARGS \
  (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win)
ADI3_WIN_CHECKED(Get, GET_PARAMS, GET_ARGS) {
  ADI3_WIN_ENTER(win);
  const Datatype *ot = nullptr, *tt = nullptr;
  if (int e = rw_args(*rt, origin_addr, origin_count, origin_datatype, target_count, target_datatype, &ot, &tt)) {
    return win_error(w, e, __func__);
  }
  return win_error(w, w->win->get(origin_addr, origin_count, ot, target_rank, target_disp, target_count, tt), __func__);
}
[[gnu::noinline]] static int get_slow GET_PARAMS noexcept {
  if (int e = copy_route(win, false, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                         target_datatype);
      e >= 0) {
    return e;
  }
  if (quick_copy(win, false, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                 target_datatype)) {
    return MPI_SUCCESS;
  }
  return win_checked_Get GET_ARGS;
}
ADI3_WIN_FAST(Get, GET_PARAMS) {
  if (fast_copy(win, false, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                target_datatype)) {
    return MPI_SUCCESS;
  }
  return get_slow GET_ARGS;
}
#undef GET_PARAMS
#undef GET_ARGS

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

// A predefined type the checked path accepts for one element (single_type).
inline bool one_element_type(const Datatype* t, bool cas) {
  Builtin b;
  if (!t->is_committed() || !t->builtin_id(&b)) return false;
  return !cas || cas_takes(b);
}

#define ACC_PARAMS                                                                                                 \
  (const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, \
   int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
#define ACC_ARGS \
  (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, op, win)
ADI3_WIN_CHECKED(Accumulate, ACC_PARAMS, ACC_ARGS) {
  ADI3_WIN_ENTER(win);
  const Datatype *ot = nullptr, *tt = nullptr;
  coll::Op o(coll::OpKind::NoOp);
  int e = acc_op(*rt, op, false, &o);
  if (!e) e = rw_args(*rt, origin_addr, origin_count, origin_datatype, target_count, target_datatype, &ot, &tt);
  if (e) return win_error(w, e, __func__);
  return win_error(w, w->win->accumulate(origin_addr, origin_count, ot, target_rank, target_disp, target_count, tt, o),
                   __func__);
}
// The rest of the fast path, out of line (the entry point's own stays as
// short), with what the entry point decoded (w, t = both types, k): when
// rw_args and acc_op would pass (an accumulate's op, not NO_OP; counts; an
// origin buffer), the Window call, else the checked path.
[[gnu::noinline]] int acc_window(WinObj* w, const Datatype* t, coll::OpKind k, const void* origin_addr,
                                 int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                                 int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) noexcept {
  if (k != coll::OpKind::NoOp && origin_count > 0 && target_count >= 0 && origin_addr && one_element_type(t, false)) {
    return window_call(w, win, "PMPI_Accumulate", [&](Window& x) {
      return x.accumulate(origin_addr, origin_count, t, target_rank, target_disp, target_count, t, coll::Op(k));
    });
  }
  return win_checked_Accumulate ACC_ARGS;
}
// What the entry point's hit did not take: the fast path through
// fast_target, the Window call or the checked path.
[[gnu::noinline]] static int acc_slow ACC_PARAMS noexcept {
  coll::OpKind k;
  if (Runtime* rt = g_runtime; rt && origin_datatype == target_datatype && fast_kind(op, &k)) [[likely]] {
    WinObj* w = find_win(*rt, win);
    if (const Datatype* t = fast_type(*rt, target_datatype); w && t) {
      rma::WindowState& s = w->win->state();
      if (rma::native::fast_acc(s, direct_peer(*w, s, target_rank), origin_addr, origin_count,
                                fast_elem(*rt, target_datatype), target_rank, target_disp, target_count, k)) {
        return MPI_SUCCESS;
      }
      return acc_window(w, t, k, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                        target_datatype, op, win);
    }
  }
  return win_checked_Accumulate ACC_ARGS;
}
ADI3_WIN_FAST(Accumulate, ACC_PARAMS) {
  coll::OpKind k;
  Runtime* rt = g_runtime;
  if (origin_datatype == target_datatype && fast_kind(op, &k)) [[likely]] {
    if (rma::WindowState* s = direct_state(rt, win, target_rank)) [[likely]] {
      if (rma::native::fast_acc(*s, &s->native->fastp[static_cast<std::size_t>(target_rank)], origin_addr, origin_count,
                                fast_elem(*rt, target_datatype), target_rank, target_disp, target_count, k)) {
        return MPI_SUCCESS;
      }
    }
  }
  return acc_slow ACC_ARGS;
}
#undef ACC_PARAMS
#undef ACC_ARGS

ADI3_MPI_API(int, Get_accumulate,
             (const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, void* result_addr,
              int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp, int target_count,
              MPI_Datatype target_datatype, MPI_Op op, MPI_Win win),
             (origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, target_rank,
              target_disp, target_count, target_datatype, op, win)) {
  ADI3_WIN_ENTER(win);
  const Datatype *ot = nullptr, *rtype = nullptr, *tt = nullptr;
  coll::Op o(coll::OpKind::NoOp);
  if (int e = gacc_args(*rt, origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
                        target_count, target_datatype, op, &ot, &rtype, &tt, &o)) {
    return win_error(w, e, __func__);
  }
  if (!ot) {  // MPI_NO_OP: no origin data
    ot = rtype;
    origin_count = 0;
  }
  return win_error(w,
                   w->win->get_accumulate(origin_addr, origin_count, ot, result_addr, result_count, rtype, target_rank,
                                          target_disp, target_count, tt, o),
                   __func__);
}

#define FOP_PARAMS                                                                                           \
  (const void* origin_addr, void* result_addr, MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, \
   MPI_Op op, MPI_Win win)
#define FOP_ARGS (origin_addr, result_addr, datatype, target_rank, target_disp, op, win)
ADI3_WIN_CHECKED(Fetch_and_op, FOP_PARAMS, FOP_ARGS) {
  ADI3_WIN_ENTER(win);
  const Datatype* t = nullptr;
  coll::Op o(coll::OpKind::NoOp);
  int e = acc_op(*rt, op, true, &o);
  if (!e) e = single_type(*rt, datatype, false, &t);
  if (!e && !result_addr) e = raise(ErrorClass::Buffer, "result_addr is null");
  if (!e && !origin_addr && o.kind() != coll::OpKind::NoOp) e = raise(ErrorClass::Buffer, "origin_addr is null");
  if (e) return win_error(w, e, __func__);
  return win_error(w, w->win->fetch_and_op(origin_addr, result_addr, t, target_rank, target_disp, o), __func__);
}
// As acc_window: single_type and the buffer checks pass.
[[gnu::noinline]] int fop_window(WinObj* w, const Datatype* t, coll::OpKind k, const void* origin_addr,
                                 void* result_addr, MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                                 MPI_Op op, MPI_Win win) noexcept {
  if (result_addr && (origin_addr || k == coll::OpKind::NoOp) && one_element_type(t, false)) {
    return window_call(w, win, "PMPI_Fetch_and_op", [&](Window& x) {
      return x.fetch_and_op(origin_addr, result_addr, t, target_rank, target_disp, coll::Op(k));
    });
  }
  return win_checked_Fetch_and_op FOP_ARGS;
}
// As acc_slow.
[[gnu::noinline]] static int fop_slow FOP_PARAMS noexcept {
  coll::OpKind k;
  if (Runtime* rt = g_runtime; rt && fast_kind(op, &k)) [[likely]] {
    WinObj* w = find_win(*rt, win);
    if (const Datatype* ft = fast_type(*rt, datatype); w && ft) {
      rma::WindowState& s = w->win->state();
      if (int e = atomic_known(*w, win, rma::Msg::Fop, origin_addr, nullptr, result_addr, fast_elem(*rt, datatype), ft,
                               target_rank, target_disp, k);
          e >= 0) {
        return e;
      }
      if (int e = fop_route(w, win, ft, origin_addr, result_addr, target_rank, target_disp, k); e >= 0) {
        return e;
      }
      if (rma::native::fast_atomic(s, direct_peer(*w, s, target_rank), origin_addr, nullptr, result_addr,
                                   fast_elem(*rt, datatype), target_rank, target_disp, false, k)) {
        return MPI_SUCCESS;
      }
      return fop_window(w, ft, k, origin_addr, result_addr, datatype, target_rank, target_disp, op, win);
    }
  }
  return win_checked_Fetch_and_op FOP_ARGS;
}
ADI3_WIN_FAST(Fetch_and_op, FOP_PARAMS) {
  coll::OpKind k;
  Runtime* rt = g_runtime;
  if (fast_kind(op, &k)) [[likely]] {
    if (rma::WindowState* s = direct_state(rt, win, target_rank)) [[likely]] {
      if (rma::native::fast_atomic(*s, &s->native->fastp[static_cast<std::size_t>(target_rank)], origin_addr, nullptr,
                                   result_addr, fast_elem(*rt, datatype), target_rank, target_disp, false, k)) {
        return MPI_SUCCESS;
      }
    }
  }
  return fop_slow FOP_ARGS;
}
#undef FOP_PARAMS
#undef FOP_ARGS

#define CAS_PARAMS                                                                                               \
  (const void* origin_addr, const void* compare_addr, void* result_addr, MPI_Datatype datatype, int target_rank, \
   MPI_Aint target_disp, MPI_Win win)
#define CAS_ARGS (origin_addr, compare_addr, result_addr, datatype, target_rank, target_disp, win)
ADI3_WIN_CHECKED(Compare_and_swap, CAS_PARAMS, CAS_ARGS) {
  ADI3_WIN_ENTER(win);
  const Datatype* t = nullptr;
  int e = single_type(*rt, datatype, true, &t);
  if (!e && (!origin_addr || !compare_addr || !result_addr)) {
    e = raise(ErrorClass::Buffer, "origin_addr, compare_addr or result_addr is null");
  }
  if (e) return win_error(w, e, __func__);
  return win_error(w, w->win->compare_and_swap(origin_addr, compare_addr, result_addr, t, target_rank, target_disp),
                   __func__);
}
// As acc_window: single_type and the buffer checks pass.
[[gnu::noinline]] int cas_window(WinObj* w, const Datatype* t, const void* origin_addr, const void* compare_addr,
                                 void* result_addr, MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                                 MPI_Win win) noexcept {
  if (origin_addr && compare_addr && result_addr && one_element_type(t, true)) {
    return window_call(w, win, "PMPI_Compare_and_swap", [&](Window& x) {
      return x.compare_and_swap(origin_addr, compare_addr, result_addr, t, target_rank, target_disp);
    });
  }
  return win_checked_Compare_and_swap CAS_ARGS;
}
// As acc_slow.
[[gnu::noinline]] static int cas_slow CAS_PARAMS noexcept {
  if (Runtime* rt = g_runtime) [[likely]] {
    WinObj* w = find_win(*rt, win);
    if (const Datatype* ft = fast_type(*rt, datatype); w && ft) {
      rma::WindowState& s = w->win->state();
      if (int e = atomic_known(*w, win, rma::Msg::Cas, origin_addr, compare_addr, result_addr, fast_elem(*rt, datatype),
                               ft, target_rank, target_disp, coll::OpKind::Replace);
          e >= 0) {
        return e;
      }
      if (int e = cas_route(w, win, ft, origin_addr, compare_addr, result_addr, target_rank, target_disp); e >= 0) {
        return e;
      }
      if (rma::native::fast_atomic(s, direct_peer(*w, s, target_rank), origin_addr, compare_addr, result_addr,
                                   fast_elem(*rt, datatype), target_rank, target_disp, true, coll::OpKind::NoOp)) {
        return MPI_SUCCESS;
      }
      return cas_window(w, ft, origin_addr, compare_addr, result_addr, datatype, target_rank, target_disp, win);
    }
  }
  return win_checked_Compare_and_swap CAS_ARGS;
}
ADI3_WIN_FAST(Compare_and_swap, CAS_PARAMS) {
  Runtime* rt = g_runtime;
  if (rma::WindowState* s = direct_state(rt, win, target_rank)) [[likely]] {
    if (rma::native::fast_atomic(*s, &s->native->fastp[static_cast<std::size_t>(target_rank)], origin_addr,
                                 compare_addr, result_addr, fast_elem(*rt, datatype), target_rank, target_disp, true,
                                 coll::OpKind::NoOp)) {
      return MPI_SUCCESS;
    }
  }
  return cas_slow CAS_ARGS;
}
#undef CAS_PARAMS
#undef CAS_ARGS

// ---- request-based forms ----

ADI3_MPI_API(int, Rput,
             (const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request),
             (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win,
              request)) {
  ADI3_WIN_ENTER(win);
  const Datatype *ot = nullptr, *tt = nullptr;
  int e = request ? 0 : raise(ErrorClass::Arg, "request is null");
  if (!e) e = rw_args(*rt, origin_addr, origin_count, origin_datatype, target_count, target_datatype, &ot, &tt);
  Request* r = nullptr;
  if (!e) e = w->win->rput(origin_addr, origin_count, ot, target_rank, target_disp, target_count, tt, &r);
  if (!e) e = wrap_request(*rt, r, request);
  return win_error(w, e, __func__);
}

ADI3_MPI_API(int, Rget,
             (void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
              int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request),
             (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win,
              request)) {
  ADI3_WIN_ENTER(win);
  const Datatype *ot = nullptr, *tt = nullptr;
  int e = request ? 0 : raise(ErrorClass::Arg, "request is null");
  if (!e) e = rw_args(*rt, origin_addr, origin_count, origin_datatype, target_count, target_datatype, &ot, &tt);
  Request* r = nullptr;
  if (!e) e = w->win->rget(origin_addr, origin_count, ot, target_rank, target_disp, target_count, tt, &r);
  if (!e) e = wrap_request(*rt, r, request);
  return win_error(w, e, __func__);
}

ADI3_MPI_API(int, Raccumulate,
             (const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
              MPI_Request* request),
             (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, op,
              win, request)) {
  ADI3_WIN_ENTER(win);
  const Datatype *ot = nullptr, *tt = nullptr;
  coll::Op o(coll::OpKind::NoOp);
  int e = request ? 0 : raise(ErrorClass::Arg, "request is null");
  if (!e) e = acc_op(*rt, op, false, &o);
  if (!e) e = rw_args(*rt, origin_addr, origin_count, origin_datatype, target_count, target_datatype, &ot, &tt);
  Request* r = nullptr;
  if (!e) e = w->win->raccumulate(origin_addr, origin_count, ot, target_rank, target_disp, target_count, tt, o, &r);
  if (!e) e = wrap_request(*rt, r, request);
  return win_error(w, e, __func__);
}

ADI3_MPI_API(int, Rget_accumulate,
             (const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, void* result_addr,
              int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp, int target_count,
              MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request* request),
             (origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, target_rank,
              target_disp, target_count, target_datatype, op, win, request)) {
  ADI3_WIN_ENTER(win);
  const Datatype *ot = nullptr, *rtype = nullptr, *tt = nullptr;
  coll::Op o(coll::OpKind::NoOp);
  int e = request ? 0 : raise(ErrorClass::Arg, "request is null");
  if (!e) {
    e = gacc_args(*rt, origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
                  target_count, target_datatype, op, &ot, &rtype, &tt, &o);
  }
  if (!e && !ot) {  // MPI_NO_OP: no origin data
    ot = rtype;
    origin_count = 0;
  }
  Request* r = nullptr;
  if (!e) {
    e = w->win->rget_accumulate(origin_addr, origin_count, ot, result_addr, result_count, rtype, target_rank,
                                target_disp, target_count, tt, o, &r);
  }
  if (!e) e = wrap_request(*rt, r, request);
  return win_error(w, e, __func__);
}
