// The binding's short ways to window memory reached by cross-memory attach
// (mpi/win_cma.hpp): the put's and get's, out of line as the fast path's
// miss calls it.
#include "mpi/win_cma.hpp"

#include <new>

#include "mpi/win_direct.hpp"
#include "rma/route.hpp"

namespace adi3::mpi {

namespace {

// Target's mark (WinObj::cma_marks), nullptr without memory for them or
// for a rank outside the group.
WinObj::CmaMark* cma_mark(WinObj& w, int target) {
  const std::size_t size = w.group->ranks.size();
  const auto r = static_cast<std::size_t>(target);  // kProcNull and negatives: huge
  if (w.cma_marks.size() != size) {
    try {
      w.cma_marks.assign(size, {});
    } catch (const std::bad_alloc&) {
      w.cma_marks.clear();  // a heuristic's record: without memory every one counts as first
      return nullptr;
    }
  }
  return r < w.cma_marks.size() ? &w.cma_marks[r] : nullptr;
}

// Whether an operation to target would be the first of its interval
// (WinObj::syncs) and may go without a look at the target (the channel's
// call is cheap: NativeWindow::lean_first), and marks it so when it was
// taken as such.
bool cma_first(const WinObj& w, const rma::WindowState& s, int target) {
  if (!s.native || !s.native->lean_first) return false;
  const auto r = static_cast<std::size_t>(target);
  return r >= w.cma_marks.size() || w.cma_marks[r].first != w.syncs;
}
void cma_took_first(WinObj& w, int target) {
  if (WinObj::CmaMark* m = cma_mark(w, target)) m->first = w.syncs;
}

// Whether target's byte says its memory is reached by cross-memory attach
// (kDirectCma), set here from cma_epoch's yes. The byte outlives a
// fetch_and_op or compare_and_swap that went as a packet (atomic_known)
// and the flush behind it (Win_flush, mpi/win_sync.cpp), which change none
// of cma_epoch's tests but the target's emul_inflight: tested here, so
// nothing takes cross-memory attach past an emulated operation.
bool cma_known(WinObj& w, const rma::WindowState& s, int target) {
  if (direct_has(w, s, target, kDirectCma)) return !s.targets[static_cast<std::size_t>(target)].emul_inflight;
  if (s.dev.config().thread_multiple || !rma::native::cma_epoch(s, target)) return false;
  direct_remember(w, s, static_cast<std::size_t>(target), kDirectCma);
  return true;
}

// A put or get that takes cross-memory attach without a look at the
// target (a bulk block, or the first of its interval: cma_copy_route's
// rule) to a target whose byte says its memory is reached so
// (kDirectCma, set here from cma_epoch's yes): the range check and the
// system call, without the window's mutex and cma_copy_route's tests
// (about 350 of the origin's 880 instructions per put and flush). The
// call's result, or -1 when not taken (nothing done).
int copy_known(WinObj& w, MPI_Win win, bool put, void* buf, int count, const Datatype* t, int target, MPI_Aint disp,
               bool first) noexcept {
  rma::WindowState& s = w.win->state();
  if (count <= 0 || !t->is_contiguous() || t->true_lb() != 0) return -1;
  const uint64_t bytes = static_cast<uint64_t>(count) * t->size();  // a predefined type: a few bytes each
  const bool bulk = rma::bulk_by_cma(put ? rma::Msg::Put : rma::Msg::Get, bytes);
  // Not a small put in a fence epoch (its packet's arrival is counted by the fence).
  if (!bulk && (!first || (put && s.access == rma::WindowState::Access::Fence))) return -1;
  if (!cma_known(w, s, target)) return -1;
  try {
    const int e = rma::native::cma_copy_known(s, put, buf, bytes, target, disp);
    if (e < 0) return -1;
    if (!bulk) cma_took_first(w, target);
    return e ? win_error(&w, e, put ? "PMPI_Put" : "PMPI_Get") : MPI_SUCCESS;
  } catch (...) {
    return Escaped<int>{put ? "PMPI_Put" : "PMPI_Get"}(win);
  }
}

}  // namespace

[[gnu::noinline]] int copy_route(MPI_Win win, bool put, const void* buf, int ocount, MPI_Datatype otype, int target,
                                 MPI_Aint disp, int tcount, MPI_Datatype ttype) noexcept {
  Runtime* rt = g_runtime;
  WinObj* w = rt && otype == ttype && ocount == tcount ? find_win(*rt, win) : nullptr;
  const Datatype* t = w ? fast_type(*rt, ttype) : nullptr;
  if (!t || !buf) return -1;
  bool first = cma_first(*w, w->win->state(), target);
  if (const int e = copy_known(*w, win, put, const_cast<void*>(buf), tcount, t, target, disp, first); e >= 0) return e;
  return cma_route(w, win, put ? "PMPI_Put" : "PMPI_Get", [&](rma::WindowState& s) {
    const int e = rma::native::cma_copy_route(s, put, const_cast<void*>(buf), tcount, t, target, disp, &first);
    if (first) cma_took_first(*w, target);
    return e;
  });
}

int atomic_known(WinObj& w, MPI_Win win, rma::Msg kind, const void* origin, const void* compare, void* result,
                 rma::native::FastElem e, const Datatype* t, int target, MPI_Aint disp, coll::OpKind k) noexcept {
  rma::WindowState& s = w.win->state();
  if (!cma_known(w, s, target)) return -1;
  const char* fn = kind == rma::Msg::Cas ? "PMPI_Compare_and_swap" : "PMPI_Fetch_and_op";
  const auto r = static_cast<std::size_t>(target);
  rma::native::LeanAtomic how;
  how.first = cma_first(w, s, target);
  how.cas_wrote = r < w.cma_marks.size() && w.cma_marks[r].cas_wrote;
  try {
    const int rc = rma::native::cma_atomic_known(s, kind, origin, compare, result, e, t, target, disp, k, &how);
    // The packet left a reply to wait for: no flush to the target is
    // nothing to do now (kDirectFlush). It changed nothing else the bytes
    // say (cma_known tests emul_inflight); the lean read-modify-write left
    // nothing behind, so the flush's byte holds.
    if (how.packet && r < w.direct.size()) w.direct[r] &= static_cast<uint8_t>(~kDirectFlush);
    if (how.took_first) cma_took_first(w, target);
    // A compare_and_swap that wrote (or went as a packet after one that
    // did) tells the next one to the target whether to expect a read alone.
    if (kind == rma::Msg::Cas && (how.lean || how.packet) && how.cas_wrote != (how.lean && how.wrote)) {
      if (WinObj::CmaMark* m = cma_mark(w, target)) m->cas_wrote = how.lean && how.wrote;
    }
    if (rc < 0) return -1;
    return rc ? win_error(&w, rc, fn) : MPI_SUCCESS;
  } catch (...) {
    return Escaped<int>{fn}(win);
  }
}

}  // namespace adi3::mpi
