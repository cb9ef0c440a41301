#include "channels/shm/cma.hpp"

#include <sys/mman.h>
#include <sys/uio.h>

#include <cerrno>

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

std::size_t cma_huge_pages(void* base, std::size_t bytes, std::size_t cap) {
  std::size_t done = 0;
#if defined(__x86_64__) && defined(__linux__)
  // process_vm_readv/writev pin the peer's pages one by one; with small
  // pages that costs ~0.12 us per 4 KiB on top of the copy (put_bw_flush_create
  // at 1 MiB ran at 65% of memcpy; into huge pages 74-84%).
  constexpr std::size_t kHuge = std::size_t{2} << 20, kPage = 4096;
  constexpr int kCollapse = 25;  // MADV_COLLAPSE (Linux 6.1), absent from older headers
  const auto a = reinterpret_cast<uintptr_t>(base);
  if (bytes < kHuge || a > UINTPTR_MAX - bytes - kHuge) return 0;
  const uintptr_t from = (a + kHuge - 1) & ~(kHuge - 1);
  uintptr_t to = (a + bytes) & ~(kHuge - 1);
  if (to <= from) return 0;
  if (to - from > cap) to = from + (cap & ~(kHuge - 1));
  if (to <= from) return 0;
  const int saved = errno;
  // Blocks not in memory yet get a huge page when first touched (a program
  // usually fills its window after creating it; a calloc'd one is untouched).
  if (madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE) == 0) {
    unsigned char resident[kHuge / kPage];
    for (uintptr_t b = from; b < to; b += kHuge) {
      void* p = reinterpret_cast<void*>(b);
      // Blocks already in memory, only when wholly: collapsing fills holes.
      if (mincore(p, kHuge, resident) != 0) break;
      bool whole = true;
      for (unsigned char r : resident) whole = whole && (r & 1);
      if (!whole) continue;
      if (madvise(p, kHuge, kCollapse) == 0) {
        done += kHuge;
      } else if (errno == EINVAL || errno == EPERM) {
        break;  // no such advice here (kernel, THP off, a kind of mapping it refuses)
      }
    }
  }
  errno = saved;
#else
  (void)base;
  (void)bytes;
  (void)cap;
#endif
  return done;
}

}  // namespace adi3::shm
