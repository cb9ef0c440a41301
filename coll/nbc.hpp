// Nonblocking collectives: a Schedule inside a Request of kind Collective,
// advanced by the device's progress engine through RequestClass::poll.
#pragma once
#include <cstdint>
#include <memory>

#include "coll/schedule.hpp"

namespace adi3::coll {

// Tags of the blocking collectives (one per kind, for readable traces);
// nonblocking ones take theirs from a Sequence, above these.
enum class Tag : int {
  Barrier = 1,
  Bcast,
  Reduce,
  Allreduce,
  Gather,
  Gatherv,
  Scatter,
  Scatterv,
  Allgather,
  Allgatherv,
  Alltoall,
  Alltoallv,
  Alltoallw,
  ReduceScatter,
  ReduceScatterBlock,
  Scan,
  Exscan,
  ShmSetup,  // the shared-memory segment's key and verdict (shm_node.cpp)
};
inline constexpr int kFirstNbcTag = 64;

// Per-communicator counter of nonblocking collectives. Ranks start them in
// the same order (MPI requires it), so the n-th one gets the same tag
// everywhere and two outstanding ones never match each other's messages.
// The MPI binding keeps one beside each communicator's collective Comm.
class Sequence {
 public:
  Sequence() = default;
  // The sequence of one persistent collective (MPI_Bcast_init ...): a
  // nonblocking call given it builds its schedule once, under `tag` (taken
  // from the communicator's sequence by the init call, so init calls keep
  // MPI's ordering rule while starts may come in any order), and returns an
  // inactive persistent request that every MPI_Start runs again.
  static Sequence persistent(int tag);
  bool is_persistent() const { return persistent_; }
  int next_tag();

 private:
  std::uint32_t n_ = 0;
  int tag_ = 0;
  bool persistent_ = false;
};

// Wraps s in a Collective request: completes it at once if s has nothing
// to wait for, else registers it with the progress engine. Out of requests
// (ADI3_MAX_REQUESTS) it returns ERR_NO_MEM, *out null and s dropped unstarted.
int launch(Device& dev, std::unique_ptr<Schedule> s, Request** out);
// Wraps s in an inactive persistent Collective request; Device::start
// restarts the schedule, the progress engine advances it, wait/test make the
// request inactive again, and request_free deletes the schedule.
int launch_persistent(Device& dev, std::unique_ptr<Schedule> s, Request** out);

}  // namespace adi3::coll
