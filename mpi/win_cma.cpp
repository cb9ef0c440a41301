// The binding's short ways to window memory reached by cross-memory attach
// (mpi/win_cma.hpp): the put's and get's, out of line as the fast path's
// miss calls it.
#include "mpi/win_cma.hpp"

#include <new>

namespace adi3::mpi {

namespace {

// Whether a put or get to target would be the first of its interval
// (WinObj::syncs), and marks it so when it was taken as such.
bool cma_first(const WinObj& w, int target) {
  const auto r = static_cast<std::size_t>(target);  // kProcNull and negatives: huge
  return r >= w.cma_first.size() || w.cma_first[r] != w.syncs;
}
void cma_took_first(WinObj& w, int target) {
  const std::size_t size = w.group->ranks.size();
  const auto r = static_cast<std::size_t>(target);
  if (w.cma_first.size() != size) {
    try {
      w.cma_first.assign(size, 0);
    } catch (const std::bad_alloc&) {
      w.cma_first.clear();  // a heuristic's record: without memory every one counts as first
      return;
    }
  }
  if (r < w.cma_first.size()) w.cma_first[r] = w.syncs;
}

}  // namespace

[[gnu::noinline]] int copy_route(MPI_Win win, bool put, const void* buf, int ocount, MPI_Datatype otype, int target,
                                 MPI_Aint disp, int tcount, MPI_Datatype ttype) noexcept {
  Runtime* rt = g_runtime;
  WinObj* w = rt && otype == ttype && ocount == tcount ? find_win(*rt, win) : nullptr;
  const Datatype* t = w ? fast_type(*rt, ttype) : nullptr;
  if (!t || !buf) return -1;
  bool first = cma_first(*w, target);
  return cma_route(w, win, put ? "PMPI_Put" : "PMPI_Get", [&](rma::WindowState& s) {
    const int e = rma::native::cma_copy_route(s, put, const_cast<void*>(buf), tcount, t, target, disp, &first);
    if (first) cma_took_first(*w, target);
    return e;
  });
}

}  // namespace adi3::mpi
