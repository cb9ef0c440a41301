// The binding's short ways to window memory reached by cross-memory attach
// (mpi/win_cma.hpp): the put's and get's, out of line as the fast path's
// miss calls it.
#include "mpi/win_cma.hpp"

namespace adi3::mpi {

[[gnu::noinline]] int copy_route(MPI_Win win, bool put, const void* buf, int ocount, MPI_Datatype otype, int target,
                                 MPI_Aint disp, int tcount, MPI_Datatype ttype) noexcept {
  Runtime* rt = g_runtime;
  WinObj* w = rt && otype == ttype && ocount == tcount ? find_win(*rt, win) : nullptr;
  const Datatype* t = w ? fast_type(*rt, ttype) : nullptr;
  if (!t || !buf) return -1;
  return cma_route(w, win, put ? "PMPI_Put" : "PMPI_Get", [&](rma::WindowState& s) {
    return rma::native::cma_copy_route(s, put, const_cast<void*>(buf), tcount, t, target, disp);
  });
}

}  // namespace adi3::mpi
