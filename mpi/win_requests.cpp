// The request-based one-sided calls: MPI_Rput, MPI_Rget, MPI_Raccumulate,
// MPI_Rget_accumulate (the checked path only).
#include "mpi/win_ops.hpp"

using namespace adi3;
using namespace adi3::mpi;

namespace {

// A new MPI_Request for a request-based operation (errors in MPI_Wait go
// to MPI_COMM_WORLD's handler: requests carry no window).
int wrap_request(Runtime& rt, Request* r, MPI_Request* out) { return new_request(rt, r, MPI_COMM_WORLD, false, out); }

// MPI_Rput (put) or MPI_Rget on window w: the checks, the Window call, the
// request (fn: the caller's name for its errors).
int rw_request(Runtime& rt, WinObj* w, bool put, void* buf, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
               int tcount, MPI_Datatype ttype, MPI_Request* request, const char* fn) {
  const Datatype *ot = nullptr, *tt = nullptr;
  int e = request ? 0 : raise(ErrorClass::Arg, "request is null");
  if (!e) e = rw_args(rt, buf, ocount, otype, tcount, ttype, &ot, &tt);
  Request* r = nullptr;
  if (!e) {
    e = put ? w->win->rput(buf, ocount, ot, target, disp, tcount, tt, &r)
            : w->win->rget(buf, ocount, ot, target, disp, tcount, tt, &r);
  }
  if (!e) e = wrap_request(rt, r, request);
  return win_error(w, e, fn);
}

}  // namespace

ADI3_MPI_API(int, Rput,
             (const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request),
             (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win,
              request)) {
  ADI3_WIN_ENTER(win);
  return rw_request(*rt, w, true, const_cast<void*>(origin_addr), origin_count, origin_datatype, target_rank,
                    target_disp, target_count, target_datatype, request, __func__);
}

ADI3_MPI_API(int, Rget,
             (void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
              int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request),
             (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win,
              request)) {
  ADI3_WIN_ENTER(win);
  return rw_request(*rt, w, false, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                    target_datatype, request, __func__);
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
