#include "mpi/coll_express.hpp"

#include <new>

namespace adi3::mpi {

void express_probe(CollCall& k) {
  CommObj& c = *k.c;
  if (c.inter) {
    c.coll_express_off = true;
    return;
  }
  coll::Express path;
  switch (coll::Express::probe(k.dev(), c.coll, &path)) {
    case coll::Express::State::Unknown:
      return;
    case coll::Express::State::Off:
      c.coll_express_off = true;
      return;
    case coll::Express::State::Ready:
      break;
  }
  // Out of memory only leaves the communicator on the regular path.
  try {
    auto x = std::make_shared<CollExpress>();
    x->path = path;
    c.coll_express = std::move(x);
  } catch (const std::bad_alloc&) {
  }
}

const coll::ExpressOp* express_resolve(CollExpress& x, Runtime& rt, MPI_Datatype dt, MPI_Op op) {
  // Only predefined handles are kept: a user type or op handle may name
  // another object once freed.
  coll::OpKind kind = coll::OpKind::NoOp;
  if (!is_kind(dt, Kind::Datatype, HandleClass::Builtin) || !builtin_op(op, &kind)) return nullptr;
  const auto i = static_cast<std::size_t>(handle_index(dt));
  if (i >= rt.builtin_types.size() || !rt.builtin_types[i]) return nullptr;
  x.dt = dt;
  x.op = op;
  x.red_ok = coll::express_op(kind, rt.builtin_types[i], &x.red);
  return x.red_ok ? &x.red : nullptr;
}

}  // namespace adi3::mpi
