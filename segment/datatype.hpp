// MPI datatypes: predefined types, the constructors, and the committed
// compact form the Segment packer walks.
//
// CONTRACT used by the core (adi3/): keep these signatures stable.
//
// Ownership: a derived type is created with one reference (the user's
// handle); release() drops it and the object is destroyed when the last
// reference goes, so a type freed while a Segment or request holds it stays
// valid. Derived types hold references to their component types.
// Predefined types are immutable constants; retain/release are no-ops.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "segment/builtin.hpp"

namespace adi3 {

namespace detail {
struct Program;
struct TypeAccess;
}  // namespace detail
class Representation;

// MPI_COMBINER_* (values as in MPICH's mpi.h, so a C shim maps 1:1).
enum class Combiner : int {
  kNamed = 1,
  kDup = 2,
  kContiguous = 3,
  kVector = 4,
  kHvector = 6,
  kIndexed = 7,
  kHindexed = 9,
  kIndexedBlock = 10,
  kStruct = 12,
  kSubarray = 13,
  kDarray = 14,
  kResized = 18,
  kHindexedBlock = 19,
};

class Datatype {
 public:
  // Bytes of data in one element (the size of the type signature).
  // (The queries are inline: every message asks several of them.)
  std::size_t size() const { return size_; }
  // MPI extent, lb, true extent and true lb, in bytes.
  std::ptrdiff_t extent() const { return extent_; }
  std::ptrdiff_t lb() const { return lb_; }
  std::ptrdiff_t true_extent() const { return true_extent_; }
  std::ptrdiff_t true_lb() const { return true_lb_; }
  // True when `count` elements starting at buf + true_lb() form one run of
  // count * size() bytes (so the core can skip the packer entirely).
  bool is_contiguous() const { return size_ == 0 || (dense_ && extent_ == static_cast<std::ptrdiff_t>(size_)); }
  bool is_committed() const { return committed_.load(std::memory_order_acquire); }
  bool is_predefined() const { return predefined_; }
  // Reference counting: a type freed while a request uses it stays valid.
  // No-ops for predefined types.
  void retain() const {
    if (!predefined_) refs_.fetch_add(1, std::memory_order_relaxed);
  }
  void release() const {
    if (!predefined_) release_derived();
  }

  // The predefined MPI_BYTE type (the core's default).
  static const Datatype* byte();

  // ---- additions (not used by the core contract) ----

  // The predefined type b (never null, never to be released).
  static const Datatype* builtin(Builtin b);
  // For predefined types: which one; for derived types: nothing.
  bool builtin_id(Builtin* out) const;

  std::ptrdiff_t ub() const { return lb_ + extent_; }
  std::ptrdiff_t true_ub() const { return true_lb_ + true_extent_; }
  Combiner combiner() const { return combiner_; }
  // Number of basic (typemap) elements in one element of this type.
  std::uint64_t basic_count() const { return nbasic_; }

  // MPI_Type_commit: builds the compact form. Idempotent; always succeeds
  // for a valid type (the program is also built on first use if needed).
  void commit();

  // The compiled native program (built once, on first call).
  const detail::Program& native_program() const;
  // The compiled program for `rep` (cached for native, external32 and the
  // internal element-counting form; compiled afresh for others).
  std::shared_ptr<const detail::Program> program_for(const Representation& rep) const;

  // Name (MPI_Type_get_name / set_name). Predefined types carry their MPI
  // name; derived types start with "". Not synchronised: set names before
  // sharing the type between threads.
  const std::string& name() const { return name_; }
  // Fails (ErrorClass::Type) on a predefined type: those are immutable.
  bool set_name(std::string name);

  Datatype(const Datatype&) = delete;
  Datatype& operator=(const Datatype&) = delete;

 private:
  friend struct detail::TypeAccess;

  // How the typemap is laid out, before compilation.
  enum class Shape : std::uint8_t { kBasic, kVector, kIndexed, kStruct, kResized };

  Datatype() = default;
  ~Datatype();
  void release_derived() const;

  // Layout (the compiler and the reference of every query).
  Shape shape_ = Shape::kBasic;
  Builtin builtin_ = Builtin::kByte;  // kBasic: which predefined type
  bool predefined_ = false;
  std::int64_t count_ = 0;                 // kVector: blocks; kResized: the extent
  std::int64_t blocklen_ = 0;              // kVector, and kIndexed when blocklens_ is empty
  std::ptrdiff_t stride_ = 0;              // kVector: bytes between blocks; kResized: lb
  std::vector<std::int64_t> blocklens_;    // kIndexed / kStruct
  std::vector<std::ptrdiff_t> disps_;      // kIndexed / kStruct, bytes
  std::vector<const Datatype*> children_;  // owned references

  // Envelope / contents exactly as the user gave them (owned references).
  Combiner combiner_ = Combiner::kNamed;
  std::vector<int> ints_;
  std::vector<std::ptrdiff_t> addrs_;
  std::vector<const Datatype*> types_;

  // Derived properties.
  std::size_t size_ = 0;
  std::ptrdiff_t lb_ = 0, extent_ = 0;
  std::ptrdiff_t true_lb_ = 0, true_extent_ = 0;
  bool sticky_lb_ = false, sticky_ub_ = false;  // explicit bounds (resized)
  std::uint16_t align_ = 1;
  bool dense_ = true;  // data is one in-order run of size_ bytes
  std::uint64_t nbasic_ = 0;
  std::uint32_t basic_size_ = 0;  // size of every basic element, 0 if mixed/none

  std::string name_;
  mutable std::atomic<std::int64_t> refs_{1};
  std::atomic<bool> committed_{false};

  mutable std::once_flag native_once_;
  mutable std::shared_ptr<const detail::Program> native_;
  // native_.get() once built: every pack reads it without call_once's cost.
  mutable std::atomic<const detail::Program*> native_ready_{nullptr};
  mutable std::once_flag ext32_once_;
  mutable std::shared_ptr<const detail::Program> ext32_;
  mutable std::once_flag typed_once_;  // native sizes, typed runs (get_elements)
  mutable std::shared_ptr<const detail::Program> typed_;
};

}  // namespace adi3
