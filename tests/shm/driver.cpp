// shm_p2p: runs point-to-point test bodies as the ranks of an mpiexec job.
//
//   mpiexec -n 4 --timeout 60 shm_p2p <body>|all
//
// Starts the Device with init_process() (so ADI3_CHANNEL picks the
// channel), checks that no shared-memory name of the job is left once the
// channel is up, runs the bodies, finalizes and checks that nothing is left
// behind (requests, posted or unexpected messages).
#include <dirent.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "check.hpp"
#include "p2p_bodies.hpp"

namespace {

// Names in /dev/shm of this job: all must be gone once every rank mapped.
int leftover_segments(std::string_view job_id) {
  std::string prefix = "adi3-" + std::string(job_id) + "-";
  int found = 0;
  if (DIR* d = opendir("/dev/shm")) {
    while (dirent* e = readdir(d)) found += std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0;
    closedir(d);
  }
  return found;
}

int usage() {
  std::fprintf(stderr, "usage: shm_p2p <body>|all\nbodies:\n");
  for (const auto& b : shm_test::p2p_bodies()) std::fprintf(stderr, "  %-18s %s\n", b.name, b.about);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return usage();
  std::string want = argv[1];
  bool known = want == "all";
  for (const auto& b : shm_test::p2p_bodies()) known |= want == b.name;
  if (!known) return usage();

  std::unique_ptr<adi3::Device> dev;
  try {
    dev = adi3::init_process();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "shm_p2p: %s\n", e.what());
    return 1;
  }
  adi3::Device& d = *dev;
  SHM_OK(d, d.barrier());  // every rank's channel is up
  SHM_CHECK_MSG(d, leftover_segments(adi3::process_job_id(d)) == 0,
                "shared-memory segments of the job still have names after start-up");
  for (const auto& b : shm_test::p2p_bodies()) {
    if (want != "all" && want != b.name) continue;
    b.run(d);
    SHM_OK(d, d.finalize());
    if (d.rank() == 0) {
      std::printf("%s: passed on %d ranks (channel %s%s)\n", b.name, d.size(), d.channel().name(),
                  d.rndv_get_to(0) ? ", single-copy get" : "");
      std::fflush(stdout);
    }
  }
  // Only now: a faster rank's next barrier message would count as an
  // unexpected request here, and after the last finalize nothing follows.
  SHM_CHECK_MSG(d, d.live_requests() == 0, std::to_string(d.live_requests()) + " requests live at the end");
  SHM_CHECK(d, d.posted_depth() == 0 && d.unexpected_depth() == 0);
  return 0;
}
