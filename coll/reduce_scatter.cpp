// Reduce_scatter(_block): recursive halving (commutative ops, short),
// pairwise exchange (commutative ops, long), or for non-commutative ops a
// rank-ordered binomial reduce to rank 0 followed by a scatterv.
#include <numeric>

#include "adi3/device.hpp"
#include "coll/algorithms.hpp"
#include "coll/copy.hpp"

namespace adi3::coll::detail {
namespace {

// Work-element ranges of each rank's block.
struct Blocks {
  std::vector<std::size_t> first, n;
  std::size_t end(int i) const { return first[static_cast<std::size_t>(i)] + n[static_cast<std::size_t>(i)]; }
};

void halving(Schedule& s, const Reducer& r, const Blocks& b, const void* input, void* rbuf) {
  int me = s.rank(), p = s.size();
  std::size_t total = r.elems();
  std::byte* acc = r.copy_in(s, input);
  std::byte* tmp = r.temp(s, total);
  Fold f(me, p);
  fold_in(s, r, f, acc, tmp, total);
  if (f.newrank >= 0) {
    // Newrank i owns the blocks of the ranks folded into it: a run.
    auto lo = [&](int nr) {
      return nr < f.pof2 ? b.first[static_cast<std::size_t>(nr < f.rem ? 2 * nr : nr + f.rem)] : total;
    };
    int blo = 0, bhi = f.pof2;
    for (int mask = f.pof2 / 2; mask > 0; mask >>= 1) {
      int newdst = f.newrank ^ mask, mid = blo + mask;
      bool lower = f.newrank < newdst;
      int klo = lower ? blo : mid, khi = lower ? mid : bhi;
      int glo = lower ? mid : blo, ghi = lower ? bhi : mid;
      int dst = f.real(newdst);
      r.send(s, acc, lo(glo), lo(ghi) - lo(glo), dst);
      r.recv(s, tmp, lo(klo), lo(khi) - lo(klo), dst);
      s.fence();
      r.combine(s, tmp, acc, lo(klo), lo(khi) - lo(klo));
      blo = klo;
      bhi = khi;
    }
  }
  // Folded pairs: the odd rank holds both blocks and returns the even's.
  if (me < 2 * f.rem) {
    if (f.newrank < 0) {
      r.recv(s, acc, b.first[static_cast<std::size_t>(me)], b.n[static_cast<std::size_t>(me)], me + 1);
    } else {
      r.send(s, acc, b.first[static_cast<std::size_t>(me - 1)], b.n[static_cast<std::size_t>(me - 1)], me - 1);
    }
    s.fence();
  }
  r.copy_out(s, r.at(acc, b.first[static_cast<std::size_t>(me)]), rbuf, 0, b.n[static_cast<std::size_t>(me)]);
}

void pairwise(Schedule& s, const Reducer& r, const Blocks& b, const void* input, void* rbuf) {
  int me = s.rank(), p = s.size();
  std::size_t mine = b.n[static_cast<std::size_t>(me)];
  std::byte* in = r.view(s, input);
  std::byte* res = r.temp(s, mine);
  std::byte* tmp = r.temp(s, mine);
  const std::byte* own = r.at(in, b.first[static_cast<std::size_t>(me)]);
  s.local([&r, own, res, mine] { r.copy_now(own, res, 0, mine); });
  for (int i = 1; i < p; ++i) {
    int src = (me - i + p) % p, dst = (me + i) % p;
    r.send(s, in, b.first[static_cast<std::size_t>(dst)], b.n[static_cast<std::size_t>(dst)], dst);
    r.recv(s, tmp, 0, mine, src);
    s.fence();
    r.combine(s, tmp, res, 0, mine);
  }
  r.copy_out(s, res, rbuf, 0, mine);
}

void reduce_then_scatter(Schedule& s, const Reducer& r, const Blocks& b, const void* input, void* rbuf) {
  int me = s.rank(), p = s.size();
  std::byte* view = r.view(s, input);
  std::byte* all = reduce_tree(s, r, view, !r.layout(), 0);
  std::size_t mine = b.n[static_cast<std::size_t>(me)];
  if (me == 0) {
    for (int i = 1; i < p; ++i) {
      if (b.n[static_cast<std::size_t>(i)])
        r.send(s, all, b.first[static_cast<std::size_t>(i)], b.n[static_cast<std::size_t>(i)], i);
    }
    r.copy_out(s, all, rbuf, 0, mine);
  } else if (mine) {
    std::byte* out = r.layout() ? static_cast<std::byte*>(rbuf) : r.temp(s, mine);
    r.recv(s, out, 0, mine, 0);
    s.fence();
    r.copy_out(s, out, rbuf, 0, mine);
  }
  s.fence();
}

}  // namespace

int build_reduce_scatter(Schedule& s, const void* sbuf, void* rbuf, const std::vector<std::size_t>& counts,
                         const Datatype* type, const Op& op, const Tuning& t) {
  std::size_t items = std::accumulate(counts.begin(), counts.end(), std::size_t{0});
  Reducer made;
  if (int e = Reducer::make(s.device().errors(), op, type, items, &made)) return e;
  if (made.bytes() == 0) return 0;
  s.keep(type);
  const Reducer& r = s.own(std::move(made));
  int p = s.size();
  const void* input = in_place(sbuf) ? rbuf : sbuf;
  Blocks b;
  std::size_t at = 0;
  for (std::size_t c : counts) {
    b.first.push_back(at);
    b.n.push_back(c * r.per_item());
    at += c * r.per_item();
  }
  if (p == 1) {
    std::size_t n = counts[0];
    if (!in_place(sbuf)) s.local([=] { copy(sbuf, n, type, rbuf, n, type); });
    return 0;
  }
  ReduceScatterAlgo a = t.reduce_scatter;
  if (!r.commutative()) a = ReduceScatterAlgo::ReduceScatterv;
  if (a == ReduceScatterAlgo::Auto) {
    a = r.bytes() > t.reduce_scatter_long ? ReduceScatterAlgo::Pairwise : ReduceScatterAlgo::RecursiveHalving;
  }
  if (a == ReduceScatterAlgo::RecursiveHalving) {
    halving(s, r, b, input, rbuf);
  } else if (a == ReduceScatterAlgo::Pairwise) {
    pairwise(s, r, b, input, rbuf);
  } else {
    reduce_then_scatter(s, r, b, input, rbuf);
  }
  return 0;
}

}  // namespace adi3::coll::detail
