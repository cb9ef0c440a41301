// Error handlers on communicators: predefined (fatal, return, abort) and
// user functions, shared by reference between handles and communicators.
#include "mpi/api.hpp"
#include "mpi/io_file.hpp"

namespace adi3::mpi {

void release_errhandler(Runtime& rt, ErrhandlerObj* e) {
  if (e->refs.fetch_sub(1) == 1) {
    rt.errhandlers.remove(handle_index(e->handle));
    delete e;
  }
}

int new_errhandler(Runtime& rt, MPI_Comm_errhandler_function* fn, bool for_win, MPI_Errhandler* out, bool for_file) {
  if (!fn || !out) return raise(ErrorClass::Arg, "function or errhandler is null");
  auto* e = new ErrhandlerObj;
  e->fn = fn;
  e->for_win = for_win;
  e->for_file = for_file;
  int i = rt.errhandlers.add(e);
  if (i < 0) {
    delete e;
    return raise(ErrorClass::Intern, "too many error handlers");
  }
  e->handle = make_handle(HandleClass::User, Kind::Errhandler, i);
  *out = e->handle;
  return 0;
}

}  // namespace adi3::mpi

using namespace adi3;
using namespace adi3::mpi;

namespace {

bool is_builtin_errhandler(MPI_Errhandler h) {
  return h == MPI_ERRORS_ARE_FATAL || h == MPI_ERRORS_RETURN || h == MPI_ERRORS_ABORT;
}

}  // namespace

int adi3::mpi::get_errhandler(Runtime& rt, MPI_Errhandler h, ErrhandlerObj** out) {
  if (h == MPI_ERRHANDLER_NULL) return raise(ErrorClass::Errhandler, "the error handler is MPI_ERRHANDLER_NULL");
  if (is_kind(h, Kind::Errhandler, HandleClass::User)) {
    if (ErrhandlerObj** e = rt.errhandlers.get(handle_index(h))) {
      *out = *e;
      return 0;
    }
    return raise(ErrorClass::Errhandler, "error handler 0x%x was freed or never created", h);
  }
  return raise(ErrorClass::Errhandler, "0x%x is not an error handler", h);
}

ADI3_MPI_API(int, Comm_create_errhandler, (MPI_Comm_errhandler_function * fn, MPI_Errhandler* errhandler),
             (fn, errhandler)) {
  ADI3_MPI_ENTER();
  return world_error(new_errhandler(*rt, fn, false, errhandler), __func__);
}

ADI3_MPI_API(int, Comm_set_errhandler, (MPI_Comm comm, MPI_Errhandler errhandler), (comm, errhandler)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  if (is_builtin_errhandler(errhandler)) {
    set_errhandler(*rt, *c, nullptr, errhandler);
    return MPI_SUCCESS;
  }
  ErrhandlerObj* obj = nullptr;
  if (int e = get_errhandler(*rt, errhandler, &obj)) return comm_error(c, e, __func__);
  if (obj->for_win || obj->for_file) {
    return comm_error(
        c,
        raise(ErrorClass::Errhandler, "error handler 0x%x was made for %s (use MPI_Comm_create_errhandler)", errhandler,
              obj->for_win ? "windows" : "files"),
        __func__);
  }
  set_errhandler(*rt, *c, obj, MPI_ERRHANDLER_NULL);
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Comm_get_errhandler, (MPI_Comm comm, MPI_Errhandler* errhandler), (comm, errhandler)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  if (!errhandler) return comm_error(c, raise(ErrorClass::Arg, "errhandler is null"), __func__);
  *errhandler = errhandler_handle(*c);
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Errhandler_free, (MPI_Errhandler * errhandler), (errhandler)) {
  ADI3_MPI_ENTER();
  if (!errhandler) return world_error(raise(ErrorClass::Arg, "errhandler is null"), __func__);
  if (is_builtin_errhandler(*errhandler)) {  // predefined: nothing to release
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
  }
  ErrhandlerObj* obj = nullptr;
  if (int e = get_errhandler(*rt, *errhandler, &obj)) return world_error(e, __func__);
  release_errhandler(*rt, obj);
  *errhandler = MPI_ERRHANDLER_NULL;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Comm_call_errhandler, (MPI_Comm comm, int errorcode), (comm, errorcode)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  comm_error(c, errorcode, __func__);
  // The call itself succeeded (the handler ran, unless it was fatal).
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Errhandler_create, (MPI_Handler_function * function, MPI_Errhandler* errhandler),
             (function, errhandler)) {
  return PMPI_Comm_create_errhandler(function, errhandler);
}
ADI3_MPI_API(int, Errhandler_set, (MPI_Comm comm, MPI_Errhandler errhandler), (comm, errhandler)) {
  return PMPI_Comm_set_errhandler(comm, errhandler);
}
ADI3_MPI_API(int, Errhandler_get, (MPI_Comm comm, MPI_Errhandler* errhandler), (comm, errhandler)) {
  return PMPI_Comm_get_errhandler(comm, errhandler);
}

// ---- files: each open file has its handler; MPI_FILE_NULL's is the one
// new files start with (MPI 3.1 13.7). Errors of calls on no valid file go
// to MPI_FILE_NULL's handler (mpi/io_file.cpp, file_error).

namespace {

// The handler's owner: f, or MPI_FILE_NULL's (f null), or ERR_FILE.
int file_target(Runtime& rt, MPI_File file, FileObj** f) {
  *f = nullptr;
  if (file == MPI_FILE_NULL) return 0;
  return get_file(rt, file, f);
}

}  // namespace

ADI3_MPI_API(int, File_create_errhandler, (MPI_File_errhandler_function * fn, MPI_Errhandler* errhandler),
             (fn, errhandler)) {
  ADI3_MPI_ENTER();
  // Both function types take a pointer to an int handle and a code.
  auto* f = reinterpret_cast<MPI_Comm_errhandler_function*>(fn);
  return world_error(new_errhandler(*rt, f, false, errhandler, true), __func__);
}

ADI3_MPI_API(int, File_set_errhandler, (MPI_File file, MPI_Errhandler errhandler), (file, errhandler)) {
  ADI3_MPI_ENTER();
  FileObj* f = nullptr;
  if (int e = file_target(*rt, file, &f)) return file_error(*rt, nullptr, e, __func__);
  if (is_builtin_errhandler(errhandler)) {
    if (f) {
      set_errhandler(*rt, *f, nullptr, errhandler);
    } else {
      set_errhandler(*rt, rt->file_default, nullptr, errhandler);
    }
    return MPI_SUCCESS;
  }
  ErrhandlerObj* obj = nullptr;
  if (int e = get_errhandler(*rt, errhandler, &obj)) return file_error(*rt, f, e, __func__);
  if (!obj->for_file) {
    return file_error(
        *rt, f,
        raise(ErrorClass::Errhandler, "error handler 0x%x was made for %s (use MPI_File_create_errhandler)", errhandler,
              obj->for_win ? "windows" : "communicators"),
        __func__);
  }
  if (f) {
    set_errhandler(*rt, *f, obj, MPI_ERRHANDLER_NULL);
  } else {
    set_errhandler(*rt, rt->file_default, obj, MPI_ERRHANDLER_NULL);
  }
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, File_get_errhandler, (MPI_File file, MPI_Errhandler* errhandler), (file, errhandler)) {
  ADI3_MPI_ENTER();
  FileObj* f = nullptr;
  if (int e = file_target(*rt, file, &f)) return file_error(*rt, nullptr, e, __func__);
  if (!errhandler) return file_error(*rt, f, raise(ErrorClass::Arg, "errhandler is null"), __func__);
  *errhandler = f ? errhandler_handle(*f) : errhandler_handle(rt->file_default);
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, File_call_errhandler, (MPI_File file, int errorcode), (file, errorcode)) {
  ADI3_MPI_ENTER();
  FileObj* f = nullptr;
  if (int e = file_target(*rt, file, &f)) return file_error(*rt, nullptr, e, __func__);
  file_error(*rt, f, errorcode, __func__);
  return MPI_SUCCESS;  // the handler ran (unless it was fatal)
}
