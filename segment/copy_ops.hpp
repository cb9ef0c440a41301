// Internal: what the cursor does with the runs it visits. Raw ops copy
// bytes (the hot path: strided batches go to the kernels of
// strided_copy.hpp); typed ops convert elements through a Representation.
#pragma once
#include <sys/uio.h>

#include <algorithm>
#include <cstring>

#include "segment/cursor.hpp"
#include "segment/representation.hpp"
#include "segment/stream_gather.hpp"
#include "segment/strided_copy.hpp"

namespace adi3::detail {

// Memory -> stream.
struct PackOp {
  static constexpr bool kRaw = true;
  static constexpr bool kBulk = true;
  static constexpr bool kGather = true;
  char* out;
  bool run(Addr p, std::size_t n) {
    copy_var(out, ptr(p), n);
    out += n;
    return true;
  }
  // m copies, stride apart, of the run list r. The cursor and the list
  // live in locals: byte stores may alias any memory, so members would be
  // reloaded after every run.
  void rep(Addr p, std::ptrdiff_t stride, std::size_t m, const Node& r) {
    const std::ptrdiff_t* d = r.disps.data();
    const std::size_t* l = r.lens.data();
    const std::size_t runs = r.count;
    char* o = out;
    for (std::size_t k = 0; k < m; ++k, p = add(p, stride)) {
      for (std::size_t q = 0; q < runs; ++q) {
        const std::size_t n = l[q];
        copy_var(o, ptr(add(p, d[q])), n);
        o += n;
      }
    }
    out = o;
  }
  std::size_t vec(Addr p, std::size_t len, std::ptrdiff_t stride, std::size_t m) {
    // Batches larger than L2 (a whole MPI_Pack of a long vector) stream.
    char* o = gather_stream(out, p, len, stride, m);
    out = o ? o : strided<true>(out, p, len, stride, m);
    return m;
  }
};

// Stream -> memory.
struct UnpackOp {
  static constexpr bool kRaw = true;
  static constexpr bool kBulk = true;
  static constexpr bool kGather = false;
  const char* in;
  bool run(Addr p, std::size_t n) {
    copy_var(ptr(p), in, n);
    in += n;
    return true;
  }
  void rep(Addr p, std::ptrdiff_t stride, std::size_t m, const Node& r) {
    const std::ptrdiff_t* d = r.disps.data();
    const std::size_t* l = r.lens.data();
    const std::size_t runs = r.count;
    const char* i = in;
    for (std::size_t k = 0; k < m; ++k, p = add(p, stride)) {
      for (std::size_t q = 0; q < runs; ++q) {
        const std::size_t n = l[q];
        copy_var(ptr(add(p, d[q])), i, n);
        i += n;
      }
    }
    in = i;
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
