// Windows: creation (create, allocate, dynamic), attach/detach, free, and
// the window as an object (group, name, info). The work is rma/'s Window;
// this file checks the MPI arguments and keeps the handle's bookkeeping.
#include "mpi/win.hpp"

#include <climits>
#include <cstring>
#include <memory>

#include "mpi/attributes.hpp"

namespace adi3::mpi {

int get_win_slow(Runtime& rt, MPI_Win h, WinObj** out) {
  if (h == MPI_WIN_NULL) return raise(ErrorClass::Win, "the window is MPI_WIN_NULL");
  if (is_kind(h, Kind::Win, HandleClass::User)) {
    if (WinObj** w = rt.wins.get(handle_index(h))) {
      *out = *w;
      (*w)->forget_direct();
      return 0;
    }
    return raise(ErrorClass::Win, "window handle 0x%x was freed or never created", h);
  }
  return raise(ErrorClass::Win, "0x%x is not a window handle", h);
}

int win_error_slow(WinObj* w, int code, const char* fn) {
  if (!w) return world_error(code, fn);
  if (w->group && w->group->size() > 1) note_returned(code, fn);  // (as comm_error_report)
  code = name_no_mem(code, fn);
  if (w->errh) {
    MPI_Win h = w->handle;
    reinterpret_cast<MPI_Win_errhandler_function*>(w->errh->fn)(&h, &code, fn[0] == 'P' ? fn + 1 : fn);
    return code;
  }
  if (w->errh_builtin == MPI_ERRORS_RETURN) return code;
  fatal(code, fn);
}

}  // namespace adi3::mpi

using namespace adi3;
using namespace adi3::mpi;

namespace {

// The window hints of an MPI_Info (MPI_INFO_NULL: the defaults). Unknown
// keys are ignored as MPI says; a known key with a value it cannot take is
// an error naming both, so a typo does not silently change semantics.
int parse_info(Runtime& rt, MPI_Info info, WinInfo* out) {
  if (info == MPI_INFO_NULL) return 0;
  InfoObj* i = nullptr;
  if (int e = get_info(rt, info, &i)) return e;
  for (auto& [key, value] : i->entries) {
    if (!out->set(key, value)) {
      return raise(ErrorClass::InfoValue, "window info key \"%s\" cannot be \"%s\"", key.c_str(), value.c_str());
    }
  }
  return 0;
}

// Checks shared by the creation calls (after need_intra): a window handle
// to write, and the info hints.
int creation_args(Runtime& rt, MPI_Info info, const MPI_Win* win, WinInfo* hints) {
  if (!win) return raise(ErrorClass::Arg, "win is null");
  return parse_info(rt, info, hints);
}

// A handle for a window rma/ made over c; on failure the window is dropped
// locally (the other ranks may hold theirs: MPI leaves the job erroneous).
// (Errors of Window::create and its kin are no_peer_waits()s: every rank
// fails after the exchanges, for bad arguments or memory at any rank.)
int add_win(Runtime& rt, CommObj& c, Window* win, MPI_Win* out) {
  std::unique_ptr<Window> held(win);  // dropped if the handle object cannot be made
  auto owned = std::make_unique<WinObj>();
  WinObj* w = owned.get();
  w->win = held.release();
  w->group = c.group;
  w->attr_size = win->size();
  w->attr_disp_unit = win->disp_unit();
  w->attr_flavor = static_cast<int>(win->flavor());
  w->attr_model = static_cast<int>(win->model());
  int i = rt.wins.add(w);  // may throw (out of memory): the window goes with owned
  if (i < 0) return raise(ErrorClass::Intern, "too many windows");
  owned.release();
  w->handle = make_handle(HandleClass::User, Kind::Win, i);
  *out = w->handle;
  return 0;
}

}  // namespace

ADI3_MPI_API(int, Win_create, (void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win* win),
             (base, size, disp_unit, info, comm, win)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  if (int e = need_intra(*c, "MPI_Win_create")) return comm_error(c, e, __func__);
  WinInfo hints;
  int bad = creation_args(*rt, info, win, &hints);
  if (!bad && size < 0) bad = raise(ErrorClass::Size, "invalid window size %td: must be >= 0", size);
  if (!bad && disp_unit <= 0) bad = raise(ErrorClass::Disp, "invalid disp_unit %d: must be positive", disp_unit);
  if (!bad && !base && size > 0) bad = raise(ErrorClass::Base, "null base for a window of %td bytes", size);
  // Bad arguments still take part in the creation (every rank then fails).
  Window* wp = nullptr;
  if (int e = Window::create(rt->dev(), base, size, disp_unit, bad ? WinInfo{} : hints, c->coll, &wp, bad)) {
    return comm_error(c, no_peer_waits(e), __func__);
  }
  return comm_error(c, add_win(*rt, *c, wp, win), __func__);
}

namespace {

// MPI_Win_allocate and MPI_Win_allocate_shared (and their _c forms, whose
// disp_unit is an MPI_Aint): one body, the window kind aside.
int allocate_window(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win,
                    bool shared, const char* fn) {
  Runtime* rt = g_runtime;
  if (!rt) [[unlikely]]
    return not_initialized(fn);
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, fn);
  WinInfo hints;
  const char* call = shared ? "MPI_Win_allocate_shared" : "MPI_Win_allocate";
  if (int e = need_intra(*c, call)) return comm_error(c, e, fn);
  int bad = creation_args(*rt, info, win, &hints);
  if (!bad && size < 0) bad = raise(ErrorClass::Size, "invalid window size %td: must be >= 0", size);
  if (!bad && disp_unit <= 0) bad = raise(ErrorClass::Disp, "invalid disp_unit %td: must be positive", disp_unit);
  if (!bad && disp_unit > INT_MAX) {
    bad = raise(ErrorClass::Disp, "disp_unit %td is larger than this implementation takes (%d)", disp_unit, INT_MAX);
  }
  if (!bad && !baseptr) bad = raise(ErrorClass::Arg, "baseptr is null");
  // Bad arguments still take part in the creation (every rank then fails).
  Window* wp = nullptr;
  void* base = nullptr;
  const int unit = bad ? 1 : static_cast<int>(disp_unit);
  if (bad) hints = WinInfo{};
  const int e = shared ? Window::allocate_shared(rt->dev(), size, unit, hints, c->coll, &base, &wp, bad)
                       : Window::allocate(rt->dev(), size, unit, hints, c->coll, &base, &wp, bad);
  if (e) return comm_error(c, no_peer_waits(e), fn);
  if (int e2 = add_win(*rt, *c, wp, win)) return comm_error(c, e2, fn);
  *static_cast<void**>(baseptr) = base;
  return MPI_SUCCESS;
}

int shared_query(MPI_Win win, int rank, MPI_Aint* size, MPI_Aint* disp_unit, void* baseptr, const char* fn) {
  Runtime* rt = g_runtime;
  if (!rt) [[unlikely]]
    return not_initialized(fn);
  WinObj* w = nullptr;
  if (int e = get_win(*rt, win, &w)) return world_error(e, fn);
  if (!baseptr || !disp_unit) return win_error(w, raise(ErrorClass::Arg, "baseptr or disp_unit is null"), fn);
  std::ptrdiff_t sz = 0;
  int unit = 0;
  void* base = nullptr;
  if (int e = w->win->shared_query(rank == MPI_PROC_NULL ? kProcNull : rank, &sz, &unit, &base)) {
    return win_error(w, e, fn);
  }
  if (size) *size = sz;
  *disp_unit = unit;
  *static_cast<void**>(baseptr) = base;
  return MPI_SUCCESS;
}

}  // namespace

ADI3_MPI_API(int, Win_allocate,
             (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win),
             (size, disp_unit, info, comm, baseptr, win)) {
  return allocate_window(size, disp_unit, info, comm, baseptr, win, false, __func__);
}

ADI3_MPI_API(int, Win_allocate_shared,
             (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win),
             (size, disp_unit, info, comm, baseptr, win)) {
  return allocate_window(size, disp_unit, info, comm, baseptr, win, true, __func__);
}

ADI3_MPI_API(int, Win_allocate_shared_c,
             (MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win),
             (size, disp_unit, info, comm, baseptr, win)) {
  return allocate_window(size, disp_unit, info, comm, baseptr, win, true, __func__);
}

ADI3_MPI_API(int, Win_shared_query, (MPI_Win win, int rank, MPI_Aint* size, int* disp_unit, void* baseptr),
             (win, rank, size, disp_unit, baseptr)) {
  MPI_Aint unit = 0;
  const int e = shared_query(win, rank, size, disp_unit ? &unit : nullptr, baseptr, __func__);
  if (e == MPI_SUCCESS) *disp_unit = static_cast<int>(unit);
  return e;
}

ADI3_MPI_API(int, Win_shared_query_c, (MPI_Win win, int rank, MPI_Aint* size, MPI_Aint* disp_unit, void* baseptr),
             (win, rank, size, disp_unit, baseptr)) {
  return shared_query(win, rank, size, disp_unit, baseptr, __func__);
}

ADI3_MPI_API(int, Win_create_dynamic, (MPI_Info info, MPI_Comm comm, MPI_Win* win), (info, comm, win)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  if (int e = need_intra(*c, "MPI_Win_create_dynamic")) return comm_error(c, e, __func__);
  WinInfo hints;
  const int bad = creation_args(*rt, info, win, &hints);
  // Bad arguments still take part in the creation (every rank then fails).
  Window* wp = nullptr;
  if (int e = Window::create_dynamic(rt->dev(), bad ? WinInfo{} : hints, c->coll, &wp, bad)) {
    return comm_error(c, no_peer_waits(e), __func__);
  }
  return comm_error(c, add_win(*rt, *c, wp, win), __func__);
}

ADI3_MPI_API(int, Win_attach, (MPI_Win win, void* base, MPI_Aint size), (win, base, size)) {
  ADI3_WIN_ENTER(win);
  if (size < 0) return win_error(w, raise(ErrorClass::Size, "invalid size %td: must be >= 0", size), __func__);
  if (!base && size > 0) return win_error(w, raise(ErrorClass::Base, "null base for %td bytes", size), __func__);
  return win_error(w, w->win->attach(base, size), __func__);
}

ADI3_MPI_API(int, Win_detach, (MPI_Win win, const void* base), (win, base)) {
  ADI3_WIN_ENTER(win);
  return win_error(w, w->win->detach(base), __func__);
}

ADI3_MPI_API(int, Win_free, (MPI_Win * win), (win)) {
  ADI3_MPI_ENTER();
  if (!win) return world_error(raise(ErrorClass::Arg, "win is null"), __func__);
  WinObj* w = nullptr;
  if (int e = get_win(*rt, *win, &w)) return world_error(e, __func__);
  // rma/ refuses (RMA_SYNC) while an epoch is open, before anything changes.
  if (int e = Window::free(&w->win)) return win_error(w, e, __func__);
  // The handle stays valid for the delete callbacks, which get it.
  int e = delete_all_attrs(*rt, w->attrs, w->handle);
  int handle = w->handle;
  if (w->errh) release_errhandler(*rt, w->errh);
  rt->wins.remove(handle_index(handle));
  delete w;
  *win = MPI_WIN_NULL;
  return world_error(e, __func__);
}

ADI3_MPI_API(int, Win_get_group, (MPI_Win win, MPI_Group* group), (win, group)) {
  ADI3_WIN_ENTER(win);
  if (!group) return win_error(w, raise(ErrorClass::Arg, "group is null"), __func__);
  return win_error(w, add_group(*rt, w->group->ranks, group), __func__);
}

ADI3_MPI_API(int, Win_set_name, (MPI_Win win, const char* win_name), (win, win_name)) {
  ADI3_WIN_ENTER(win);
  if (!win_name) return win_error(w, raise(ErrorClass::Arg, "win_name is null"), __func__);
  w->name.assign(win_name, strnlen(win_name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Win_get_name, (MPI_Win win, char* win_name, int* resultlen), (win, win_name, resultlen)) {
  ADI3_WIN_ENTER(win);
  if (!win_name || !resultlen) return win_error(w, raise(ErrorClass::Arg, "win_name or resultlen is null"), __func__);
  std::memcpy(win_name, w->name.c_str(), w->name.size() + 1);
  *resultlen = static_cast<int>(w->name.size());
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Win_set_info, (MPI_Win win, MPI_Info info), (win, info)) {
  ADI3_WIN_ENTER(win);
  // Keys not given keep their values (MPI-4.1 12.2.7); MPI_INFO_NULL
  // changes nothing.
  WinInfo hints = w->win->info();
  if (int e = parse_info(*rt, info, &hints)) return win_error(w, e, __func__);
  return win_error(w, w->win->set_info(hints), __func__);
}

ADI3_MPI_API(int, Win_get_info, (MPI_Win win, MPI_Info* info_used), (win, info_used)) {
  ADI3_WIN_ENTER(win);
  if (!info_used) return win_error(w, raise(ErrorClass::Arg, "info_used is null"), __func__);
  return win_error(w, add_info(*rt, w->win->info().pairs(), info_used), __func__);
}
