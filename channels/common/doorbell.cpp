#include "channels/common/doorbell.hpp"

#include <climits>
#include <ctime>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace adi3 {

// Shared (not PRIVATE) futex operations so a doorbell in a shared mapping
// works between processes.
void Doorbell::ring_always() {
  bell_.fetch_add(1, std::memory_order_seq_cst);
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&bell_), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

void Doorbell::futex_wait(uint32_t seen, std::chrono::microseconds timeout) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(timeout.count() / 1000000);
  ts.tv_nsec = static_cast<long>(timeout.count() % 1000000) * 1000;
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&bell_), FUTEX_WAIT, seen, &ts, nullptr, 0);
}

}  // namespace adi3
