// Starting and signalling rank processes.
#pragma once

#include "unique_fd.hpp"

#include <string>
#include <vector>

#include <sched.h>
#include <sys/types.h>

namespace adi3::mpiexec {

// A started rank as the launcher sees it.
struct RankProcess {
  pid_t pid = -1;
  UniqueFd pmi;  // our end of the PMI socketpair
  UniqueFd out;  // read end of the rank's stdout
  UniqueFd err;  // read end of the rank's stderr
};

// Resolves name through PATH (or checks it directly when it contains a
// '/'), so a missing program fails before any rank starts. Throws
// std::runtime_error with the reason.
std::string find_program(const std::string& name);

// Forks and execs path with argv. env is the complete environment except
// PMI_FD, which is added here because it names the child's socket. The
// child leads its own process group so the job can be signalled as a
// whole and does not see the terminal's Ctrl-C directly. Throws
// std::runtime_error if exec fails.
// With cpu_mask, the child binds itself to it before exec.
// pmi_socket false: no PMI socketpair and no PMI_FD (a rank that reaches
// the server over TCP); rank.pmi is then invalid.
RankProcess spawn_rank(const std::string& path, const std::vector<std::string>& argv, std::vector<std::string> env,
                       int stdin_fd, const cpu_set_t* cpu_mask = nullptr, bool pmi_socket = true);

// Sends sig to the rank's process group (its helpers too) and the rank.
void signal_rank(pid_t pid, int sig);

// "6 (Aborted)".
std::string describe_signal(int sig);

}  // namespace adi3::mpiexec
