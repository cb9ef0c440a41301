// Internal: the strided copy kernels under the raw ops (copy_ops.hpp).
//
// Runs of 1, 2, 4, 8, 16, 32 and 64 bytes move as whole registers, four
// runs per step. A run is loaded into values of a register-sized lane type
// (an integer, or a GCC vector of 16 or 32 bytes) and stored from them: a
// byte-array temporary instead made GCC 12 write every chunk to the stack
// as well, doubling the stores of a 64-byte gather. 32- and 64-byte runs
// take an AVX2 build of the same loop when the CPU has it (32-byte lanes:
// half the loads and stores; stores bound a cache-resident gather). Other
// lengths go through copy_var (short runs without a library call).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "segment/cursor.hpp"

namespace adi3::detail {

inline char* ptr(Addr a) { return reinterpret_cast<char*>(a); }

// The register type that moves B bytes at once.
template <std::size_t B>
struct Lane;
template <>
struct Lane<1> {
  using type = std::uint8_t;
};
template <>
struct Lane<2> {
  using type = std::uint16_t;
};
template <>
struct Lane<4> {
  using type = std::uint32_t;
};
template <>
struct Lane<8> {
  using type = std::uint64_t;
};
template <>
struct Lane<16> {
  using type [[gnu::vector_size(16)]] = char;
};
template <>
struct Lane<32> {
  // Only used inside functions built for AVX (a 32-byte vector has no
  // register elsewhere).
  using type [[gnu::vector_size(32)]] = char;
};

// One run of W bytes from `from` to `to`, in lanes of B bytes.
template <std::size_t W, std::size_t B>
[[gnu::always_inline]] inline void move_run(char* to, const char* from) {
  using L = typename Lane<B>::type;
  static_assert(W % B == 0 && W / B <= 4);
  L a, b, c, d;
  std::memcpy(&a, from, B);
  if constexpr (W / B > 1) std::memcpy(&b, from + B, B);
  if constexpr (W / B > 2) std::memcpy(&c, from + 2 * B, B);
  if constexpr (W / B > 3) std::memcpy(&d, from + 3 * B, B);
  std::memcpy(to, &a, B);
  if constexpr (W / B > 1) std::memcpy(to + B, &b, B);
  if constexpr (W / B > 2) std::memcpy(to + 2 * B, &c, B);
  if constexpr (W / B > 3) std::memcpy(to + 3 * B, &d, B);
}

// Gathers m runs of W bytes at stride into the stream s (or scatters, if
// !kGather), in lanes of B bytes, four runs per step. kAhead > 0
// prefetches that many runs ahead: far-apart runs (a new page every run
// or two) defeat the hardware prefetcher.
template <bool kGather, std::size_t W, std::size_t B, std::size_t kAhead>
[[gnu::always_inline]] inline char* strided_loop(char* s, Addr mem, std::ptrdiff_t stride, std::size_t m) {
  std::size_t k = 0;
  for (; k + 4 <= m; k += 4) {
    if constexpr (kAhead > 0) {
      if (k + kAhead + 4 <= m) {
        for (std::ptrdiff_t a = 0; a < 4; ++a) {
          __builtin_prefetch(ptr(add(mem, (static_cast<std::ptrdiff_t>(kAhead) + a) * stride)), kGather ? 0 : 1);
        }
      }
    }
    for (std::ptrdiff_t r = 0; r < 4; ++r) {
      char* p = ptr(add(mem, r * stride));
      if constexpr (kGather) {
        move_run<W, B>(s + r * W, p);
      } else {
        move_run<W, B>(p, s + r * W);
      }
    }
    s += 4 * W;
    mem = add(mem, 4 * stride);
  }
  for (; k < m; ++k) {
    if constexpr (kGather) {
      move_run<W, B>(s, ptr(mem));
    } else {
      move_run<W, B>(ptr(mem), s);
    }
    s += W;
    mem = add(mem, stride);
  }
  return s;
}

template <bool kGather, std::size_t W, std::size_t B>
[[gnu::always_inline]] inline char* strided_pick(char* s, Addr mem, std::ptrdiff_t stride, std::size_t m) {
  if ((stride > 512 || stride < -512) && m > 64) return strided_loop<kGather, W, B, 32>(s, mem, stride, m);
  return strided_loop<kGather, W, B, 0>(s, mem, stride, m);
}

#if defined(__x86_64__) && defined(__GNUC__)
#define ADI3_STRIDED_AVX2 1
// The loops for 32- and 64-byte runs built for AVX2 (strided_loop inlines
// into it). Chosen per batch by strided_fixed; never inlined into code
// built for the baseline ISA.
template <bool kGather, std::size_t W>
[[gnu::target("avx2"), gnu::noinline]] char* strided_avx2(char* s, Addr mem, std::ptrdiff_t stride, std::size_t m) {
  return strided_pick<kGather, W, 32>(s, mem, stride, m);
}
#endif

#if defined(__SSE2__)
// Every other double (stride 16): two runs per 16-byte store, each run
// loaded alone into a half (no load reaches past a run), four runs per
// step.
inline char* gather_every_other_double(char* s, Addr mem, std::size_t m) {
  const char* p = ptr(mem);
  std::size_t k = 0;
  for (; k + 4 <= m; k += 4, p += 64, s += 32) {
    const auto* d = reinterpret_cast<const double*>(p);
    __m128d a = _mm_loadh_pd(_mm_load_sd(d), d + 2);
    __m128d b = _mm_loadh_pd(_mm_load_sd(d + 4), d + 6);
    _mm_storeu_pd(reinterpret_cast<double*>(s), a);
    _mm_storeu_pd(reinterpret_cast<double*>(s + 16), b);
  }
  for (; k < m; ++k, p += 16, s += 8) std::memcpy(s, p, 8);
  return s;
}
#endif

template <bool kGather, std::size_t W>
inline char* strided_fixed(char* s, Addr mem, std::ptrdiff_t stride, std::size_t m) {
#if defined(ADI3_STRIDED_AVX2)
  if constexpr (W >= 32) {
    // libgcc's CPU model (read once at load time, the OS's support of the
    // YMM state included): a load and a test per batch.
    if (__builtin_cpu_supports("avx2")) return strided_avx2<kGather, W>(s, mem, stride, m);
  }
#endif
#if defined(__SSE2__)
  if constexpr (kGather && W == 8) {
    if (stride == 16) return gather_every_other_double(s, mem, m);
  }
#endif
  return strided_pick<kGather, W, (W < 16 ? W : 16)>(s, mem, stride, m);
}

// n > 16 bytes: up to 32 as two overlapping 16-byte moves, else memcpy.
[[gnu::noinline]] inline void copy_17_or_more(char* d, const char* s, std::size_t n) {
  if (n > 32) {
    std::memcpy(d, s, n);
    return;
  }
  using V = Lane<16>::type;
  V a, b;
  std::memcpy(&a, s, 16);
  std::memcpy(&b, s + n - 16, 16);
  std::memcpy(d, &a, 16);
  std::memcpy(d + n - 16, &b, 16);
}

// A copy of n bytes that avoids a library call for runs up to 32 bytes
// (struct fields, short blocks): two possibly overlapping fixed-size moves.
inline void copy_var(char* d, const char* s, std::size_t n) {
  if (n > 16) {
    copy_17_or_more(d, s, n);
  } else if (n >= 8) {
    std::uint64_t a, b;
    std::memcpy(&a, s, 8);
    std::memcpy(&b, s + n - 8, 8);
    std::memcpy(d, &a, 8);
    std::memcpy(d + n - 8, &b, 8);
  } else if (n >= 4) {
    std::uint32_t a, b;
    std::memcpy(&a, s, 4);
    std::memcpy(&b, s + n - 4, 4);
    std::memcpy(d, &a, 4);
    std::memcpy(d + n - 4, &b, 4);
  } else if (n) {
    d[0] = s[0];
    d[n - 1] = s[n - 1];
    d[n / 2] = s[n / 2];
  }
}

template <bool kGather>
inline char* strided(char* s, Addr mem, std::size_t len, std::ptrdiff_t stride, std::size_t m) {
  switch (len) {
    case 1:
      return strided_fixed<kGather, 1>(s, mem, stride, m);
    case 2:
      return strided_fixed<kGather, 2>(s, mem, stride, m);
    case 4:
      return strided_fixed<kGather, 4>(s, mem, stride, m);
    case 8:
      return strided_fixed<kGather, 8>(s, mem, stride, m);
    case 16:
      return strided_fixed<kGather, 16>(s, mem, stride, m);
    case 32:
      return strided_fixed<kGather, 32>(s, mem, stride, m);
    case 64:  // a cache line (blocks of 8 doubles): a library call per run cost 3x the copy
      return strided_fixed<kGather, 64>(s, mem, stride, m);
    default:
      break;
  }
  for (std::size_t k = 0; k < m; ++k) {
    if constexpr (kGather) {
      copy_var(s, ptr(mem), len);
    } else {
      copy_var(ptr(mem), s, len);
    }
    s += len;
    mem = add(mem, stride);
  }
  return s;
}

}  // namespace adi3::detail
