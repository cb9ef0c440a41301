// Allgather and allgatherv: recursive doubling (2^k ranks, short), Bruck's
// algorithm (any rank count, short), or a ring (long). Doubling and Bruck
// move runs of several blocks at once, so they work on packed bytes; the
// ring moves one block a step, straight between the users' buffers.
#include <algorithm>
#include <numeric>

#include "coll/algorithms.hpp"
#include "coll/copy.hpp"

namespace adi3::coll::detail {
namespace {

struct Layout {
  void* rbuf;
  const std::vector<std::size_t>& counts;
  const std::vector<std::ptrdiff_t>& displs;
  const Datatype* rtype;
  std::byte* block(int i) const {
    return static_cast<std::byte*>(rbuf) + displs[static_cast<std::size_t>(i)] * rtype->extent();
  }
  std::size_t count(int i) const { return counts[static_cast<std::size_t>(i)]; }
  std::size_t bytes(int i) const { return count(i) * rtype->size(); }
};

void ring(Schedule& s, const Layout& l) {
  int me = s.rank(), p = s.size();
  int right = (me + 1) % p, left = (me - 1 + p) % p;
  for (int i = 0; i < p - 1; ++i) {
    int sb = (me - i + p) % p, rb = (me - i - 1 + p) % p;
    s.send(l.block(sb), l.count(sb), l.rtype, right);
    s.recv(l.block(rb), l.count(rb), l.rtype, left);
    s.fence();
  }
}

// Packed blocks in rank order; at step i partners swap their 2^i-rank
// subtrees, which are contiguous runs.
void doubling(Schedule& s, std::byte* data, const std::vector<std::size_t>& off) {
  int me = s.rank(), p = s.size();
  for (int mask = 1, i = 0; mask < p; mask <<= 1, ++i) {
    int dst = me ^ mask;
    int mine = (me >> i) << i, theirs = (dst >> i) << i;
    s.send_bytes(data + off[static_cast<std::size_t>(mine)],
                 off[static_cast<std::size_t>(mine + mask)] - off[static_cast<std::size_t>(mine)], dst);
    s.recv_bytes(data + off[static_cast<std::size_t>(theirs)],
                 off[static_cast<std::size_t>(theirs + mask)] - off[static_cast<std::size_t>(theirs)], dst);
    s.fence();
  }
}

// Packed blocks in rotated order (position k holds rank me + k): each step
// doubles the run of blocks held by sending it to rank me - 2^i.
void bruck(Schedule& s, std::byte* data, const std::vector<std::size_t>& pos) {
  int me = s.rank(), p = s.size();
  int k = 1;
  for (; k <= p / 2; k <<= 1) {
    s.send_bytes(data, pos[static_cast<std::size_t>(k)], (me - k + p) % p);
    s.recv_bytes(data + pos[static_cast<std::size_t>(k)],
                 pos[static_cast<std::size_t>(2 * k)] - pos[static_cast<std::size_t>(k)], (me + k) % p);
    s.fence();
  }
  if (int rest = p - k; rest > 0) {
    s.send_bytes(data, pos[static_cast<std::size_t>(rest)], (me - k + p) % p);
    s.recv_bytes(data + pos[static_cast<std::size_t>(k)],
                 pos[static_cast<std::size_t>(p)] - pos[static_cast<std::size_t>(k)], (me + k) % p);
    s.fence();
  }
}

}  // namespace

int build_allgatherv(Schedule& s, const void* sbuf, std::size_t scount, const Datatype* stype, void* rbuf,
                     const std::vector<std::size_t>& counts_in, const std::vector<std::ptrdiff_t>& displs_in,
                     const Datatype* rtype, const Tuning& t) {
  int me = s.rank(), p = s.size();
  // Owned by the schedule: the final unpack step may run after we return.
  const auto& counts = s.own(counts_in);
  const auto& displs = s.own(displs_in);
  Layout l{rbuf, counts, displs, rtype};
  std::size_t total = 0;
  for (int i = 0; i < p; ++i) total += l.bytes(i);
  if (total == 0) return 0;
  s.keep(rtype);
  if (!in_place(sbuf)) {
    s.keep(stype);
    void* mine = l.block(me);
    std::size_t n = l.count(me);
    s.local([=] { copy(sbuf, scount, stype, mine, n, rtype); });
  }
  if (p == 1) return 0;
  AllgatherAlgo a = t.allgather;
  if (a == AllgatherAlgo::Auto) {
    if (total < t.allgather_long && is_pof2(p)) {
      a = AllgatherAlgo::RecursiveDoubling;
    } else {
      a = total < t.allgather_short ? AllgatherAlgo::Bruck : AllgatherAlgo::Ring;
    }
  }
  if (a == AllgatherAlgo::RecursiveDoubling && !is_pof2(p)) a = AllgatherAlgo::Bruck;
  if (a == AllgatherAlgo::Ring) {
    ring(s, l);
    return 0;
  }
  // Byte offsets of the packed blocks (rank order, or rotated for Bruck).
  bool rotated = a == AllgatherAlgo::Bruck;
  auto who = [&](int k) { return rotated ? (me + k) % p : k; };
  std::vector<std::size_t> off(static_cast<std::size_t>(p) + 1, 0);
  for (int k = 0; k < p; ++k) off[static_cast<std::size_t>(k) + 1] = off[static_cast<std::size_t>(k)] + l.bytes(who(k));
  // In rank order and contiguous, the receive buffer itself is the run.
  bool dense = !rotated && rtype->is_contiguous();
  for (int i = 0; dense && i < p; ++i) {
    dense = displs[static_cast<std::size_t>(i)] * static_cast<std::ptrdiff_t>(rtype->size()) ==
            static_cast<std::ptrdiff_t>(off[static_cast<std::size_t>(i)]);
  }
  std::byte* data = dense ? static_cast<std::byte*>(rbuf) + rtype->true_lb() : s.scratch(total);
  int mine = rotated ? 0 : me;
  if (!dense) {
    const void* from = l.block(me);
    std::size_t n = l.count(me);
    std::byte* to = data + off[static_cast<std::size_t>(mine)];
    s.local([=] { pack(from, n, rtype, to); });
  }
  if (rotated) {
    bruck(s, data, off);
  } else {
    doubling(s, data, off);
  }
  if (!dense) {
    std::vector<std::size_t> offs = std::move(off);
    s.local([=] {
      for (int k = 0; k < p; ++k) {
        int r = rotated ? (me + k) % p : k;
        if (r != me) unpack(data + offs[static_cast<std::size_t>(k)], l.block(r), l.count(r), rtype);
      }
    });
  }
  return 0;
}

}  // namespace adi3::coll::detail
