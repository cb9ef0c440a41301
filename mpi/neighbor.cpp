// Neighbourhood collectives over Cartesian, graph and distributed graph
// topologies: one receive per in-neighbour and one send per out-neighbour,
// as one round of a coll::Schedule on the communicator's collective context.
// Blocking calls run it; nonblocking ones hand it to the progress engine;
// persistent ones (_init) keep it and restart it at every MPI_Start.
#include <memory>
#include <vector>

#include "coll/nbc.hpp"
#include "mpi/coll_binding.hpp"

using namespace adi3;
using namespace adi3::mpi;

namespace {

// In- and out-neighbours in MPI's order (PROC_NULL keeps its slot).
int neighbors(const CommObj& c, std::vector<int>* in, std::vector<int>* out) {
  if (c.cart) {
    const CartTopo& t = *c.cart;
    std::vector<int> coords(t.dims.size());
    int r = c.rank();
    for (int d = static_cast<int>(t.dims.size()) - 1; d >= 0; --d) {
      coords[static_cast<std::size_t>(d)] = r % t.dims[static_cast<std::size_t>(d)];
      r /= t.dims[static_cast<std::size_t>(d)];
    }
    auto rank_at = [&](std::vector<int> x) {
      int rr = 0;
      for (std::size_t d = 0; d < t.dims.size(); ++d) {
        int n = t.dims[d];
        if (t.periods[d])
          x[d] = ((x[d] % n) + n) % n;
        else if (x[d] < 0 || x[d] >= n)
          return static_cast<int>(MPI_PROC_NULL);
        rr = rr * n + x[d];
      }
      return rr;
    };
    for (std::size_t d = 0; d < t.dims.size(); ++d) {
      for (int dir : {-1, 1}) {
        std::vector<int> x = coords;
        x[d] += dir;
        in->push_back(rank_at(x));
      }
    }
    *out = *in;
    return 0;
  }
  if (c.graph) {
    const GraphTopo& t = *c.graph;
    auto r = static_cast<std::size_t>(c.rank());
    for (int e = r ? t.index[r - 1] : 0; e < t.index[r]; ++e) in->push_back(t.edges[static_cast<std::size_t>(e)]);
    *out = *in;
    return 0;
  }
  if (c.dist) {
    *in = c.dist->sources;
    *out = c.dist->destinations;
    return 0;
  }
  return raise(ErrorClass::Topology, "the communicator has no process topology");
}

struct Block {
  const void* buf;
  MPI_Count count;
  const Datatype* type;
};

// On a Cartesian grid the blocks pair by direction (MPI-4.1 8.6: slot 2k
// is the negative neighbour along k, 2k+1 the positive one), which matters
// when both neighbours are one rank (2 along a periodic dimension) or the
// rank itself (1): each direction of travel gets its own tag. Elsewhere one
// tag and MPI's ordering rule pair them. Tags come from the communicator's
// sequence, like every nonblocking collective's, so overlapping calls never
// meet.
enum class Form { Blocking, Nonblocking, Persistent };

// A persistent call keeps its tags for the request's life and restarts the
// schedule at every MPI_Start.
int exchange(Runtime& rt, CommObj& c, const std::vector<int>& in, const std::vector<int>& out,
             const std::vector<Block>& sends, const std::vector<Block>& recvs, Form form, MPI_Request* request) {
  coll::Sequence& seq = sequence(c);
  std::vector<int> tags(c.cart && !in.empty() ? in.size() : 1);
  for (int& t : tags) t = seq.next_tag();
  auto s = std::make_unique<coll::Schedule>(rt.dev(), c.coll, tags[0]);
  for (std::size_t i = 0; i < in.size(); ++i) {
    // Slot 2k receives what its sender sent in the positive direction (2k+1), and back.
    int tag = c.cart ? tags[i ^ 1] : tags[0];
    s->keep(recvs[i].type);
    s->recv(const_cast<void*>(recvs[i].buf), static_cast<std::size_t>(recvs[i].count), recvs[i].type,
            in[i] == MPI_PROC_NULL ? kProcNull : in[i], tag);
  }
  for (std::size_t j = 0; j < out.size(); ++j) {
    int tag = c.cart ? tags[j] : tags[0];
    s->keep(sends[j].type);
    s->send(sends[j].buf, static_cast<std::size_t>(sends[j].count), sends[j].type,
            out[j] == MPI_PROC_NULL ? kProcNull : out[j], tag);
  }
  if (form == Form::Blocking) return s->run();
  Request* r = nullptr;
  bool persistent = form == Form::Persistent;
  int e = persistent ? coll::launch_persistent(rt.dev(), std::move(s), &r) : coll::launch(rt.dev(), std::move(s), &r);
  return e ? e : new_request(rt, r, c.handle, persistent, request);
}

const std::byte* at(const void* buf, MPI_Aint bytes) { return static_cast<const std::byte*>(buf) + bytes; }

int typed(Runtime& rt, MPI_Count count, MPI_Datatype dt, const Datatype** t) {
  if (int e = check_count(count)) return e;
  return get_comm_type(rt, dt, t);
}

// The shared body: kind 0 allgather, 1 allgatherv, 2 alltoall, 3 alltoallv,
// 4 alltoallw. Counts/displacements arrays follow MPI's per-kind meaning;
// they hold ints, or MPI_Count / MPI_Aint in the large-count (_c) forms
// (alltoallw's displacements are MPI_Aint in both).
struct Args {
  const void* sbuf;
  MPI_Count scount;
  const void* scounts;
  const void* sdispls;
  MPI_Datatype stype;
  const MPI_Datatype* stypes;
  void* rbuf;
  MPI_Count rcount;
  const void* rcounts;
  const void* rdispls;
  MPI_Datatype rtype;
  const MPI_Datatype* rtypes;
  bool wide = false;  // a _c form
  MPI_Count count_at(const void* a, std::size_t i) const {
    return wide ? static_cast<const MPI_Count*>(a)[i] : static_cast<const int*>(a)[i];
  }
  MPI_Aint disp_at(const void* a, std::size_t i, int kind) const {
    if (wide || kind == 4) return static_cast<const MPI_Aint*>(a)[i];
    return static_cast<const int*>(a)[i];
  }
};

int run(const char* fn, int kind, const Args& a, MPI_Comm comm, Form form, MPI_Info info, MPI_Request* request) {
  Runtime* rt = g_runtime;
  if (!rt) return not_initialized(fn);
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, fn);
  if (form != Form::Blocking && !request) return comm_error(c, raise(ErrorClass::Arg, "request is null"), fn);
  if (form == Form::Persistent && info != MPI_INFO_NULL) {
    InfoObj* i = nullptr;
    if (int e = get_info(*rt, info, &i)) return comm_error(c, e, fn);
  }
  std::vector<int> in, out;
  int e = neighbors(*c, &in, &out);
  std::vector<Block> sends(out.size()), recvs(in.size());
  const Datatype *st = nullptr, *rt_type = nullptr;
  if (!e && kind != 4) e = get_comm_type(*rt, a.stype, &st);
  if (!e && kind != 4) e = get_comm_type(*rt, a.rtype, &rt_type);
  for (std::size_t j = 0; !e && j < out.size(); ++j) {
    switch (kind) {
      case 0:
      case 1:
        sends[j] = {a.sbuf, a.scount, st};
        e = check_count(a.scount);
        break;
      case 2:
        sends[j] = {at(a.sbuf, static_cast<MPI_Aint>(j) * a.scount * st->extent()), a.scount, st};
        e = check_count(a.scount);
        break;
      case 3:
        sends[j] = {at(a.sbuf, a.disp_at(a.sdispls, j, kind) * st->extent()), a.count_at(a.scounts, j), st};
        e = check_count(sends[j].count);
        break;
      case 4: {
        const Datatype* t = nullptr;
        e = typed(*rt, a.count_at(a.scounts, j), a.stypes[j], &t);
        sends[j] = {at(a.sbuf, a.disp_at(a.sdispls, j, kind)), a.count_at(a.scounts, j), t};
      }
    }
  }
  for (std::size_t i = 0; !e && i < in.size(); ++i) {
    switch (kind) {
      case 0:
      case 2:
        recvs[i] = {at(a.rbuf, static_cast<MPI_Aint>(i) * a.rcount * rt_type->extent()), a.rcount, rt_type};
        e = check_count(a.rcount);
        break;
      case 1:
      case 3:
        recvs[i] = {at(a.rbuf, a.disp_at(a.rdispls, i, kind) * rt_type->extent()), a.count_at(a.rcounts, i), rt_type};
        e = check_count(recvs[i].count);
        break;
      case 4: {
        const Datatype* t = nullptr;
        e = typed(*rt, a.count_at(a.rcounts, i), a.rtypes[i], &t);
        recvs[i] = {at(a.rbuf, a.disp_at(a.rdispls, i, kind)), a.count_at(a.rcounts, i), t};
      }
    }
  }
  if (!e) e = exchange(*rt, *c, in, out, sends, recvs, form, request);
  return comm_error(c, e, fn);
}

}  // namespace

// Every neighbourhood collective in its blocking, nonblocking and persistent
// forms, with int counts and as the large-count _c functions: one body
// (run), the forms differing in parameter types only. P gives the
// parameters, N their names.
#define ADI3_NEIGHBOR_FORMS(Name, kind, P, N, ARGS)                                                                    \
  ADI3_MPI_API(int, Neighbor_##Name, (P(int, int)), (N)) {                                                             \
    return run(__func__, kind, ARGS(false), comm, Form::Blocking, MPI_INFO_NULL, nullptr);                             \
  }                                                                                                                    \
  ADI3_MPI_API(int, Ineighbor_##Name, (P(int, int), MPI_Request * request), (N, request)) {                            \
    return run(__func__, kind, ARGS(false), comm, Form::Nonblocking, MPI_INFO_NULL, request);                          \
  }                                                                                                                    \
  ADI3_MPI_API(int, Neighbor_##Name##_init, (P(int, int), MPI_Info info, MPI_Request * request), (N, info, request)) { \
    return run(__func__, kind, ARGS(false), comm, Form::Persistent, info, request);                                    \
  }                                                                                                                    \
  ADI3_MPI_API(int, Neighbor_##Name##_c, (P(MPI_Count, MPI_Aint)), (N)) {                                              \
    return run(__func__, kind, ARGS(true), comm, Form::Blocking, MPI_INFO_NULL, nullptr);                              \
  }                                                                                                                    \
  ADI3_MPI_API(int, Ineighbor_##Name##_c, (P(MPI_Count, MPI_Aint), MPI_Request * request), (N, request)) {             \
    return run(__func__, kind, ARGS(true), comm, Form::Nonblocking, MPI_INFO_NULL, request);                           \
  }                                                                                                                    \
  ADI3_MPI_API(int, Neighbor_##Name##_init_c, (P(MPI_Count, MPI_Aint), MPI_Info info, MPI_Request * request),          \
               (N, info, request)) {                                                                                   \
    return run(__func__, kind, ARGS(true), comm, Form::Persistent, info, request);                                     \
  }

#define ADI3_ALLGATHER_P(C, D)                                                                                \
  const void *sendbuf, C sendcount, MPI_Datatype sendtype, void *recvbuf, C recvcount, MPI_Datatype recvtype, \
      MPI_Comm comm
#define ADI3_ALLGATHER_N sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm
#define ADI3_ALLGATHER_A(w)                                                                                           \
  Args {                                                                                                              \
    sendbuf, sendcount, nullptr, nullptr, sendtype, nullptr, recvbuf, recvcount, nullptr, nullptr, recvtype, nullptr, \
        w                                                                                                             \
  }
ADI3_NEIGHBOR_FORMS(allgather, 0, ADI3_ALLGATHER_P, ADI3_ALLGATHER_N, ADI3_ALLGATHER_A)
ADI3_NEIGHBOR_FORMS(alltoall, 2, ADI3_ALLGATHER_P, ADI3_ALLGATHER_N, ADI3_ALLGATHER_A)

#define ADI3_ALLGATHERV_P(C, D)                                                                                   \
  const void *sendbuf, C sendcount, MPI_Datatype sendtype, void *recvbuf, const C recvcounts[], const D displs[], \
      MPI_Datatype recvtype, MPI_Comm comm
#define ADI3_ALLGATHERV_N sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm
#define ADI3_ALLGATHERV_A(w) \
  Args { sendbuf, sendcount, nullptr, nullptr, sendtype, nullptr, recvbuf, 0, recvcounts, displs, recvtype, nullptr, w }
ADI3_NEIGHBOR_FORMS(allgatherv, 1, ADI3_ALLGATHERV_P, ADI3_ALLGATHERV_N, ADI3_ALLGATHERV_A)

#define ADI3_ALLTOALLV_P(C, D)                                                                        \
  const void *sendbuf, const C sendcounts[], const D sdispls[], MPI_Datatype sendtype, void *recvbuf, \
      const C recvcounts[], const D rdispls[], MPI_Datatype recvtype, MPI_Comm comm
#define ADI3_ALLTOALLV_N sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm
#define ADI3_ALLTOALLV_A(w) \
  Args { sendbuf, 0, sendcounts, sdispls, sendtype, nullptr, recvbuf, 0, recvcounts, rdispls, recvtype, nullptr, w }
ADI3_NEIGHBOR_FORMS(alltoallv, 3, ADI3_ALLTOALLV_P, ADI3_ALLTOALLV_N, ADI3_ALLTOALLV_A)

// alltoallw's displacements are MPI_Aint in both forms.
#define ADI3_ALLTOALLW_P(C, D)                                                                                        \
  const void *sendbuf, const C sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, \
      const C recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm
#define ADI3_ALLTOALLW_N sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm
#define ADI3_ALLTOALLW_A(w)                                                                                            \
  Args {                                                                                                               \
    sendbuf, 0, sendcounts, sdispls, MPI_DATATYPE_NULL, sendtypes, recvbuf, 0, recvcounts, rdispls, MPI_DATATYPE_NULL, \
        recvtypes, w                                                                                                   \
  }
ADI3_NEIGHBOR_FORMS(alltoallw, 4, ADI3_ALLTOALLW_P, ADI3_ALLTOALLW_N, ADI3_ALLTOALLW_A)
