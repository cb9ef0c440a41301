// Bcast: binomial tree for short messages or few ranks; for long ones the
// root's bytes are scattered down a binomial tree in p chunks and then
// allgathered, by recursive doubling (2^k ranks, medium sizes) or a ring.
#include <algorithm>

#include "coll/algorithms.hpp"
#include "coll/copy.hpp"

namespace adi3::coll::detail {
namespace {

void binomial(Schedule& s, void* buf, std::size_t count, const Datatype* type, int root) {
  int me = s.rank(), p = s.size();
  int rel = (me - root + p) % p;
  int mask = 1;
  for (; mask < p; mask <<= 1) {
    if (rel & mask) {
      s.recv(buf, count, type, (me - mask + p) % p);
      s.fence();
      break;
    }
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (rel + mask < p) s.send(buf, count, type, (me + mask) % p);
  }
  s.fence();
}

// The packed message split into p chunks of ceil(bytes / p); chunk i (in
// ranks relative to the root) may be short or empty at the end.
struct Chunks {
  std::byte* data;
  std::size_t bytes, size;
  int p;
  std::size_t lo(int i) const { return std::min(bytes, static_cast<std::size_t>(i) * size); }
  // Chunks [i, i + k).
  std::size_t len(int i, int k) const { return lo(std::min(i + k, p)) - lo(i); }
};

void scatter(Schedule& s, const Chunks& c, int root) {
  int me = s.rank(), p = s.size();
  int rel = (me - root + p) % p;
  int top = 1;
  while (top < p) top <<= 1;
  int mask = rel ? lowbit(rel) : top;
  if (rel) {
    s.recv_bytes(c.data + c.lo(rel), c.len(rel, mask), (me - mask + p) % p);
    s.fence();
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    int child = rel + mask;
    if (child < p) s.send_bytes(c.data + c.lo(child), c.len(child, mask), (me + mask) % p);
  }
  s.fence();
}

void ring_allgather(Schedule& s, const Chunks& c, int root) {
  int me = s.rank(), p = s.size();
  int rel = (me - root + p) % p;
  int right = (me + 1) % p, left = (me - 1 + p) % p;
  int j = rel, jn = (rel - 1 + p) % p;
  for (int i = 1; i < p; ++i) {
    s.send_bytes(c.data + c.lo(j), c.len(j, 1), right);
    s.recv_bytes(c.data + c.lo(jn), c.len(jn, 1), left);
    s.fence();
    j = jn;
    jn = (jn - 1 + p) % p;
  }
}

// p is a power of two: at step i partners swap their 2^i-chunk subtrees.
void doubling_allgather(Schedule& s, const Chunks& c, int root) {
  int me = s.rank(), p = s.size();
  int rel = (me - root + p) % p;
  for (int mask = 1, i = 0; mask < p; mask <<= 1, ++i) {
    int rdst = rel ^ mask;
    int mine = (rel >> i) << i, theirs = (rdst >> i) << i;
    int dst = (rdst + root) % p;
    s.send_bytes(c.data + c.lo(mine), c.len(mine, mask), dst);
    s.recv_bytes(c.data + c.lo(theirs), c.len(theirs, mask), dst);
    s.fence();
  }
}

}  // namespace

int build_bcast(Schedule& s, void* buf, std::size_t count, const Datatype* type, int root, const Tuning& t) {
  int me = s.rank(), p = s.size();
  std::size_t bytes = count * type->size();
  if (bytes == 0 || p == 1) return 0;
  s.keep(type);
  BcastAlgo a = t.bcast;
  if (a == BcastAlgo::Auto) {
    if (bytes < t.bcast_short || p < t.bcast_min_procs) {
      a = BcastAlgo::Binomial;
    } else {
      a = bytes < t.bcast_long && is_pof2(p) ? BcastAlgo::ScatterDoubling : BcastAlgo::ScatterRing;
    }
  }
  if (a == BcastAlgo::ScatterDoubling && !is_pof2(p)) a = BcastAlgo::ScatterRing;
  if (a == BcastAlgo::Binomial) {
    binomial(s, buf, count, type, root);
    return 0;
  }
  // Chunks need bytes: noncontiguous data is packed at the root and
  // unpacked everywhere else at the end.
  bool contig = type->is_contiguous();
  std::byte* data = contig ? static_cast<std::byte*>(buf) + type->true_lb() : s.scratch(bytes);
  if (!contig && me == root) s.local([=] { pack(buf, count, type, data); });
  Chunks c{data, bytes, (bytes + static_cast<std::size_t>(p) - 1) / static_cast<std::size_t>(p), p};
  scatter(s, c, root);
  if (a == BcastAlgo::ScatterDoubling) {
    doubling_allgather(s, c, root);
  } else {
    ring_allgather(s, c, root);
  }
  if (!contig && me != root) s.local([data, buf, count, type] { unpack(data, buf, count, type); });
  return 0;
}

}  // namespace adi3::coll::detail
