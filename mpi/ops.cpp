// Reduction operations (MPI_Op handles over coll::Op), MPI_Reduce_local and
// the helpers every collective entry point uses.
#include "mpi/coll_binding.hpp"

using namespace adi3;
using namespace adi3::mpi;

namespace adi3::mpi {

namespace {

// mpi.h's MPI_MAX (1) .. MPI_NO_OP (14), in coll's terms.
constexpr coll::OpKind kBuiltinOps[] = {
    coll::OpKind::Max,    coll::OpKind::Min,    coll::OpKind::Sum,     coll::OpKind::Prod, coll::OpKind::Land,
    coll::OpKind::Band,   coll::OpKind::Lor,    coll::OpKind::Bor,     coll::OpKind::Lxor, coll::OpKind::Bxor,
    coll::OpKind::Minloc, coll::OpKind::Maxloc, coll::OpKind::Replace, coll::OpKind::NoOp,
};
constexpr int kNumBuiltinOps = sizeof kBuiltinOps / sizeof kBuiltinOps[0];

}  // namespace

bool builtin_op(MPI_Op h, coll::OpKind* out) {
  if (!is_kind(h, Kind::Op, HandleClass::Builtin)) return false;
  const int i = handle_index(h);
  if (i < 1 || i > kNumBuiltinOps) return false;
  *out = kBuiltinOps[i - 1];
  return true;
}

int get_op(Runtime& rt, MPI_Op h, coll::Op* out) {
  if (is_kind(h, Kind::Op, HandleClass::Builtin)) {
    int i = handle_index(h);
    if (i >= 1 && i <= kNumBuiltinOps) {
      *out = coll::Op(kBuiltinOps[i - 1]);
      return 0;
    }
  } else if (is_kind(h, Kind::Op, HandleClass::User)) {
    if (OpObj* o = rt.ops.get(handle_index(h))) {
      MPI_User_function* fn = o->fn;
      // The user function sees the handle of the datatype it was given.
      if (MPI_User_function_c* fn_c = o->fn_c) {
        *out = coll::Op::user(
            [fn_c](const void* in, void* inout, int count, const Datatype* type) {
              MPI_Datatype dt = g_runtime ? type_handle(*g_runtime, type) : MPI_DATATYPE_NULL;
              MPI_Count len = count;
              fn_c(const_cast<void*>(in), inout, &len, &dt);
            },
            o->commute);
        return 0;
      }
      *out = coll::Op::user(
          [fn](const void* in, void* inout, int count, const Datatype* type) {
            MPI_Datatype dt = g_runtime ? type_handle(*g_runtime, type) : MPI_DATATYPE_NULL;
            fn(const_cast<void*>(in), inout, &count, &dt);
          },
          o->commute);
      return 0;
    }
    return raise(ErrorClass::Op, "operation handle 0x%x was freed or never created", h);
  }
  if (h == MPI_OP_NULL) return raise(ErrorClass::Op, "the operation is MPI_OP_NULL");
  return raise(ErrorClass::Op, "0x%x is not an operation handle", h);
}

coll::Sequence& sequence(CommObj& c) {
  if (!c.nbc) c.nbc = std::make_shared<coll::Sequence>();
  return *static_cast<coll::Sequence*>(c.nbc.get());
}

int coll_side(Runtime& rt, const void* buf, MPI_Count count, MPI_Datatype dt, const Datatype** out) {
  if (buf == MPI_IN_PLACE) return 0;
  if (int e = check_count(count)) return e;
  if (int e = get_comm_type(rt, dt, out)) return e;
  return check_buffer(buf, count, *out);
}

int int_count(MPI_Count a, MPI_Count b) {
  MPI_Count n = a > b ? a : b;
  if (n <= 0x7fffffff) return 0;
  return raise(ErrorClass::Count,
               "count %lld is beyond INT_MAX, which this collective (an intercommunicator or v-form) cannot carry yet",
               n);
}

int CollCall::init(MPI_Info info, MPI_Request* req) {
  if (!req) return raise(ErrorClass::Arg, "request is null");
  if (info != MPI_INFO_NULL) {
    InfoObj* i = nullptr;
    if (int e = get_info(*rt, info, &i)) return e;
  }
  persistent = true;
  once = coll::Sequence::persistent(sequence(*c).next_tag());
  return 0;
}

int coll_counts(const int* counts, const int* displs, int n, const char* what) {
  if (!counts) return raise(ErrorClass::Arg, "the %s counts array is null", what);
  if (!displs) return raise(ErrorClass::Arg, "the %s displacements array is null", what);
  for (int i = 0; i < n; ++i) {
    if (counts[i] < 0) return raise(ErrorClass::Count, "invalid %s count %d for rank %d", what, counts[i], i);
  }
  return 0;
}

}  // namespace adi3::mpi

ADI3_MPI_API(int, Op_create, (MPI_User_function * user_fn, int commute, MPI_Op* op), (user_fn, commute, op)) {
  ADI3_MPI_ENTER();
  if (!user_fn || !op) return world_error(raise(ErrorClass::Arg, "user_fn or op is null"), __func__);
  int i = rt->ops.add(OpObj{user_fn, commute != 0});
  if (i < 0) return world_error(raise(ErrorClass::Intern, "too many operations"), __func__);
  *op = make_handle(HandleClass::User, Kind::Op, i);
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Op_create_c, (MPI_User_function_c * user_fn, int commute, MPI_Op* op), (user_fn, commute, op)) {
  ADI3_MPI_ENTER();
  if (!user_fn || !op) return world_error(raise(ErrorClass::Arg, "user_fn or op is null"), __func__);
  int i = rt->ops.add(OpObj{nullptr, commute != 0, user_fn});
  if (i < 0) return world_error(raise(ErrorClass::Intern, "too many operations"), __func__);
  *op = make_handle(HandleClass::User, Kind::Op, i);
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Op_free, (MPI_Op * op), (op)) {
  ADI3_MPI_ENTER();
  if (!op) return world_error(raise(ErrorClass::Arg, "op is null"), __func__);
  if (is_kind(*op, Kind::Op, HandleClass::Builtin)) {
    return world_error(raise(ErrorClass::Op, "predefined operations cannot be freed"), __func__);
  }
  coll::Op o(coll::OpKind::NoOp);
  if (int e = get_op(*rt, *op, &o)) return world_error(e, __func__);
  rt->ops.remove(handle_index(*op));
  *op = MPI_OP_NULL;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Op_commutative, (MPI_Op op, int* commute), (op, commute)) {
  ADI3_MPI_ENTER();
  if (!commute) return world_error(raise(ErrorClass::Arg, "commute is null"), __func__);
  coll::Op o(coll::OpKind::NoOp);
  if (int e = get_op(*rt, op, &o)) return world_error(e, __func__);
  *commute = o.commutative();
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Reduce_local, (const void* inbuf, void* inoutbuf, int count, MPI_Datatype dt, MPI_Op op),
             (inbuf, inoutbuf, count, dt, op)) {
  ADI3_MPI_ENTER();
  const Datatype* t = nullptr;
  coll::Op o(coll::OpKind::NoOp);
  int e = check_count(count);
  if (!e) e = get_comm_type(*rt, dt, &t);
  if (!e) e = get_op(*rt, op, &o);
  if (!e && count > 0 && (!inbuf || !inoutbuf || inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE)) {
    e = raise(ErrorClass::Buffer, "inbuf or inoutbuf is null or MPI_IN_PLACE");
  }
  // The two buffers must not alias (MPI-3.1 5.9.7), as in the collectives.
  if (!e && count > 0 && inbuf == inoutbuf) e = raise(ErrorClass::Buffer, "inbuf and inoutbuf are the same buffer");
  if (!e) e = coll::reduce_local(rt->dev(), inbuf, inoutbuf, static_cast<std::size_t>(count), t, o);
  return world_error(e, __func__);
}
