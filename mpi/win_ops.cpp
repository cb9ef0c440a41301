// MPI_Put and MPI_Get: the native fast path straight from the binding
// (mpi/win_ops.hpp), the short ways for the rest of the calls of one
// predefined type (cross-memory attach, the emulation's one packet), the
// checked path. The other one-sided calls: win_acc.cpp, win_atomics.cpp,
// win_requests.cpp.
#include "emul/emul.hpp"
#include "mpi/win_cma.hpp"
#include "mpi/win_ops.hpp"

using namespace adi3;
using namespace adi3::mpi;

namespace {

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
