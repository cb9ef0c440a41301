// MPI_Alloc_mem / MPI_Free_mem at the ADI level. Memory comes from the
// channel's one-sided part where it has one (shm: a segment peers can map),
// so a window later created over it (MPI_Win_create) is reached with loads,
// stores and atomics like one from allocate, with no cross-memory attach;
// elsewhere from the heap. Every channel works: the program sees ordinary
// memory either way.
#pragma once
#include <cstddef>

namespace adi3 {

class Device;

// bytes (0 allowed) at *base, 64-byte aligned; 0 or an error code (NoMem).
int alloc_mem(Device& dev, std::size_t bytes, void** base);
// Releases memory from alloc_mem (nullptr: nothing). Memory this device did
// not hand out as shared memory goes back to the heap, as MPI_Free_mem of
// memory from a heap fallback must.
int free_mem(Device& dev, void* base);

// Whether this rank and `peer` (a device rank) can load and store each
// other's memory, so that a shared window between them can exist: the same
// one-sided part reaches the peer and its shared part (OneSided::shared_part:
// mapped regions) does too, and emulation is not
// forced. Always true of the rank itself. MPI_COMM_TYPE_SHARED groups by it
// (MPI-3.1 6.4.2: each part can create a shared memory window).
bool shares_memory(Device& dev, int peer);

}  // namespace adi3
