// Internal: what the cursor does with the runs it visits. Raw ops copy
// bytes (the hot path: strided batches use fixed-size copies for 1, 2, 4,
// 8, 16, 32 and 64-byte runs, which compile to a few vector loads/stores); typed ops
// convert elements through a Representation.
#pragma once
#include <sys/uio.h>

#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "segment/cursor.hpp"
#include "segment/representation.hpp"

namespace adi3::detail {

inline char* ptr(Addr a) { return reinterpret_cast<char*>(a); }

template <std::size_t W>
struct Chunk {
  unsigned char b[W];
};

// Gathers m runs of W bytes at stride into the stream s (or scatters, if
// !kGather). Four runs per step, all loads before the stores so the
// compiler need not assume they alias. kAhead > 0 prefetches that many
// runs ahead: far-apart runs (a new page every run or two) defeat the
// hardware prefetcher.
template <bool kGather, std::size_t W, std::size_t kAhead>
inline char* strided_loop(char* s, Addr mem, std::ptrdiff_t stride, std::size_t m) {
  std::size_t k = 0;
  for (; k + 4 <= m; k += 4) {
    char* p0 = ptr(mem);
    char* p1 = ptr(add(mem, stride));
    char* p2 = ptr(add(mem, 2 * stride));
    char* p3 = ptr(add(mem, 3 * stride));
    if constexpr (kAhead > 0) {
      if (k + kAhead + 4 <= m) {
        for (std::ptrdiff_t a = 0; a < 4; ++a) {
          __builtin_prefetch(ptr(add(mem, (static_cast<std::ptrdiff_t>(kAhead) + a) * stride)), kGather ? 0 : 1);
        }
      }
    }
    Chunk<W> c0, c1, c2, c3;
    if constexpr (kGather) {
      std::memcpy(&c0, p0, W);
      std::memcpy(&c1, p1, W);
      std::memcpy(&c2, p2, W);
      std::memcpy(&c3, p3, W);
      std::memcpy(s, &c0, W);
      std::memcpy(s + W, &c1, W);
      std::memcpy(s + 2 * W, &c2, W);
      std::memcpy(s + 3 * W, &c3, W);
    } else {
      std::memcpy(&c0, s, W);
      std::memcpy(&c1, s + W, W);
      std::memcpy(&c2, s + 2 * W, W);
      std::memcpy(&c3, s + 3 * W, W);
      std::memcpy(p0, &c0, W);
      std::memcpy(p1, &c1, W);
      std::memcpy(p2, &c2, W);
      std::memcpy(p3, &c3, W);
    }
    s += 4 * W;
    mem = add(mem, 4 * stride);
  }
  for (; k < m; ++k) {
    if constexpr (kGather) {
      std::memcpy(s, ptr(mem), W);
    } else {
      std::memcpy(ptr(mem), s, W);
    }
    s += W;
    mem = add(mem, stride);
  }
  return s;
}

#if defined(__SSE2__)
// Every other double (stride 16): the source is read whole anyway, so load
// it 16 bytes at a time and keep the low halves; two runs per store.
inline char* gather_every_other_double(char* s, Addr mem, std::size_t m) {
  const char* p = ptr(mem);
  std::size_t k = 0;
  for (; k + 2 <= m; k += 2, p += 32, s += 16) {
    __m128d a = _mm_loadu_pd(reinterpret_cast<const double*>(p));
    __m128d b = _mm_loadu_pd(reinterpret_cast<const double*>(p + 16));
    _mm_storeu_pd(reinterpret_cast<double*>(s), _mm_unpacklo_pd(a, b));
  }
  if (k < m) {
    std::memcpy(s, p, 8);
    s += 8;
  }
  return s;
}
#endif

template <bool kGather, std::size_t W>
inline char* strided_fixed(char* s, Addr mem, std::ptrdiff_t stride, std::size_t m) {
#if defined(__SSE2__)
  if constexpr (kGather && W == 8) {
    if (stride == 16) return gather_every_other_double(s, mem, m);
  }
#endif
  if ((stride > 512 || stride < -512) && m > 64) return strided_loop<kGather, W, 32>(s, mem, stride, m);
  return strided_loop<kGather, W, 0>(s, mem, stride, m);
}

// A copy of n bytes that avoids a library call for the short runs typical
// of struct fields (two possibly overlapping fixed-size moves).
inline void copy_var(char* d, const char* s, std::size_t n) {
  if (n > 16) {
    std::memcpy(d, s, n);
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

// Memory -> stream.
struct PackOp {
  static constexpr bool kRaw = true;
  static constexpr bool kBulk = true;
  char* out;
  bool run(Addr p, std::size_t n) {
    copy_var(out, ptr(p), n);
    out += n;
    return true;
  }
  // m copies, stride apart, of the run list r.
  void rep(Addr p, std::ptrdiff_t stride, std::size_t m, const Node& r) {
    const std::ptrdiff_t* d = r.disps.data();
    const std::size_t* l = r.lens.data();
    for (std::size_t k = 0; k < m; ++k, p = add(p, stride)) {
      for (std::size_t q = 0; q < r.count; ++q) {
        copy_var(out, ptr(add(p, d[q])), l[q]);
        out += l[q];
      }
    }
  }
  std::size_t vec(Addr p, std::size_t len, std::ptrdiff_t stride, std::size_t m) {
    out = strided<true>(out, p, len, stride, m);
    return m;
  }
};

// Stream -> memory.
struct UnpackOp {
  static constexpr bool kRaw = true;
  static constexpr bool kBulk = true;
  const char* in;
  bool run(Addr p, std::size_t n) {
    copy_var(ptr(p), in, n);
    in += n;
    return true;
  }
  void rep(Addr p, std::ptrdiff_t stride, std::size_t m, const Node& r) {
    const std::ptrdiff_t* d = r.disps.data();
    const std::size_t* l = r.lens.data();
    for (std::size_t k = 0; k < m; ++k, p = add(p, stride)) {
      for (std::size_t q = 0; q < r.count; ++q) {
        copy_var(ptr(add(p, d[q])), in, l[q]);
        in += l[q];
      }
    }
  }
  std::size_t vec(Addr p, std::size_t len, std::ptrdiff_t stride, std::size_t m) {
    in = strided<false>(const_cast<char*>(in), p, len, stride, m);
    return m;
  }
};

// Describes runs as iovec entries, merging runs that touch.
struct IovOp {
  static constexpr bool kRaw = true;
  static constexpr bool kBulk = false;
  struct iovec* iov;
  std::size_t max;
  std::size_t n = 0;
  void rep(Addr, std::ptrdiff_t, std::size_t, const Node&) {}
  bool run(Addr p, std::size_t len) {
    if (n && reinterpret_cast<Addr>(iov[n - 1].iov_base) + iov[n - 1].iov_len == p) {
      iov[n - 1].iov_len += len;
      return true;
    }
    if (n == max) return false;
    iov[n].iov_base = ptr(p);
    iov[n].iov_len = len;
    ++n;
    return true;
  }
  std::size_t vec(Addr p, std::size_t len, std::ptrdiff_t stride, std::size_t m) {
    for (std::size_t k = 0; k < m; ++k, p = add(p, stride)) {
      if (!run(p, len)) return k;
    }
    return m;
  }
};

// Largest stream element (long double complex in external32).
inline constexpr std::size_t kMaxElem = 64;

struct EncodeOp {
  static constexpr bool kRaw = false;
  const Representation* rep;
  char* out;
  void elems(const Elem& e, Addr p, std::size_t m) {
    rep->encode(e.type, ptr(p), out, m);
    out += m * e.ssz;
  }
  void part(const Elem& e, Addr p, std::size_t b, std::size_t k) {
    unsigned char tmp[kMaxElem];
    rep->encode(e.type, ptr(p), tmp, 1);
    std::memcpy(out, tmp + b, k);
    out += k;
  }
};

// Partial elements are merged into the element's current encoding and
// decoded back, so unpacking needs no state between calls.
struct DecodeOp {
  static constexpr bool kRaw = false;
  const Representation* rep;
  const char* in;
  void elems(const Elem& e, Addr p, std::size_t m) {
    rep->decode(e.type, in, ptr(p), m);
    in += m * e.ssz;
  }
  void part(const Elem& e, Addr p, std::size_t b, std::size_t k) {
    unsigned char tmp[kMaxElem];
    rep->encode(e.type, ptr(p), tmp, 1);
    std::memcpy(tmp + b, in, k);
    rep->decode(e.type, tmp, ptr(p), 1);
    in += k;
  }
};

// Counts basic elements (get_elements); notes a partial one.
struct CountOp {
  static constexpr bool kRaw = false;
  std::uint64_t n = 0;
  bool partial = false;
  void elems(const Elem&, Addr, std::size_t m) { n += m; }
  void part(const Elem&, Addr, std::size_t, std::size_t) { partial = true; }
};

// Stream bytes taken by the first `want` basic elements (the inverse of
// CountOp, for MPI_Status_set_elements).
struct ElemBytesOp {
  static constexpr bool kRaw = false;
  std::uint64_t want = 0;
  std::size_t bytes = 0;
  void elems(const Elem& e, Addr, std::size_t m) {
    std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(m, want));
    bytes += k * e.ssz;
    want -= k;
  }
  void part(const Elem&, Addr, std::size_t, std::size_t) {}
};

}  // namespace adi3::detail
