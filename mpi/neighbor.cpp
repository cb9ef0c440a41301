// Neighbourhood collectives over Cartesian, graph and distributed graph
// topologies: one receive per in-neighbour and one send per out-neighbour,
// as one round of a coll::Schedule on the communicator's collective context.
// Blocking calls run it; nonblocking ones hand it to the progress engine.
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
  int count;
  const Datatype* type;
};

// On a Cartesian grid the blocks pair by direction (MPI-4.1 8.6: slot 2k
// is the negative neighbour along k, 2k+1 the positive one), which matters
// when both neighbours are one rank (2 along a periodic dimension) or the
// rank itself (1): each direction of travel gets its own tag. Elsewhere one
// tag and MPI's ordering rule pair them. Tags come from the communicator's
// sequence, like every nonblocking collective's, so overlapping calls never
// meet.
int exchange(Runtime& rt, CommObj& c, const std::vector<int>& in, const std::vector<int>& out,
             const std::vector<Block>& sends, const std::vector<Block>& recvs, MPI_Request* request) {
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
  if (!request) return s->run();
  Request* r = nullptr;
  if (int e = coll::launch(rt.dev(), std::move(s), &r)) return e;
  return new_request(rt, r, c.handle, false, request);
}

const std::byte* at(const void* buf, MPI_Aint bytes) { return static_cast<const std::byte*>(buf) + bytes; }

int typed(Runtime& rt, int count, MPI_Datatype dt, const Datatype** t) {
  if (int e = check_count(count)) return e;
  return get_comm_type(rt, dt, t);
}

// The shared body: kind 0 allgather, 1 allgatherv, 2 alltoall, 3 alltoallv,
// 4 alltoallw. Counts/displacements arrays follow MPI's per-kind meaning.
struct Args {
  const void* sbuf;
  int scount;
  const int* scounts;
  const int* sdispls;
  const MPI_Aint* sdispls_w;
  MPI_Datatype stype;
  const MPI_Datatype* stypes;
  void* rbuf;
  int rcount;
  const int* rcounts;
  const int* rdispls;
  const MPI_Aint* rdispls_w;
  MPI_Datatype rtype;
  const MPI_Datatype* rtypes;
};

int run(const char* fn, int kind, const Args& a, MPI_Comm comm, MPI_Request* request) {
  Runtime* rt = g_runtime;
  if (!rt) return not_initialized(fn);
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, fn);
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
        break;
      case 3:
        sends[j] = {at(a.sbuf, a.sdispls[j] * st->extent()), a.scounts[j], st};
        e = check_count(a.scounts[j]);
        break;
      case 4: {
        const Datatype* t = nullptr;
        e = typed(*rt, a.scounts[j], a.stypes[j], &t);
        sends[j] = {at(a.sbuf, a.sdispls_w[j]), a.scounts[j], t};
      }
    }
  }
  for (std::size_t i = 0; !e && i < in.size(); ++i) {
    switch (kind) {
      case 0:
      case 2:
        recvs[i] = {at(a.rbuf, static_cast<MPI_Aint>(i) * a.rcount * rt_type->extent()), a.rcount, rt_type};
        break;
      case 1:
      case 3:
        recvs[i] = {at(a.rbuf, a.rdispls[i] * rt_type->extent()), a.rcounts[i], rt_type};
        e = check_count(a.rcounts[i]);
        break;
      case 4: {
        const Datatype* t = nullptr;
        e = typed(*rt, a.rcounts[i], a.rtypes[i], &t);
        recvs[i] = {at(a.rbuf, a.rdispls_w[i]), a.rcounts[i], t};
      }
    }
  }
  if (!e) e = exchange(*rt, *c, in, out, sends, recvs, request);
  return comm_error(c, e, fn);
}

}  // namespace

ADI3_MPI_API(int, Neighbor_allgather,
             (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
              MPI_Datatype recvtype, MPI_Comm comm)) {
  Args a{sendbuf, sendcount, nullptr, nullptr, nullptr, sendtype, nullptr,
         recvbuf, recvcount, nullptr, nullptr, nullptr, recvtype, nullptr};
  return run(__func__, 0, a, comm, nullptr);
}

ADI3_MPI_API(int, Ineighbor_allgather,
             (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request)) {
  Args a{sendbuf, sendcount, nullptr, nullptr, nullptr, sendtype, nullptr,
         recvbuf, recvcount, nullptr, nullptr, nullptr, recvtype, nullptr};
  if (!request) return comm_error(comm, raise(ErrorClass::Arg, "request is null"), __func__);
  return run(__func__, 0, a, comm, request);
}

ADI3_MPI_API(int, Neighbor_allgatherv,
             (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
              const int displs[], MPI_Datatype recvtype, MPI_Comm comm)) {
  Args a{sendbuf, sendcount, nullptr,    nullptr, nullptr, sendtype, nullptr,
         recvbuf, 0,         recvcounts, displs,  nullptr, recvtype, nullptr};
  return run(__func__, 1, a, comm, nullptr);
}

ADI3_MPI_API(int, Ineighbor_allgatherv,
             (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
              const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request)) {
  Args a{sendbuf, sendcount, nullptr,    nullptr, nullptr, sendtype, nullptr,
         recvbuf, 0,         recvcounts, displs,  nullptr, recvtype, nullptr};
  if (!request) return comm_error(comm, raise(ErrorClass::Arg, "request is null"), __func__);
  return run(__func__, 1, a, comm, request);
}

ADI3_MPI_API(int, Neighbor_alltoall,
             (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
              MPI_Datatype recvtype, MPI_Comm comm)) {
  Args a{sendbuf, sendcount, nullptr, nullptr, nullptr, sendtype, nullptr,
         recvbuf, recvcount, nullptr, nullptr, nullptr, recvtype, nullptr};
  return run(__func__, 2, a, comm, nullptr);
}

ADI3_MPI_API(int, Ineighbor_alltoall,
             (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request)) {
  Args a{sendbuf, sendcount, nullptr, nullptr, nullptr, sendtype, nullptr,
         recvbuf, recvcount, nullptr, nullptr, nullptr, recvtype, nullptr};
  if (!request) return comm_error(comm, raise(ErrorClass::Arg, "request is null"), __func__);
  return run(__func__, 2, a, comm, request);
}

ADI3_MPI_API(int, Neighbor_alltoallv,
             (const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
              const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)) {
  Args a{sendbuf, 0, sendcounts, sdispls, nullptr, sendtype, nullptr,
         recvbuf, 0, recvcounts, rdispls, nullptr, recvtype, nullptr};
  return run(__func__, 3, a, comm, nullptr);
}

ADI3_MPI_API(int, Ineighbor_alltoallv,
             (const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
              const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
              MPI_Request* request)) {
  Args a{sendbuf, 0, sendcounts, sdispls, nullptr, sendtype, nullptr,
         recvbuf, 0, recvcounts, rdispls, nullptr, recvtype, nullptr};
  if (!request) return comm_error(comm, raise(ErrorClass::Arg, "request is null"), __func__);
  return run(__func__, 3, a, comm, request);
}

ADI3_MPI_API(int, Neighbor_alltoallw,
             (const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
              void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
              MPI_Comm comm)) {
  Args a{sendbuf, 0, sendcounts, nullptr, sdispls, MPI_DATATYPE_NULL, sendtypes,
         recvbuf, 0, recvcounts, nullptr, rdispls, MPI_DATATYPE_NULL, recvtypes};
  return run(__func__, 4, a, comm, nullptr);
}

ADI3_MPI_API(int, Ineighbor_alltoallw,
             (const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
              void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
              MPI_Comm comm, MPI_Request* request)) {
  Args a{sendbuf, 0, sendcounts, nullptr, sdispls, MPI_DATATYPE_NULL, sendtypes,
         recvbuf, 0, recvcounts, nullptr, rdispls, MPI_DATATYPE_NULL, recvtypes};
  if (!request) return comm_error(comm, raise(ErrorClass::Arg, "request is null"), __func__);
  return run(__func__, 4, a, comm, request);
}
