// MPI windows in the binding: the handle's object around an adi3::Window
// (rma/window.hpp) with what MPI attaches to a window (name, attributes,
// error handler, the values the predefined attributes point to), and the
// lookups and error dispatch every MPI_Win entry point uses.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "mpi/api.hpp"
#include "rma/window.hpp"

namespace adi3::mpi {

struct WinObj {
  Window* win = nullptr;  // owned; Window::free() ends it collectively
  int handle = MPI_WIN_NULL;
  GroupPtr group;                 // the window's ranks, as MPI_Win_get_group gives them
  ErrhandlerObj* errh = nullptr;  // a user handler, or nullptr: errh_builtin
  int errh_builtin = MPI_ERRORS_ARE_FATAL;
  std::string name;
  AttrList attrs;
  // What MPI_WIN_SIZE / DISP_UNIT / CREATE_FLAVOR / MODEL point to.
  MPI_Aint attr_size = 0;
  int attr_disp_unit = 1, attr_flavor = MPI_WIN_FLAVOR_CREATE, attr_model = MPI_WIN_SEPARATE;
  // Per target rank, what the native fast path proved of this epoch
  // (kDirectOp, kDirectFlush, kDirectCma), so that an operation or a flush
  // to it tests one byte (mpi/win_direct.hpp direct_has). Only calls on this
  // window change what it caches, and every call that leaves the fast paths
  // looks the window up with get_win, which forgets it all; a fast unlock
  // forgets its target's.
  std::vector<uint8_t> direct;
  bool direct_set = false;
  void forget_direct() {
    if (direct_set) [[unlikely]] {
      std::fill(direct.begin(), direct.end(), uint8_t{0});
      direct_set = false;
    }
  }

  // The synchronizations that end an interval of operations (flushes,
  // unlocks, fences, complete/wait), counted by the calls, and per target
  // the count when an operation to it last took cross-memory attach as the
  // first of its interval, and whether its last compare_and_swap so wrote
  // (mpi/win_cma.cpp; heuristics: a mark missed costs a packet or a system
  // call, nothing more).
  struct CmaMark {
    uint64_t first = 0;
    bool cas_wrote = false;
  };
  uint64_t syncs = 1;
  std::vector<CmaMark> cma_marks;

  WinObj() = default;
  WinObj(const WinObj&) = delete;
  WinObj& operator=(const WinObj&) = delete;
  ~WinObj() { delete win; }  // only at MPI_Finalize, for windows never freed
};

// WinObj::direct's bits: fast_target's yes (rma/native_fast.hpp),
// fast_flush's (nothing to complete at the target), and cma_epoch's (puts
// and gets reach its memory by cross-memory attach: mpi/win_cma.cpp).
inline constexpr uint8_t kDirectOp = 1, kDirectFlush = 2, kDirectCma = 4;

// The window of handle h (0 and *out, or an ERR_WIN code). Inline: every
// one-sided call starts with it (the slow part raises the error). The
// checked paths' lookup: it forgets what the fast paths cached, since the
// call may change the epoch.
int get_win_slow(Runtime& rt, MPI_Win h, WinObj** out);
inline int get_win(Runtime& rt, MPI_Win h, WinObj** out) {
  if (is_kind(h, Kind::Win, HandleClass::User)) [[likely]] {
    if (WinObj** w = rt.wins.get(handle_index(h))) [[likely]] {
      *out = *w;
      (*w)->forget_direct();
      return 0;
    }
  }
  return get_win_slow(rt, h, out);
}

// Error dispatch for calls on a window: code == 0 passes through, otherwise
// the window's handler runs (MPI_COMM_WORLD's when w is null: an invalid
// window handle) and, unless it is fatal, code is returned.
int win_error_slow(WinObj* w, int code, const char* fn);
inline int win_error(WinObj* w, int code, const char* fn) { return code == 0 ? 0 : win_error_slow(w, code, fn); }

// Looks the window up and binds `w`, or reports through MPI_COMM_WORLD's
// handler (there is no valid window to report through).
#define ADI3_WIN_ENTER(handle)                                     \
  ADI3_MPI_ENTER();                                                \
  ::adi3::mpi::WinObj* w = nullptr;                                \
  if (int e_ = ::adi3::mpi::get_win(*rt, handle, &w)) [[unlikely]] \
  return ::adi3::mpi::world_error(e_, __func__)

// One-sided calls with a native fast path (rma/native_fast.hpp): the
// exported entry point tries it first, outside any try block and before
// any argument check, so it compiles into a short function without a
// frame; whatever it does not take goes to PMPI_<name>'s ordinary body (its
// own try block and checks, which raise every error), defined by
// ADI3_WIN_CHECKED(name, params, args) { body } before the entry point,
// which ADI3_WIN_FAST(name, params, args) { fast path } then defines, with
// win_checked_<name> args as its fallback.
#define ADI3_WIN_CHECKED(name, params, args)                     \
  namespace {                                                    \
  struct PMPI_##name##_body {                                    \
    [[gnu::always_inline]] static inline int PMPI_##name params; \
  };                                                             \
  [[gnu::noinline]] int win_checked_##name params noexcept {     \
    try {                                                        \
      return PMPI_##name##_body::PMPI_##name args;               \
    } catch (...) {                                              \
      return ::adi3::mpi::Escaped<int>{"PMPI_" #name} args;      \
    }                                                            \
  }                                                              \
  }                                                              \
  int PMPI_##name##_body::PMPI_##name params
#define ADI3_WIN_FAST(name, params) ADI3_MPI_API_NOTHROW(int, name, params)

// The window of handle h when it is a valid one, else nullptr (the fast
// paths' lookup: the checked path reports the bad handle).
inline WinObj* find_win(Runtime& rt, MPI_Win h) {
  if (is_kind(h, Kind::Win, HandleClass::User)) [[likely]] {
    if (WinObj** w = rt.wins.get(handle_index(h))) [[likely]]
      return *w;
  }
  return nullptr;
}

// Window error handlers (mpi/win_attr.cpp): a user one is shared by reference.

}  // namespace adi3::mpi
