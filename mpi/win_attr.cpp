// Window keyvals and attributes (with the predefined MPI_WIN_BASE, SIZE,
// DISP_UNIT, CREATE_FLAVOR and MODEL), and window error handlers.
#include "mpi/attributes.hpp"
#include "mpi/win.hpp"

using namespace adi3;
using namespace adi3::mpi;

extern "C" {
int adi3_win_null_copy_fn(MPI_Win, int, void*, void*, void*, int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}
int adi3_win_dup_fn(MPI_Win, int, void*, void* in, void* out, int* flag) {
  *static_cast<void**>(out) = in;
  *flag = 1;
  return MPI_SUCCESS;
}
int adi3_win_null_delete_fn(MPI_Win, int, void*, void*) { return MPI_SUCCESS; }
}

namespace {

// The address MPI_Win_get_attr gives for a predefined window keyval, or
// nullptr when keyval is not one. MPI_WIN_BASE is the base itself.
bool builtin_win_attr(WinObj& w, int keyval, void** out) {
  switch (keyval) {
    case MPI_WIN_BASE:
      *out = w.win->base();
      return true;
    case MPI_WIN_SIZE:
      *out = &w.attr_size;
      return true;
    case MPI_WIN_DISP_UNIT:
      *out = &w.attr_disp_unit;
      return true;
    case MPI_WIN_CREATE_FLAVOR:
      *out = &w.attr_flavor;
      return true;
    case MPI_WIN_MODEL:
      *out = &w.attr_model;
      return true;
    default:
      return false;
  }
}

}  // namespace

ADI3_MPI_API(int, Win_create_keyval,
             (MPI_Win_copy_attr_function * copy_fn, MPI_Win_delete_attr_function* delete_fn, int* keyval,
              void* extra_state),
             (copy_fn, delete_fn, keyval, extra_state)) {
  ADI3_MPI_ENTER();
  if (!keyval) return world_error(raise(ErrorClass::Arg, "win_keyval is null"), __func__);
  auto* k = new KeyvalObj;
  k->kind = KeyvalKind::Win;
  k->copy_fn = reinterpret_cast<void*>(copy_fn);  // windows are never copied
  k->delete_fn = reinterpret_cast<void*>(delete_fn);
  k->extra_state = extra_state;
  int i = rt->keyvals.add(k);
  if (i < 0) {
    delete k;
    return world_error(raise(ErrorClass::Intern, "too many keyvals"), __func__);
  }
  k->handle = make_handle(HandleClass::User, Kind::Keyval, i);
  *keyval = k->handle;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Win_free_keyval, (int* keyval), (keyval)) {
  ADI3_MPI_ENTER();
  if (!keyval) return world_error(raise(ErrorClass::Arg, "win_keyval is null"), __func__);
  KeyvalObj* k = nullptr;
  if (int e = get_keyval(*rt, *keyval, KeyvalKind::Win, &k)) return world_error(e, __func__);
  *keyval = MPI_KEYVAL_INVALID;
  free_keyval_handle(*rt, k);  // attributes still using it keep it alive
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Win_set_attr, (MPI_Win win, int keyval, void* attribute_val), (win, keyval, attribute_val)) {
  ADI3_WIN_ENTER(win);
  KeyvalObj* k = nullptr;
  if (int e = get_keyval(*rt, keyval, KeyvalKind::Win, &k)) return win_error(w, e, __func__);
  return win_error(w, set_attr(*rt, w->attrs, k, attribute_val, win), __func__);
}

ADI3_MPI_API(int, Win_get_attr, (MPI_Win win, int keyval, void* attribute_val, int* flag),
             (win, keyval, attribute_val, flag)) {
  ADI3_WIN_ENTER(win);
  if (!attribute_val || !flag) {
    return win_error(w, raise(ErrorClass::Arg, "attribute_val or flag is null"), __func__);
  }
  void* v = nullptr;
  if (is_kind(keyval, Kind::Keyval, HandleClass::Builtin)) {
    if (!builtin_win_attr(*w, keyval, &v)) {
      return win_error(w, raise(ErrorClass::Keyval, "keyval 0x%x is not a window keyval", keyval), __func__);
    }
    *flag = 1;
    *static_cast<void**>(attribute_val) = v;
    return MPI_SUCCESS;
  }
  KeyvalObj* k = nullptr;
  if (int e = get_keyval(*rt, keyval, KeyvalKind::Win, &k)) return win_error(w, e, __func__);
  *flag = find_attr(*rt, w->attrs, k, &v);
  if (*flag) *static_cast<void**>(attribute_val) = v;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Win_delete_attr, (MPI_Win win, int keyval), (win, keyval)) {
  ADI3_WIN_ENTER(win);
  KeyvalObj* k = nullptr;
  if (int e = get_keyval(*rt, keyval, KeyvalKind::Win, &k)) return win_error(w, e, __func__);
  return win_error(w, delete_attr(*rt, w->attrs, k, win), __func__);
}

// ---- error handlers ----

ADI3_MPI_API(int, Win_create_errhandler, (MPI_Win_errhandler_function * fn, MPI_Errhandler* errhandler),
             (fn, errhandler)) {
  ADI3_MPI_ENTER();
  // The object holds the function as a communicator handler's; for_win
  // keeps it off communicators.
  auto* f = reinterpret_cast<MPI_Comm_errhandler_function*>(fn);
  return world_error(new_errhandler(*rt, f, true, errhandler), __func__);
}

ADI3_MPI_API(int, Win_set_errhandler, (MPI_Win win, MPI_Errhandler errhandler), (win, errhandler)) {
  ADI3_WIN_ENTER(win);
  if (errhandler == MPI_ERRORS_ARE_FATAL || errhandler == MPI_ERRORS_RETURN || errhandler == MPI_ERRORS_ABORT) {
    set_errhandler(*rt, *w, nullptr, errhandler);
    return MPI_SUCCESS;
  }
  ErrhandlerObj** obj = nullptr;
  if (is_kind(errhandler, Kind::Errhandler, HandleClass::User)) obj = rt->errhandlers.get(handle_index(errhandler));
  if (!obj) {
    return win_error(
        w, raise(ErrorClass::Errhandler, "0x%x is not an error handler (freed, null or never created)", errhandler),
        __func__);
  }
  if (!(*obj)->for_win) {
    return win_error(w,
                     raise(ErrorClass::Errhandler,
                           "error handler 0x%x was made for communicators (use MPI_Win_create_errhandler)", errhandler),
                     __func__);
  }
  set_errhandler(*rt, *w, *obj, MPI_ERRHANDLER_NULL);
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Win_get_errhandler, (MPI_Win win, MPI_Errhandler* errhandler), (win, errhandler)) {
  ADI3_WIN_ENTER(win);
  if (!errhandler) return win_error(w, raise(ErrorClass::Arg, "errhandler is null"), __func__);
  *errhandler = errhandler_handle(*w);
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Win_call_errhandler, (MPI_Win win, int errorcode), (win, errorcode)) {
  ADI3_WIN_ENTER(win);
  win_error(w, errorcode, __func__);
  return MPI_SUCCESS;  // the call succeeded: the handler ran (unless fatal)
}
