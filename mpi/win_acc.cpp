// MPI_Accumulate (its native fast path, mpi/win_ops.hpp) and
// MPI_Get_accumulate.
#include "mpi/win_cma.hpp"
#include "mpi/win_ops.hpp"

using namespace adi3;
using namespace adi3::mpi;

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
      // One element calls nothing (no frame); more take fast_acc's stripes here, not decoded again in acc_slow.
      rma::native::FastPeer* p = &s->native->fastp[static_cast<std::size_t>(target_rank)];
      const rma::native::FastElem e = fast_elem(*rt, target_datatype);
      if (target_count == 1
              ? rma::native::fast_acc_one(*s, p, origin_addr, origin_count, e, target_rank, target_disp, target_count,
                                          k)
              : rma::native::fast_acc(*s, p, origin_addr, origin_count, e, target_rank, target_disp, target_count, k)) {
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
