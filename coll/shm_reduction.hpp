// The reduction of a shared-memory collective call (shm_coll.cpp,
// shm_reduce.cpp), resolved once, and the rank-order fold they share.
#pragma once
#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstring>

#include "adi3/device.hpp"
#include "coll/op.hpp"

namespace adi3::coll::detail {

class ShmNode;

// The reduction of one call, resolved once: a predefined type (its
// elements are extent bytes apart, no gaps to skip) and an op defined on
// it, applied straight through the kernels (reduce_local would check the
// pair again on every combine). Anything else goes to the scheduled path,
// which reports the error.
struct Reduction {
  const Datatype* type;
  const Op& op;
  Builtin b = Builtin::kByte;
  std::size_t ext = 0;

  bool resolve(std::size_t count) {
    if (!type || count == 0 || !type->is_committed() || !type->builtin_id(&b) || type->extent() <= 0) return false;
    ext = static_cast<std::size_t>(type->extent());
    if (op.kind() == OpKind::User) return true;
    return op.kind() != OpKind::Replace && op.kind() != OpKind::NoOp && op_accepts(op.kind(), b);
  }
  // inout = in op inout on n elements.
  void combine(const void* in, void* inout, std::size_t n) const {
    if (op.kind() != OpKind::User) {
      apply(op.kind(), b, in, inout, n, ext);
      return;
    }
    // The user function takes an int count: feed it in pieces.
    const auto* a = static_cast<const std::byte*>(in);
    auto* c = static_cast<std::byte*>(inout);
    for (std::size_t done = 0; done < n;) {
      const std::size_t k = std::min<std::size_t>(n - done, INT_MAX);
      op.function()(a + done * ext, c + done * ext, static_cast<int>(k), type);
      done += k;
    }
  }
};

// Element range [lo, hi) of slice j when m elements are cut p ways.
inline std::size_t cut(std::size_t m, int j, int p) {
  return m * static_cast<std::size_t>(j) / static_cast<std::size_t>(p);
}

// out = src[0] op src[1] op ... op src[p-1] over len elements, folded from
// the last rank down: rank order whatever the op, and the same bits on
// every rank that folds the same sources.
template <class Src>
void fold(const Reduction& red, Src&& src, int p, void* out, std::size_t len) {
  std::memcpy(out, src(p - 1), len * red.ext);
  for (int j = p - 2; j >= 0; --j) red.combine(src(j), out, len);
}

// A reduce of 3 or more ranks where they outnumber the processors, read
// directly (shm_reduce.cpp). Returns false, having moved nothing, when the
// members chose the segment; else it ran the reduce and set *err.
bool sliced_direct_reduce(Device& dev, ShmNode& n, const Reduction& red, const void* in, void* out, std::size_t count,
                          int root, int* err);

}  // namespace adi3::coll::detail
