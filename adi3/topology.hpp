// What this process can see of its machine: the topology (through hwloc
// when libadi3 was built with it, else counts from the OS) and where this
// process is bound. Read once at start-up to tune node-local settings;
// printed by adi3_info --topology.
#pragma once

#include <string>

namespace adi3 {

struct HostTopology {
  std::string source;  // "hwloc 2.9.0" or "sysconf (no hwloc)"
  int packages = 0;    // 0 when unknown
  int numa_nodes = 0;
  int l3caches = 0;
  int cores = 0;
  int pus = 0;           // hardware threads of the machine
  int bound_pus = 0;     // hardware threads this process may run on
  std::string binding;   // "cpus 0-1"
  std::string bound_to;  // "Core L#0", "Package L#0", or "not bound"
  bool bound = false;    // fewer PUs than the machine's
};

HostTopology read_host_topology();

// Several lines for adi3_info.
std::string describe(const HostTopology& t);

}  // namespace adi3
