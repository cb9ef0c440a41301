// What the collective entry points share: op handles to coll::Op, each
// communicator's sequence of nonblocking collectives, and the start of a
// collective call.
#pragma once
#include "coll/coll.hpp"
#include "mpi/api.hpp"

namespace adi3::mpi {

int get_op(Runtime& rt, MPI_Op h, coll::Op* out);
coll::Sequence& sequence(CommObj& c);

// The start of a collective entry point: runtime and communicator, or the
// error to return (e != 0).
struct CollCall {
  CollCall(const char* fn, MPI_Comm comm);
  const char* fn;
  Runtime* rt = nullptr;
  CommObj* c = nullptr;
  int e = 0;
  Device& dev() { return rt->dev(); }
  // Reports e (0 passes through) through the communicator's handler.
  int done(int err) { return comm_error(c, err, fn); }
  // Runs a blocking collective, or turns the started one into an
  // MPI_Request when req is set.
  template <class Blocking, class Nonblocking>
  int run(MPI_Request* req, Blocking&& b, Nonblocking&& nb) {
    if (!req) return b();
    Request* r = nullptr;
    if (int err = nb(&r)) return err;
    return new_request(*rt, r, c->handle, false, req);
  }
};

// Checks of one (buf, count, type) side; MPI_IN_PLACE skips them.
int coll_side(Runtime& rt, const void* buf, int count, MPI_Datatype dt, const Datatype** out);
// Checks counts (and displacements) arrays of n entries.
int coll_counts(const int* counts, const int* displs, int n, const char* what);

}  // namespace adi3::mpi
