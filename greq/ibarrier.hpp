// A nonblocking barrier over all ranks of a device, built as a generalized
// request whose poll function the progress engine calls: a dissemination
// barrier (ceil(log2 n) rounds of zero-byte messages) that advances in
// whichever call makes progress, with no thread of its own.
#pragma once
#include <cstdint>

#include "adi3/device.hpp"

namespace adi3 {

// Its traffic: a context of its own, so it never mixes with Device::barrier
// (kInternalContext) or user communicators.
inline constexpr uint32_t kIbarrierContext = kInternalContext + 1;

// Every rank calls ibarrier in the same order (a collective). Complete the
// request with any wait/test call. Cancel does nothing (MPI makes it
// erroneous for nonblocking collectives); after request_free the barrier
// still runs to its end.
int ibarrier(Device& dev, Request** out);

}  // namespace adi3
