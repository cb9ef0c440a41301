// Public calls with a root (and barrier): checks, then the builders run as
// blocking or nonblocking collectives.
#include "coll/algorithms.hpp"
#include "coll/calls.hpp"
#include "coll/shm_coll.hpp"
#include "coll/small.hpp"

namespace adi3::coll {
using namespace detail;

namespace {

auto barrier_fn() {
  return [](Schedule& s) { return build_barrier(s); };
}

auto bcast_fn(void* buf, std::size_t count, DT type, int root, const Tuning* t) {
  return [=](Schedule& s) {
    if (int e = check_root(s, root)) return e;
    if (int e = check_type(s, type, "the")) return e;
    if (int e = check_not_in_place(s, buf, "the bcast buffer")) return e;
    return build_bcast(s, buf, count, type, root, pick(t));
  };
}

auto reduce_fn(const void* sbuf, void* rbuf, std::size_t count, DT type, const Op& op, int root, const Tuning* t) {
  return [=, &op](Schedule& s) {
    if (int e = check_root(s, root)) return e;
    if (int e = check_type(s, type, "the")) return e;
    if (s.rank() != root) {
      if (int e = check_not_in_place(s, sbuf, "sendbuf on a non-root rank")) return e;
    }
    return build_reduce(s, sbuf, rbuf, count, type, op, root, pick(t));
  };
}

auto gather_fn(const void* sbuf, std::size_t scount, DT stype, void* rbuf, std::size_t rcount, DT rtype, int root) {
  return [=](Schedule& s) {
    if (int e = check_root(s, root)) return e;
    bool is_root = s.rank() == root;
    if (is_root) {
      if (int e = check_type(s, rtype, "the receive")) return e;
      if (int e = check_not_in_place(s, rbuf, "recvbuf")) return e;
    } else if (int e = check_not_in_place(s, sbuf, "sendbuf on a non-root rank")) {
      return e;
    }
    if (!(is_root && in_place(sbuf))) {
      if (int e = check_type(s, stype, "the send")) return e;
    }
    return build_gather(s, sbuf, scount, stype, rbuf, rcount, rtype, root);
  };
}

auto gatherv_fn(const void* sbuf, std::size_t scount, DT stype, void* rbuf, const int* rcounts, const int* displs,
                DT rtype, int root) {
  return [=](Schedule& s) {
    if (int e = check_root(s, root)) return e;
    bool is_root = s.rank() == root;
    if (is_root) {
      if (int e = check_type(s, rtype, "the receive")) return e;
      if (int e = check_counts(s, rcounts, "recvcounts")) return e;
      if (int e = check_counts(s, displs, "displs", true)) return e;
      if (int e = check_blocks(s, "recvcounts/displs", rcounts, displs, rtype)) return e;
      if (int e = check_not_in_place(s, rbuf, "recvbuf")) return e;
    } else if (int e = check_not_in_place(s, sbuf, "sendbuf on a non-root rank")) {
      return e;
    }
    if (!(is_root && in_place(sbuf))) {
      if (int e = check_type(s, stype, "the send")) return e;
    }
    return build_gatherv(s, sbuf, scount, stype, rbuf, rcounts, displs, rtype, root);
  };
}

auto scatter_fn(const void* sbuf, std::size_t scount, DT stype, void* rbuf, std::size_t rcount, DT rtype, int root) {
  return [=](Schedule& s) {
    if (int e = check_root(s, root)) return e;
    bool is_root = s.rank() == root;
    if (is_root) {
      if (int e = check_type(s, stype, "the send")) return e;
      if (int e = check_not_in_place(s, sbuf, "sendbuf")) return e;
    } else if (int e = check_not_in_place(s, rbuf, "recvbuf on a non-root rank")) {
      return e;
    }
    if (!(is_root && in_place(rbuf))) {
      if (int e = check_type(s, rtype, "the receive")) return e;
    }
    return build_scatter(s, sbuf, scount, stype, rbuf, rcount, rtype, root);
  };
}

auto scatterv_fn(const void* sbuf, const int* scounts, const int* displs, DT stype, void* rbuf, std::size_t rcount,
                 DT rtype, int root) {
  return [=](Schedule& s) {
    if (int e = check_root(s, root)) return e;
    bool is_root = s.rank() == root;
    if (is_root) {
      if (int e = check_type(s, stype, "the send")) return e;
      if (int e = check_counts(s, scounts, "sendcounts")) return e;
      if (int e = check_counts(s, displs, "displs", true)) return e;
      if (int e = check_blocks(s, "sendcounts/displs", scounts, displs, stype)) return e;
      if (int e = check_not_in_place(s, sbuf, "sendbuf")) return e;
    } else if (int e = check_not_in_place(s, rbuf, "recvbuf on a non-root rank")) {
      return e;
    }
    if (!(is_root && in_place(rbuf))) {
      if (int e = check_type(s, rtype, "the receive")) return e;
    }
    return build_scatterv(s, sbuf, scounts, displs, stype, rbuf, rcount, rtype, root);
  };
}

}  // namespace

int barrier(Device& dev, const Comm& comm, const Tuning* t) {
  int e = 0;
  if (shm_barrier(dev, comm, pick(t), &e) || small_barrier(dev, comm, pick(t), &e)) return e;
  return blocking(dev, comm, Tag::Barrier, barrier_fn());
}

int ibarrier(Device& dev, const Comm& comm, Sequence& seq, Request** req, const Tuning*) {
  return nonblocking(dev, comm, seq, req, barrier_fn());
}

int bcast(Device& dev, void* buf, std::size_t count, DT type, int root, const Comm& comm, const Tuning* t) {
  int e = 0;
  if (shm_bcast(dev, buf, count, type, root, comm, pick(t), &e)) return e;
  if (small_bcast(dev, buf, count, type, root, comm, pick(t), &e)) return e;
  return blocking(dev, comm, Tag::Bcast, bcast_fn(buf, count, type, root, t));
}

int ibcast(Device& dev, void* buf, std::size_t count, DT type, int root, const Comm& comm, Sequence& seq, Request** req,
           const Tuning* t) {
  return nonblocking(dev, comm, seq, req, bcast_fn(buf, count, type, root, t));
}

int reduce(Device& dev, const void* sbuf, void* rbuf, std::size_t count, DT type, const Op& op, int root,
           const Comm& comm, const Tuning* t) {
  int e = 0;
  if (shm_reduce(dev, sbuf, rbuf, count, type, op, root, comm, pick(t), &e)) return e;
  if (small_reduce(dev, sbuf, rbuf, count, type, op, root, comm, pick(t), &e)) return e;
  return blocking(dev, comm, Tag::Reduce, reduce_fn(sbuf, rbuf, count, type, op, root, t));
}

int ireduce(Device& dev, const void* sbuf, void* rbuf, std::size_t count, DT type, const Op& op, int root,
            const Comm& comm, Sequence& seq, Request** req, const Tuning* t) {
  return nonblocking(dev, comm, seq, req, reduce_fn(sbuf, rbuf, count, type, op, root, t));
}

int gather(Device& dev, const void* sbuf, std::size_t scount, DT stype, void* rbuf, std::size_t rcount, DT rtype,
           int root, const Comm& comm, const Tuning*) {
  return blocking(dev, comm, Tag::Gather, gather_fn(sbuf, scount, stype, rbuf, rcount, rtype, root));
}

int igather(Device& dev, const void* sbuf, std::size_t scount, DT stype, void* rbuf, std::size_t rcount, DT rtype,
            int root, const Comm& comm, Sequence& seq, Request** req, const Tuning*) {
  return nonblocking(dev, comm, seq, req, gather_fn(sbuf, scount, stype, rbuf, rcount, rtype, root));
}

int gatherv(Device& dev, const void* sbuf, std::size_t scount, DT stype, void* rbuf, const int* rcounts,
            const int* displs, DT rtype, int root, const Comm& comm, const Tuning*) {
  return blocking(dev, comm, Tag::Gatherv, gatherv_fn(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root));
}

int igatherv(Device& dev, const void* sbuf, std::size_t scount, DT stype, void* rbuf, const int* rcounts,
             const int* displs, DT rtype, int root, const Comm& comm, Sequence& seq, Request** req, const Tuning*) {
  return nonblocking(dev, comm, seq, req, gatherv_fn(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root));
}

int scatter(Device& dev, const void* sbuf, std::size_t scount, DT stype, void* rbuf, std::size_t rcount, DT rtype,
            int root, const Comm& comm, const Tuning*) {
  return blocking(dev, comm, Tag::Scatter, scatter_fn(sbuf, scount, stype, rbuf, rcount, rtype, root));
}

int iscatter(Device& dev, const void* sbuf, std::size_t scount, DT stype, void* rbuf, std::size_t rcount, DT rtype,
             int root, const Comm& comm, Sequence& seq, Request** req, const Tuning*) {
  return nonblocking(dev, comm, seq, req, scatter_fn(sbuf, scount, stype, rbuf, rcount, rtype, root));
}

int scatterv(Device& dev, const void* sbuf, const int* scounts, const int* displs, DT stype, void* rbuf,
             std::size_t rcount, DT rtype, int root, const Comm& comm, const Tuning*) {
  return blocking(dev, comm, Tag::Scatterv, scatterv_fn(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root));
}

int iscatterv(Device& dev, const void* sbuf, const int* scounts, const int* displs, DT stype, void* rbuf,
              std::size_t rcount, DT rtype, int root, const Comm& comm, Sequence& seq, Request** req, const Tuning*) {
  return nonblocking(dev, comm, seq, req, scatterv_fn(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root));
}

}  // namespace adi3::coll
