#include "channels/shm/cma.hpp"

#include <sys/mman.h>
#include <sys/uio.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>

#include "adi3/steady_clock.hpp"

namespace adi3::shm {
namespace {

template <class Call>
bool transfer(std::size_t len, Call&& call) {
  std::size_t done = 0;
  while (done < len) {
    ssize_t n = call(done, len - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EFAULT;  // no progress: an unmapped range
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

bool cma_read(pid_t pid, void* local, uint64_t remote, std::size_t len) {
  return transfer(len, [&](std::size_t at, std::size_t n) {
    iovec l{static_cast<char*>(local) + at, n};
    iovec r{reinterpret_cast<void*>(static_cast<uintptr_t>(remote + at)), n};
    return process_vm_readv(pid, &l, 1, &r, 1, 0);
  });
}

bool cma_write(pid_t pid, uint64_t remote, const void* local, std::size_t len) {
  return transfer(len, [&](std::size_t at, std::size_t n) {
    iovec l{const_cast<char*>(static_cast<const char*>(local)) + at, n};
    iovec r{reinterpret_cast<void*>(static_cast<uintptr_t>(remote + at)), n};
    return process_vm_writev(pid, &l, 1, &r, 1, 0);
  });
}

bool cma_probe(pid_t pid, uint64_t remote, uint64_t expected) {
  uint64_t got = ~expected;
  return cma_read(pid, &got, remote, sizeof got) && got == expected;
}

int64_t cma_call_ns() {
  constexpr int kCalls = 16;
  uint64_t word = 0, got = 0;
  const pid_t self = getpid();
  int64_t best = INT64_MAX;
  for (int i = 0; i < kCalls; ++i) {
    const int64_t t0 = steady_ns();
    if (!cma_read(self, &got, reinterpret_cast<uintptr_t>(&word), sizeof word)) return INT64_MAX;
    best = std::min(best, steady_ns() - t0);
  }
  return best;
}

std::size_t cma_huge_pages(void* base, std::size_t bytes, std::size_t collapse_max, int64_t budget_ns) {
  std::size_t merged = 0;
#if defined(__linux__)
  constexpr std::size_t kBlock = std::size_t{2} << 20, kPage = 4096;
  constexpr int kCollapse = 25;  // MADV_COLLAPSE (Linux 6.1); older headers lack it
  const auto a = reinterpret_cast<uintptr_t>(base);
  // Only whole aligned blocks: a huge page never spans the window's edges
  // (so no memory outside it changes). Refused before the sums can wrap.
  if (bytes < kBlock || a > UINTPTR_MAX - bytes) return 0;
  const uintptr_t from = a % kBlock ? a - a % kBlock + kBlock : a;
  const uintptr_t to = (a + bytes) - (a + bytes) % kBlock;
  if (from >= to) return 0;
  const int saved = errno;
  if (madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE) == 0 && collapse_max >= kBlock) {
    const int64_t until = steady_ns() + budget_ns;
    unsigned char in_memory[kBlock / kPage];
    for (uintptr_t b = from; b < to && merged + kBlock <= collapse_max && steady_ns() < until; b += kBlock) {
      void* p = reinterpret_cast<void*>(b);
      if (mincore(p, kBlock, in_memory) != 0) break;
      bool whole = true;
      for (unsigned char r : in_memory) whole = whole && (r & 1);
      // A partly touched block is left to first touch and khugepaged: merging
      // it now would fill its holes with memory the program never asked for.
      if (!whole) continue;
      if (madvise(p, kBlock, kCollapse) == 0) {
        merged += kBlock;
      } else if (errno == EINVAL || errno == EPERM) {
        break;  // not offered here (kernel, THP off, a mapping it refuses)
      }
    }
  }
  errno = saved;
#else
  (void)base;
  (void)bytes;
  (void)collapse_max;
  (void)budget_ns;
#endif
  return merged;
}

}  // namespace adi3::shm
