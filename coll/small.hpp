// Small collectives without a schedule: barrier, and bcast, reduce,
// allreduce, reduce_scatter, allgather and alltoall whose messages are at most
// Tuning::small_max bytes, run straight on the device's point-to-point
// calls. At these sizes building and running a schedule costs more than
// the messages do.
// They use the scheduled versions' tags on the same communicator, and each
// is chosen from arguments every rank shares, so all ranks agree on it.
#pragma once
#include <cstddef>

#include "adi3/device.hpp"
#include "coll/op.hpp"
#include "coll/tuning.hpp"

namespace adi3::coll::detail {

// Each returns false (having done nothing) when the call is not small or
// has something for the scheduled path to check or report; else it runs
// the collective and sets *err.
bool small_barrier(Device& dev, const Comm& comm, const Tuning& t, int* err);
bool small_bcast(Device& dev, void* buf, std::size_t count, const Datatype* type, int root, const Comm& comm,
                 const Tuning& t, int* err);
bool small_reduce(Device& dev, const void* sbuf, void* rbuf, std::size_t count, const Datatype* type, const Op& op,
                  int root, const Comm& comm, const Tuning& t, int* err);
bool small_allreduce(Device& dev, const void* sbuf, void* rbuf, std::size_t count, const Datatype* type, const Op& op,
                     const Comm& comm, const Tuning& t, int* err);
// counts: the MPI_Reduce_scatter recvcounts, or null for reduce_scatter_block
// (`same` elements each).
bool small_reduce_scatter(Device& dev, const void* sbuf, void* rbuf, const int* counts, std::size_t same,
                          const Datatype* type, const Op& op, const Comm& comm, const Tuning& t, int* err);
bool small_allgather(Device& dev, const void* sbuf, std::size_t scount, const Datatype* stype, void* rbuf,
                     std::size_t rcount, const Datatype* rtype, const Comm& comm, const Tuning& t, int* err);
bool small_alltoall(Device& dev, const void* sbuf, std::size_t scount, const Datatype* stype, void* rbuf,
                    std::size_t rcount, const Datatype* rtype, const Comm& comm, const Tuning& t, int* err);

}  // namespace adi3::coll::detail
