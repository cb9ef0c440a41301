// What the native fast atomics (rma/native_fast.hpp) may do with the
// elements of a predefined type, in a 3-byte record: Runtime keeps one per
// predefined type (the entry points of mpi/win_acc.cpp and win_atomics.cpp read it with one load
// where they classified the type and the op each call), and a native
// window the one of the last type its checked path asked about.
#pragma once
#include <cstddef>
#include <cstdint>

#include "coll/op.hpp"

namespace adi3::rma::native {

// What the fast path does to one element, under its stripe like every
// other accumulate on it (rma/atomic_acc.hpp).
enum class FastOp : uint8_t { None, Add, FloatAdd, Replace, Read };

struct FastElem {
  uint8_t size = 0;           // 4 or 8 bytes; 0: the fast atomics do not take the type
  FastOp sum = FastOp::None;  // what MPI_SUM does to an element
  bool cas = false;           // MPI_Compare_and_swap takes it (integer, logical, byte: MPI-3.1 11.3.4)
};

// The record of a predefined type of es bytes (one element: no padding,
// starting at its address) and class tc. A 4-byte floating type is float,
// an 8-byte one double.
constexpr FastElem fast_elem_class(std::size_t es, coll::TypeClass tc) {
  using TC = coll::TypeClass;
  FastElem e;
  if (es != 4 && es != 8) return e;
  e.size = static_cast<uint8_t>(es);
  e.sum = tc == TC::CInteger ? FastOp::Add : tc == TC::Floating ? FastOp::FloatAdd : FastOp::None;
  e.cas = tc == TC::CInteger || tc == TC::Logical || tc == TC::Byte || tc == TC::MultiLanguage;
  return e;
}

// The record of predefined type t (none for other types).
inline FastElem fast_elem_of(const Datatype* t) {
  Builtin b;
  if (!t || !t->is_predefined() || t->extent() != static_cast<std::ptrdiff_t>(t->size()) || t->true_lb() != 0 ||
      !t->builtin_id(&b)) {
    return {};
  }
  return fast_elem_class(t->size(), coll::type_class(b));
}

// The fast operation of op k on elements e, or None (the general path).
inline FastOp fast_op(coll::OpKind k, FastElem e) {
  switch (k) {
    case coll::OpKind::Sum:
      return e.sum;
    case coll::OpKind::Replace:
      return FastOp::Replace;
    case coll::OpKind::NoOp:
      return FastOp::Read;
    default:
      return FastOp::None;
  }
}

}  // namespace adi3::rma::native
