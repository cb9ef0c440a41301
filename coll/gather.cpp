// Gather: binomial tree over packed bytes (each inner node forwards its
// subtree's blocks in one message); Gatherv: every rank sends straight to
// the root, which receives in place.
#include <algorithm>

#include "coll/algorithms.hpp"
#include "coll/copy.hpp"

namespace adi3::coll::detail {

int build_gather(Schedule& s, const void* sbuf, std::size_t scount, const Datatype* stype, void* rbuf,
                 std::size_t rcount, const Datatype* rtype, int root) {
  int me = s.rank(), p = s.size();
  bool is_root = me == root;
  std::size_t nb = is_root ? rcount * rtype->size() : scount * stype->size();
  if (nb == 0) return 0;
  if (is_root) {
    s.keep(rtype);
    if (!in_place(sbuf)) {
      s.keep(stype);
      void* mine = elem_at(rbuf, static_cast<std::size_t>(me) * rcount, rtype);
      s.local([=] { copy(sbuf, scount, stype, mine, rcount, rtype); });
    }
  } else {
    s.keep(stype);
  }
  if (p == 1) return 0;
  int rel = (me - root + p) % p;
  if (rel % 2) {  // a leaf: its own block only
    s.send(sbuf, scount, stype, (me - 1 + p) % p);
    s.fence();
    return 0;
  }
  // Relative rank i's block sits at data + i * nb. A root of rank 0 with a
  // contiguous type receives in place.
  int sub = rel ? std::min(lowbit(rel), p - rel) : p;
  bool direct = is_root && root == 0 && rtype->is_contiguous();
  std::byte* data =
      direct ? static_cast<std::byte*>(rbuf) + rtype->true_lb() : s.scratch(static_cast<std::size_t>(sub) * nb);
  if (!is_root) s.local([=] { pack(sbuf, scount, stype, data); });
  int mask = 1;
  for (; mask < p && !(rel & mask); mask <<= 1) {
    int child = rel + mask;
    if (child < p) {
      s.recv_bytes(data + static_cast<std::size_t>(mask) * nb, static_cast<std::size_t>(std::min(mask, p - child)) * nb,
                   (child + root) % p);
    }
  }
  s.fence();
  if (!is_root) {
    s.send_bytes(data, static_cast<std::size_t>(sub) * nb, (me - mask + p) % p);
    s.fence();
    return 0;
  }
  if (!direct) {
    s.local([=] {
      for (int i = 1; i < p; ++i) {
        auto rank = static_cast<std::size_t>((i + root) % p);
        unpack(data + static_cast<std::size_t>(i) * nb, elem_at(rbuf, rank * rcount, rtype), rcount, rtype);
      }
    });
  }
  return 0;
}

int build_gatherv(Schedule& s, const void* sbuf, std::size_t scount, const Datatype* stype, void* rbuf,
                  const int* rcounts, const int* displs, const Datatype* rtype, int root) {
  int me = s.rank(), p = s.size();
  if (me != root) {
    if (scount * stype->size() > 0) s.send(sbuf, scount, stype, root);
    s.fence();
    return 0;
  }
  for (int i = 0; i < p; ++i) {
    auto cnt = static_cast<std::size_t>(rcounts[i]);
    void* at = static_cast<std::byte*>(rbuf) + static_cast<std::ptrdiff_t>(displs[i]) * rtype->extent();
    if (i == me) {
      if (!in_place(sbuf)) {
        s.keep(stype);
        s.keep(rtype);
        s.local([=] { copy(sbuf, scount, stype, at, cnt, rtype); });
      }
    } else if (cnt * rtype->size() > 0) {
      s.recv(at, cnt, rtype, i);
    }
  }
  s.fence();
  return 0;
}

}  // namespace adi3::coll::detail
