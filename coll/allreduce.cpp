// Allreduce: recursive doubling (short vectors, every non-commutative op),
// Rabenseifner's reduce-scatter + allgather (long vectors), or a ring
// (reduce-scatter ring then allgather ring; on request).
#include <utility>

#include "adi3/device.hpp"
#include "coll/algorithms.hpp"
#include "coll/copy.hpp"

namespace adi3::coll::detail {
namespace {

// Returns the buffer holding the result (acc, or tmp after swaps).
std::byte* recursive_doubling(Schedule& s, const Reducer& r, std::byte* acc) {
  int me = s.rank();
  std::size_t n = r.elems();
  std::byte* tmp = r.temp(s, n);
  Fold f(me, s.size());
  fold_in(s, r, f, acc, tmp, n);
  if (f.newrank >= 0) {
    for (int mask = 1; mask < f.pof2; mask <<= 1) {
      int dst = f.real(f.newrank ^ mask);
      r.send(s, acc, 0, n, dst);
      r.recv(s, tmp, 0, n, dst);
      s.fence();
      // Folded ranks keep rank order, so "lower rank first" is exact.
      if (dst < me || r.commutative()) {
        r.combine(s, tmp, acc, 0, n);
      } else {
        r.combine(s, acc, tmp, 0, n);
        std::swap(acc, tmp);
      }
    }
  }
  fold_out(s, r, f, acc, n);
  return acc;
}

// src: the rank's input read in place by the first halving step (see
// halve), or null when acc already holds it.
void rabenseifner(Schedule& s, const Reducer& r, std::byte* acc, const std::byte* src) {
  std::size_t n = r.elems();
  Fold f(s.rank(), s.size());
  std::byte* tmp = src && f.pof2 == 2 ? nullptr : r.temp(s, n);
  fold_in(s, r, f, acc, tmp, n);
  auto steps = halve(s, r, f, acc, tmp, n, src);
  unhalve_allgather(s, r, steps, acc);
  fold_out(s, r, f, acc, n);
}

void ring(Schedule& s, const Reducer& r, std::byte* acc) {
  int me = s.rank(), p = s.size();
  std::size_t n = r.elems(), q = n / static_cast<std::size_t>(p), x = n % static_cast<std::size_t>(p);
  auto first = [&](int b) { return static_cast<std::size_t>(b) * q + std::min(static_cast<std::size_t>(b), x); };
  auto len = [&](int b) { return first(b + 1) - first(b); };
  auto blk = [&](int b) { return ((b % p) + p) % p; };
  std::byte* tmp = r.temp(s, n);
  int right = (me + 1) % p, left = (me + p - 1) % p;
  // Reduce-scatter: block me-k travels right, gathering one vector a step;
  // afterwards rank me owns block me+1 complete.
  for (int k = 0; k < p - 1; ++k) {
    int sb = blk(me - k), rb = blk(me - k - 1);
    r.send(s, acc, first(sb), len(sb), right);
    r.recv(s, tmp, first(rb), len(rb), left);
    s.fence();
    r.combine(s, tmp, acc, first(rb), len(rb));
  }
  for (int k = 0; k < p - 1; ++k) {
    int sb = blk(me + 1 - k), rb = blk(me - k);
    r.send(s, acc, first(sb), len(sb), right);
    r.recv(s, acc, first(rb), len(rb), left);
    s.fence();
  }
}

}  // namespace

int build_allreduce(Schedule& s, const void* sbuf, void* rbuf, std::size_t count, const Datatype* type, const Op& op,
                    const Tuning& t) {
  Reducer made;
  if (int e = Reducer::make(s.device().errors(), op, type, count, &made)) return e;
  if (made.bytes() == 0) return 0;
  s.keep(type);
  const Reducer& r = s.own(std::move(made));
  int p = s.size();
  std::size_t n = r.elems();
  AllreduceAlgo a = AllreduceAlgo::RecursiveDoubling;
  if (p > 1) {
    bool big_ok = r.commutative() && n >= static_cast<std::size_t>(pof2_floor(p));
    a = t.allreduce;
    if (a == AllreduceAlgo::Auto || !r.commutative() || (a == AllreduceAlgo::Rabenseifner && !big_ok)) {
      a = big_ok && r.bytes() > t.allreduce_short ? AllreduceAlgo::Rabenseifner : AllreduceAlgo::RecursiveDoubling;
    }
  }
  // The result accumulates in the receive buffer when the work form allows.
  // Rabenseifner on a rank that does not fold reads the send buffer in
  // place instead of copying it there first.
  std::byte* acc;
  const std::byte* src = nullptr;
  if (r.layout()) {
    acc = static_cast<std::byte*>(rbuf);
    Fold f(s.rank(), p);
    if (!in_place(sbuf) && a == AllreduceAlgo::Rabenseifner && s.rank() >= 2 * f.rem) {
      src = static_cast<const std::byte*>(sbuf);
    } else if (!in_place(sbuf)) {
      s.local([&r, sbuf, rbuf, n] { r.copy_now(sbuf, rbuf, 0, n); });
    }
  } else {
    acc = r.copy_in(s, in_place(sbuf) ? rbuf : sbuf);
  }
  if (p > 1) {
    if (a == AllreduceAlgo::Rabenseifner) {
      rabenseifner(s, r, acc, src);
    } else if (a == AllreduceAlgo::Ring) {
      ring(s, r, acc);
    } else {
      acc = recursive_doubling(s, r, acc);
    }
  }
  r.copy_out(s, acc, rbuf, 0, n);
  return 0;
}

}  // namespace adi3::coll::detail
