// Reducer: how a reduction collective stores, moves and combines its vector
// of elements. Two work forms, chosen once per call:
//  - layout: work buffers are laid out like the user's (count, type), element
//    i at base + i * extent (temporaries sized from the true extent, as
//    MPICH does); used for user ops and predefined or contiguous types, so
//    user buffers serve as work buffers without copies;
//  - packed: work buffers hold the packed stream of the type's one basic
//    element type; used for predefined ops on noncontiguous derived types,
//    packed on entry and unpacked on exit.
// Algorithms speak in work elements [first, first + n) of a base pointer.
#pragma once
#include <cstddef>

#include "adi3/error.hpp"
#include "coll/op.hpp"
#include "coll/schedule.hpp"

namespace adi3::coll {

class Reducer {
 public:
  // Checks op on type (ErrorClass::Op) and picks the work form for count
  // elements. The caller keeps type alive (Schedule::keep).
  static int make(ErrorLog& log, const Op& op, const Datatype* type, std::size_t count, Reducer* out);

  std::size_t elems() const { return n_; }            // work elements of the whole vector
  std::size_t per_item() const { return per_item_; }  // work elements per user element
  std::size_t bytes() const { return bytes_; }        // data bytes of the vector
  bool commutative() const { return op_.commutative(); }
  const Op& op() const { return op_; }

  std::byte* at(const void* base, std::size_t i) const {
    return static_cast<std::byte*>(const_cast<void*>(base)) + static_cast<std::ptrdiff_t>(i) * stride_;
  }
  // A schedule-owned work buffer for n elements.
  std::byte* temp(Schedule& s, std::size_t n) const;
  // A schedule-owned work copy of the user's vector (taken now).
  std::byte* copy_in(Schedule& s, const void* user) const;
  // A schedule-owned copy of a work buffer (taken now).
  std::byte* dup(Schedule& s, const void* work) const;
  // A read-only work view of the user's vector (a packed copy if needed).
  std::byte* view(Schedule& s, const void* user) const;
  // Whether work buffers may be user buffers (no packing).
  bool layout() const { return !packed_; }

  // Schedule steps on work elements [first, first + n).
  void send(Schedule& s, const void* base, std::size_t first, std::size_t n, int peer) const;
  void recv(Schedule& s, void* base, std::size_t first, std::size_t n, int peer) const;
  // inout = in op inout, as a local step.
  void combine(Schedule& s, const void* in, void* inout, std::size_t first, std::size_t n) const;
  void copy(Schedule& s, const void* from, void* to, std::size_t first, std::size_t n) const;
  // Local step: work elements [first, first + n) (whole user elements) into
  // the same elements of the user's buffer; nothing if they are one buffer.
  void copy_out(Schedule& s, const void* work, void* user, std::size_t first, std::size_t n) const;

  // The same, done at once.
  void combine_now(const void* in, void* inout, std::size_t first, std::size_t n) const;
  void copy_now(const void* from, void* to, std::size_t first, std::size_t n) const;

 private:
  Op op_{OpKind::Sum};
  const Datatype* type_ = nullptr;
  Builtin elem_ = Builtin::kByte;
  bool packed_ = false;
  std::size_t n_ = 0, per_item_ = 1, bytes_ = 0;
  std::size_t stride_ = 0;   // bytes between work elements
  std::ptrdiff_t lb_ = 0;    // data offset from an element's base (layout)
  std::size_t kper_ = 1;     // predefined kernel elements per work element
  std::size_t kstride_ = 0;  // bytes between kernel elements
};

}  // namespace adi3::coll
