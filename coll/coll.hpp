// Collective operations over the ADI's point-to-point layer: the calls the
// MPI binding wraps. Each takes the Device, MPI's arguments in MPI's order
// and the collective Comm (a context reserved for collectives, so these
// messages never meet user point-to-point). Counts are in elements of the
// given type; v-variants take MPI's int arrays. kInPlace is MPI_IN_PLACE.
//
// Return 0 or an error code of the device's ErrorLog (Root, Type, Count,
// Op, Buffer, or what the transfers reported, e.g. Truncate).
//
// Nonblocking calls return a Request* of kind Collective that the device's
// wait/test families complete; they also take the communicator's Sequence
// (nbc.hpp). `tuning` (optional, last) overrides the ADI3_COLL_* settings;
// all ranks must pass equal ones.
#pragma once
#include <cstddef>
#include <cstdint>

#include "adi3/types.hpp"
#include "coll/copy.hpp"
#include "coll/nbc.hpp"
#include "coll/op.hpp"
#include "coll/tuning.hpp"

namespace adi3 {
class Device;
struct Request;
}  // namespace adi3

namespace adi3::coll {

using DT = const Datatype*;

int barrier(Device& dev, const Comm& comm, const Tuning* tuning = nullptr);
int bcast(Device& dev, void* buf, std::size_t count, DT type, int root, const Comm& comm,
          const Tuning* tuning = nullptr);
int reduce(Device& dev, const void* sendbuf, void* recvbuf, std::size_t count, DT type, const Op& op, int root,
           const Comm& comm, const Tuning* tuning = nullptr);
int allreduce(Device& dev, const void* sendbuf, void* recvbuf, std::size_t count, DT type, const Op& op,
              const Comm& comm, const Tuning* tuning = nullptr);
int gather(Device& dev, const void* sendbuf, std::size_t sendcount, DT sendtype, void* recvbuf, std::size_t recvcount,
           DT recvtype, int root, const Comm& comm, const Tuning* tuning = nullptr);
int gatherv(Device& dev, const void* sendbuf, std::size_t sendcount, DT sendtype, void* recvbuf, const int* recvcounts,
            const int* displs, DT recvtype, int root, const Comm& comm, const Tuning* tuning = nullptr);
int scatter(Device& dev, const void* sendbuf, std::size_t sendcount, DT sendtype, void* recvbuf, std::size_t recvcount,
            DT recvtype, int root, const Comm& comm, const Tuning* tuning = nullptr);
int scatterv(Device& dev, const void* sendbuf, const int* sendcounts, const int* displs, DT sendtype, void* recvbuf,
             std::size_t recvcount, DT recvtype, int root, const Comm& comm, const Tuning* tuning = nullptr);
int allgather(Device& dev, const void* sendbuf, std::size_t sendcount, DT sendtype, void* recvbuf,
              std::size_t recvcount, DT recvtype, const Comm& comm, const Tuning* tuning = nullptr);
int allgatherv(Device& dev, const void* sendbuf, std::size_t sendcount, DT sendtype, void* recvbuf,
               const int* recvcounts, const int* displs, DT recvtype, const Comm& comm, const Tuning* tuning = nullptr);
int alltoall(Device& dev, const void* sendbuf, std::size_t sendcount, DT sendtype, void* recvbuf, std::size_t recvcount,
             DT recvtype, const Comm& comm, const Tuning* tuning = nullptr);
int alltoallv(Device& dev, const void* sendbuf, const int* sendcounts, const int* sdispls, DT sendtype, void* recvbuf,
              const int* recvcounts, const int* rdispls, DT recvtype, const Comm& comm, const Tuning* tuning = nullptr);
// Displacements in bytes, one type per peer (MPI_Alltoallw).
int alltoallw(Device& dev, const void* sendbuf, const int* sendcounts, const int* sdispls, const DT* sendtypes,
              void* recvbuf, const int* recvcounts, const int* rdispls, const DT* recvtypes, const Comm& comm,
              const Tuning* tuning = nullptr);
int reduce_scatter(Device& dev, const void* sendbuf, void* recvbuf, const int* recvcounts, DT type, const Op& op,
                   const Comm& comm, const Tuning* tuning = nullptr);
int reduce_scatter_block(Device& dev, const void* sendbuf, void* recvbuf, std::size_t recvcount, DT type, const Op& op,
                         const Comm& comm, const Tuning* tuning = nullptr);
int scan(Device& dev, const void* sendbuf, void* recvbuf, std::size_t count, DT type, const Op& op, const Comm& comm,
         const Tuning* tuning = nullptr);
int exscan(Device& dev, const void* sendbuf, void* recvbuf, std::size_t count, DT type, const Op& op, const Comm& comm,
           const Tuning* tuning = nullptr);

// Drops what the collectives keep for a collective context (its shared
// segment, coll/shm_node.hpp); the binding calls it when a communicator is
// freed. A later collective on the context sets it up afresh.
void forget_context(Device& dev, uint32_t context);

// ---- nonblocking: the same algorithms, run by the progress engine ----
int ibarrier(Device& dev, const Comm& comm, Sequence& seq, Request** request, const Tuning* tuning = nullptr);
int ibcast(Device& dev, void* buf, std::size_t count, DT type, int root, const Comm& comm, Sequence& seq,
           Request** request, const Tuning* tuning = nullptr);
int ireduce(Device& dev, const void* sendbuf, void* recvbuf, std::size_t count, DT type, const Op& op, int root,
            const Comm& comm, Sequence& seq, Request** request, const Tuning* tuning = nullptr);
int iallreduce(Device& dev, const void* sendbuf, void* recvbuf, std::size_t count, DT type, const Op& op,
               const Comm& comm, Sequence& seq, Request** request, const Tuning* tuning = nullptr);
int igather(Device& dev, const void* sendbuf, std::size_t sendcount, DT sendtype, void* recvbuf, std::size_t recvcount,
            DT recvtype, int root, const Comm& comm, Sequence& seq, Request** request, const Tuning* tuning = nullptr);
int igatherv(Device& dev, const void* sendbuf, std::size_t sendcount, DT sendtype, void* recvbuf, const int* recvcounts,
             const int* displs, DT recvtype, int root, const Comm& comm, Sequence& seq, Request** request,
             const Tuning* tuning = nullptr);
int iscatter(Device& dev, const void* sendbuf, std::size_t sendcount, DT sendtype, void* recvbuf, std::size_t recvcount,
             DT recvtype, int root, const Comm& comm, Sequence& seq, Request** request, const Tuning* tuning = nullptr);
int iscatterv(Device& dev, const void* sendbuf, const int* sendcounts, const int* displs, DT sendtype, void* recvbuf,
              std::size_t recvcount, DT recvtype, int root, const Comm& comm, Sequence& seq, Request** request,
              const Tuning* tuning = nullptr);
int iallgather(Device& dev, const void* sendbuf, std::size_t sendcount, DT sendtype, void* recvbuf,
               std::size_t recvcount, DT recvtype, const Comm& comm, Sequence& seq, Request** request,
               const Tuning* tuning = nullptr);
int iallgatherv(Device& dev, const void* sendbuf, std::size_t sendcount, DT sendtype, void* recvbuf,
                const int* recvcounts, const int* displs, DT recvtype, const Comm& comm, Sequence& seq,
                Request** request, const Tuning* tuning = nullptr);
int ialltoall(Device& dev, const void* sendbuf, std::size_t sendcount, DT sendtype, void* recvbuf,
              std::size_t recvcount, DT recvtype, const Comm& comm, Sequence& seq, Request** request,
              const Tuning* tuning = nullptr);
int ialltoallv(Device& dev, const void* sendbuf, const int* sendcounts, const int* sdispls, DT sendtype, void* recvbuf,
               const int* recvcounts, const int* rdispls, DT recvtype, const Comm& comm, Sequence& seq,
               Request** request, const Tuning* tuning = nullptr);
int ialltoallw(Device& dev, const void* sendbuf, const int* sendcounts, const int* sdispls, const DT* sendtypes,
               void* recvbuf, const int* recvcounts, const int* rdispls, const DT* recvtypes, const Comm& comm,
               Sequence& seq, Request** request, const Tuning* tuning = nullptr);
int ireduce_scatter(Device& dev, const void* sendbuf, void* recvbuf, const int* recvcounts, DT type, const Op& op,
                    const Comm& comm, Sequence& seq, Request** request, const Tuning* tuning = nullptr);
int ireduce_scatter_block(Device& dev, const void* sendbuf, void* recvbuf, std::size_t recvcount, DT type, const Op& op,
                          const Comm& comm, Sequence& seq, Request** request, const Tuning* tuning = nullptr);
int iscan(Device& dev, const void* sendbuf, void* recvbuf, std::size_t count, DT type, const Op& op, const Comm& comm,
          Sequence& seq, Request** request, const Tuning* tuning = nullptr);
int iexscan(Device& dev, const void* sendbuf, void* recvbuf, std::size_t count, DT type, const Op& op, const Comm& comm,
            Sequence& seq, Request** request, const Tuning* tuning = nullptr);

}  // namespace adi3::coll
