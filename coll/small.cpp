#include "coll/small.hpp"

#include <cstring>

#include "coll/algorithms.hpp"
#include "coll/copy.hpp"
#include "coll/nbc.hpp"

namespace adi3::coll::detail {
namespace {

constexpr std::size_t kMaxSmall = 4096;  // the allreduce's stack buffer

// Sends to `to` and receives from `from` at once (each round of the
// algorithms below), waiting for both.
int exchange(Device& dev, const void* sbuf, void* rbuf, std::size_t count, const Datatype* type, int to, int from,
             int tag, const Comm& comm) {
  Request* sent = nullptr;
  if (int e = dev.isend(sbuf, count, type, to, tag, comm, SendMode::Standard, &sent)) return e;
  Status st;
  int e = dev.recv(rbuf, count, type, from, tag, comm, &st);
  int w = dev.wait(&sent, &st);
  return e ? e : w;
}

}  // namespace

// Dissemination, as build_barrier.
bool small_barrier(Device& dev, const Comm& comm, const Tuning& t, int* err) {
  if (t.small_max == 0) return false;
  const int me = comm.rank, p = comm.size, tag = static_cast<int>(Tag::Barrier);
  *err = 0;
  for (int dist = 1; dist < p && !*err; dist <<= 1) {
    *err = exchange(dev, nullptr, nullptr, 0, Datatype::byte(), (me + dist) % p, (me - dist + p) % p, tag, comm);
  }
  return true;
}

// Binomial tree from the root, as build_bcast does below bcast_short.
bool small_bcast(Device& dev, void* buf, std::size_t count, const Datatype* type, int root, const Comm& comm,
                 const Tuning& t, int* err) {
  const int p = comm.size;
  if (t.bcast != BcastAlgo::Auto) return false;  // a forced algorithm runs as asked
  if (!type || !type->is_committed() || root < 0 || root >= p || in_place(buf)) return false;
  if (count == 0 || count * type->size() > t.small_max) return false;
  const int tag = static_cast<int>(Tag::Bcast), rel = (comm.rank - root + p) % p;
  *err = 0;
  int mask = 1;
  for (; mask < p; mask <<= 1) {
    if (rel & mask) {
      Status st;
      *err = dev.recv(buf, count, type, (rel - mask + root) % p, tag, comm, &st);
      break;
    }
  }
  for (mask >>= 1; mask > 0 && !*err; mask >>= 1) {
    if (rel + mask < p) *err = dev.send(buf, count, type, (rel + mask + root) % p, tag, comm, SendMode::Standard);
  }
  return true;
}

// Recursive doubling on a power-of-two rank count, predefined types: each
// round swaps the partial results with the partner and combines them,
// lower rank's first (exact for non-commutative user ops too).
bool small_allreduce(Device& dev, const void* sbuf, void* rbuf, std::size_t count, const Datatype* type, const Op& op,
                     const Comm& comm, const Tuning& t, int* err) {
  const int me = comm.rank, p = comm.size;
  if (t.allreduce != AllreduceAlgo::Auto) return false;  // a forced algorithm runs as asked
  if (!type || !type->is_committed() || !type->is_predefined() || !is_pof2(p)) return false;
  if (in_place(rbuf) || !rbuf || count == 0) return false;
  const std::size_t bytes = count * static_cast<std::size_t>(type->extent());
  if (bytes > t.small_max || bytes > kMaxSmall) return false;
  // An op the type does not take: the scheduled path reports it.
  if (reduce_local(dev, rbuf, rbuf, 0, type, op) != 0) return false;
  if (!in_place(sbuf)) {
    if (!sbuf) return false;
    std::memcpy(rbuf, sbuf, bytes);
  }
  alignas(64) std::byte tmp[kMaxSmall];
  const int tag = static_cast<int>(Tag::Allreduce);
  *err = 0;
  for (int mask = 1; mask < p && !*err; mask <<= 1) {
    const int partner = me ^ mask;
    if ((*err = exchange(dev, rbuf, tmp, count, type, partner, partner, tag, comm))) break;
    if (partner < me || op.commutative()) {
      *err = reduce_local(dev, tmp, rbuf, count, type, op);  // rbuf = partner's op mine
    } else {
      *err = reduce_local(dev, rbuf, tmp, count, type, op);  // mine op partner's
      std::memcpy(rbuf, tmp, bytes);
    }
  }
  return true;
}

}  // namespace adi3::coll::detail
