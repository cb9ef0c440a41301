// Reduce: binomial tree (short vectors, and every non-commutative op), or
// Rabenseifner's reduce-scatter + gather for long vectors and commutative
// ops.
#include <utility>

#include "adi3/device.hpp"
#include "coll/algorithms.hpp"
#include "coll/copy.hpp"

namespace adi3::coll::detail {

std::byte* reduce_tree(Schedule& s, const Reducer& r, std::byte* input, bool writable, int root) {
  int me = s.rank(), p = s.size();
  std::size_t n = r.elems();
  // Non-commutative: the tree must combine neighbours in rank order, which
  // it does when rooted at 0 (odd ranks hand to even ones, then pairs of
  // pairs...); rank 0 then forwards the result.
  int lroot = r.commutative() ? root : 0;
  int rel = (me - lroot + p) % p;
  std::byte* acc = input;
  if (!writable && rel % 2 == 0 && p > 1) acc = r.dup(s, input);
  std::byte* tmp = nullptr;
  for (int mask = 1; mask < p; mask <<= 1) {
    if (rel & mask) {
      r.send(s, acc, 0, n, ((rel & ~mask) + lroot) % p);
      s.fence();
      acc = nullptr;
      break;
    }
    int child = rel | mask;
    if (child >= p) continue;
    if (!tmp) tmp = r.temp(s, n);
    r.recv(s, tmp, 0, n, (child + lroot) % p);
    s.fence();
    if (r.commutative()) {
      r.combine(s, tmp, acc, 0, n);
    } else {
      // acc holds the lower ranks: tmp = acc op tmp, then swap roles.
      r.combine(s, acc, tmp, 0, n);
      std::swap(acc, tmp);
    }
  }
  if (lroot == root) return acc;
  if (me == lroot) {
    r.send(s, acc, 0, n, root);
    s.fence();
    return nullptr;
  }
  if (me != root) return nullptr;
  std::byte* out = r.temp(s, n);
  r.recv(s, out, 0, n, lroot);
  s.fence();
  return out;
}

namespace {

// Rabenseifner: fold to 2^k ranks, recursive-halving reduce-scatter, then
// the halving steps walked back as a gather to the root's stand-in. The
// root accumulates in its receive buffer when the work form allows, and a
// rank that does not fold reads its input in place (halve's src), so a
// long vector is not copied on entry or exit.
void reduce_scatter_gather(Schedule& s, const Reducer& r, const void* input, void* rbuf, int root) {
  int me = s.rank(), p = s.size();
  std::size_t n = r.elems();
  Fold f(me, p);
  std::byte* src = r.view(s, input);
  // A packed view is already a schedule-owned copy: it serves as acc.
  std::byte* acc = me == root && r.layout() ? static_cast<std::byte*>(rbuf) : r.layout() ? nullptr : src;
  int newroot = root < 2 * f.rem ? root / 2 : root - f.rem;
  int holder = f.real(newroot);
  if (f.newrank < 0) {
    r.send(s, src, 0, n, me + 1);  // fold_in's half for a rank that sits out
    s.fence();
  } else {
    const bool direct = me >= 2 * f.rem && acc != src;
    if (!acc) acc = r.temp(s, n);
    std::byte* tmp = direct && f.pof2 == 2 ? nullptr : r.temp(s, n);
    if (!direct) {
      r.copy(s, src, acc, 0, n);
      fold_in(s, r, f, acc, tmp, n);
    }
    auto steps = halve(s, r, f, acc, tmp, n, direct ? src : nullptr);
    unhalve_gather(s, r, f, steps, acc, newroot);
  }
  // An even root below 2*rem sat out: its odd neighbour holds the result.
  if (holder != root) {
    if (me == holder) {
      r.send(s, acc, 0, n, root);
      s.fence();
    } else if (me == root) {
      if (!acc) acc = r.temp(s, n);
      r.recv(s, acc, 0, n, holder);
      s.fence();
    }
  }
  if (me == root) r.copy_out(s, acc, rbuf, 0, n);
}

}  // namespace

int build_reduce(Schedule& s, const void* sbuf, void* rbuf, std::size_t count, const Datatype* type, const Op& op,
                 int root, const Tuning& t) {
  Reducer made;
  if (int e = Reducer::make(s.device().errors(), op, type, count, &made)) return e;
  if (made.bytes() == 0) return 0;
  s.keep(type);
  const Reducer& r = s.own(std::move(made));
  int me = s.rank(), p = s.size();
  const void* input = in_place(sbuf) ? rbuf : sbuf;
  Fold f(me, p);
  bool rsg = p > 1 && r.commutative() && r.elems() >= static_cast<std::size_t>(f.pof2);
  if (t.reduce == ReduceAlgo::Binomial || (t.reduce == ReduceAlgo::Auto && r.bytes() <= t.reduce_short)) {
    rsg = false;
  }
  if (rsg) {
    reduce_scatter_gather(s, r, input, rbuf, root);
    return 0;
  }
  // Binomial. The root accumulates straight into its receive buffer when
  // the work form allows it.
  std::byte* acc;
  bool writable = true;
  if (me == root && r.layout()) {
    acc = static_cast<std::byte*>(rbuf);
    if (!in_place(sbuf)) s.local([&r, sbuf, rbuf] { r.copy_now(sbuf, rbuf, 0, r.elems()); });
  } else {
    acc = r.view(s, input);
    writable = !r.layout();
  }
  std::byte* out = reduce_tree(s, r, acc, writable, root);
  if (me == root) r.copy_out(s, out, rbuf, 0, r.elems());
  return 0;
}

}  // namespace adi3::coll::detail
