#include "segment/datatype.hpp"

namespace adi3 {

std::size_t Datatype::size() const { return size_; }
std::ptrdiff_t Datatype::extent() const { return extent_; }
std::ptrdiff_t Datatype::lb() const { return 0; }
std::ptrdiff_t Datatype::true_extent() const { return extent_; }
std::ptrdiff_t Datatype::true_lb() const { return 0; }
bool Datatype::is_contiguous() const { return true; }
bool Datatype::is_committed() const { return true; }
bool Datatype::is_predefined() const { return true; }
void Datatype::retain() const {}
void Datatype::release() const {}

const Datatype* Datatype::byte() {
  static const Datatype kByte(1, 1);
  return &kByte;
}

}  // namespace adi3
