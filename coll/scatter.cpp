// Scatter: binomial tree over packed bytes (the reverse of gather);
// Scatterv: the root sends each block straight from its buffer.
#include <algorithm>

#include "coll/algorithms.hpp"
#include "coll/copy.hpp"

namespace adi3::coll::detail {

int build_scatter(Schedule& s, const void* sbuf, std::size_t scount, const Datatype* stype, void* rbuf,
                  std::size_t rcount, const Datatype* rtype, int root) {
  int me = s.rank(), p = s.size();
  bool is_root = me == root;
  std::size_t nb = is_root ? scount * stype->size() : rcount * rtype->size();
  if (nb == 0) return 0;
  if (is_root && !in_place(rbuf)) {
    s.keep(stype);
    s.keep(rtype);
    const void* mine = elem_at(sbuf, static_cast<std::size_t>(me) * scount, stype);
    s.local([=] { copy(mine, scount, stype, rbuf, rcount, rtype); });
  }
  if (p == 1) return 0;
  int rel = (me - root + p) % p;
  int top = 1;
  while (top < p) top <<= 1;
  int mask = rel ? lowbit(rel) : top;
  int sub = rel ? std::min(mask, p - rel) : p;
  if (sub == 1) {  // a leaf: receives its block in place
    s.recv(rbuf, rcount, rtype, (me - mask + p) % p);
    s.fence();
    return 0;
  }
  // Relative rank i's block at data + i * nb; a root of rank 0 with a
  // contiguous type sends from its buffer.
  std::byte* data;
  if (is_root) {
    if (root == 0 && stype->is_contiguous()) {
      data = static_cast<std::byte*>(const_cast<void*>(sbuf)) + stype->true_lb();
    } else {
      data = s.scratch(static_cast<std::size_t>(p) * nb);
      s.keep(stype);
      s.local([=] {
        for (int i = 1; i < p; ++i) {
          auto rank = static_cast<std::size_t>((i + root) % p);
          pack(elem_at(sbuf, rank * scount, stype), scount, stype, data + static_cast<std::size_t>(i) * nb);
        }
      });
    }
  } else {
    s.keep(rtype);
    data = s.scratch(static_cast<std::size_t>(sub) * nb);
    s.recv_bytes(data, static_cast<std::size_t>(sub) * nb, (me - mask + p) % p);
    s.fence();
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    int child = rel + mask;
    if (child < p) {
      s.send_bytes(data + static_cast<std::size_t>(mask) * nb, static_cast<std::size_t>(std::min(mask, p - child)) * nb,
                   (child + root) % p);
    }
  }
  s.fence();
  if (!is_root) s.local([=] { unpack(data, rbuf, rcount, rtype); });
  return 0;
}

int build_scatterv(Schedule& s, const void* sbuf, const int* scounts, const int* displs, const Datatype* stype,
                   void* rbuf, std::size_t rcount, const Datatype* rtype, int root) {
  int me = s.rank(), p = s.size();
  if (me != root) {
    if (rcount * rtype->size() > 0) s.recv(rbuf, rcount, rtype, root);
    s.fence();
    return 0;
  }
  for (int i = 0; i < p; ++i) {
    auto cnt = static_cast<std::size_t>(scounts[i]);
    const void* at = static_cast<const std::byte*>(sbuf) + static_cast<std::ptrdiff_t>(displs[i]) * stype->extent();
    if (i == me) {
      if (!in_place(rbuf)) {
        s.keep(stype);
        s.keep(rtype);
        s.local([=] { copy(at, cnt, stype, rbuf, rcount, rtype); });
      }
    } else if (cnt * stype->size() > 0) {
      s.send(at, cnt, stype, i);
    }
  }
  s.fence();
  return 0;
}

}  // namespace adi3::coll::detail
