// Internal: strided gathers (packing) with streaming stores, for batches
// too large to stay in the core's L2 cache.
//
// Why: a gather whose input span and output together exceed L2 reads its
// input from L3 on every call, and ordinary stores first read each output
// line for ownership, so the output's lines compete with the input's for
// L2. Streaming stores write whole lines without reading them. Measured
// on this 2-core Xeon (L2 2 MiB), one double of two, both cores packing,
// CPU-time MB/s of packed data: 1 MiB 7800-8400 -> 8800-11500, 4 MiB
// 5200-6500 -> 4800-8100, 768 KiB (2.3 MiB touched) 10500-11600 ->
// 10900-13900; 512 KiB (1.5 MiB touched) 15800-21000 -> 11700-14500 and
// 64 KiB 24000-27000 -> 14300-15000: below L2, ordinary stores win.
#pragma once
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "segment/cursor.hpp"

namespace adi3::detail {

// Bytes a batch touches (input span plus output) from which it streams:
// the L2 cache's size (sysconf; 2 MiB when unknown). Read once.
inline std::size_t stream_gather_min() {
  static const std::size_t min = [] {
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return l2 > 0 ? static_cast<std::size_t>(l2) : std::size_t{2} << 20;
  }();
  return min;
}

#if defined(__SSE2__)
// m runs of len bytes at stride into s with streaming stores; nullptr when
// this batch is not for them (too small, a run shape without a streaming
// loop, an output that is not 16-byte aligned). Ends with a store fence:
// whatever the caller publishes after it is ordered after the data.
inline char* gather_stream(char* s, Addr mem, std::size_t len, std::ptrdiff_t stride, std::size_t m) {
  const std::size_t span = static_cast<std::size_t>(stride < 0 ? -stride : stride);
  if (m < 64 || m * (span + len) < stream_gather_min()) return nullptr;
  const char* p = reinterpret_cast<const char*>(mem);
  if (len == 8 && stride == 16) {
    // Every other double: two runs per 16-byte store.
    if (reinterpret_cast<uintptr_t>(s) % 8 != 0) return nullptr;
    if (reinterpret_cast<uintptr_t>(s) % 16 != 0) {
      std::memcpy(s, p, 8);
      s += 8, p += 16, --m;
    }
    std::size_t k = 0;
    for (; k + 4 <= m; k += 4, p += 64, s += 32) {
      const auto* d = reinterpret_cast<const double*>(p);
      _mm_stream_pd(reinterpret_cast<double*>(s), _mm_loadh_pd(_mm_load_sd(d), d + 2));
      _mm_stream_pd(reinterpret_cast<double*>(s + 16), _mm_loadh_pd(_mm_load_sd(d + 4), d + 6));
    }
    for (; k < m; ++k, p += 16, s += 8) std::memcpy(s, p, 8);
    _mm_sfence();
    return s;
  }
  if (len % 16 != 0 || len > 256 || reinterpret_cast<uintptr_t>(s) % 16 != 0) return nullptr;
  // Runs of whole 16-byte lanes (16, 32, 64 bytes: blocks of doubles).
  for (std::size_t k = 0; k < m; ++k, p += stride) {
    for (std::size_t b = 0; b < len; b += 16, s += 16) {
      _mm_stream_si128(reinterpret_cast<__m128i*>(s), _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + b)));
    }
  }
  _mm_sfence();
  return s;
}
#else
inline char* gather_stream(char*, Addr, std::size_t, std::ptrdiff_t, std::size_t) { return nullptr; }
#endif

}  // namespace adi3::detail
