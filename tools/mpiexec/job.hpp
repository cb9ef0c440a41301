// One mpiexec job: start the ranks, serve PMI, forward output, watch
// for failures, and decide the exit status.
#pragma once

#include <sched.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace adi3::mpiexec {

struct JobConfig {
  int nprocs = 1;
  std::string program_path;       // resolved executable
  std::vector<std::string> argv;  // argv[0] is the program as typed
  std::vector<std::string> env;   // complete except the per-rank PMI_* variables
  std::string job_id;
  bool tag_output = false;
  // Jobs across hosts (hosts.hpp): per rank its host ("" or this host:
  // started directly), its index and count on that host; the exec prefix
  // for other hosts ("ip netns exec"); the layout for PMI_process_mapping
  // (empty: every rank on this host).
  std::vector<std::string> rank_host;
  std::vector<int> local_rank, local_size;
  std::vector<std::string> launcher_prefix;
  std::string process_mapping;
  // --launcher ssh: ranks on other hosts get no inherited socket; they run
  // as `PREFIX HOST 'exec env VAR=... prog args'` (one shell command, as
  // ssh passes it), reach the PMI server's TCP port on pmi_iface's address
  // (pmi_port.hpp) and read the job secret from their standard input.
  // remote_env: the variables of env they get besides the per-rank ones
  // (everything ADI3_* but the secret, and -genv's).
  bool pmi_over_tcp = false;
  std::string pmi_iface;
  std::vector<std::string> remote_env;
  // CPU mask per rank (from plan_binding); empty: ranks are not bound.
  std::vector<cpu_set_t> cpu_masks;
  std::optional<std::chrono::milliseconds> timeout;
  // Between SIGTERM and SIGKILL when stopping the job.
  std::chrono::milliseconds kill_grace{500};
  // How long to wait for output from helpers a rank left behind.
  std::chrono::milliseconds output_drain{500};
};

// Exit status when the job exceeded its timeout, as timeout(1) does.
inline constexpr int kTimeoutExitStatus = 124;

// Runs the job to completion and returns mpiexec's exit status: 0 if
// every rank exited 0; otherwise the first failure's status (its exit
// code, 128+signal, the abort code, kTimeoutExitStatus, or 128+signal
// for a signal that stopped mpiexec itself). Blocks SIGCHLD, SIGINT,
// SIGTERM, SIGHUP and SIGPIPE in the calling thread while it runs.
int run_job(const JobConfig& config);

}  // namespace adi3::mpiexec
