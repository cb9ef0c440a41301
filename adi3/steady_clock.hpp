// The monotonic clock in nanoseconds, for the library's deadlines, watches
// and timings (one definition for every layer).
#pragma once
#include <chrono>
#include <cstdint>

namespace adi3 {

inline int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace adi3
