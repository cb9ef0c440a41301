#include "coll/compose.hpp"

#include <vector>

#include "coll/algorithms.hpp"
#include "coll/copy.hpp"

namespace adi3::coll {

int add_reduce(Schedule& s, const void* sendbuf, void* recvbuf, std::size_t count, const Datatype* type, const Op& op,
               int root) {
  return detail::build_reduce(s, sendbuf, recvbuf, count, type, op, root, default_tuning());
}

void add_bcast(Schedule& s, void* buf, std::size_t count, const Datatype* type, int root) {
  int p = s.size(), rel = (s.rank() - root + p) % p;
  if (p == 1 || count * type->size() == 0) return;
  int mask = 1;
  while (mask < p && !(rel & mask)) mask <<= 1;
  if (rel != 0) {
    s.recv(buf, count, type, (rel - mask + root) % p);
    s.fence();
  }
  // Children at rel + m for every m below the bit we received on.
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (rel + mask < p) s.send(buf, count, type, (rel + mask + root) % p);
  }
  s.fence();
}

void add_scatterv(Schedule& s, const void* sendbuf, const int* sendcounts, const int* displs, const Datatype* type,
                  void* recvbuf, std::size_t recvcount, int root) {
  int me = s.rank();
  if (me != root) {
    s.recv(recvbuf, recvcount, type, root);
    s.fence();
    return;
  }
  for (int i = 0; i < s.size(); ++i) {
    const void* at = static_cast<const std::byte*>(sendbuf) + static_cast<std::ptrdiff_t>(displs[i]) * type->extent();
    auto n = static_cast<std::size_t>(sendcounts[i]);
    if (i == me) {
      s.local([at, n, type, recvbuf, recvcount] { copy(at, n, type, recvbuf, recvcount, type); });
    } else {
      s.send(at, n, type, i);
    }
  }
  s.fence();
}

}  // namespace adi3::coll
