#include "channels/shm/process_fence.hpp"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace adi3::shm {
namespace {

long membarrier(int cmd) { return syscall(SYS_membarrier, cmd, 0u, 0); }

}  // namespace

bool process_fence_register() {
  const long cmds = membarrier(MEMBARRIER_CMD_QUERY);
  if (cmds < 0 || !(cmds & MEMBARRIER_CMD_GLOBAL_EXPEDITED) || !(cmds & MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED)) {
    return false;
  }
  return membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) == 0;
}

bool process_fence() { return membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) == 0; }

}  // namespace adi3::shm
