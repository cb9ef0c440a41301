// Internal: packing or unpacking a whole (buf, count, type) in one pass.
//
// MPI_Pack, MPI_Unpack and a message that fits one packet cover the whole
// stream at once: no cursor to place and no frames to keep, just the
// program's tree walked depth first, each leaf handed to the op as one
// batch (a strided leaf is one call of the strided kernels). Op is a raw
// bulk op (PackOp or UnpackOp): it takes every run it is given.
#pragma once
#include <cstddef>

#include "segment/cursor.hpp"
#include "segment/program.hpp"

namespace adi3::detail {

// One instance of n at base.
template <class Op>
void walk_node(const Node& n, Addr base, Op& op) {
  switch (n.kind) {
    case NodeKind::kVecRuns:
      op.vec(add(base, n.disp0), n.len, n.stride, n.count);
      return;
    case NodeKind::kRuns:
      op.rep(base, 0, 1, n);
      return;
    case NodeKind::kRepRuns:
      op.rep(add(base, n.disp0), n.stride, n.count, *n.child);
      return;
    default:
      break;
  }
  for (std::size_t i = 0; i < n.count; ++i) {
    const Node& k = *n.kid(i);
    const std::ptrdiff_t ext = n.kid_extent(i);
    Addr b = add(base, n.block_disp(i));
    for (std::size_t j = 0, len = n.block_len(i); j < len; ++j, b = add(b, ext)) walk_node(k, b, op);
  }
}

// count instances of a raw program p (extent apart) from buf. Copies that
// line up continue the root's own batch (count copies of a strided leaf
// are one longer strided batch), as Segment folds them.
template <class Op>
void walk_whole(const Program& p, Addr buf, std::size_t count, Op& op) {
  const Node& r = *p.root;
  const std::ptrdiff_t ext = p.extent;
  if (count == 1) {
    walk_node(r, buf, op);
    return;
  }
  if (r.kind == NodeKind::kVecRuns && r.count == 1) {
    op.vec(add(buf, r.disp0), r.len, ext, count);
  } else if (r.kind == NodeKind::kVecRuns && static_cast<std::ptrdiff_t>(r.count) * r.stride == ext) {
    op.vec(add(buf, r.disp0), r.len, r.stride, count * r.count);
  } else if (r.kind == NodeKind::kRuns) {
    op.rep(buf, ext, count, r);
  } else if (r.kind == NodeKind::kRepRuns && static_cast<std::ptrdiff_t>(r.count) * r.stride == ext) {
    op.rep(add(buf, r.disp0), r.stride, count * r.count, *r.child);
  } else {
    for (std::size_t i = 0; i < count; ++i, buf = add(buf, ext)) walk_node(r, buf, op);
  }
}

}  // namespace adi3::detail
