#include "rank_command.hpp"

#include "environment.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include <fcntl.h>
#include <unistd.h>

namespace adi3::mpiexec {
namespace {

// One word for a POSIX shell: 'text', with ' as '\''.
std::string shell_quote(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

// PREFIX HOST 'exec env VAR=VALUE... program args': one command line for
// the remote shell; the secret goes through stdin, never the command line.
void over_ssh(const JobConfig& config, std::size_t rank, const std::string& pmi_port, RankCommand& out) {
  // (Appended piecewise: GCC 12's -Wrestrict false positive on chained
  // std::string concatenation.)
  std::string cmd = "exec env";
  auto word = [&cmd](std::string_view name, std::string_view value) {
    std::string w(name);
    w.append("=").append(value);
    cmd.append(" ").append(shell_quote(w));
  };
  std::vector<std::string> vars = {"PMI_RANK", "PMI_SIZE", "PMI_JOBID", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"};
  vars.insert(vars.end(), config.remote_env.begin(), config.remote_env.end());
  for (const auto& name : vars) word(name, env_value(out.env, name));
  word("ADI3_HOST_ID", config.rank_host[rank]);
  word("ADI3_PMI_PORT", pmi_port);
  cmd.append(" ADI3_JOB_SECRET_STDIN=1 ").append(shell_quote(config.program_path));
  for (std::size_t a = 1; a < config.argv.size(); ++a) cmd.append(" ").append(shell_quote(config.argv[a]));
  out.argv = config.launcher_prefix;
  out.argv.push_back(config.rank_host[rank]);
  out.argv.push_back(cmd);
  out.path = config.launcher_prefix.front();
  drop_env(out.env, "ADI3_JOB_SECRET");  // the launcher command does not need it
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  out.secret_in = UniqueFd(p[0]);
  UniqueFd w(p[1]);
  std::string line = env_value(config.env, "ADI3_JOB_SECRET");
  line += '\n';
  write_all(w.get(), line);  // 65 bytes: fits the pipe
  out.pmi_socket = false;
}

}  // namespace

RankCommand rank_command(const JobConfig& config, int rank, const std::string& pmi_port) {
  RankCommand out;
  out.env = config.env;
  set_env(out.env, "PMI_RANK", std::to_string(rank));
  set_env(out.env, "PMI_SIZE", std::to_string(config.nprocs));
  set_env(out.env, "PMI_JOBID", config.job_id);
  const auto ur = static_cast<std::size_t>(rank);
  const bool placed = ur < config.local_rank.size();
  set_env(out.env, "MPI_LOCALRANKID", std::to_string(placed ? config.local_rank[ur] : rank));
  set_env(out.env, "MPI_LOCALNRANKS", std::to_string(placed ? config.local_size[ur] : config.nprocs));
  out.path = config.program_path;
  out.argv = config.argv;
  const bool remote = ur < config.rank_host.size() && !config.rank_host[ur].empty();
  if (remote && !pmi_port.empty()) {
    over_ssh(config, ur, pmi_port, out);
  } else if (remote) {
    // Another host: LAUNCHER... HOST program args (hosts.hpp).
    set_env(out.env, "ADI3_HOST_ID", config.rank_host[ur]);
    out.argv = config.launcher_prefix;
    out.argv.push_back(config.rank_host[ur]);
    out.argv.push_back(config.program_path);
    out.argv.insert(out.argv.end(), config.argv.begin() + 1, config.argv.end());
    out.path = config.launcher_prefix.front();
  }
  return out;
}

}  // namespace adi3::mpiexec
