// Alltoall(v,w): Bruck's algorithm (tiny blocks, many ranks), all
// transfers posted at once in throttled batches (medium), pairwise exchange
// (long), and for IN_PLACE a pairwise exchange through one bounce buffer.
#include <algorithm>
#include <cstring>

#include "coll/algorithms.hpp"
#include "coll/copy.hpp"

namespace adi3::coll::detail {
namespace {

// Posts batches of `throttle` receive/send pairs; batch b receives from
// me + i and sends to me - i for the same i, so batches match up.
void scattered(Schedule& s, const std::vector<Block>& sends, const std::vector<Block>& recvs, int throttle) {
  int me = s.rank(), p = s.size();
  for (int ii = 0; ii < p; ii += throttle) {
    int end = std::min(p, ii + throttle);
    for (int i = ii; i < end; ++i) {
      const Block& b = recvs[static_cast<std::size_t>((me + i) % p)];
      if (i && b.bytes()) s.recv(b.buf, b.count, b.type, (me + i) % p);
    }
    for (int i = ii; i < end; ++i) {
      const Block& b = sends[static_cast<std::size_t>((me - i + p) % p)];
      if (i && b.bytes()) s.send(b.buf, b.count, b.type, (me - i + p) % p);
    }
    s.fence();
  }
}

void pairwise(Schedule& s, const std::vector<Block>& sends, const std::vector<Block>& recvs) {
  int me = s.rank(), p = s.size();
  for (int i = 1; i < p; ++i) {
    int src = is_pof2(p) ? me ^ i : (me - i + p) % p;
    int dst = is_pof2(p) ? me ^ i : (me + i) % p;
    const Block& sb = sends[static_cast<std::size_t>(dst)];
    const Block& rb = recvs[static_cast<std::size_t>(src)];
    if (sb.bytes()) s.send(sb.buf, sb.count, sb.type, dst);
    if (rb.bytes()) s.recv(rb.buf, rb.count, rb.type, src);
    s.fence();
  }
}

// IN_PLACE: exchange with every peer in increasing rank order; each rank
// meets pairs in lexicographic order, so no exchange waits on a later one.
void in_place_pairwise(Schedule& s, const std::vector<Block>& blocks) {
  int me = s.rank(), p = s.size();
  std::size_t most = 0;
  for (const Block& b : blocks) most = std::max(most, b.bytes());
  std::byte* bounce = s.scratch(most);
  for (int q = 0; q < p; ++q) {
    const Block& b = blocks[static_cast<std::size_t>(q)];
    if (q == me || b.bytes() == 0) continue;
    s.local([bounce, b] { pack(b.buf, b.count, b.type, bounce); });
    s.send_bytes(bounce, b.bytes(), q);
    s.recv(b.buf, b.count, b.type, q);
    s.fence();
  }
}

// Bruck: rotate so position k holds the block for rank me + k; step i
// sends every position with bit i set to rank me + 2^i; at the end
// position k holds the block from rank me - k.
void bruck(Schedule& s, const void* sbuf, std::size_t scount, const Datatype* stype, void* rbuf, std::size_t rcount,
           const Datatype* rtype) {
  int me = s.rank(), p = s.size();
  std::size_t nb = scount * stype->size();
  std::byte* work = s.scratch(static_cast<std::size_t>(p) * nb);
  s.local([=] {
    for (int k = 0; k < p; ++k) {
      auto rank = static_cast<std::size_t>((me + k) % p);
      pack(elem_at(sbuf, rank * scount, stype), scount, stype, work + static_cast<std::size_t>(k) * nb);
    }
  });
  std::byte* out = s.scratch(static_cast<std::size_t>((p + 1) / 2) * nb);
  std::byte* in = s.scratch(static_cast<std::size_t>((p + 1) / 2) * nb);
  auto move = [=](int bit, bool to_work) {
    std::size_t j = 0;
    for (int k = 1; k < p; ++k) {
      if (!(k & bit)) continue;
      std::byte* w = work + static_cast<std::size_t>(k) * nb;
      if (to_work) {
        std::memcpy(w, in + j * nb, nb);
      } else {
        std::memcpy(out + j * nb, w, nb);
      }
      ++j;
    }
  };
  for (int bit = 1; bit < p; bit <<= 1) {
    std::size_t n = 0;
    for (int k = 1; k < p; ++k) n += (k & bit) ? 1 : 0;
    s.local([=] { move(bit, false); });
    s.send_bytes(out, n * nb, (me + bit) % p);
    s.recv_bytes(in, n * nb, (me - bit + p) % p);
    s.fence();
    s.local([=] { move(bit, true); });
  }
  s.local([=] {
    for (int k = 0; k < p; ++k) {
      auto rank = static_cast<std::size_t>((me - k + p) % p);
      unpack(work + static_cast<std::size_t>(k) * nb, elem_at(rbuf, rank * rcount, rtype), rcount, rtype);
    }
  });
}

}  // namespace

int build_alltoall(Schedule& s, const void* sbuf, std::size_t scount, const Datatype* stype, void* rbuf,
                   std::size_t rcount, const Datatype* rtype, const Tuning& t) {
  int p = s.size();
  bool inplace = in_place(sbuf);
  std::size_t nb = inplace ? rcount * rtype->size() : scount * stype->size();
  if (nb == 0) return 0;
  AlltoallAlgo a = t.alltoall;
  if (a == AlltoallAlgo::Auto) {
    if (nb <= t.alltoall_short && p >= t.alltoall_min_procs) {
      a = AlltoallAlgo::Bruck;
    } else {
      a = nb < t.alltoall_medium ? AlltoallAlgo::Scattered : AlltoallAlgo::Pairwise;
    }
  }
  if (a == AlltoallAlgo::Bruck && !inplace) {
    s.keep(rtype);
    bruck(s, sbuf, scount, stype, rbuf, rcount, rtype);
    return 0;
  }
  std::vector<Block> sends, recvs;
  for (int i = 0; i < p; ++i) {
    auto u = static_cast<std::size_t>(i);
    if (!inplace) sends.push_back({const_cast<std::byte*>(elem_at(sbuf, u * scount, stype)), scount, stype});
    recvs.push_back({elem_at(rbuf, u * rcount, rtype), rcount, rtype});
  }
  if (a == AlltoallAlgo::Bruck) a = AlltoallAlgo::Scattered;  // only IN_PLACE gets here
  Tuning forced = t;
  forced.alltoall = a;
  return build_alltoallw(s, sends, recvs, inplace, forced);
}

int build_alltoallw(Schedule& s, const std::vector<Block>& sends, const std::vector<Block>& recvs, bool inplace,
                    const Tuning& t) {
  int me = s.rank();
  // Later batches post transfers after the call returns (nonblocking).
  for (const Block& b : recvs) s.keep(b.type);
  for (const Block& b : sends) s.keep(b.type);
  if (inplace) {
    in_place_pairwise(s, recvs);
    return 0;
  }
  const Block& mine = sends[static_cast<std::size_t>(me)];
  const Block& into = recvs[static_cast<std::size_t>(me)];
  s.local([mine, into] { copy(mine.buf, mine.count, mine.type, into.buf, into.count, into.type); });
  if (t.alltoall == AlltoallAlgo::Pairwise) {
    pairwise(s, sends, recvs);
  } else {
    scattered(s, sends, recvs, std::max(1, t.alltoall_throttle));
  }
  return 0;
}

}  // namespace adi3::coll::detail
