#include "coll/small.hpp"

#include <cstring>
#include <memory>

#include "coll/algorithms.hpp"
#include "coll/copy.hpp"
#include "coll/nbc.hpp"

namespace adi3::coll::detail {
namespace {

constexpr std::size_t kMaxSmall = 4096;  // the allreduce's stack buffer

// Sends scount elements to `to` and receives up to rcount from `from` at
// once (each round of the algorithms below), waiting for both.
int exchange(Device& dev, const void* sbuf, std::size_t scount, void* rbuf, std::size_t rcount, const Datatype* type,
             int to, int from, int tag, const Comm& comm) {
  Request* sent = nullptr;
  if (int e = dev.isend(sbuf, scount, type, to, tag, comm, SendMode::Standard, &sent)) return e;
  Status st;
  int e = dev.recv(rbuf, rcount, type, from, tag, comm, &st);
  int w = dev.wait(&sent, &st);
  return e ? e : w;
}

// A predefined (contiguous) type every rank names alike, for count > 0
// elements; its bytes in *bytes.
bool plain(const Datatype* type, std::size_t count, std::size_t* bytes) {
  if (!type || !type->is_committed() || !type->is_predefined() || count == 0) return false;
  *bytes = count * static_cast<std::size_t>(type->extent());
  return true;
}

// Recursive doubling on a power-of-two rank count, predefined types: each
// round swaps the partial results with the partner and combines them,
// lower rank's first (exact for non-commutative user ops too).
bool allreduce_tagged(Device& dev, const void* sbuf, void* rbuf, std::size_t count, const Datatype* type, const Op& op,
                      const Comm& comm, const Tuning& t, int tag, int* err) {
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
  *err = 0;
  for (int mask = 1; mask < p && !*err; mask <<= 1) {
    const int partner = me ^ mask;
    if ((*err = exchange(dev, rbuf, count, tmp, count, type, partner, partner, tag, comm))) break;
    if (partner < me || op.commutative()) {
      *err = reduce_local(dev, tmp, rbuf, count, type, op);  // rbuf = partner's op mine
    } else {
      *err = reduce_local(dev, rbuf, tmp, count, type, op);  // mine op partner's
      std::memcpy(rbuf, tmp, bytes);
    }
  }
  return true;
}

}  // namespace

// Dissemination, as build_barrier.
bool small_barrier(Device& dev, const Comm& comm, const Tuning& t, int* err) {
  if (t.small_max == 0) return false;
  const int me = comm.rank, p = comm.size, tag = static_cast<int>(Tag::Barrier);
  *err = 0;
  for (int dist = 1; dist < p && !*err; dist <<= 1) {
    *err = exchange(dev, nullptr, 0, nullptr, 0, Datatype::byte(), (me + dist) % p, (me - dist + p) % p, tag, comm);
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

bool small_allreduce(Device& dev, const void* sbuf, void* rbuf, std::size_t count, const Datatype* type, const Op& op,
                     const Comm& comm, const Tuning& t, int* err) {
  return allreduce_tagged(dev, sbuf, rbuf, count, type, op, comm, t, static_cast<int>(Tag::Allreduce), err);
}

namespace {

// Two ranks: one exchange (my copy of the peer's block for its copy of
// mine), then one combine into recvbuf, the lower rank's block first (exact
// for non-commutative ops). Half the bytes of the allreduce below, and no
// schedule up to kPairMax.
constexpr std::size_t kPairMax = 65536;

bool pair_reduce_scatter(Device& dev, const void* sbuf, void* rbuf, std::size_t before, std::size_t mine,
                         std::size_t theirs, std::size_t theirs_at, const Datatype* type, const Op& op,
                         const Comm& comm, int* err) {
  const int me = comm.rank, peer = 1 - me;
  const auto extent = static_cast<std::size_t>(type->extent());
  const auto* in = static_cast<const std::byte*>(sbuf);
  alignas(64) std::byte stack[kMaxSmall];
  std::unique_ptr<std::byte[]> heap;
  std::byte* got = stack;
  if (mine * extent > kMaxSmall) {
    heap.reset(new std::byte[mine * extent]);
    got = heap.get();
  }
  *err = exchange(dev, in + theirs_at * extent, theirs, got, mine, type, peer, peer,
                  static_cast<int>(Tag::ReduceScatter), comm);
  if (*err || mine == 0) return true;
  if (!rbuf) return true;  // the binding checks buffers; nothing to write to
  if (me == 1 || op.commutative()) {
    // recvbuf = rank 0's block op mine
    std::memcpy(rbuf, in + before * extent, mine * extent);
    *err = reduce_local(dev, got, rbuf, mine, type, op);
  } else {
    // mine op rank 1's block, computed in got
    *err = reduce_local(dev, in + before * extent, got, mine, type, op);
    std::memcpy(rbuf, got, mine * extent);
  }
  return true;
}

}  // namespace

// Reduce_scatter of a short vector: at 2 ranks one exchange of the halves
// (above); else the whole vector is allreduced and each rank keeps its
// part.
bool small_reduce_scatter(Device& dev, const void* sbuf, void* rbuf, const int* counts, std::size_t same,
                          const Datatype* type, const Op& op, const Comm& comm, const Tuning& t, int* err) {
  const int me = comm.rank, p = comm.size;
  if (t.reduce_scatter != ReduceScatterAlgo::Auto || in_place(sbuf) || !sbuf) return false;
  std::size_t total = 0, before = 0, bytes = 0;
  for (int i = 0; i < p; ++i) {
    if (counts && counts[i] < 0) return false;
    const std::size_t c = counts ? static_cast<std::size_t>(counts[i]) : same;
    total += c;
    if (i < me) before += c;
  }
  if (!plain(type, total, &bytes)) return false;
  if (p == 2 && t.small_max > 0 && bytes <= kPairMax) {
    if (check_op(dev.errors(), op, type) != 0) return false;  // reported by the scheduled path
    const std::size_t mine = counts ? static_cast<std::size_t>(counts[me]) : same;
    const std::size_t theirs = total - mine, theirs_at = me == 0 ? mine : 0;
    return pair_reduce_scatter(dev, sbuf, rbuf, before, mine, theirs, theirs_at, type, op, comm, err);
  }
  if (bytes > t.small_max || bytes > kMaxSmall) return false;
  alignas(64) std::byte all[kMaxSmall];
  if (!allreduce_tagged(dev, sbuf, all, total, type, op, comm, t, static_cast<int>(Tag::ReduceScatter), err)) {
    return false;
  }
  const std::size_t mine = counts ? static_cast<std::size_t>(counts[me]) : same;
  if (!*err && mine > 0) {
    if (!rbuf) return true;  // the binding checks buffers; nothing to write to
    const auto extent = static_cast<std::size_t>(type->extent());
    std::memcpy(rbuf, all + before * extent, mine * extent);
  }
  return true;
}

// Binomial tree towards the root for commutative ops (any order is
// allowed then; the scheduled path keeps rank order for the others).
bool small_reduce(Device& dev, const void* sbuf, void* rbuf, std::size_t count, const Datatype* type, const Op& op,
                  int root, const Comm& comm, const Tuning& t, int* err) {
  const int me = comm.rank, p = comm.size;
  std::size_t bytes = 0;
  if (t.reduce != ReduceAlgo::Auto || !op.commutative() || root < 0 || root >= p) return false;
  if (!plain(type, count, &bytes) || bytes > t.small_max || bytes > kMaxSmall) return false;
  const void* mine = sbuf;
  if (me == root) {
    if (!rbuf || in_place(rbuf)) return false;
    if (in_place(sbuf)) mine = rbuf;
  }
  if (!mine || in_place(mine)) return false;
  if (reduce_local(dev, rbuf, rbuf, 0, type, op) != 0) return false;  // reported by the scheduled path
  alignas(64) std::byte acc[kMaxSmall], in[kMaxSmall];
  std::memcpy(acc, mine, bytes);
  const int tag = static_cast<int>(Tag::Reduce), rel = (me - root + p) % p;
  *err = 0;
  for (int mask = 1; mask < p && !*err; mask <<= 1) {
    if (rel & mask) {
      *err = dev.send(acc, count, type, (rel - mask + root) % p, tag, comm, SendMode::Standard);
      break;
    }
    if (rel + mask < p) {
      Status st;
      *err = dev.recv(in, count, type, (rel + mask + root) % p, tag, comm, &st);
      if (!*err) *err = reduce_local(dev, in, acc, count, type, op);
    }
  }
  if (me == root && !*err) std::memcpy(rbuf, acc, bytes);
  return true;
}

// The layout rules of allgather and alltoall: block j of a buffer is
// count elements of type at j * count * extent. The types may differ
// between ranks (only signatures match), so these run for any committed
// types, chosen by block bytes, which all ranks share.
bool small_blocks(const Datatype* type, std::size_t count, std::size_t* block_bytes, std::ptrdiff_t* stride) {
  if (!type || !type->is_committed() || count == 0) return false;
  *block_bytes = count * type->size();
  *stride = static_cast<std::ptrdiff_t>(count) * type->extent();
  return true;
}

// Recursive doubling on a power-of-two rank count: round k swaps the 2^k
// blocks each side has gathered so far, straight into the user's buffer.
bool small_allgather(Device& dev, const void* sbuf, std::size_t scount, const Datatype* stype, void* rbuf,
                     std::size_t rcount, const Datatype* rtype, const Comm& comm, const Tuning& t, int* err) {
  const int me = comm.rank, p = comm.size;
  std::size_t bytes = 0;
  std::ptrdiff_t stride = 0;
  if (t.allgather != AllgatherAlgo::Auto || !is_pof2(p) || !rbuf || in_place(rbuf)) return false;
  if (!small_blocks(rtype, rcount, &bytes, &stride) || bytes * static_cast<std::size_t>(p) / 2 > t.small_max) {
    return false;
  }
  auto* base = static_cast<std::byte*>(rbuf);
  if (!in_place(sbuf)) {
    if (!sbuf || !stype || !stype->is_committed()) return false;
    copy(sbuf, scount, stype, base + me * stride, rcount, rtype);
  }
  const int tag = static_cast<int>(Tag::Allgather);
  *err = 0;
  for (int mask = 1; mask < p && !*err; mask <<= 1) {
    const int partner = me ^ mask, mine = me & ~(mask - 1), theirs = partner & ~(mask - 1);
    *err = exchange(dev, base + mine * stride, rcount * static_cast<std::size_t>(mask), base + theirs * stride,
                    rcount * static_cast<std::size_t>(mask), rtype, partner, partner, tag, comm);
  }
  return true;
}

// Pairwise exchange, any rank count: round i sends to me + i and receives
// from me - i.
bool small_alltoall(Device& dev, const void* sbuf, std::size_t scount, const Datatype* stype, void* rbuf,
                    std::size_t rcount, const Datatype* rtype, const Comm& comm, const Tuning& t, int* err) {
  const int me = comm.rank, p = comm.size;
  std::size_t bytes = 0;
  std::ptrdiff_t rstride = 0;
  if (t.alltoall != AlltoallAlgo::Auto || !sbuf || in_place(sbuf) || !rbuf || in_place(rbuf)) return false;
  if (!small_blocks(rtype, rcount, &bytes, &rstride) || bytes > t.small_max) return false;
  if (!stype || !stype->is_committed()) return false;
  const std::ptrdiff_t sstride = static_cast<std::ptrdiff_t>(scount) * stype->extent();
  const auto* sbase = static_cast<const std::byte*>(sbuf);
  auto* rbase = static_cast<std::byte*>(rbuf);
  copy(sbase + me * sstride, scount, stype, rbase + me * rstride, rcount, rtype);
  const int tag = static_cast<int>(Tag::Alltoall);
  *err = 0;
  for (int i = 1; i < p && !*err; ++i) {
    const int to = (me + i) % p, from = (me - i + p) % p;
    Request* sent = nullptr;
    if ((*err = dev.isend(sbase + to * sstride, scount, stype, to, tag, comm, SendMode::Standard, &sent))) break;
    Status st;
    *err = dev.recv(rbase + from * rstride, rcount, rtype, from, tag, comm, &st);
    int w = dev.wait(&sent, &st);
    if (!*err) *err = w;
  }
  return true;
}

}  // namespace adi3::coll::detail
