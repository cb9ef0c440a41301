#include "channels/shm/cma.hpp"

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

}  // namespace adi3::shm
