// Copies of one-sided data around a fault of `rep movsb` that some x86
// CPUs have (glibc 2.36 picks it from 2112 bytes up to its stop threshold,
// about the L2 per core): when the destination lies 1-63 bytes past the
// source modulo 4 KiB, every load waits for a store it aliases and the copy
// runs at 0.4-1.5 GB/s instead of 25. The VM's CPU until session 18 had
// it; the present one copies those distances at full speed (memmove 34
// GB/s at 64 KiB, 16 bytes past), where the detour below is not needed.
// That distance is common: malloc returns large blocks 16 bytes into a
// page and windows start on a page, so a get from a window into a
// malloc'd buffer met it every time (get_bw_flush_alloc 64 KiB: 2.8 GB/s
// against MPICH's 5.5). There a forward loop of 16-byte moves, eight loads
// then eight stores, copied at 22-25 GB/s (2 KiB - 384 KiB); below and
// above that range glibc's own loops were faster (at 4 MiB this loop fell
// to 4-7 GB/s, memmove kept 24), so only the faulty range takes it.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace adi3 {

// Whether memmove of n bytes from src to dst hits the fault.
inline bool copy_aliases_4k(const void* dst, const void* src, std::size_t n) {
  constexpr std::size_t kFrom = 2048, kBelow = 512 * 1024;
  const uintptr_t gap = (reinterpret_cast<uintptr_t>(dst) - reinterpret_cast<uintptr_t>(src)) & 4095;
  return n >= kFrom && n < kBelow && gap != 0 && gap < 64;
}

// Whether the loop below is taken for aliasing bytes: whether this CPU has
// the fault, timed once (best of 5 memmoves of 32 KiB 16 bytes past the
// source against 2 KiB past; the fault costs 10x, so 2x decides). Not every
// AMD part has it: on a Xeon (session 21) memmove ran 31-38 GB/s at 32-256
// KiB where the loop ran 17-38, and on the AMD EPYC of session 29 memmove
// ran 74-101 GB/s at 16-256 KiB, the loop 64-91.
#if defined(__x86_64__)
inline bool copy_fault_timed() {
  constexpr std::size_t kBytes = 32 * 1024, kSpan = 2 * kBytes + 8192;
  auto* buf = static_cast<char*>(std::aligned_alloc(4096, kSpan));
  if (!buf) return false;
  std::memset(buf, 1, kSpan);
  auto best = [&](std::size_t gap) {
    int64_t b = INT64_MAX;
    for (int i = 0; i < 5; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      std::memmove(buf + kBytes + 4096 + gap, buf, kBytes);
      asm volatile("" : : "r"(buf) : "memory");
      b = std::min<int64_t>(b, (std::chrono::steady_clock::now() - t0).count());
    }
    return b;
  };
  const int64_t aliased = best(16), plain = best(2048);
  std::free(buf);
  return aliased > 2 * plain;
}
inline bool copy_takes_loop() {
  static const bool slow = copy_fault_timed();  // a fact of the CPU, found once
  return slow;
}
#endif

// memmove's contract (the buffers may overlap), without the fault.
inline void bulk_move(void* dst, const void* src, std::size_t n) {
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
#if defined(__x86_64__)
  // Forward is wrong only where dst lies inside an overlapping src.
  if (copy_aliases_4k(dst, src, n) && copy_takes_loop() && !(d > s && d < s + n)) [[unlikely]] {
    std::size_t i = 0;
    // Named registers, not an array: GCC turned an array's loads and
    // stores into a `rep movsl` through the stack.
    auto load = [&](std::size_t at) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + at)); };
    auto store = [&](std::size_t at, __m128i v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(d + at), v); };
    for (; i + 128 <= n; i += 128) {
      const __m128i a = load(i), b = load(i + 16), c = load(i + 32), e = load(i + 48);
      const __m128i f = load(i + 64), g = load(i + 80), h = load(i + 96), k = load(i + 112);
      store(i, a);
      store(i + 16, b);
      store(i + 32, c);
      store(i + 48, e);
      store(i + 64, f);
      store(i + 80, g);
      store(i + 96, h);
      store(i + 112, k);
    }
    std::memmove(d + i, s + i, n - i);  // under 128 bytes: glibc's vector path
    return;
  }
#endif
  // Large copies in pieces of kPiece: glibc copies a large block with
  // non-temporal stores (its threshold sits below 1 MiB here), which miss
  // the caches the next reader (or the next put from the same buffer)
  // would hit. s29, AMD EPYC VM, into a MAP_SHARED segment, 16 bytes off:
  // whole / in 256 KiB pieces, GB/s: 1 MiB 41.0 / 52.3, 2 MiB 40.7 / 45.3,
  // 4 MiB 36.6 / 45.3, 16 MiB 22.2 / 26.6, 64 MiB 16.3 / 20.1.
  constexpr std::size_t kPiece = 256 * 1024;
  if (n > kPiece && (d + n <= s || s + n <= d)) {
    std::size_t i = 0;
    for (; n - i > kPiece; i += kPiece) std::memcpy(d + i, s + i, kPiece);
    std::memcpy(d + i, s + i, n - i);
    return;
  }
  std::memmove(dst, src, n);
}

}  // namespace adi3
