// Collectives without a root (barrier, allreduce, allgather(v),
// alltoall(v,w), reduce_scatter(_block), scan, exscan) and their
// nonblocking forms.
#include <algorithm>
#include <vector>

#include "mpi/coll_express.hpp"
#include "mpi/coll_inter.hpp"

using namespace adi3;
using namespace adi3::mpi;

namespace {

using std::size_t;

// count, type and op of a reduction, and its two buffers.
int reduction(CollCall& k, const void* sbuf, void* rbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op,
              const Datatype** t, coll::Op* o) {
  int e = check_count(count);
  if (!e) e = get_comm_type(*k.rt, dt, t);
  if (!e) e = get_op(*k.rt, op, o);
  if (!e && sbuf != MPI_IN_PLACE) e = check_buffer(sbuf, count, *t);
  if (!e) e = check_buffer(rbuf, count, *t);
  if (!e && count > 0 && sbuf == rbuf) {
    e = raise(ErrorClass::Buffer, "sendbuf and recvbuf are the same buffer (use MPI_IN_PLACE)");
  }
  return e;
}

int barrier(CollCall& k, MPI_Request* req) {
  // An intercommunicator's barrier spans both groups.
  const Comm& over = k.c->inter ? k.c->internal : k.c->coll;
  return k.run(
      req, [&] { return coll::barrier(k.dev(), over); },
      [&](Request** r) { return coll::ibarrier(k.dev(), over, k.seq(), r); });
}

int allreduce(CollCall& k, const void* sbuf, void* rbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op,
              MPI_Request* req) {
  const Datatype* t = nullptr;
  coll::Op o(coll::OpKind::NoOp);
  if (int e = reduction(k, sbuf, rbuf, count, dt, op, &t, &o)) return e;
  if (k.c->inter) {
    int e = int_count(count);
    if (!e) e = inter::allreduce(k, sbuf, rbuf, static_cast<int>(count), t, o, req);
    return e;
  }
  return k.run(
      req, [&] { return coll::allreduce(k.dev(), sbuf, rbuf, sz(count), t, o, k.c->coll); },
      [&](Request** r) { return coll::iallreduce(k.dev(), sbuf, rbuf, sz(count), t, o, k.c->coll, k.seq(), r); });
}

int scan(CollCall& k, bool ex, const void* sbuf, void* rbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op,
         MPI_Request* req) {
  const Datatype* t = nullptr;
  coll::Op o(coll::OpKind::NoOp);
  if (int e = need_intra(*k.c, ex ? "MPI_Exscan" : "MPI_Scan")) return e;  // not defined there
  if (int e = reduction(k, sbuf, rbuf, count, dt, op, &t, &o)) return e;
  return k.run(
      req,
      [&] {
        return ex ? coll::exscan(k.dev(), sbuf, rbuf, sz(count), t, o, k.c->coll)
                  : coll::scan(k.dev(), sbuf, rbuf, sz(count), t, o, k.c->coll);
      },
      [&](Request** r) {
        return ex ? coll::iexscan(k.dev(), sbuf, rbuf, sz(count), t, o, k.c->coll, k.seq(), r)
                  : coll::iscan(k.dev(), sbuf, rbuf, sz(count), t, o, k.c->coll, k.seq(), r);
      });
}

int reduce_scatter(CollCall& k, const void* sbuf, void* rbuf, const int* rcounts, MPI_Datatype dt, MPI_Op op,
                   MPI_Request* req) {
  const Datatype* t = nullptr;
  coll::Op o(coll::OpKind::NoOp);
  if (!rcounts) return raise(ErrorClass::Arg, "recvcounts is null");
  long long sum = 0;
  for (int i = 0; i < k.c->size(); ++i) {
    if (int e = check_count(rcounts[i], "recvcount")) return e;
    sum += rcounts[i];
  }
  int e = check_total(sum, "the recvcounts");
  const int total = static_cast<int>(sum);
  if (!e) e = get_comm_type(*k.rt, dt, &t);
  if (!e) e = get_op(*k.rt, op, &o);
  if (!e && sbuf != MPI_IN_PLACE) e = check_buffer(sbuf, total, t);
  if (!e) e = check_buffer(rbuf, rcounts[k.c->rank()], t);
  if (e) return e;
  if (k.c->inter) {
    e = inter::reduce_scatter(k, sbuf, rbuf, rcounts, t, o, req);
    return e;
  }
  return k.run(
      req, [&] { return coll::reduce_scatter(k.dev(), sbuf, rbuf, rcounts, t, o, k.c->coll); },
      [&](Request** r) { return coll::ireduce_scatter(k.dev(), sbuf, rbuf, rcounts, t, o, k.c->coll, k.seq(), r); });
}

int reduce_scatter_block(CollCall& k, const void* sbuf, void* rbuf, MPI_Count rcount, MPI_Datatype dt, MPI_Op op,
                         MPI_Request* req) {
  const Datatype* t = nullptr;
  coll::Op o(coll::OpKind::NoOp);
  int e = check_count(rcount);
  // sendbuf holds rcount elements per process (of the remote group when inter).
  const int procs = k.c->inter ? std::max(k.c->size(), k.c->remote->size()) : k.c->size();
  if (!e) e = check_total(static_cast<long long>(rcount) * procs, "recvcount times the processes");
  if (!e) e = get_comm_type(*k.rt, dt, &t);
  if (!e) e = get_op(*k.rt, op, &o);
  if (!e && k.c->inter) {
    e = int_count(rcount);
    if (!e) e = inter::reduce_scatter_block(k, sbuf, rbuf, static_cast<int>(rcount), t, o, req);
    return e;
  }
  if (!e && sbuf != MPI_IN_PLACE) e = check_buffer(sbuf, rcount * k.c->size(), t);
  if (!e) e = check_buffer(rbuf, rcount, t);
  if (!e && rcount > 0 && sbuf == rbuf) {
    e = raise(ErrorClass::Buffer, "sendbuf and recvbuf are the same buffer (use MPI_IN_PLACE)");
  }
  if (e) return e;
  return k.run(
      req, [&] { return coll::reduce_scatter_block(k.dev(), sbuf, rbuf, sz(rcount), t, o, k.c->coll); },
      [&](Request** r) {
        return coll::ireduce_scatter_block(k.dev(), sbuf, rbuf, sz(rcount), t, o, k.c->coll, k.seq(), r);
      });
}

int allgather(CollCall& k, bool to_all, const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf,
              MPI_Count rcount, MPI_Datatype rtype, MPI_Request* req) {
  const Datatype *st = nullptr, *rt = nullptr;
  int e = coll_side(*k.rt, sbuf, scount, stype, &st);
  if (!e) e = coll_side(*k.rt, rbuf == MPI_IN_PLACE ? nullptr : rbuf, rcount, rtype, &rt);
  if (e) return e;
  if (k.c->inter) {
    if (int e2 = int_count(scount, rcount)) return e2;
    inter::Blocks s{sbuf, nullptr, static_cast<int>(scount), nullptr, false, st, nullptr, !to_all};
    inter::Blocks r{rbuf, nullptr, static_cast<int>(rcount), nullptr, false, rt, nullptr, false};
    e = inter::exchange(k, s, r, req);
    return e;
  }
  if (to_all) {
    return k.run(
        req, [&] { return coll::alltoall(k.dev(), sbuf, sz(scount), st, rbuf, sz(rcount), rt, k.c->coll); },
        [&](Request** r) {
          return coll::ialltoall(k.dev(), sbuf, sz(scount), st, rbuf, sz(rcount), rt, k.c->coll, k.seq(), r);
        });
  }
  return k.run(
      req, [&] { return coll::allgather(k.dev(), sbuf, sz(scount), st, rbuf, sz(rcount), rt, k.c->coll); },
      [&](Request** r) {
        return coll::iallgather(k.dev(), sbuf, sz(scount), st, rbuf, sz(rcount), rt, k.c->coll, k.seq(), r);
      });
}

int allgatherv(CollCall& k, const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf, const int* rcounts,
               const int* displs, MPI_Datatype rtype, MPI_Request* req) {
  const Datatype *st = nullptr, *rt = nullptr;
  int e = coll_side(*k.rt, sbuf, scount, stype, &st);
  int n = k.c->inter ? k.c->remote->size() : k.c->size();
  if (!e) e = coll_counts(rcounts, displs, n, "receive");
  if (!e) e = get_comm_type(*k.rt, rtype, &rt);
  if (e) return e;
  if (k.c->inter) {
    if (int e2 = int_count(scount)) return e2;
    inter::Blocks s{sbuf, nullptr, static_cast<int>(scount), nullptr, false, st, nullptr, true};
    inter::Blocks r{rbuf, rcounts, 0, displs, false, rt, nullptr, false};
    e = inter::exchange(k, s, r, req);
    return e;
  }
  return k.run(
      req, [&] { return coll::allgatherv(k.dev(), sbuf, sz(scount), st, rbuf, rcounts, displs, rt, k.c->coll); },
      [&](Request** r) {
        return coll::iallgatherv(k.dev(), sbuf, sz(scount), st, rbuf, rcounts, displs, rt, k.c->coll, k.seq(), r);
      });
}

int alltoallv(CollCall& k, const void* sbuf, const int* scounts, const int* sdispls, MPI_Datatype stype, void* rbuf,
              const int* rcounts, const int* rdispls, MPI_Datatype rtype, MPI_Request* req) {
  const Datatype *st = nullptr, *rt = nullptr;
  int e = 0, n = k.c->inter ? k.c->remote->size() : k.c->size();
  if (sbuf != MPI_IN_PLACE) {
    e = coll_counts(scounts, sdispls, n, "send");
    if (!e) e = get_comm_type(*k.rt, stype, &st);
  }
  if (!e) e = coll_counts(rcounts, rdispls, n, "receive");
  if (!e) e = get_comm_type(*k.rt, rtype, &rt);
  if (e) return e;
  if (k.c->inter) {
    inter::Blocks s{sbuf, scounts, 0, sdispls, false, st, nullptr, false};
    inter::Blocks r{rbuf, rcounts, 0, rdispls, false, rt, nullptr, false};
    e = inter::exchange(k, s, r, req);
    return e;
  }
  return k.run(
      req, [&] { return coll::alltoallv(k.dev(), sbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt, k.c->coll); },
      [&](Request** r) {
        return coll::ialltoallv(k.dev(), sbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt, k.c->coll, k.seq(), r);
      });
}

// One type per peer; a peer with count 0 may name any type (even null).
int type_array(Runtime& rt, const MPI_Datatype* in, const int* counts, int n, std::vector<const Datatype*>* out) {
  if (!in) return raise(ErrorClass::Arg, "the datatypes array is null");
  out->resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const Datatype*& t = (*out)[static_cast<size_t>(i)];
    t = Datatype::byte();
    if (counts[i] == 0 && in[i] == MPI_DATATYPE_NULL) continue;
    if (int e = get_comm_type(rt, in[i], &t)) return e;
  }
  return 0;
}

int alltoallw(CollCall& k, const void* sbuf, const int* scounts, const int* sdispls, const MPI_Datatype* stypes,
              void* rbuf, const int* rcounts, const int* rdispls, const MPI_Datatype* rtypes, MPI_Request* req) {
  int n = k.c->inter ? k.c->remote->size() : k.c->size();
  std::vector<const Datatype*> s, r;
  int e = 0;
  if (sbuf != MPI_IN_PLACE) {
    e = coll_counts(scounts, sdispls, n, "send");
    if (!e) e = type_array(*k.rt, stypes, scounts, n, &s);
  }
  if (!e) e = coll_counts(rcounts, rdispls, n, "receive");
  if (!e) e = type_array(*k.rt, rtypes, rcounts, n, &r);
  if (e) return e;
  if (k.c->inter) {
    inter::Blocks sb{sbuf, scounts, 0, sdispls, true, nullptr, s.data(), false};
    inter::Blocks rb{rbuf, rcounts, 0, rdispls, true, nullptr, r.data(), false};
    e = inter::exchange(k, sb, rb, req);
    return e;
  }
  const Datatype* const* sp = s.empty() ? nullptr : s.data();
  return k.run(
      req,
      [&] { return coll::alltoallw(k.dev(), sbuf, scounts, sdispls, sp, rbuf, rcounts, rdispls, r.data(), k.c->coll); },
      [&](Request** rq) {
        return coll::ialltoallw(k.dev(), sbuf, scounts, sdispls, sp, rbuf, rcounts, rdispls, r.data(), k.c->coll,
                                k.seq(), rq);
      });
}

// The counts and displacements arrays of the _c forms as int arrays.
int peers(const CollCall& k) { return k.c->inter ? k.c->remote->size() : k.c->size(); }

template <class C, class D>
int allgatherv_any(CollCall& k, const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf, const C* rcounts,
                   const D* displs, MPI_Datatype rtype, MPI_Request* req) {
  IntArray c(rcounts, peers(k)), d(displs, peers(k));
  if (int e = c.error() ? c.error() : d.error()) return e;
  return allgatherv(k, sbuf, scount, stype, rbuf, c.get(), d.get(), rtype, req);
}

template <class C, class D>
int alltoallv_any(CollCall& k, const void* sbuf, const C* scounts, const D* sdispls, MPI_Datatype stype, void* rbuf,
                  const C* rcounts, const D* rdispls, MPI_Datatype rtype, MPI_Request* req) {
  int ns = sbuf == MPI_IN_PLACE ? 0 : peers(k);
  IntArray sc(scounts, ns), sd(sdispls, ns), rc(rcounts, peers(k)), rd(rdispls, peers(k));
  for (const IntArray* a : {&sc, &sd, &rc, &rd}) {
    if (a->error()) return a->error();
  }
  return alltoallv(k, sbuf, sc.get(), sd.get(), stype, rbuf, rc.get(), rd.get(), rtype, req);
}

template <class C, class D>
int alltoallw_any(CollCall& k, const void* sbuf, const C* scounts, const D* sdispls, const MPI_Datatype* stypes,
                  void* rbuf, const C* rcounts, const D* rdispls, const MPI_Datatype* rtypes, MPI_Request* req) {
  int ns = sbuf == MPI_IN_PLACE ? 0 : peers(k);
  IntArray sc(scounts, ns), sd(sdispls, ns), rc(rcounts, peers(k)), rd(rdispls, peers(k));
  for (const IntArray* a : {&sc, &sd, &rc, &rd}) {
    if (a->error()) return a->error();
  }
  return alltoallw(k, sbuf, sc.get(), sd.get(), stypes, rbuf, rc.get(), rd.get(), rtypes, req);
}

template <class C>
int reduce_scatter_any(CollCall& k, const void* sbuf, void* rbuf, const C* rcounts, MPI_Datatype dt, MPI_Op op,
                       MPI_Request* req) {
  IntArray c(rcounts, k.c->size());
  if (c.error()) return c.error();
  return reduce_scatter(k, sbuf, rbuf, c.get(), dt, op, req);
}

}  // namespace

ADI3_COLL_BLOCKING_EXPRESS(Barrier, (MPI_Comm comm), (comm), express_barrier(k, &e), barrier(k, request))
ADI3_COLL_NONBLOCKING(Ibarrier, (MPI_Comm comm, MPI_Request* request), (comm, request), barrier(k, request))
ADI3_COLL_PERSISTENT(Barrier_init, (MPI_Comm comm, MPI_Info info, MPI_Request* request), (comm, info, request),
                     barrier(k, request))

#define ADI3_REDUCE_ALL(C, D) const void *sendbuf, void *recvbuf, C count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm
#define ADI3_REDUCE_ALL_NAMES sendbuf, recvbuf, count, dt, op, comm
#define ADI3_REDUCE_ALL_ARGS sendbuf, recvbuf, count, dt, op, request
ADI3_COLL_FAMILY_EXPRESS(Allreduce, Iallreduce, ADI3_REDUCE_ALL, ADI3_REDUCE_ALL_NAMES,
                         express_allreduce(k, sendbuf, recvbuf, count, dt, op, &e), allreduce(k, ADI3_REDUCE_ALL_ARGS),
                         allreduce(k, ADI3_REDUCE_ALL_ARGS))
ADI3_COLL_FAMILY(Scan, Iscan, ADI3_REDUCE_ALL, ADI3_REDUCE_ALL_NAMES, scan(k, false, ADI3_REDUCE_ALL_ARGS),
                 scan(k, false, ADI3_REDUCE_ALL_ARGS))
ADI3_COLL_FAMILY(Exscan, Iexscan, ADI3_REDUCE_ALL, ADI3_REDUCE_ALL_NAMES, scan(k, true, ADI3_REDUCE_ALL_ARGS),
                 scan(k, true, ADI3_REDUCE_ALL_ARGS))
ADI3_COLL_FAMILY(Reduce_scatter_block, Ireduce_scatter_block, ADI3_REDUCE_ALL, ADI3_REDUCE_ALL_NAMES,
                 reduce_scatter_block(k, ADI3_REDUCE_ALL_ARGS), reduce_scatter_block(k, ADI3_REDUCE_ALL_ARGS))
#undef ADI3_REDUCE_ALL
#undef ADI3_REDUCE_ALL_NAMES
#undef ADI3_REDUCE_ALL_ARGS

#define ADI3_REDUCE_SCATTER(C, D) \
  const void *sendbuf, void *recvbuf, const C recvcounts[], MPI_Datatype dt, MPI_Op op, MPI_Comm comm
#define ADI3_REDUCE_SCATTER_NAMES sendbuf, recvbuf, recvcounts, dt, op, comm
#define ADI3_REDUCE_SCATTER_ARGS sendbuf, recvbuf, recvcounts, dt, op, request
ADI3_COLL_FAMILY(Reduce_scatter, Ireduce_scatter, ADI3_REDUCE_SCATTER, ADI3_REDUCE_SCATTER_NAMES,
                 reduce_scatter(k, ADI3_REDUCE_SCATTER_ARGS), reduce_scatter_any(k, ADI3_REDUCE_SCATTER_ARGS))
#undef ADI3_REDUCE_SCATTER
#undef ADI3_REDUCE_SCATTER_NAMES
#undef ADI3_REDUCE_SCATTER_ARGS

#define ADI3_ALLGATHER(C, D)                                                                                  \
  const void *sendbuf, C sendcount, MPI_Datatype sendtype, void *recvbuf, C recvcount, MPI_Datatype recvtype, \
      MPI_Comm comm
#define ADI3_ALLGATHER_NAMES sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm
#define ADI3_ALLGATHER_ARGS sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, request
ADI3_COLL_FAMILY(Allgather, Iallgather, ADI3_ALLGATHER, ADI3_ALLGATHER_NAMES, allgather(k, false, ADI3_ALLGATHER_ARGS),
                 allgather(k, false, ADI3_ALLGATHER_ARGS))
ADI3_COLL_FAMILY(Alltoall, Ialltoall, ADI3_ALLGATHER, ADI3_ALLGATHER_NAMES, allgather(k, true, ADI3_ALLGATHER_ARGS),
                 allgather(k, true, ADI3_ALLGATHER_ARGS))
#undef ADI3_ALLGATHER
#undef ADI3_ALLGATHER_NAMES
#undef ADI3_ALLGATHER_ARGS

#define ADI3_ALLGATHERV(C, D)                                                                                     \
  const void *sendbuf, C sendcount, MPI_Datatype sendtype, void *recvbuf, const C recvcounts[], const D displs[], \
      MPI_Datatype recvtype, MPI_Comm comm
#define ADI3_ALLGATHERV_NAMES sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm
#define ADI3_ALLGATHERV_ARGS sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, request
ADI3_COLL_FAMILY(Allgatherv, Iallgatherv, ADI3_ALLGATHERV, ADI3_ALLGATHERV_NAMES, allgatherv(k, ADI3_ALLGATHERV_ARGS),
                 allgatherv_any(k, ADI3_ALLGATHERV_ARGS))
#undef ADI3_ALLGATHERV
#undef ADI3_ALLGATHERV_NAMES
#undef ADI3_ALLGATHERV_ARGS

#define ADI3_ALLTOALLV(C, D)                                                                          \
  const void *sendbuf, const C sendcounts[], const D sdispls[], MPI_Datatype sendtype, void *recvbuf, \
      const C recvcounts[], const D rdispls[], MPI_Datatype recvtype, MPI_Comm comm
#define ADI3_ALLTOALLV_NAMES sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm
#define ADI3_ALLTOALLV_ARGS sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, request
ADI3_COLL_FAMILY(Alltoallv, Ialltoallv, ADI3_ALLTOALLV, ADI3_ALLTOALLV_NAMES, alltoallv(k, ADI3_ALLTOALLV_ARGS),
                 alltoallv_any(k, ADI3_ALLTOALLV_ARGS))
#undef ADI3_ALLTOALLV
#undef ADI3_ALLTOALLV_NAMES
#undef ADI3_ALLTOALLV_ARGS

#define ADI3_ALLTOALLW(C, D)                                                                                   \
  const void *sendbuf, const C sendcounts[], const D sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, \
      const C recvcounts[], const D rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm
#define ADI3_ALLTOALLW_NAMES sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm
#define ADI3_ALLTOALLW_ARGS sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, request
ADI3_COLL_FAMILY(Alltoallw, Ialltoallw, ADI3_ALLTOALLW, ADI3_ALLTOALLW_NAMES, alltoallw(k, ADI3_ALLTOALLW_ARGS),
                 alltoallw_any(k, ADI3_ALLTOALLW_ARGS))
#undef ADI3_ALLTOALLW
#undef ADI3_ALLTOALLW_NAMES
#undef ADI3_ALLTOALLW_ARGS
