#include "coll/express.hpp"

#include <cstring>

#include "coll/shm_node.hpp"
#include "coll/tuning.hpp"

namespace adi3::coll {

using detail::ShmNode;

namespace {

// A copy of a few bytes without a call into the C library (the common
// case: one scalar); longer ones are memcpy's.
inline void copy(void* to, const void* from, std::size_t n) {
  auto* d = static_cast<unsigned char*>(to);
  const auto* s = static_cast<const unsigned char*>(from);
  if (n >= 8 && n <= 16) {
    std::memcpy(d, s, 8);  // two overlapping words
    std::memcpy(d + n - 8, s + n - 8, 8);
  } else if (n >= 4 && n < 8) {
    std::memcpy(d, s, 4);
    std::memcpy(d + n - 4, s + n - 4, 4);
  } else {
    std::memcpy(d, s, n);
  }
}

// out = slot[0] op ... op slot[p-1], folded from the last rank down: the
// order, and so the bits, of shm_coll.cpp's fold. This rank's term comes
// from `in` (own_term), not from its slot.
inline void fold(const ShmNode& n, const ExpressOp& r, const void* in, void* out, std::size_t count,
                 std::size_t bytes) {
  const int p = n.size();
  copy(out, own_term(n, p - 1, in, out, bytes), bytes);
  for (int j = p - 2; j >= 0; --j) r.fn(r.op, own_term(n, j, in, out, bytes), out, count);
}

// Every rank puts its input in its slot; the root (every rank: root < 0)
// folds them.
inline int reduction(ShmNode& n, const void* in, void* out, std::size_t count, const ExpressOp& r, int root) {
  const std::size_t bytes = count * r.size;
  const uint64_t s = n.begin(1, bytes);
  std::byte* mine = nullptr;
  if (int e = n.claim_slot(&mine)) return e;
  copy(mine, in, bytes);
  if (root >= 0 && n.rank() != root) {
    n.publish(s);
    return 0;
  }
  if (int e = n.publish_wait_slots(s)) return e;
  fold(n, r, in, out, count, bytes);
  return 0;
}

}  // namespace

bool express_op(OpKind op, const Datatype* type, ExpressOp* out) {
  Builtin b = Builtin::kByte;
  if (!type || !type->is_committed() || !type->builtin_id(&b) || !type->is_contiguous() || type->size() == 0) {
    return false;
  }
  if (op == OpKind::User || op == OpKind::Replace || op == OpKind::NoOp || !op_accepts(op, b)) return false;
  Kernel fn = kernel_of(b);
  if (!fn) return false;
  *out = ExpressOp{fn, op, type->size()};
  return true;
}

Express::State Express::probe(Device& dev, const Comm& comm, Express* out) {
  const Tuning& t = default_tuning();
  if (!t.shm || comm.size < 2 || comm.size > detail::kShmMaxRanks) return State::Off;
  bool ready = false;
  ShmNode* n = ShmNode::made(dev, comm, &ready);
  if (!n) return State::Unknown;
  if (!ready) return State::Off;
  out->node_ = n;
  out->limit_ = n->slot_limit();
  out->size_ = n->size();
  out->bcast_ = t.bcast == BcastAlgo::Auto;
  out->reduce_ = t.reduce == ReduceAlgo::Auto;
  out->allreduce_ = t.allreduce == AllreduceAlgo::Auto;
  return State::Ready;
}

bool Express::barrier(int* err) const {
  ShmNode& n = *node_;
  const uint64_t s = n.begin_barrier();
  *err = n.post_wait_all(s);
  return true;
}

bool Express::allreduce(const void* in, void* out, std::size_t count, const ExpressOp& r, int* err) const {
  if (!allreduce_ || count > limit_ || count * r.size > limit_) return false;
  *err = reduction(*node_, in, out, count, r, -1);
  return true;
}

bool Express::reduce(const void* in, void* out, std::size_t count, const ExpressOp& r, int root, int* err) const {
  if (!reduce_ || count > limit_ || count * r.size > limit_ || root < 0 || root >= size_) return false;
  *err = reduction(*node_, in, out, count, r, root);
  return true;
}

bool Express::bcast(void* buf, std::size_t bytes, int root, int* err) const {
  if (!bcast_ || bytes > limit_ || root < 0 || root >= size_) return false;
  ShmNode& n = *node_;
  const uint64_t s = n.begin(1, bytes);
  if (n.rank() == root) {
    std::byte* mine = nullptr;
    if ((*err = n.claim_slot(&mine))) return true;
    copy(mine, buf, bytes);
    n.publish(s);
  } else {
    n.post(s);  // done with every older slot
    if ((*err = n.wait_slot(root, s))) return true;
    copy(buf, n.slot(root), bytes);
  }
  return true;
}

}  // namespace adi3::coll
