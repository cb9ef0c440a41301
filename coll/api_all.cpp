// Public calls without a root: checks, then the builders run as blocking
// or nonblocking collectives.
#include "coll/algorithms.hpp"
#include "coll/calls.hpp"
#include "coll/shm_coll.hpp"
#include "coll/small.hpp"

namespace adi3::coll {
using namespace detail;

namespace {

auto allreduce_fn(const void* sbuf, void* rbuf, std::size_t count, DT type, const Op& op, const Tuning* t) {
  return [=, &op](Schedule& s) {
    if (int e = check_type(s, type, "the")) return e;
    if (int e = check_not_in_place(s, rbuf, "recvbuf")) return e;
    return build_allreduce(s, sbuf, rbuf, count, type, op, pick(t));
  };
}

auto allgatherv_fn(const void* sbuf, std::size_t scount, DT stype, void* rbuf, std::vector<std::size_t> counts,
                   std::vector<std::ptrdiff_t> displs, DT rtype, const Tuning* t) {
  return [=, counts = std::move(counts), displs = std::move(displs)](Schedule& s) {
    if (int e = check_type(s, rtype, "the receive")) return e;
    if (int e = check_not_in_place(s, rbuf, "recvbuf")) return e;
    if (!in_place(sbuf)) {
      if (int e = check_type(s, stype, "the send")) return e;
    }
    return build_allgatherv(s, sbuf, scount, stype, rbuf, counts, displs, rtype, pick(t));
  };
}

// Equal blocks: rank i's at element i * count.
auto allgather_fn(const void* sbuf, std::size_t scount, DT stype, void* rbuf, std::size_t rcount, DT rtype, int p,
                  const Tuning* t) {
  std::vector<std::size_t> counts(static_cast<std::size_t>(p), rcount);
  std::vector<std::ptrdiff_t> displs(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i) displs[static_cast<std::size_t>(i)] = static_cast<std::ptrdiff_t>(rcount) * i;
  return allgatherv_fn(sbuf, scount, stype, rbuf, std::move(counts), std::move(displs), rtype, t);
}

auto allgatherv_arrays_fn(const void* sbuf, std::size_t scount, DT stype, void* rbuf, const int* rcounts,
                          const int* displs, DT rtype, const Tuning* t) {
  return [=](Schedule& s) {
    if (int e = check_counts(s, rcounts, "recvcounts")) return e;
    if (int e = check_counts(s, displs, "displs", true)) return e;
    if (rtype) {
      if (int e = check_blocks(s, "recvcounts/displs", rcounts, displs, rtype)) return e;
    }
    std::vector<std::size_t> c(rcounts, rcounts + s.size());
    std::vector<std::ptrdiff_t> d(displs, displs + s.size());
    return allgatherv_fn(sbuf, scount, stype, rbuf, std::move(c), std::move(d), rtype, t)(s);
  };
}

auto alltoall_fn(const void* sbuf, std::size_t scount, DT stype, void* rbuf, std::size_t rcount, DT rtype,
                 const Tuning* t) {
  return [=](Schedule& s) {
    if (int e = check_type(s, rtype, "the receive")) return e;
    if (int e = check_not_in_place(s, rbuf, "recvbuf")) return e;
    if (!in_place(sbuf)) {
      if (int e = check_type(s, stype, "the send")) return e;
    }
    return build_alltoall(s, sbuf, scount, stype, rbuf, rcount, rtype, pick(t));
  };
}

// Alltoallv (one type, displacements in its extents) and alltoallw (a type
// per peer, displacements in bytes) become per-peer blocks.
auto alltoallw_fn(const void* sbuf, const int* scounts, const int* sdispls, const DT* stypes, void* rbuf,
                  const int* rcounts, const int* rdispls, const DT* rtypes, bool bytes, const Tuning* t) {
  return [=](Schedule& s) {
    bool inplace = in_place(sbuf);
    if (int e = check_not_in_place(s, rbuf, "recvbuf")) return e;
    if (int e = check_counts(s, rcounts, "recvcounts")) return e;
    if (int e = check_counts(s, rdispls, "rdispls", true)) return e;
    if (!inplace) {
      if (int e = check_counts(s, scounts, "sendcounts")) return e;
      if (int e = check_counts(s, sdispls, "sdispls", true)) return e;
    }
    std::vector<Block> sends, recvs;
    for (int i = 0; i < s.size(); ++i) {
      DT rt = rtypes[bytes ? i : 0];
      if (int e = check_type(s, rt, "a receive")) return e;
      if (int e = check_block(s, "recvcounts/rdispls", i, rcounts[i], rdispls[i], rt, bytes)) return e;
      std::ptrdiff_t ro = bytes ? rdispls[i] : rdispls[i] * rt->extent();
      recvs.push_back({static_cast<std::byte*>(rbuf) + ro, static_cast<std::size_t>(rcounts[i]), rt});
      if (inplace) continue;
      DT st = stypes[bytes ? i : 0];
      if (int e = check_type(s, st, "a send")) return e;
      if (int e = check_block(s, "sendcounts/sdispls", i, scounts[i], sdispls[i], st, bytes)) return e;
      std::ptrdiff_t so = bytes ? sdispls[i] : sdispls[i] * st->extent();
      sends.push_back(
          {const_cast<std::byte*>(static_cast<const std::byte*>(sbuf)) + so, static_cast<std::size_t>(scounts[i]), st});
    }
    return build_alltoallw(s, sends, recvs, inplace, pick(t));
  };
}

auto reduce_scatter_fn(const void* sbuf, void* rbuf, std::vector<std::size_t> counts, DT type, const Op& op,
                       const Tuning* t) {
  return [=, &op, counts = std::move(counts)](Schedule& s) {
    if (int e = check_type(s, type, "the")) return e;
    if (int e = check_not_in_place(s, rbuf, "recvbuf")) return e;
    return build_reduce_scatter(s, sbuf, rbuf, counts, type, op, pick(t));
  };
}

auto reduce_scatter_arrays_fn(const void* sbuf, void* rbuf, const int* rcounts, DT type, const Op& op,
                              const Tuning* t) {
  return [=, &op](Schedule& s) {
    if (int e = check_counts(s, rcounts, "recvcounts")) return e;
    return reduce_scatter_fn(sbuf, rbuf, std::vector<std::size_t>(rcounts, rcounts + s.size()), type, op, t)(s);
  };
}

auto scan_fn(const void* sbuf, void* rbuf, std::size_t count, DT type, const Op& op, bool exclusive) {
  return [=, &op](Schedule& s) {
    if (int e = check_type(s, type, "the")) return e;
    if (int e = check_not_in_place(s, rbuf, "recvbuf")) return e;
    return build_scan(s, sbuf, rbuf, count, type, op, exclusive);
  };
}

}  // namespace

int reduce_local(Device& dev, const void* in, void* inout, std::size_t count, const Datatype* type, const Op& op) {
  return reduce_local(dev.errors(), in, inout, count, type, op);
}

int allreduce(Device& dev, const void* sbuf, void* rbuf, std::size_t count, DT type, const Op& op, const Comm& comm,
              const Tuning* t) {
  int e = 0;
  if (shm_allreduce(dev, sbuf, rbuf, count, type, op, comm, pick(t), &e)) return e;
  if (small_allreduce(dev, sbuf, rbuf, count, type, op, comm, pick(t), &e)) return e;
  return blocking(dev, comm, Tag::Allreduce, allreduce_fn(sbuf, rbuf, count, type, op, t));
}

int iallreduce(Device& dev, const void* sbuf, void* rbuf, std::size_t count, DT type, const Op& op, const Comm& comm,
               Sequence& seq, Request** req, const Tuning* t) {
  return nonblocking(dev, comm, seq, req, allreduce_fn(sbuf, rbuf, count, type, op, t));
}

int allgather(Device& dev, const void* sbuf, std::size_t scount, DT stype, void* rbuf, std::size_t rcount, DT rtype,
              const Comm& comm, const Tuning* t) {
  int e = 0;
  if (shm_allgather(dev, sbuf, scount, stype, rbuf, rcount, rtype, comm, pick(t), &e) ||
      small_allgather(dev, sbuf, scount, stype, rbuf, rcount, rtype, comm, pick(t), &e)) {
    return e;
  }
  return blocking(dev, comm, Tag::Allgather, allgather_fn(sbuf, scount, stype, rbuf, rcount, rtype, comm.size, t));
}

int iallgather(Device& dev, const void* sbuf, std::size_t scount, DT stype, void* rbuf, std::size_t rcount, DT rtype,
               const Comm& comm, Sequence& seq, Request** req, const Tuning* t) {
  return nonblocking(dev, comm, seq, req, allgather_fn(sbuf, scount, stype, rbuf, rcount, rtype, comm.size, t));
}

int allgatherv(Device& dev, const void* sbuf, std::size_t scount, DT stype, void* rbuf, const int* rcounts,
               const int* displs, DT rtype, const Comm& comm, const Tuning* t) {
  return blocking(dev, comm, Tag::Allgatherv,
                  allgatherv_arrays_fn(sbuf, scount, stype, rbuf, rcounts, displs, rtype, t));
}

int iallgatherv(Device& dev, const void* sbuf, std::size_t scount, DT stype, void* rbuf, const int* rcounts,
                const int* displs, DT rtype, const Comm& comm, Sequence& seq, Request** req, const Tuning* t) {
  return nonblocking(dev, comm, seq, req, allgatherv_arrays_fn(sbuf, scount, stype, rbuf, rcounts, displs, rtype, t));
}

int alltoall(Device& dev, const void* sbuf, std::size_t scount, DT stype, void* rbuf, std::size_t rcount, DT rtype,
             const Comm& comm, const Tuning* t) {
  int e = 0;
  if (shm_alltoall(dev, sbuf, scount, stype, rbuf, rcount, rtype, comm, pick(t), &e) ||
      small_alltoall(dev, sbuf, scount, stype, rbuf, rcount, rtype, comm, pick(t), &e)) {
    return e;
  }
  return blocking(dev, comm, Tag::Alltoall, alltoall_fn(sbuf, scount, stype, rbuf, rcount, rtype, t));
}

int ialltoall(Device& dev, const void* sbuf, std::size_t scount, DT stype, void* rbuf, std::size_t rcount, DT rtype,
              const Comm& comm, Sequence& seq, Request** req, const Tuning* t) {
  return nonblocking(dev, comm, seq, req, alltoall_fn(sbuf, scount, stype, rbuf, rcount, rtype, t));
}

int alltoallv(Device& dev, const void* sbuf, const int* scounts, const int* sdispls, DT stype, void* rbuf,
              const int* rcounts, const int* rdispls, DT rtype, const Comm& comm, const Tuning* t) {
  return blocking(dev, comm, Tag::Alltoallv,
                  alltoallw_fn(sbuf, scounts, sdispls, &stype, rbuf, rcounts, rdispls, &rtype, false, t));
}

int ialltoallv(Device& dev, const void* sbuf, const int* scounts, const int* sdispls, DT stype, void* rbuf,
               const int* rcounts, const int* rdispls, DT rtype, const Comm& comm, Sequence& seq, Request** req,
               const Tuning* t) {
  return nonblocking(dev, comm, seq, req,
                     alltoallw_fn(sbuf, scounts, sdispls, &stype, rbuf, rcounts, rdispls, &rtype, false, t));
}

int alltoallw(Device& dev, const void* sbuf, const int* scounts, const int* sdispls, const DT* stypes, void* rbuf,
              const int* rcounts, const int* rdispls, const DT* rtypes, const Comm& comm, const Tuning* t) {
  return blocking(dev, comm, Tag::Alltoallw,
                  alltoallw_fn(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, true, t));
}

int ialltoallw(Device& dev, const void* sbuf, const int* scounts, const int* sdispls, const DT* stypes, void* rbuf,
               const int* rcounts, const int* rdispls, const DT* rtypes, const Comm& comm, Sequence& seq, Request** req,
               const Tuning* t) {
  return nonblocking(dev, comm, seq, req,
                     alltoallw_fn(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, true, t));
}

int reduce_scatter(Device& dev, const void* sbuf, void* rbuf, const int* rcounts, DT type, const Op& op,
                   const Comm& comm, const Tuning* t) {
  int e = 0;
  if (shm_reduce_scatter(dev, sbuf, rbuf, rcounts, 0, type, op, comm, pick(t), &e) ||
      small_reduce_scatter(dev, sbuf, rbuf, rcounts, 0, type, op, comm, pick(t), &e)) {
    return e;
  }
  return blocking(dev, comm, Tag::ReduceScatter, reduce_scatter_arrays_fn(sbuf, rbuf, rcounts, type, op, t));
}

int ireduce_scatter(Device& dev, const void* sbuf, void* rbuf, const int* rcounts, DT type, const Op& op,
                    const Comm& comm, Sequence& seq, Request** req, const Tuning* t) {
  return nonblocking(dev, comm, seq, req, reduce_scatter_arrays_fn(sbuf, rbuf, rcounts, type, op, t));
}

int reduce_scatter_block(Device& dev, const void* sbuf, void* rbuf, std::size_t rcount, DT type, const Op& op,
                         const Comm& comm, const Tuning* t) {
  int e = 0;
  if (shm_reduce_scatter(dev, sbuf, rbuf, nullptr, rcount, type, op, comm, pick(t), &e) ||
      small_reduce_scatter(dev, sbuf, rbuf, nullptr, rcount, type, op, comm, pick(t), &e)) {
    return e;
  }
  std::vector<std::size_t> counts(static_cast<std::size_t>(comm.size), rcount);
  return blocking(dev, comm, Tag::ReduceScatterBlock, reduce_scatter_fn(sbuf, rbuf, std::move(counts), type, op, t));
}

int ireduce_scatter_block(Device& dev, const void* sbuf, void* rbuf, std::size_t rcount, DT type, const Op& op,
                          const Comm& comm, Sequence& seq, Request** req, const Tuning* t) {
  std::vector<std::size_t> counts(static_cast<std::size_t>(comm.size), rcount);
  return nonblocking(dev, comm, seq, req, reduce_scatter_fn(sbuf, rbuf, std::move(counts), type, op, t));
}

int scan(Device& dev, const void* sbuf, void* rbuf, std::size_t count, DT type, const Op& op, const Comm& comm,
         const Tuning*) {
  return blocking(dev, comm, Tag::Scan, scan_fn(sbuf, rbuf, count, type, op, false));
}

int iscan(Device& dev, const void* sbuf, void* rbuf, std::size_t count, DT type, const Op& op, const Comm& comm,
          Sequence& seq, Request** req, const Tuning*) {
  return nonblocking(dev, comm, seq, req, scan_fn(sbuf, rbuf, count, type, op, false));
}

int exscan(Device& dev, const void* sbuf, void* rbuf, std::size_t count, DT type, const Op& op, const Comm& comm,
           const Tuning*) {
  return blocking(dev, comm, Tag::Exscan, scan_fn(sbuf, rbuf, count, type, op, true));
}

int iexscan(Device& dev, const void* sbuf, void* rbuf, std::size_t count, DT type, const Op& op, const Comm& comm,
            Sequence& seq, Request** req, const Tuning*) {
  return nonblocking(dev, comm, seq, req, scan_fn(sbuf, rbuf, count, type, op, true));
}

}  // namespace adi3::coll
