// Where each rank runs: mpiexec binds rank r to one object of the
// machine (a core by default) through hwloc; when ranks outnumber cores,
// rank r shares core r mod cores. Binding is applied in the child between
// fork and exec.
#pragma once

#include <sched.h>

#include <optional>
#include <string>
#include <vector>

namespace adi3::mpiexec {

enum class BindLevel { None, Core, L3Cache, Numa, Socket };

// "none", "core", "l3cache", "numa", "socket"; nullopt for anything else.
std::optional<BindLevel> parse_bind_level(const std::string& text);
const char* bind_level_name(BindLevel level);

struct BindRequest {
  std::optional<BindLevel> bind_to;  // nullopt: core
  BindLevel map_by = BindLevel::Core;
  // hwloc synthetic topology ("pack:2 core:2 pu:1") instead of this
  // machine's; for tests.
  std::string synthetic;
};

struct BindPlan {
  bool bound = false;
  std::vector<cpu_set_t> masks;      // per rank, when bound
  std::vector<std::string> reports;  // per rank "core L#0 (cpus 0)", when bound
  std::string note;                  // why not bound, or what was done
  int cores = 0;                     // usable cores seen
};

// Plans the binding of nprocs ranks. Ranks are dealt to map_by objects
// round robin (core: consecutive ranks on consecutive cores; socket:
// alternate sockets), each rank taking the next free core of its object
// and being bound to that core's enclosing bind_to object; ranks beyond the
// usable cores start the deal again (rank r on the object of rank r mod
// cores). No binding when hwloc is not available.
// Throws std::runtime_error when the topology cannot be read.
BindPlan plan_binding(int nprocs, const BindRequest& request);

}  // namespace adi3::mpiexec
