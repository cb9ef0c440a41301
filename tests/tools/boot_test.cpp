// Rank program for the bootstrap tests under every launcher: connects
// through adi3::make_bootstrap(), checks the wire it chose, exchanges a key
// per rank (bytes the PMI wires cannot carry raw included), checks the node
// layout and a barrier, and finalizes. Rank 0 prints one summary line.
//
//   boot_test [--wire W] [--nodes N] [--secret]
//     --wire W    fail unless the chosen wire is W (pmi1, pmi2, pmix, singleton)
//     --nodes N   fail unless the layout has N nodes
//     --secret    fail unless the launcher provided a job secret
//     --abort     rank size-1 aborts with code 5 after the exchange; the rest sleep
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "adi3/bootstrap/bootstrap.hpp"

namespace {

std::string value_for(int rank) {
  return "rank " + std::to_string(rank) + " = 100% ; \n\t" + std::string(40, static_cast<char>('a' + rank % 26));
}

int fail(int rank, const std::string& why) {
  std::fprintf(stderr, "boot_test rank %d: check failed: %s\n", rank, why.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string want_wire;
  int want_nodes = 0;
  bool want_secret = false, do_abort = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--wire") && i + 1 < argc) {
      want_wire = argv[++i];
    } else if (!std::strcmp(argv[i], "--nodes") && i + 1 < argc) {
      want_nodes = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--secret")) {
      want_secret = true;
    } else if (!std::strcmp(argv[i], "--abort")) {
      do_abort = true;
    } else {
      std::fprintf(stderr, "boot_test: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  try {
    auto boot = adi3::make_bootstrap();
    int r = boot->rank(), n = boot->size();
    if (!want_wire.empty() && boot->wire() != want_wire) {
      return fail(r, "wire is " + std::string(boot->wire()) + ", expected " + want_wire);
    }
    boot->put("boot-test-" + std::to_string(r), value_for(r));
    boot->fence();
    for (int p = 0; p < n; ++p) {
      auto v = boot->get_from(p, "boot-test-" + std::to_string(p));
      auto any = boot->get("boot-test-" + std::to_string(p));  // owner unknown: searched
      if (!v || *v != value_for(p) || any != v) {
        return fail(r, "key of rank " + std::to_string(p) + " missing or wrong");
      }
    }
    if (boot->get("boot-test-never-put")) return fail(r, "a key nobody put was found");
    const adi3::NodeMap& map = boot->node_map();
    if (map.node_of.size() != static_cast<std::size_t>(n)) return fail(r, "node map has the wrong size");
    if (want_nodes && map.nodes != want_nodes) {
      return fail(r, "layout has " + std::to_string(map.nodes) + " nodes, expected " + std::to_string(want_nodes));
    }
    if (boot->local_rank() < 0 || boot->local_rank() >= boot->local_size()) return fail(r, "local rank out of range");
    if (want_secret && (!boot->job_secret() || boot->job_secret()->size() < 32)) return fail(r, "no job secret");
    if (want_secret && std::getenv("ADI3_JOB_SECRET")) return fail(r, "the secret stayed in the environment");
    if (do_abort) {
      // The others compute (they do not wait in the launcher: Open MPI
      // 4.1.4's mpirun can hang when ranks sit in a PMIx fence while
      // another aborts). The launcher must stop them.
      boot->barrier();
      if (r == n - 1) boot->abort(5, "boot_test: deliberate abort");
      sleep(30);
      return fail(r, "still running 30 s after another rank aborted");
    }
    boot->barrier();
    if (r == 0) {
      std::printf("boot_test: wire=%.*s job=%s size=%d nodes=%d (%s) local_size=%d secret=%s: OK\n",
                  static_cast<int>(boot->wire().size()), boot->wire().data(), boot->job_id().c_str(), n, map.nodes,
                  map.source.c_str(), boot->local_size(), boot->job_secret() ? "yes" : "no");
    }
    boot->finalize();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "boot_test: %s\n", e.what());
    return 1;
  }
  return 0;
}
