// MPI_Fetch_and_op and MPI_Compare_and_swap: the native fast path
// (mpi/win_ops.hpp), then on a miss the lean read-modify-write or route
// of a target reached by cross-memory attach (mpi/win_cma.hpp), the
// Window call, the checked path.
#include "mpi/win_cma.hpp"
#include "mpi/win_ops.hpp"

using namespace adi3;
using namespace adi3::mpi;

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
