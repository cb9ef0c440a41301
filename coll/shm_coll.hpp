// Barrier, bcast, reduce and allreduce through the communicator's shared
// segment (shm_node.hpp) when every member is on this host: flags and
// loads and stores instead of messages.
//  - barrier: each rank posts its flag and waits for everyone's.
//  - bcast up to a slot (ShmNode::slot_limit): the root packs into its slot and stamps it;
//    the others post on entry (they are done with older slots), wait for
//    the stamp and unpack.
//    Longer: the root streams pieces through its area, a few in flight;
//    where every member has a core, the others read the root's buffer
//    straight (cross-memory attach, shm_direct.hpp).
//  - reduce/allreduce up to a slot: each rank copies its input
//    to its slot and stamps it; the root (every rank) folds the slots in rank
//    order, so non-commutative ops are exact and all ranks of an allreduce
//    get identical bits.
//  - longer reductions, in rounds of kShmChunk bytes: each rank copies its
//    input into its area once, reduces one slice of the round straight out
//    of every area (rank order again), then the root (every rank) copies
//    the reduced slices out.
//    A reduce of 2 ranks from 64 KiB: the root reads the other's input
//    straight (cross-memory attach, shm_direct.hpp) and folds its own on it.
//    Where ranks outnumber the cores, 64 KiB to 512 KiB: one rank a
//    processor reads its slice of every input straight and folds it, the
//    root gathers the slices (shm_reduce.cpp).
//  - reduce_scatter(_block) up to a slot: each rank copies its vector to
//    its slot and folds its own block out of every slot. Longer: the long
//    reduction without the copy out: each rank folds its own block
//    straight into its receive buffer.
//  - allgather and alltoall (shm_gather.cpp): every rank copies what it
//    sends into its slot (or area, in rounds) once and the readers copy it
//    out, all at the same time.
// Each is chosen from arguments all ranks share (sizes, type, op, root,
// tuning), so all ranks agree. Each returns false, having done nothing,
// when the call is not for this path; else it ran the collective and set
// *err.
#pragma once
#include <cstddef>

#include "adi3/device.hpp"
#include "coll/op.hpp"
#include "coll/tuning.hpp"

namespace adi3::coll::detail {

bool shm_barrier(Device& dev, const Comm& comm, const Tuning& t, int* err);
bool shm_bcast(Device& dev, void* buf, std::size_t count, const Datatype* type, int root, const Comm& comm,
               const Tuning& t, int* err);
bool shm_reduce(Device& dev, const void* sbuf, void* rbuf, std::size_t count, const Datatype* type, const Op& op,
                int root, const Comm& comm, const Tuning& t, int* err);
bool shm_allreduce(Device& dev, const void* sbuf, void* rbuf, std::size_t count, const Datatype* type, const Op& op,
                   const Comm& comm, const Tuning& t, int* err);
// counts: the MPI_Reduce_scatter recvcounts, or null for
// reduce_scatter_block (`same` elements each).
bool shm_reduce_scatter(Device& dev, const void* sbuf, void* rbuf, const int* counts, std::size_t same,
                        const Datatype* type, const Op& op, const Comm& comm, const Tuning& t, int* err);
bool shm_allgather(Device& dev, const void* sbuf, std::size_t scount, const Datatype* stype, void* rbuf,
                   std::size_t rcount, const Datatype* rtype, const Comm& comm, const Tuning& t, int* err);
bool shm_alltoall(Device& dev, const void* sbuf, std::size_t scount, const Datatype* stype, void* rbuf,
                  std::size_t rcount, const Datatype* rtype, const Comm& comm, const Tuning& t, int* err);

}  // namespace adi3::coll::detail
