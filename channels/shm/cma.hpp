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

// Asks for huge pages (MADV_HUGEPAGE) in the 2 MiB-aligned blocks of [base,
// + bytes), at most cap bytes of them, and collapses into huge pages
// (MADV_COLLAPSE) those already wholly in memory: a peer's copy into or out
// of that memory then pins one page where it pinned 512. Touches no page
// (a block the program never touched stays out of memory; one it partly
// touched may be filled later, as with any MADV_HUGEPAGE memory). Returns
// the bytes collapsed.
std::size_t cma_huge_pages(void* base, std::size_t bytes, std::size_t cap);
// ADI3_SHM_WIN_HUGE_MAX's default.
inline constexpr std::size_t kCmaHugeMax = std::size_t{1} << 30;

}  // namespace adi3::shm
