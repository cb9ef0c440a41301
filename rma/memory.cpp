// MPI_Alloc_mem / MPI_Free_mem: shared memory from the channel's one-sided
// part, recorded in the RMA layer's hub (so Free_mem knows what to release
// and how), else the heap.
#include "rma/memory.hpp"

#include <cstdlib>
#include <cstring>

#include "adi3/device.hpp"
#include "rma/hub.hpp"

namespace adi3 {

int alloc_mem(Device& dev, std::size_t bytes, void** base) {
  if (OneSided* os = dev.channel_of(dev.rank()).onesided()) {
    if (Region* r = os->allocate(bytes)) {
      rma::Hub::of(dev).add_memory(r, os);
      *base = r->base;
      return 0;
    }
    // No segment (/dev/shm full, limits): the heap still serves.
  }
  const std::size_t n = (bytes + 63) / 64 * 64;
  void* p = n >= bytes ? std::aligned_alloc(64, n ? n : 64) : nullptr;  // (n wraps for an impossible size)
  if (!p) return dev.errors().raise(ErrorClass::NoMem, "Alloc_mem: cannot allocate %zu bytes", bytes);
  *base = p;
  return 0;
}

int free_mem(Device& dev, void* base) {
  if (!base) return 0;
  if (rma::Hub::of(dev).release_memory(base)) return 0;
  std::free(base);
  return 0;
}

bool shares_memory(Device& dev, int peer) {
  if (peer == dev.rank()) return true;
  if (dev.config().force_emulation) return false;
  OneSided* os = dev.channel_of(dev.rank()).onesided();
  // The part shared windows take (verbs: segments of its host's ranks).
  OneSided* shared = os ? os->shared_part() : nullptr;
  return shared && dev.channel_of(peer).onesided() == os && shared->reaches(peer);
}

}  // namespace adi3
