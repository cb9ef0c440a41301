// Copies of a few bytes without a library call. A point-to-point message of
// 8 or 16 bytes is copied twice (into the ring, out to the user's buffer);
// a call to memcpy through the PLT costs more than the copy. Up to 16 bytes
// the copy is two possibly overlapping loads and stores of a fixed size,
// which the compiler turns into plain moves.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace adi3 {

inline void copy_bytes(void* dst, const void* src, std::size_t n) {
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  if (n <= 16) [[likely]] {
    if (n >= 8) {
      uint64_t a, b;
      std::memcpy(&a, s, 8);
      std::memcpy(&b, s + n - 8, 8);
      std::memcpy(d, &a, 8);
      std::memcpy(d + n - 8, &b, 8);
    } else if (n >= 4) {
      uint32_t a, b;
      std::memcpy(&a, s, 4);
      std::memcpy(&b, s + n - 4, 4);
      std::memcpy(d, &a, 4);
      std::memcpy(d + n - 4, &b, 4);
    } else if (n) {
      // 1 to 3 bytes: first, middle and last (they overlap when n < 3).
      const char a = s[0], b = s[n / 2], c = s[n - 1];
      d[0] = a;
      d[n / 2] = b;
      d[n - 1] = c;
    }
    return;
  }
  std::memcpy(d, s, n);
}

}  // namespace adi3
