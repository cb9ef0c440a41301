// adi3_info: which channels this installation can load, what each does
// natively, and every ADI3_* setting with its default and meaning.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>

#include "adi3/config.hpp"
#include "adi3/bootstrap/bootstrap.hpp"
#include "adi3/process.hpp"
#include "adi3/topology.hpp"
#include "channels/inproc/inproc.hpp"
#include "channels/loader.hpp"
#include "coll/tuning.hpp"

namespace {

void print_knobs(const char* title, std::span<const adi3::Knob> knobs) {
  std::printf("\n%s\n", title);
  for (const adi3::Knob& k : knobs) {
    std::printf("  %-24s default: %s\n", k.name, k.default_text);
    if (const char* now = std::getenv(k.name)) {
      bool secret = std::strstr(k.name, "SECRET") != nullptr;  // never echo a secret
      std::printf("  %-24s set now: %s\n", "", secret ? "(set, not shown)" : now);
    }
    std::printf("  %-24s %s\n", "", k.meaning);
  }
}

// The machine as the runtime sees it, this process's binding, and (under
// a launcher) the job's node layout.
void print_topology() {
  std::printf("Topology (what the runtime reads at start-up):\n%s", adi3::describe(adi3::read_host_topology()).c_str());
  try {
    auto boot = adi3::make_bootstrap();
    const adi3::NodeMap& map = boot->node_map();
    std::printf("  launcher:    %.*s, rank %d of %d, job %s\n", static_cast<int>(boot->wire().size()),
                boot->wire().data(), boot->rank(), boot->size(), boot->job_id().c_str());
    std::printf("  node layout: %d node(s) (from %s); this node runs %d rank(s), this is local rank %d\n", map.nodes,
                map.source.c_str(), boot->local_size(), boot->local_rank());
    boot->finalize();
  } catch (const std::exception& e) {
    std::printf("  launcher:    not reachable: %s\n", e.what());
  }
}

void usage() {
  std::printf(
      "usage: adi3_info [--channels | --knobs | --topology | --help]\n"
      "Lists the channel plugins found (and their native communication types) and every ADI3_*\n"
      "environment setting with its default and meaning. --topology: the machine and this process's\n"
      "binding as the runtime sees them, and the launcher's node layout.\n");
}

}  // namespace

int main(int argc, char** argv) {
  bool channels = true, knobs = true;
  if (argc > 1) {
    if (!std::strcmp(argv[1], "--topology")) {
      print_topology();
      return 0;
    }
    if (!std::strcmp(argv[1], "--channels")) {
      knobs = false;
    } else if (!std::strcmp(argv[1], "--knobs")) {
      channels = false;
    } else {
      usage();
      return std::strcmp(argv[1], "--help") && std::strcmp(argv[1], "-h") ? 2 : 0;
    }
  }

  adi3::PluginScan scan = adi3::scan_channel_plugins();
  if (channels) {
    std::printf("Channels (ADI3_CHANNEL selects one; the core emulates what is not native):\n");
    std::printf("  %-8s %s\n  %-8s native: %s\n  %-8s built in; ranks are threads of one process only\n", "inproc",
                "in-process rings between thread-ranks", "",
                adi3::describe_comm_types(adi3::kPointToPoint | adi3::kActiveRma).c_str(), "");
    for (const auto& f : scan.found) {
      std::printf("  %-8s %s\n  %-8s native: %s\n  %-8s %s\n", f.plugin->name, f.plugin->description, "",
                  adi3::describe_comm_types(f.plugin->native).c_str(), "", f.path.c_str());
    }
    std::string dirs;
    for (const auto& d : adi3::plugin_search_path()) dirs += (dirs.empty() ? "" : ":") + d;
    std::printf("Plugin search path: %s\n", dirs.c_str());
    for (const auto& p : scan.problems) std::printf("Not loadable: %s\n", p.c_str());
  }
  if (knobs) {
    print_knobs("Core settings:", adi3::core_knobs());
    print_knobs("Process start-up:", adi3::process_knobs());
    print_knobs("Launcher (bootstrap):", adi3::bootstrap_knobs());
    print_knobs("Plugin loader:", adi3::loader_knobs());
    print_knobs("Collectives:", adi3::coll::coll_knobs());
    print_knobs("Channel inproc:", adi3::inproc_knobs());
    for (const auto& f : scan.found) {
      std::string title = "Channel " + std::string(f.plugin->name) + ":";
      print_knobs(title.c_str(), std::span<const adi3::Knob>(f.plugin->knobs, f.plugin->knob_count));
    }
  }
  return 0;
}
