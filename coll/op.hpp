// Reduction operations (MPI_Op): the predefined ones with MPI's rules of
// which type classes each accepts, user functions, and reduce_local. The
// collectives and, later, RMA accumulate apply ops through this header.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>

#include "adi3/error.hpp"
#include "segment/builtin.hpp"
#include "segment/datatype.hpp"

namespace adi3 {
class Device;
}

namespace adi3::coll {

// Predefined operations, in the order of MPI's MPI_MAX..MPI_NO_OP.
enum class OpKind : unsigned char {
  Max,
  Min,
  Sum,
  Prod,
  Land,
  Band,
  Lor,
  Bor,
  Lxor,
  Bxor,
  Maxloc,
  Minloc,
  Replace,
  NoOp,
  User,  // not predefined: a user function
};

// MPI_User_function in C++ form: inout[i] = in[i] op inout[i] for count
// elements of type, both buffers laid out as type describes.
using UserFunction = std::function<void(const void* in, void* inout, int count, const Datatype* type)>;

// An operation handle. Cheap to copy (the user function is shared), so a
// nonblocking collective keeps its own copy and the caller may free theirs.
class Op {
 public:
  explicit Op(OpKind kind) : kind_(kind) {}
  static Op user(UserFunction fn, bool commute);

  OpKind kind() const { return kind_; }
  bool is_predefined() const { return kind_ != OpKind::User; }
  bool commutative() const { return kind_ != OpKind::User || commute_; }
  const UserFunction& function() const { return *fn_; }
  const char* name() const;  // "MPI_SUM", or "user-defined op"

 private:
  OpKind kind_;
  bool commute_ = true;
  std::shared_ptr<const UserFunction> fn_;
};

// MPI's type classes for reductions (MPI-3.1 section 5.9.2).
enum class TypeClass : unsigned char { CInteger, Floating, Logical, Complex, Byte, MultiLanguage, Pair, None };
TypeClass type_class(Builtin b);

// Whether a predefined op is defined on predefined type b. REPLACE and
// NO_OP accept every type (they exist for accumulate).
bool op_accepts(OpKind op, Builtin b);

// The one predefined type every basic element of `type` is (a pair type
// counts as one element), found by walking the constructor tree; false if
// they are mixed or the type has none.
bool element_type(const Datatype* type, Builtin* out);

// Checks that op may reduce elements of type; returns 0 or an error code of
// class Op whose message names both. `accumulate` also admits REPLACE and
// NO_OP, which collectives refuse.
int check_op(ErrorLog& log, const Op& op, const Datatype* type, bool accumulate = false);

// inout = in op inout on n elements of predefined type b laid `stride` bytes
// apart (a pair type packed is size() apart, in memory extent() apart).
// Pairs may sit unaligned; plain scalars must be aligned for their type.
void apply(OpKind op, Builtin b, const void* in, void* inout, std::size_t n, std::size_t stride);

// The loop of predefined type b (pair types excepted, and types without
// arithmetic): inout[i] = in[i] op inout[i] for n packed elements, any op
// op_accepts(op, b) allows but REPLACE and NO_OP; nullptr for the others.
// A caller that reduces one (type, op) pair often looks it up once.
using Kernel = void (*)(OpKind op, const void* in, void* inout, std::size_t n);
Kernel kernel_of(Builtin b);

// MPI_Reduce_local: inout = in op inout for count elements of type, any
// layout (derived types of one predefined element type are packed, combined
// and unpacked). Returns 0 or an error code (Op, Type, Buffer).
int reduce_local(Device& dev, const void* in, void* inout, std::size_t count, const Datatype* type, const Op& op);
int reduce_local(ErrorLog& log, const void* in, void* inout, std::size_t count, const Datatype* type, const Op& op);

}  // namespace adi3::coll
