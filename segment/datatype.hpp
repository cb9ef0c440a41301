// MPI datatypes: predefined types, the constructors, and the committed
// compact form the Segment packer walks.
//
// CONTRACT used by the core (adi3/): keep these signatures stable.
#pragma once
#include <cstddef>
#include <cstdint>

namespace adi3 {

class Datatype {
 public:
  // Bytes of data in one element (the size of the type signature).
  std::size_t size() const;
  // MPI extent, lb, true extent and true lb, in bytes.
  std::ptrdiff_t extent() const;
  std::ptrdiff_t lb() const;
  std::ptrdiff_t true_extent() const;
  std::ptrdiff_t true_lb() const;
  // True when `count` elements starting at buf + true_lb() form one run of
  // count * size() bytes (so the core can skip the packer entirely).
  bool is_contiguous() const;
  bool is_committed() const;
  bool is_predefined() const;
  // Reference counting: a type freed while a request uses it stays valid.
  // No-ops for predefined types.
  void retain() const;
  void release() const;

  // The predefined MPI_BYTE type (the core's default).
  static const Datatype* byte();

 private:
  // Temporary first cut: predefined contiguous types only.
  friend struct DatatypeAccess;
  Datatype(std::size_t size, std::ptrdiff_t extent) : size_(size), extent_(extent) {}
  std::size_t size_ = 0;
  std::ptrdiff_t extent_ = 0;
};

}  // namespace adi3
