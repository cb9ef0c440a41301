// What one rank of a job is started as: the program itself, or the
// launcher that starts it on another host (hosts.hpp), with its argv and
// environment.
#pragma once

#include "job.hpp"
#include "unique_fd.hpp"

#include <string>
#include <vector>

namespace adi3::mpiexec {

struct RankCommand {
  std::string path;               // what to exec
  std::vector<std::string> argv;  // argv[0] included
  std::vector<std::string> env;   // complete, PMI_* included
  // --launcher ssh: the read end of a pipe holding the job secret, to be
  // the rank's stdin; the rank then reaches PMI over TCP, not a socketpair.
  UniqueFd secret_in;
  bool pmi_socket = true;
};

// Rank `rank`'s command. pmi_port: the PMI server's TCP address when the
// job serves PMI over TCP (--launcher ssh), else empty.
RankCommand rank_command(const JobConfig& config, int rank, const std::string& pmi_port);

}  // namespace adi3::mpiexec
