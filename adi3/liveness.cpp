// Failed peers seen by calls that move no packets. A native one-sided
// flush or unlock is a memory fence on mapped memory: it completes even
// when the target process is gone (its memory stays mapped), so the call
// must ask whether the target still lives, as a point-to-point wait does
// by failing when the peer it waits on died.
#include "adi3/device.hpp"

namespace adi3 {

void Device::look_for_failures() {
  io_->check_liveness();
  progress();  // reports what the channel found (on_peer_failed)
}

int Device::check_alive_slow(const Comm& comm, std::span<const int> ranks, const char* what) {
  const std::size_t n = ranks.empty() ? static_cast<std::size_t>(comm.size) : ranks.size();
  for (std::size_t i = 0; i < n; ++i) {
    const int r = ranks.empty() ? static_cast<int>(i) : ranks[i];
    const int peer = r >= 0 && r < comm.size ? comm.to_peer(r) : -1;
    if (peer < 0 || peer >= size_) continue;
    if (!std::atomic_ref<uint8_t>(peer_failed_[static_cast<std::size_t>(peer)]).load(std::memory_order_relaxed)) {
      continue;
    }
    return errors_.raise(ErrorClass::ProcFailed, "%s on rank %d: rank %d (process rank %d) has failed", what, comm.rank,
                         r, peer);
  }
  return 0;
}

}  // namespace adi3
