// Window synchronization: fence, post/start/complete/wait/test,
// lock/unlock, lock_all/unlock_all, the flushes and sync. The binding
// checks what only it can (handles, groups, lock types, assertion bits);
// rma/ checks epochs and ranks.
#include <vector>

#include "mpi/win.hpp"
#include "mpi/win_direct.hpp"
#include "rma/native_fast.hpp"

using namespace adi3;
using namespace adi3::mpi;

namespace {

// Assertion bits each call accepts (MPI-3.1 11.5.5).
constexpr int kFenceAsserts = MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED;
constexpr int kPostAsserts = MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT;
constexpr int kStartAsserts = MPI_MODE_NOCHECK;
constexpr int kLockAsserts = MPI_MODE_NOCHECK;

int check_assert(int assert, int allowed, const char* call) {
  if (assert & ~allowed) {
    return raise(ErrorClass::Assert, "invalid assert 0x%x for %s: bits 0x%x are not assertions it accepts", assert,
                 call, assert & ~allowed);
  }
  return 0;
}

// The members of an MPI group as ranks of the window (what rma/ takes).
int window_ranks(Runtime& rt, const WinObj& w, MPI_Group group, std::vector<int>* out) {
  GroupPtr g;
  if (int e = get_group(rt, group, &g)) return e;
  out->reserve(g->ranks.size());
  for (std::size_t i = 0; i < g->ranks.size(); ++i) {
    int r = w.group->rank_of(g->ranks[i]);
    if (r == MPI_UNDEFINED) {
      return raise(ErrorClass::Group, "rank %zu of the group (process %d) is not in the window's group", i,
                   g->ranks[i]);
    }
    out->push_back(r);
  }
  return 0;
}

}  // namespace

ADI3_WIN_CHECKED(Win_fence, (int assert, MPI_Win win), (assert, win)) {
  ADI3_WIN_ENTER(win);
  ++w->syncs;
  if (int e = check_assert(assert, kFenceAsserts, "MPI_Win_fence")) return win_error(w, e, __func__);
  return win_error(w, w->win->fence(assert), __func__);
}
// The native fence straight from the binding; the per-target bytes of the
// fast paths stay (the epoch stays a plain fence: rma::native::fast_fence).
ADI3_WIN_FAST(Win_fence, (int assert, MPI_Win win)) {
  if (Runtime* rt = g_runtime) [[likely]] {
    if (WinObj* w = find_win(*rt, win)) {
      ++w->syncs;
      if (int e = rma::native::fast_fence(w->win->state(), assert); e >= 0) {
        if (e) w->forget_direct();
        return win_error(w, e, "PMPI_Win_fence");
      }
    }
  }
  return win_checked_Win_fence(assert, win);
}

ADI3_MPI_API(int, Win_post, (MPI_Group group, int assert, MPI_Win win), (group, assert, win)) {
  ADI3_WIN_ENTER(win);
  if (int e = check_assert(assert, kPostAsserts, "MPI_Win_post")) return win_error(w, e, __func__);
  std::vector<int> ranks;
  if (int e = window_ranks(*rt, *w, group, &ranks)) return win_error(w, e, __func__);
  return win_error(w, w->win->post(ranks, assert), __func__);
}

ADI3_MPI_API(int, Win_start, (MPI_Group group, int assert, MPI_Win win), (group, assert, win)) {
  ADI3_WIN_ENTER(win);
  if (int e = check_assert(assert, kStartAsserts, "MPI_Win_start")) return win_error(w, e, __func__);
  std::vector<int> ranks;
  if (int e = window_ranks(*rt, *w, group, &ranks)) return win_error(w, e, __func__);
  return win_error(w, w->win->start(ranks, assert), __func__);
}

ADI3_MPI_API(int, Win_complete, (MPI_Win win), (win)) {
  ADI3_WIN_ENTER(win);
  ++w->syncs;
  return win_error(w, w->win->complete(), __func__);
}

ADI3_MPI_API(int, Win_wait, (MPI_Win win), (win)) {
  ADI3_WIN_ENTER(win);
  ++w->syncs;
  return win_error(w, w->win->wait(), __func__);
}

ADI3_MPI_API(int, Win_test, (MPI_Win win, int* flag), (win, flag)) {
  ADI3_WIN_ENTER(win);
  if (!flag) return win_error(w, raise(ErrorClass::Arg, "flag is null"), __func__);
  bool done = false;
  if (int e = w->win->test(&done)) return win_error(w, e, __func__);
  *flag = done ? 1 : 0;
  return MPI_SUCCESS;
}

ADI3_WIN_CHECKED(Win_lock, (int lock_type, int rank, int assert, MPI_Win win), (lock_type, rank, assert, win)) {
  ADI3_WIN_ENTER(win);
  if (lock_type != MPI_LOCK_EXCLUSIVE && lock_type != MPI_LOCK_SHARED) {
    return win_error(
        w, raise(ErrorClass::Locktype, "invalid lock type %d (MPI_LOCK_EXCLUSIVE or MPI_LOCK_SHARED)", lock_type),
        __func__);
  }
  if (int e = check_assert(assert, kLockAsserts, "MPI_Win_lock")) return win_error(w, e, __func__);
  return win_error(w, w->win->lock(static_cast<LockType>(lock_type), rank, assert), __func__);
}
// The native lock word straight from the binding (as Window::lock would).
ADI3_WIN_FAST(Win_lock, (int lock_type, int rank, int assert, MPI_Win win)) {
  if (Runtime* rt = g_runtime;
      rt && (lock_type == MPI_LOCK_EXCLUSIVE || lock_type == MPI_LOCK_SHARED) && !(assert & ~kLockAsserts)) [[likely]] {
    if (WinObj* w = find_win(*rt, win)) {
      rma::WindowState& st = w->win->state();
      if (int e = rma::native::fast_lock(st, static_cast<LockType>(lock_type), rank, assert); e >= 0) {
        if (!e && !(e = st.dev.check_alive(st.comm, rank, "Win_lock"))) direct_locked(*w, st, rank);
        return win_error(w, e, "PMPI_Win_lock");
      }
    }
  }
  return win_checked_Win_lock(lock_type, rank, assert, win);
}

ADI3_WIN_CHECKED(Win_unlock, (int rank, MPI_Win win), (rank, win)) {
  ADI3_WIN_ENTER(win);
  ++w->syncs;
  return win_error(w, w->win->unlock(rank), __func__);
}
ADI3_WIN_FAST(Win_unlock, (int rank, MPI_Win win)) {
  if (Runtime* rt = g_runtime) [[likely]] {
    if (WinObj* w = find_win(*rt, win)) {
      rma::WindowState& st = w->win->state();
      if (int e = rma::native::fast_unlock(st, rank); e >= 0) {
        direct_forget(*w, rank);
        ++w->syncs;
        return win_error(w, e ? e : st.dev.check_alive(st.comm, rank, "Win_unlock"), "PMPI_Win_unlock");
      }
    }
  }
  return win_checked_Win_unlock(rank, win);
}

ADI3_MPI_API(int, Win_lock_all, (int assert, MPI_Win win), (assert, win)) {
  ADI3_WIN_ENTER(win);
  if (int e = check_assert(assert, kLockAsserts, "MPI_Win_lock_all")) return win_error(w, e, __func__);
  return win_error(w, w->win->lock_all(assert), __func__);
}

ADI3_MPI_API(int, Win_unlock_all, (MPI_Win win), (win)) {
  ADI3_WIN_ENTER(win);
  ++w->syncs;
  return win_error(w, w->win->unlock_all(), __func__);
}

ADI3_WIN_CHECKED(Win_flush, (int rank, MPI_Win win), (rank, win)) {
  ADI3_WIN_ENTER(win);
  ++w->syncs;
  return win_error(w, w->win->flush(rank), __func__);
}
ADI3_WIN_FAST(Win_flush, (int rank, MPI_Win win)) {
  // Nothing to complete at a mapped target (rma/native_fast.hpp), as Window::flush would find.
  if (Runtime* rt = g_runtime) [[likely]] {
    if (WinObj* w = find_win(*rt, win)) {
      rma::WindowState& st = w->win->state();
      if (direct_flush(*w, st, rank)) {
        return win_error(w, st.dev.check_alive(st.comm, rank, "Win_flush"), "PMPI_Win_flush");
      }
      // A target reached by cross-memory attach (kDirectCma) with a packet
      // to complete (a fetch_and_op's reply): a flush changes nothing the
      // bytes say (the epoch stays; emul_inflight, which it clears, is
      // tested on each hit), so it keeps them, unlike the checked path's
      // lookup (mpi/win_cma.cpp cma_known).
      if (direct_has(*w, st, rank, kDirectCma)) {
        ++w->syncs;
        try {
          return win_error(w, w->win->flush(rank), "PMPI_Win_flush");
        } catch (...) {
          return Escaped<int>{"PMPI_Win_flush"}(rank, win);
        }
      }
    }
  }
  return win_checked_Win_flush(rank, win);
}

ADI3_MPI_API(int, Win_flush_all, (MPI_Win win), (win)) {
  ADI3_WIN_ENTER(win);
  ++w->syncs;
  return win_error(w, w->win->flush_all(), __func__);
}

ADI3_MPI_API(int, Win_flush_local, (int rank, MPI_Win win), (rank, win)) {
  ADI3_WIN_ENTER(win);
  ++w->syncs;
  return win_error(w, w->win->flush_local(rank), __func__);
}

ADI3_MPI_API(int, Win_flush_local_all, (MPI_Win win), (win)) {
  ADI3_WIN_ENTER(win);
  ++w->syncs;
  return win_error(w, w->win->flush_local_all(), __func__);
}

ADI3_MPI_API(int, Win_sync, (MPI_Win win), (win)) {
  ADI3_WIN_ENTER(win);
  return win_error(w, w->win->sync(), __func__);
}
