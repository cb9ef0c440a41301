#include "adi3/topology.hpp"

#include <sched.h>
#include <unistd.h>

#include <cstdio>

#ifdef ADI3_HAVE_HWLOC
#include <hwloc.h>
#endif

namespace adi3 {
namespace {

std::string cpu_list(const cpu_set_t& set) {
  std::string out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &set)) continue;
    int end = c;
    while (end + 1 < CPU_SETSIZE && CPU_ISSET(end + 1, &set)) ++end;
    // snprintf, not operator+: GCC 12 -O3 warns falsely (-Wrestrict) on the chain.
    char part[32];
    if (end > c) {
      std::snprintf(part, sizeof part, "%s%d-%d", out.empty() ? "" : ",", c, end);
    } else {
      std::snprintf(part, sizeof part, "%s%d", out.empty() ? "" : ",", c);
    }
    out += part;
    c = end;
  }
  return out;
}

}  // namespace

HostTopology read_host_topology() {
  HostTopology t;
  cpu_set_t mine;
  CPU_ZERO(&mine);
  if (sched_getaffinity(0, sizeof mine, &mine) == 0) {
    t.bound_pus = CPU_COUNT(&mine);
    t.binding = "cpus " + cpu_list(mine);
  }
#ifdef ADI3_HAVE_HWLOC
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) == 0 && hwloc_topology_load(topo) == 0) {
    unsigned v = hwloc_get_api_version();
    char version[48];
    std::snprintf(version, sizeof version, "hwloc (API %u.%u.%u)", v >> 16, (v >> 8) & 0xff, v & 0xff);
    t.source = version;
    t.packages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
    t.numa_nodes = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    t.l3caches = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_L3CACHE);
    t.cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    t.pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0) {
      // The smallest object that covers our binding.
      hwloc_obj_t o = hwloc_get_obj_covering_cpuset(topo, set);
      // Name it as mpiexec --bind-to would: the core with exactly this set
      // (not its only PU or its L2, nor an L3 or package of that one core,
      // as on a VM whose cores each have an L3 of their own), else the
      // widest L3 or package with exactly this set.
      bool core = false;
      for (hwloc_obj_t up = o; up && up->cpuset && hwloc_bitmap_isequal(up->cpuset, set); up = up->parent) {
        if (up->type == HWLOC_OBJ_CORE) {
          o = up;
          core = true;
        } else if (!core && (up->type == HWLOC_OBJ_L3CACHE || up->type == HWLOC_OBJ_PACKAGE)) {
          o = up;
        }
      }
      t.bound = hwloc_bitmap_weight(set) < t.pus;
      if (o && t.bound) {
        char type[64];
        hwloc_obj_type_snprintf(type, sizeof type, o, 0);
        t.bound_to = std::string(type) + " L#" + std::to_string(o->logical_index);
      }
    }
    hwloc_bitmap_free(set);
    hwloc_topology_destroy(topo);
  } else {
    t.source = "sysconf (hwloc could not read the topology)";
  }
#else
  t.source = "sysconf (libadi3 built without hwloc)";
#endif
  if (t.pus == 0) t.pus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  if (t.source.rfind("sysconf", 0) == 0) t.bound = t.bound_pus > 0 && t.bound_pus < t.pus;
  if (t.bound_to.empty()) t.bound_to = t.bound ? "a subset of the machine" : "not bound";
  return t;
}

std::string describe(const HostTopology& t) {
  auto n = [](int v) { return v > 0 ? std::to_string(v) : std::string("?"); };
  std::string out;
  out += "  source:      " + t.source + "\n";
  out += "  machine:     " + n(t.packages) + " package(s), " + n(t.numa_nodes) + " NUMA node(s), " + n(t.l3caches) +
         " L3 cache(s), " + n(t.cores) + " core(s), " + n(t.pus) + " hardware thread(s)\n";
  out += "  this process: may run on " + t.binding + " (" + std::to_string(t.bound_pus) + " hardware thread(s)); " +
         (t.bound ? "bound to " + t.bound_to : std::string("not bound")) + "\n";
  return out;
}

}  // namespace adi3
