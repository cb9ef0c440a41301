// Overflow-checked sizes of typed buffers. A message's byte count and every
// offset into it are kept below PTRDIFF_MAX, so both size_t and ptrdiff_t
// arithmetic on them is exact; callers turn a false into ERR_COUNT naming
// the numbers.
#pragma once
#include <cstddef>
#include <cstdint>

namespace adi3 {

// count elements of `size` bytes each.
inline bool checked_bytes(std::size_t count, std::size_t size, std::size_t* bytes) {
  std::size_t r = 0;
  if (__builtin_mul_overflow(count, size, &r) || r > static_cast<std::size_t>(PTRDIFF_MAX)) return false;
  *bytes = r;
  return true;
}

// The memory count elements of this extent and true extent reach:
// (count - 1) * extent + true_extent, which must be addressable.
inline bool checked_span(std::size_t count, std::ptrdiff_t extent, std::ptrdiff_t true_extent, std::ptrdiff_t* span) {
  if (count == 0) {
    *span = 0;
    return true;
  }
  std::ptrdiff_t r = 0;
  if (count - 1 > static_cast<std::size_t>(PTRDIFF_MAX)) return false;
  if (__builtin_mul_overflow(static_cast<std::ptrdiff_t>(count - 1), extent, &r)) return false;
  if (__builtin_add_overflow(r, true_extent, &r)) return false;
  *span = r;
  return true;
}

// The byte offset of element `index` (an MPI displacement) of this extent.
inline bool checked_offset(std::ptrdiff_t index, std::ptrdiff_t extent, std::ptrdiff_t* offset) {
  return !__builtin_mul_overflow(index, extent, offset);
}

}  // namespace adi3
