// The binding's own collective traffic (on a communicator's internal
// context): a ring allgather, and agreeing on a free context index.
#pragma once
#include <cstddef>
#include <cstdint>

#include "mpi/runtime.hpp"

namespace adi3::mpi {

// Every rank of `over` contributes `bytes` at mine; all receives them in
// rank order (size * bytes).
int allgather_bytes(Device& dev, const Comm& over, const void* mine, std::size_t bytes, void* all, int tag);

// A context index free at every rank of `over`, claimed at this rank.
int agree_context(Runtime& rt, const Comm& over, int tag, uint32_t* index);

}  // namespace adi3::mpi
