// Cross-memory attach: one copy straight between two processes' memory
// (process_vm_readv/writev). Needs ptrace permission over the peer, which
// containers and Yama often deny, so a channel probes it once at start.
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace adi3::shm {

// Copies len bytes; false (errno set) if the kernel refused or the peer is
// gone. Partial transfers are resumed.
bool cma_read(pid_t pid, void* local, uint64_t remote, std::size_t len);
bool cma_write(pid_t pid, uint64_t remote, const void* local, std::size_t len);

// True when reading `expected` back from address `remote` of `pid` works.
bool cma_probe(pid_t pid, uint64_t remote, uint64_t expected);

}  // namespace adi3::shm
