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

// What one 8-byte cross-memory attach call costs here (nanoseconds, the
// best of a few reads of our own memory): a system call's price, which
// varies tenfold between machines and states of a VM (s29: 2.0-2.4 us,
// getppid 1.2 us).
int64_t cma_call_ns();

// Prepares memory a window exposes for peers' copies, once per window: a
// peer's process_vm_writev/readv pins the pages it copies one by one, 512
// per 2 MiB with small pages, one with a huge page. Asks for huge pages
// (MADV_HUGEPAGE) in the 2 MiB-aligned blocks of [base, +bytes): a block
// not in memory yet gets one when first touched, and khugepaged may merge
// the others later. Blocks already wholly in memory are merged now
// (MADV_COLLAPSE: a copy of each), at most collapse_max bytes of them and
// for at most budget_ns: the kernel may have to compact memory for each,
// which takes milliseconds under load. Touches no page. Returns the bytes
// merged.
std::size_t cma_huge_pages(void* base, std::size_t bytes, std::size_t collapse_max, int64_t budget_ns);
// ADI3_SHM_WIN_HUGE_MAX's default (collapse_max) and the time bound.
inline constexpr std::size_t kCmaHugeMax = std::size_t{8} << 20;
inline constexpr int64_t kCmaHugeBudgetNs = 4'000'000;

}  // namespace adi3::shm
