// Barrier: dissemination (ceil(log2 p) rounds of empty messages, any p).
#include "coll/algorithms.hpp"

namespace adi3::coll::detail {

int build_barrier(Schedule& s) {
  int me = s.rank(), p = s.size();
  for (int dist = 1; dist < p; dist <<= 1) {
    s.send_bytes(nullptr, 0, (me + dist) % p);
    s.recv_bytes(nullptr, 0, (me - dist + p) % p);
    s.fence();
  }
  return 0;
}

}  // namespace adi3::coll::detail
