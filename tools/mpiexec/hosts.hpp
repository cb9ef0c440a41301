// Jobs across hosts: the host list (--hosts a:2,b:2 or --hostfile F), the
// placement of ranks on it, and the exec prefix that starts a rank there.
//
// Ranks fill each host's slots in order, then wrap around (MPICH's
// Hydra does the same). A rank on a host other than this one is started
// as `LAUNCHER... HOST program args`: `--launcher-exec "ip netns exec"`
// puts it in a network namespace named HOST (how the tests stand in for
// hosts). The rank keeps its PMI socket across the prefix, so only
// launchers that exec in place (ip netns exec, nsenter, a container
// runtime's exec) work this way; ssh would need the PMI server on a TCP
// port and is refused with that reason.
#pragma once
#include <string>
#include <vector>

namespace adi3::mpiexec {

struct Host {
  std::string name;
  int slots = 1;
};

// "a:2,b,c:4" (slots default to 1). Throws UsageError naming the bad entry.
std::vector<Host> parse_host_list(const std::string& text);
// One host per line: "name", "name:N" or "name slots=N"; '#' comments.
std::vector<Host> read_hostfile(const std::string& path);

struct Placement {
  std::vector<int> host_of;     // per rank: index into hosts
  std::vector<int> local_rank;  // per rank: its index among its host's ranks
  std::vector<int> local_size;  // per rank: ranks on its host
  std::string process_mapping;  // PMI_process_mapping for the layout
};
Placement place_ranks(int nprocs, const std::vector<Host>& hosts);

// True for names that mean this machine (no prefix needed).
bool is_this_host(const std::string& name);

}  // namespace adi3::mpiexec
