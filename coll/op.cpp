// Op handles, the op/type check, and reduce_local for any datatype.
#include "coll/op.hpp"

#include <climits>
#include <memory>
#include <string>
#include <vector>

#include "coll/copy.hpp"
#include "segment/type_query.hpp"

namespace adi3::coll {
namespace {

constexpr const char* kOpNames[] = {
    "MPI_MAX",  "MPI_MIN",  "MPI_SUM",    "MPI_PROD",   "MPI_LAND",    "MPI_BAND",  "MPI_LOR",         "MPI_BOR",
    "MPI_LXOR", "MPI_BXOR", "MPI_MAXLOC", "MPI_MINLOC", "MPI_REPLACE", "MPI_NO_OP", "user-defined op",
};

// "MPI_INT", or "a derived datatype (name) of MPI_INT elements".
std::string describe(const Datatype* type, bool have_elem, Builtin elem) {
  if (type->is_predefined()) return type->name();
  std::string s = "a derived datatype";
  if (!type->name().empty()) s += " (" + type->name() + ")";
  s += have_elem ? std::string(" of ") + builtin_info(elem).name + " elements" : " of mixed basic types";
  return s;
}

}  // namespace

Op Op::user(UserFunction fn, bool commute) {
  Op op(OpKind::User);
  op.commute_ = commute;
  op.fn_ = std::make_shared<const UserFunction>(std::move(fn));
  return op;
}

const char* Op::name() const { return kOpNames[static_cast<int>(kind_)]; }

bool element_type(const Datatype* type, Builtin* out) {
  if (type->builtin_id(out)) return true;
  Envelope env;
  if (type_get_envelope(type, &env) != ErrorClass::Success || env.num_datatypes == 0) return false;
  std::vector<int> ints(static_cast<std::size_t>(env.num_integers));
  std::vector<std::ptrdiff_t> addrs(static_cast<std::size_t>(env.num_addresses));
  std::vector<const Datatype*> kids(static_cast<std::size_t>(env.num_datatypes));
  if (type_get_contents(type, env.num_integers, env.num_addresses, env.num_datatypes, ints.data(), addrs.data(),
                        kids.data()) != ErrorClass::Success) {
    return false;
  }
  bool ok = true;
  for (std::size_t i = 0; i < kids.size(); ++i) {
    Builtin b;
    if (!element_type(kids[i], &b) || (i > 0 && b != *out)) ok = false;
    *out = b;
  }
  for (const Datatype* k : kids) k->release();  // get_contents handed us references
  return ok;
}

int check_op(ErrorLog& log, const Op& op, const Datatype* type, bool accumulate) {
  if (!type) return log.raise(ErrorClass::Type, "datatype is null");
  if (op.kind() == OpKind::User) return 0;
  if (!accumulate && (op.kind() == OpKind::Replace || op.kind() == OpKind::NoOp)) {
    return log.raise(ErrorClass::Op, "%s is only for accumulate operations, not for reductions on %s", op.name(),
                     describe(type, false, Builtin::kByte).c_str());
  }
  Builtin b = Builtin::kByte;
  bool uniform = element_type(type, &b);
  if (!uniform || !op_accepts(op.kind(), b)) {
    return log.raise(ErrorClass::Op, "%s is not defined for %s", op.name(), describe(type, uniform, b).c_str());
  }
  return 0;
}

int reduce_local(ErrorLog& log, const void* in, void* inout, std::size_t count, const Datatype* type, const Op& op) {
  if (int e = check_op(log, op, type)) return e;
  if (count == 0 || type->size() == 0) return 0;
  if (!in || !inout) return log.raise(ErrorClass::Buffer, "reduce_local: null buffer with count %zu", count);
  if (op.kind() == OpKind::User) {
    // The user function takes an int count: feed it in slices.
    for (std::size_t done = 0; done < count;) {
      std::size_t n = std::min<std::size_t>(count - done, INT_MAX);
      op.function()(elem_at(in, done, type), elem_at(inout, done, type), static_cast<int>(n), type);
      done += n;
    }
    return 0;
  }
  Builtin b;
  element_type(type, &b);
  const BuiltinInfo& info = builtin_info(b);
  if (type->is_predefined()) {
    apply(op.kind(), b, in, inout, count, static_cast<std::size_t>(type->extent()));
  } else if (type->is_contiguous() && is_basic(b)) {
    std::size_t n = count * type->size() / info.size;
    apply(op.kind(), b, static_cast<const std::byte*>(in) + type->true_lb(),
          static_cast<std::byte*>(inout) + type->true_lb(), n, info.size);
  } else {
    // Scattered elements: combine the packed streams, then put them back.
    std::size_t bytes = count * type->size();
    std::unique_ptr<std::byte[]> a(new std::byte[bytes]), c(new std::byte[bytes]);
    pack(in, count, type, a.get());
    pack(inout, count, type, c.get());
    apply(op.kind(), b, a.get(), c.get(), bytes / info.size, info.size);
    unpack(c.get(), inout, count, type);
  }
  return 0;
}

}  // namespace adi3::coll
