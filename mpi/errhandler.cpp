// Error handlers on communicators: predefined (fatal, return, abort) and
// user functions, shared by reference between handles and communicators.
#include "mpi/api.hpp"

namespace adi3::mpi {

void release_errhandler(Runtime& rt, ErrhandlerObj* e) {
  if (e->refs.fetch_sub(1) == 1) {
    rt.errhandlers.remove(handle_index(e->handle));
    delete e;
  }
}

void set_comm_errhandler(Runtime& rt, CommObj& c, ErrhandlerObj* user, int builtin) {
  if (user) user->refs.fetch_add(1);
  ErrhandlerObj* old = c.errh;
  c.errh = user;
  c.errh_builtin = user ? MPI_ERRHANDLER_NULL : builtin;
  if (old) release_errhandler(rt, old);
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
  if (h == MPI_ERRHANDLER_NULL) return raise(ErrorClass::Arg, "the error handler is MPI_ERRHANDLER_NULL");
  if (is_kind(h, Kind::Errhandler, HandleClass::User)) {
    if (ErrhandlerObj** e = rt.errhandlers.get(handle_index(h))) {
      *out = *e;
      return 0;
    }
    return raise(ErrorClass::Arg, "error handler 0x%x was freed or never created", h);
  }
  return raise(ErrorClass::Arg, "0x%x is not an error handler", h);
}

ADI3_MPI_API(int, Comm_create_errhandler, (MPI_Comm_errhandler_function * fn, MPI_Errhandler* errhandler)) {
  ADI3_MPI_ENTER();
  if (!fn || !errhandler) return world_error(raise(ErrorClass::Arg, "function or errhandler is null"), __func__);
  auto* e = new ErrhandlerObj;
  e->fn = fn;
  int i = rt->errhandlers.add(e);
  if (i < 0) {
    delete e;
    return world_error(raise(ErrorClass::Intern, "too many error handlers"), __func__);
  }
  e->handle = make_handle(HandleClass::User, Kind::Errhandler, i);
  *errhandler = e->handle;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Comm_set_errhandler, (MPI_Comm comm, MPI_Errhandler errhandler)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  if (is_builtin_errhandler(errhandler)) {
    set_comm_errhandler(*rt, *c, nullptr, errhandler);
    return MPI_SUCCESS;
  }
  ErrhandlerObj* obj = nullptr;
  if (int e = get_errhandler(*rt, errhandler, &obj)) return comm_error(c, e, __func__);
  if (obj->for_win) {
    return comm_error(
        c,
        raise(ErrorClass::Arg, "error handler 0x%x was made for windows (use MPI_Comm_create_errhandler)", errhandler),
        __func__);
  }
  set_comm_errhandler(*rt, *c, obj, MPI_ERRHANDLER_NULL);
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Comm_get_errhandler, (MPI_Comm comm, MPI_Errhandler* errhandler)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  if (!errhandler) return comm_error(c, raise(ErrorClass::Arg, "errhandler is null"), __func__);
  if (c->errh) {
    c->errh->refs.fetch_add(1);  // the user frees the handle it gets
    *errhandler = c->errh->handle;
  } else {
    *errhandler = c->errh_builtin;
  }
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Errhandler_free, (MPI_Errhandler * errhandler)) {
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

ADI3_MPI_API(int, Comm_call_errhandler, (MPI_Comm comm, int errorcode)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  comm_error(c, errorcode, __func__);
  // The call itself succeeded (the handler ran, unless it was fatal).
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Errhandler_create, (MPI_Handler_function * function, MPI_Errhandler* errhandler)) {
  return PMPI_Comm_create_errhandler(function, errhandler);
}
ADI3_MPI_API(int, Errhandler_set, (MPI_Comm comm, MPI_Errhandler errhandler)) {
  return PMPI_Comm_set_errhandler(comm, errhandler);
}
ADI3_MPI_API(int, Errhandler_get, (MPI_Comm comm, MPI_Errhandler* errhandler)) {
  return PMPI_Comm_get_errhandler(comm, errhandler);
}
