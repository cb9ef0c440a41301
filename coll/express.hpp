// The express path of small blocking collectives (barrier, and bcast,
// reduce and allreduce of predefined types up to a slot): straight onto
// the communicator's shared segment (coll/shm_node.hpp), with everything
// the regular entry points work out per call (the node lookup, the tuning
// decision, the type and op checks, the kernel) worked out once per
// communicator by the caller.
//
// It runs exactly the protocol of shm_coll.cpp's small path (same stages,
// slots, fold order), so a rank on the express path and a rank on the
// regular path in the same call still meet. It never makes the segment:
// a communicator gets one from its first regular collective (setup is
// collective), after which Express::probe finds it.
#pragma once
#include <cstddef>

#include "adi3/device.hpp"
#include "coll/op.hpp"

namespace adi3::coll {

namespace detail {
class ShmNode;
}

// A predefined op on a predefined scalar type, resolved once.
struct ExpressOp {
  Kernel fn = nullptr;
  OpKind op = OpKind::NoOp;
  std::size_t size = 0;  // bytes per element (extent = size: no gaps)
};
// False when the pair is not for the express path: a user op, REPLACE or
// NO_OP, a pair or derived type, or an op MPI does not define on the type
// (the regular path reports that one).
bool express_op(OpKind op, const Datatype* type, ExpressOp* out);

class Express {
 public:
  enum class State : unsigned char {
    Unknown,  // no collective has set the segment up yet: ask again later
    Ready,    // *out can run
    Off,      // never on this communicator (members on other hosts, ADI3_COLL_SHM=0, one rank)
  };
  // Not collective: only looks up what an earlier collective on comm left.
  static State probe(Device& dev, const Comm& comm, Express* out);

  // Each returns false, having done nothing, when the call is not for this
  // path (too long for a slot, an algorithm forced by ADI3_COLL_*_ALGO, a
  // root out of range); else it ran the collective and returns true with
  // *err set (0, or a dead peer's error).
  bool barrier(int* err) const;
  // count elements of r.size bytes; in may be out only for a reduce's
  // root (MPI_IN_PLACE resolved by the caller).
  bool allreduce(const void* in, void* out, std::size_t count, const ExpressOp& r, int* err) const;
  bool reduce(const void* in, void* out, std::size_t count, const ExpressOp& r, int root, int* err) const;
  // bytes of contiguous data at buf.
  bool bcast(void* buf, std::size_t bytes, int root, int* err) const;

 private:
  detail::ShmNode* node_ = nullptr;
  std::size_t limit_ = 0;  // the node's slot_limit()
  int size_ = 0;
  bool bcast_ = false, reduce_ = false, allreduce_ = false;  // tuning left them on Auto
};

}  // namespace adi3::coll
