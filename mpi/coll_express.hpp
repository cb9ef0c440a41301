// The blocking barrier, bcast, reduce and allreduce of small predefined
// data on a communicator whose members share memory go straight to the
// collectives' express path (coll/express.hpp). What the regular entry
// point works out per call is kept per communicator (CommObj::coll_express):
// whether the shared segment is ready, and the last (type, op) pair with
// its kernel. Only predefined types and ops are kept (their handles never
// change meaning); anything else, and every argument the express path
// does not take (MPI_IN_PLACE where it is wrong, aliased buffers, zero
// counts, bad handles), goes to the regular path, which checks and
// reports it.
#pragma once
#include <memory>

#include "coll/express.hpp"
#include "mpi/coll_binding.hpp"

namespace adi3::mpi {

struct CollExpress {
  coll::Express path;
  MPI_Datatype dt = MPI_DATATYPE_NULL;  // the last pair reduced, both predefined
  MPI_Op op = MPI_OP_NULL;
  bool red_ok = false;  // the pair is for the express path: red is its kernel
  coll::ExpressOp red;
};

inline CollExpress* express_of(const CollCall& k) { return static_cast<CollExpress*>(k.c->coll_express.get()); }

// After a call on the regular path: has it left the communicator's shared
// segment ready (or found it never will be)? Asks until one of the two.
void express_probe(CollCall& k);
inline void express_learn(CollCall& k) {
  if (!k.c->coll_express && !k.c->coll_express_off) [[unlikely]]
    express_probe(k);
}

// The kernel of (dt, op), or nullptr: not for the express path.
const coll::ExpressOp* express_resolve(CollExpress& x, Runtime& rt, MPI_Datatype dt, MPI_Op op);
inline const coll::ExpressOp* express_red(CollExpress& x, Runtime& rt, MPI_Datatype dt, MPI_Op op) {
  if (dt == x.dt && op == x.op) [[likely]]
    return x.red_ok ? &x.red : nullptr;
  return express_resolve(x, rt, dt, op);
}

// Each returns true when the express path ran the call (*e: its result).
inline bool express_barrier(CollCall& k, int* e) {
  CollExpress* x = express_of(k);
  return x && x->path.barrier(e);
}

inline bool express_allreduce(CollCall& k, const void* sbuf, void* rbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op,
                              int* e) {
  CollExpress* x = express_of(k);
  if (!x || count <= 0 || !sbuf || !rbuf || rbuf == MPI_IN_PLACE || sbuf == rbuf) return false;
  const coll::ExpressOp* r = express_red(*x, *k.rt, dt, op);
  return r && x->path.allreduce(sbuf == MPI_IN_PLACE ? rbuf : sbuf, rbuf, static_cast<std::size_t>(count), *r, e);
}

inline bool express_reduce(CollCall& k, const void* sbuf, void* rbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op,
                           int root, int* e) {
  CollExpress* x = express_of(k);
  if (!x || count <= 0 || !sbuf) return false;
  const void* in = sbuf;
  if (k.c->rank() == root) {
    if (!rbuf || rbuf == MPI_IN_PLACE || sbuf == rbuf) return false;
    if (sbuf == MPI_IN_PLACE) in = rbuf;
  } else if (sbuf == MPI_IN_PLACE) {
    return false;
  }
  const coll::ExpressOp* r = express_red(*x, *k.rt, dt, op);
  return r && x->path.reduce(in, rbuf, static_cast<std::size_t>(count), *r, root, e);
}

inline bool express_bcast(CollCall& k, void* buf, MPI_Count count, MPI_Datatype dt, int root, int* e) {
  CollExpress* x = express_of(k);
  if (!x || count <= 0 || !buf || buf == MPI_IN_PLACE || !is_kind(dt, Kind::Datatype, HandleClass::Builtin)) {
    return false;
  }
  const auto i = static_cast<std::size_t>(handle_index(dt));
  const Datatype* t = i < k.rt->builtin_types.size() ? k.rt->builtin_types[i] : nullptr;
  // Predefined types with gaps (MPI_FLOAT_INT) take the regular path.
  if (!t || t->size() == 0 || !t->is_contiguous() || t->true_lb() != 0) return false;
  const auto n = static_cast<std::size_t>(count);
  if (n > (std::size_t{1} << 30) / t->size()) return false;  // no overflow; the path checks its own limit
  return x->path.bcast(buf, n * t->size(), root, e);
}

}  // namespace adi3::mpi
