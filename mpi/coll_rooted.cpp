// Rooted collectives (bcast, reduce, gather(v), scatter(v)) and their
// nonblocking forms. Arguments significant only at the root are checked
// only there.
#include "mpi/coll_express.hpp"
#include "mpi/coll_inter.hpp"

using namespace adi3;
using namespace adi3::mpi;

namespace {

using std::size_t;

// Intercommunicators: processes passing MPI_PROC_NULL as root take no part
// (their nonblocking forms get a request that is already complete).
int bcast(CollCall& k, void* buf, MPI_Count count, MPI_Datatype dt, int root, MPI_Request* req) {
  const Datatype* t = nullptr;
  if (k.c->inter) {
    int e = root == MPI_PROC_NULL ? 0 : check_count(count);
    if (!e && root != MPI_PROC_NULL) e = get_comm_type(*k.rt, dt, &t);
    if (!e) e = int_count(count);
    if (!e) e = inter::bcast(k, buf, static_cast<int>(count), t, root, req);
    return e;
  }
  int e = check_root(*k.c, root);
  if (!e) e = check_count(count);
  if (!e) e = get_comm_type(*k.rt, dt, &t);
  if (!e) e = check_buffer(buf, count, t);
  if (e) return e;
  return k.run(
      req, [&] { return coll::bcast(k.dev(), buf, sz(count), t, root, k.c->coll); },
      [&](Request** r) { return coll::ibcast(k.dev(), buf, sz(count), t, root, k.c->coll, k.seq(), r); });
}

int reduce(CollCall& k, const void* sbuf, void* rbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op, int root,
           MPI_Request* req) {
  const Datatype* t = nullptr;
  coll::Op o(coll::OpKind::NoOp);
  if (k.c->inter) {
    int e = root == MPI_PROC_NULL ? 0 : check_count(count);
    if (!e && root != MPI_PROC_NULL) e = get_comm_type(*k.rt, dt, &t);
    if (!e && root != MPI_PROC_NULL) e = get_op(*k.rt, op, &o);
    if (!e) e = int_count(count);
    if (!e) e = inter::reduce(k, sbuf, rbuf, static_cast<int>(count), t, o, root, req);
    return e;
  }
  bool at_root = k.c->rank() == root;
  int e = check_root(*k.c, root);
  if (!e) e = check_count(count);
  if (!e) e = get_comm_type(*k.rt, dt, &t);
  if (!e) e = get_op(*k.rt, op, &o);
  if (!e && sbuf != MPI_IN_PLACE) e = check_buffer(sbuf, count, t);
  if (!e && at_root) e = check_buffer(rbuf, count, t);
  if (!e && at_root && count > 0 && sbuf == rbuf)
    e = raise(ErrorClass::Buffer, "sendbuf and recvbuf are the same buffer (use MPI_IN_PLACE)");
  if (e) return e;
  return k.run(
      req, [&] { return coll::reduce(k.dev(), sbuf, rbuf, sz(count), t, o, root, k.c->coll); },
      [&](Request** r) { return coll::ireduce(k.dev(), sbuf, rbuf, sz(count), t, o, root, k.c->coll, k.seq(), r); });
}

int gather(CollCall& k, const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf, MPI_Count rcount,
           MPI_Datatype rtype, int root, MPI_Request* req) {
  const Datatype *st = nullptr, *rt = nullptr;
  if (k.c->inter) {
    int e = 0;
    if (root == MPI_ROOT)
      e = coll_side(*k.rt, rbuf, rcount, rtype, &rt);
    else if (root != MPI_PROC_NULL)
      e = coll_side(*k.rt, sbuf, scount, stype, &st);
    if (!e) e = int_count(scount, rcount);
    if (!e)
      e = inter::gather(k, sbuf, static_cast<int>(scount), st, rbuf, static_cast<int>(rcount), nullptr, nullptr, rt,
                        root, req);
    return e;
  }
  int e = check_root(*k.c, root);
  bool at_root = k.c->rank() == root;
  if (!e) e = coll_side(*k.rt, sbuf, scount, stype, &st);
  if (!e && at_root) e = coll_side(*k.rt, rbuf, rcount, rtype, &rt);
  if (e) return e;
  return k.run(
      req, [&] { return coll::gather(k.dev(), sbuf, sz(scount), st, rbuf, sz(rcount), rt, root, k.c->coll); },
      [&](Request** r) {
        return coll::igather(k.dev(), sbuf, sz(scount), st, rbuf, sz(rcount), rt, root, k.c->coll, k.seq(), r);
      });
}

int gatherv(CollCall& k, const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf, const int* rcounts,
            const int* displs, MPI_Datatype rtype, int root, MPI_Request* req) {
  const Datatype *st = nullptr, *rt = nullptr;
  if (k.c->inter) {
    int e = 0;
    if (root == MPI_ROOT) {
      e = coll_counts(rcounts, displs, k.c->remote->size(), "receive");
      if (!e) e = get_comm_type(*k.rt, rtype, &rt);
    } else if (root != MPI_PROC_NULL) {
      e = coll_side(*k.rt, sbuf, scount, stype, &st);
    }
    if (!e) e = int_count(scount);
    if (!e) e = inter::gather(k, sbuf, static_cast<int>(scount), st, rbuf, 0, rcounts, displs, rt, root, req);
    return e;
  }
  int e = check_root(*k.c, root);
  bool at_root = k.c->rank() == root;
  if (!e) e = coll_side(*k.rt, sbuf, scount, stype, &st);
  if (!e && at_root) e = coll_counts(rcounts, displs, k.c->size(), "receive");
  if (!e && at_root) e = get_comm_type(*k.rt, rtype, &rt);
  if (e) return e;
  return k.run(
      req, [&] { return coll::gatherv(k.dev(), sbuf, sz(scount), st, rbuf, rcounts, displs, rt, root, k.c->coll); },
      [&](Request** r) {
        return coll::igatherv(k.dev(), sbuf, sz(scount), st, rbuf, rcounts, displs, rt, root, k.c->coll, k.seq(), r);
      });
}

int scatter(CollCall& k, const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf, MPI_Count rcount,
            MPI_Datatype rtype, int root, MPI_Request* req) {
  const Datatype *st = nullptr, *rt = nullptr;
  if (k.c->inter) {
    int e = 0;
    if (root == MPI_ROOT)
      e = coll_side(*k.rt, sbuf, scount, stype, &st);
    else if (root != MPI_PROC_NULL)
      e = coll_side(*k.rt, rbuf, rcount, rtype, &rt);
    if (!e) e = int_count(scount, rcount);
    if (!e)
      e = inter::scatter(k, sbuf, static_cast<int>(scount), nullptr, nullptr, st, rbuf, static_cast<int>(rcount), rt,
                         root, req);
    return e;
  }
  int e = check_root(*k.c, root);
  bool at_root = k.c->rank() == root;
  if (!e && at_root) e = coll_side(*k.rt, sbuf, scount, stype, &st);
  if (!e) e = coll_side(*k.rt, rbuf, rcount, rtype, &rt);
  if (e) return e;
  return k.run(
      req, [&] { return coll::scatter(k.dev(), sbuf, sz(scount), st, rbuf, sz(rcount), rt, root, k.c->coll); },
      [&](Request** r) {
        return coll::iscatter(k.dev(), sbuf, sz(scount), st, rbuf, sz(rcount), rt, root, k.c->coll, k.seq(), r);
      });
}

int scatterv(CollCall& k, const void* sbuf, const int* scounts, const int* displs, MPI_Datatype stype, void* rbuf,
             MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Request* req) {
  const Datatype *st = nullptr, *rt = nullptr;
  if (k.c->inter) {
    int e = 0;
    if (root == MPI_ROOT) {
      e = coll_counts(scounts, displs, k.c->remote->size(), "send");
      if (!e) e = get_comm_type(*k.rt, stype, &st);
    } else if (root != MPI_PROC_NULL) {
      e = coll_side(*k.rt, rbuf, rcount, rtype, &rt);
    }
    if (!e) e = int_count(rcount);
    if (!e) e = inter::scatter(k, sbuf, 0, scounts, displs, st, rbuf, static_cast<int>(rcount), rt, root, req);
    return e;
  }
  int e = check_root(*k.c, root);
  bool at_root = k.c->rank() == root;
  if (!e && at_root) e = coll_counts(scounts, displs, k.c->size(), "send");
  if (!e && at_root) e = get_comm_type(*k.rt, stype, &st);
  if (!e) e = coll_side(*k.rt, rbuf, rcount, rtype, &rt);
  if (e) return e;
  return k.run(
      req, [&] { return coll::scatterv(k.dev(), sbuf, scounts, displs, st, rbuf, sz(rcount), rt, root, k.c->coll); },
      [&](Request** r) {
        return coll::iscatterv(k.dev(), sbuf, scounts, displs, st, rbuf, sz(rcount), rt, root, k.c->coll, k.seq(), r);
      });
}

// The counts and displacements arrays of the _c forms as int arrays.
// The root's arrays matter only at the root (MPI_ROOT on an intercommunicator).
int root_peers(const CollCall& k, int root) {
  if (k.c->inter) return root == MPI_ROOT ? k.c->remote->size() : 0;
  return k.c->rank() == root ? k.c->size() : 0;
}

template <class C, class D>
int gatherv_any(CollCall& k, const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf, const C* rcounts,
                const D* displs, MPI_Datatype rtype, int root, MPI_Request* req) {
  IntArray c(rcounts, root_peers(k, root)), d(displs, root_peers(k, root));
  if (int e = c.error() ? c.error() : d.error()) return e;
  return gatherv(k, sbuf, scount, stype, rbuf, c.get(), d.get(), rtype, root, req);
}

template <class C, class D>
int scatterv_any(CollCall& k, const void* sbuf, const C* scounts, const D* displs, MPI_Datatype stype, void* rbuf,
                 MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Request* req) {
  IntArray c(scounts, root_peers(k, root)), d(displs, root_peers(k, root));
  if (int e = c.error() ? c.error() : d.error()) return e;
  return scatterv(k, sbuf, c.get(), d.get(), stype, rbuf, rcount, rtype, root, req);
}

}  // namespace

#define ADI3_BCAST(C, D) void *buffer, C count, MPI_Datatype datatype, int root, MPI_Comm comm
#define ADI3_BCAST_NAMES buffer, count, datatype, root, comm
ADI3_COLL_FAMILY_EXPRESS(Bcast, Ibcast, ADI3_BCAST, ADI3_BCAST_NAMES,
                         express_bcast(k, buffer, count, datatype, root, &e),
                         bcast(k, buffer, count, datatype, root, request),
                         bcast(k, buffer, count, datatype, root, request))
#undef ADI3_BCAST
#undef ADI3_BCAST_NAMES

#define ADI3_REDUCE(C, D) \
  const void *sendbuf, void *recvbuf, C count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm
#define ADI3_REDUCE_NAMES sendbuf, recvbuf, count, datatype, op, root, comm
#define ADI3_REDUCE_ARGS sendbuf, recvbuf, count, datatype, op, root, request
ADI3_COLL_FAMILY_EXPRESS(Reduce, Ireduce, ADI3_REDUCE, ADI3_REDUCE_NAMES,
                         express_reduce(k, sendbuf, recvbuf, count, datatype, op, root, &e),
                         reduce(k, ADI3_REDUCE_ARGS), reduce(k, ADI3_REDUCE_ARGS))
#undef ADI3_REDUCE
#undef ADI3_REDUCE_NAMES
#undef ADI3_REDUCE_ARGS

#define ADI3_GATHER(C, D)                                                                                     \
  const void *sendbuf, C sendcount, MPI_Datatype sendtype, void *recvbuf, C recvcount, MPI_Datatype recvtype, \
      int root, MPI_Comm comm
#define ADI3_GATHER_NAMES sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm
#define ADI3_GATHER_ARGS sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, request
ADI3_COLL_FAMILY(Gather, Igather, ADI3_GATHER, ADI3_GATHER_NAMES, gather(k, ADI3_GATHER_ARGS),
                 gather(k, ADI3_GATHER_ARGS))
ADI3_COLL_FAMILY(Scatter, Iscatter, ADI3_GATHER, ADI3_GATHER_NAMES, scatter(k, ADI3_GATHER_ARGS),
                 scatter(k, ADI3_GATHER_ARGS))
#undef ADI3_GATHER
#undef ADI3_GATHER_NAMES
#undef ADI3_GATHER_ARGS

#define ADI3_GATHERV(C, D)                                                                                        \
  const void *sendbuf, C sendcount, MPI_Datatype sendtype, void *recvbuf, const C recvcounts[], const D displs[], \
      MPI_Datatype recvtype, int root, MPI_Comm comm
#define ADI3_GATHERV_NAMES sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm
#define ADI3_GATHERV_ARGS sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, request
ADI3_COLL_FAMILY(Gatherv, Igatherv, ADI3_GATHERV, ADI3_GATHERV_NAMES, gatherv(k, ADI3_GATHERV_ARGS),
                 gatherv_any(k, ADI3_GATHERV_ARGS))
#undef ADI3_GATHERV
#undef ADI3_GATHERV_NAMES
#undef ADI3_GATHERV_ARGS

#define ADI3_SCATTERV(C, D)                                                                                       \
  const void *sendbuf, const C sendcounts[], const D displs[], MPI_Datatype sendtype, void *recvbuf, C recvcount, \
      MPI_Datatype recvtype, int root, MPI_Comm comm
#define ADI3_SCATTERV_NAMES sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm
#define ADI3_SCATTERV_ARGS sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, request
ADI3_COLL_FAMILY(Scatterv, Iscatterv, ADI3_SCATTERV, ADI3_SCATTERV_NAMES, scatterv(k, ADI3_SCATTERV_ARGS),
                 scatterv_any(k, ADI3_SCATTERV_ARGS))
#undef ADI3_SCATTERV
#undef ADI3_SCATTERV_NAMES
#undef ADI3_SCATTERV_ARGS
