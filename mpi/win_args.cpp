// The argument checks of the one-sided communication calls' checked path
// (mpi/win_ops.hpp).
#include "mpi/coll_binding.hpp"
#include "mpi/win_ops.hpp"

namespace adi3::mpi {

int side(Runtime& rt, const void* buf, int count, MPI_Datatype h, const char* what, const Datatype** out) {
  if (count < 0) return raise(ErrorClass::Count, "invalid %s count %d: must be non-negative", what, count);
  if (int e = get_comm_type(rt, h, out)) return e;
  return check_buffer(buf, count, *out);
}

int acc_op(Runtime& rt, MPI_Op h, bool fetches, coll::Op* out) {
  if (int e = get_op(rt, h, out)) return e;
  if (!out->is_predefined()) {
    return raise(ErrorClass::Op, "op 0x%x is user-defined: one-sided accumulates take predefined ops only", h);
  }
  if (!fetches && out->kind() == coll::OpKind::NoOp) {
    return raise(ErrorClass::Op, "MPI_NO_OP is for MPI_Get_accumulate and MPI_Fetch_and_op only");
  }
  return 0;
}

bool cas_takes(Builtin b) {
  const coll::TypeClass c = coll::type_class(b);
  return c == coll::TypeClass::CInteger || c == coll::TypeClass::Logical || c == coll::TypeClass::Byte ||
         c == coll::TypeClass::MultiLanguage;
}

int single_type(Runtime& rt, MPI_Datatype h, bool cas, const Datatype** out) {
  if (int e = get_comm_type(rt, h, out)) return e;
  Builtin b;
  if (!(*out)->builtin_id(&b)) {
    return raise(ErrorClass::Type, "datatype 0x%x is derived: %s takes one element of a predefined type", h,
                 cas ? "MPI_Compare_and_swap" : "MPI_Fetch_and_op");
  }
  if (cas && !cas_takes(b)) {
    return raise(ErrorClass::Type, "MPI_Compare_and_swap takes integer, logical or byte types, not datatype 0x%x", h);
  }
  return 0;
}

int rw_args(Runtime& rt, const void* obuf, int ocount, MPI_Datatype otype, int tcount, MPI_Datatype ttype,
            const Datatype** ot, const Datatype** tt) {
  if (int e = side(rt, obuf, ocount, otype, "origin", ot)) return e;
  if (tcount < 0) return raise(ErrorClass::Count, "invalid target count %d: must be non-negative", tcount);
  return get_comm_type(rt, ttype, tt);
}

int gacc_args(Runtime& rt, const void* obuf, int ocount, MPI_Datatype otype, void* rbuf, int rcount, MPI_Datatype rtype,
              int tcount, MPI_Datatype ttype, MPI_Op op, const Datatype** ot, const Datatype** rt_, const Datatype** tt,
              coll::Op* o) {
  if (int e = acc_op(rt, op, true, o)) return e;
  if (o->kind() == coll::OpKind::NoOp) {
    *ot = nullptr;
  } else if (int e = side(rt, obuf, ocount, otype, "origin", ot)) {
    return e;
  }
  if (int e = side(rt, rbuf, rcount, rtype, "result", rt_)) return e;
  if (tcount < 0) return raise(ErrorClass::Count, "invalid target count %d: must be non-negative", tcount);
  return get_comm_type(rt, ttype, tt);
}

}  // namespace adi3::mpi
