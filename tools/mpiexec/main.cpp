// mpiexec: starts N ranks of a program on this node and serves them the
// PMI-1 "simple" protocol. See job.hpp for the failure policy.
#include "binding.hpp"
#include "environment.hpp"
#include "job.hpp"
#include "hosts.hpp"
#include "options.hpp"
#include "rank_process.hpp"
#include "shm_cleanup.hpp"
#include "signal_scope.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <cstdlib>
#include <exception>

#include <fcntl.h>
#include <unistd.h>

extern char** environ;

namespace {

// With 0, 1 or 2 closed, a pipe or socket could land there and be
// clobbered by a rank's dup2 before exec.
void ensure_standard_fds_open() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) < 0) {
      int opened = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
      if (opened >= 0 && opened != fd) {
        ::dup2(opened, fd);
        ::close(opened);
      }
    }
  }
}

int run(int argc, char** argv) {
  using namespace adi3::mpiexec;
  hold_job_signals();
  Options opts;
  try {
    const char* env_name = nullptr;
    const char* env_value = timeout_from_environment(&env_name);
    opts = parse_options(std::vector<std::string>(argv + 1, argv + argc), env_value, env_name);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "mpiexec: %s\n%s", e.what(), usage_text().c_str());
    return 2;
  }
  if (opts.help) {
    std::fputs(usage_text().c_str(), stdout);
    return 0;
  }

  JobConfig config;
  try {
    config.program_path = find_program(opts.command.front());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mpiexec: %s\n", e.what());
    return 127;
  }
  config.nprocs = opts.nprocs;
  config.argv = opts.command;
  config.env = inherited_environment(environ);
  for (const auto& [name, value] : opts.genv) {
    set_env(config.env, name, value);
  }
  if (opts.channel) {
    set_env(config.env, "ADI3_CHANNEL", *opts.channel);
  }
  config.job_id = make_job_id();
  set_env(config.env, "ADI3_JOB_SECRET", make_job_secret());
  config.tag_output = opts.tag_output;
  bool remote_hosts = false;
  if (opts.hosts || opts.hostfile) {
    try {
      std::vector<Host> hosts = opts.hosts ? parse_host_list(*opts.hosts) : read_hostfile(*opts.hostfile);
      Placement place = place_ranks(opts.nprocs, hosts);
      config.process_mapping = place.process_mapping;
      config.local_rank = place.local_rank;
      config.local_size = place.local_size;
      for (int h : place.host_of) {
        const std::string& name = hosts[static_cast<std::size_t>(h)].name;
        // Every rank names its host, so ranks of one host agree even when
        // they share the machine with others (network namespaces).
        config.rank_host.push_back(is_this_host(name) && hosts.size() == 1 ? std::string() : name);
        remote_hosts |= !is_this_host(name);
      }
      const bool ssh = opts.launcher == "ssh";
      if (remote_hosts && !ssh && !opts.launcher_exec) {
        throw UsageError("ranks on other hosts need --launcher ssh, or --launcher-exec CMD (e.g. \"ip netns exec\")");
      }
      if (ssh && remote_hosts) {
        // Ranks there reach the PMI server over TCP (job.hpp, pmi_port.hpp).
        config.pmi_over_tcp = true;
        config.pmi_iface = opts.iface.value_or("");
        for (const auto& e : config.env) {
          const std::string name = e.substr(0, e.find('='));
          if (name.rfind("ADI3_", 0) == 0 && name != "ADI3_JOB_SECRET") config.remote_env.push_back(name);
        }
        for (const auto& [name, value] : opts.genv) {
          if (name.rfind("ADI3_", 0) != 0) config.remote_env.push_back(name);
        }
      }
      std::stringstream words(opts.launcher_exec.value_or(ssh ? "ssh -x -o BatchMode=yes" : ""));
      for (std::string w; words >> w;) config.launcher_prefix.push_back(w);
      if (!config.launcher_prefix.empty())
        config.launcher_prefix.front() = find_program(config.launcher_prefix.front());
      // A rank on this machine under its own host name still goes through
      // the prefix; one on this host by name is started directly.
      for (std::size_t r = 0; r < config.rank_host.size(); ++r) {
        if (is_this_host(config.rank_host[r]) || config.launcher_prefix.empty()) config.rank_host[r].clear();
      }
    } catch (const UsageError& e) {
      std::fprintf(stderr, "mpiexec: %s\n", e.what());
      return 2;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "mpiexec: --launcher-exec: %s\n", e.what());
      return 2;
    }
  }
  try {
    BindRequest request;
    // Hosts are other machines: this machine's cores mean nothing there.
    if (remote_hosts) request.bind_to = BindLevel::None;
    if (opts.bind_to) request.bind_to = parse_bind_level(*opts.bind_to);
    request.map_by = parse_bind_level(opts.map_by).value_or(BindLevel::Core);
    BindPlan plan = plan_binding(opts.nprocs, request);
    if (plan.bound) config.cpu_masks = plan.masks;
    if (opts.report_bindings) {
      std::fprintf(stderr, "mpiexec: %s\n", plan.note.c_str());
      for (std::size_t r = 0; r < plan.reports.size(); ++r) {
        std::fprintf(stderr, "mpiexec: rank %zu bound to %s\n", r, plan.reports[r].c_str());
      }
    } else if (!plan.bound && opts.bind_to && *opts.bind_to != "none") {
      std::fprintf(stderr, "mpiexec: %s\n", plan.note.c_str());  // asked for binding, did not get it
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mpiexec: %s\n", e.what());
    return 2;
  }
  if (opts.timeout_seconds) {
    config.timeout = std::chrono::milliseconds(std::llround(*opts.timeout_seconds * 1000.0));
  }

  int status = 1;
  try {
    status = run_job(config);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mpiexec: %s\n", e.what());
  }
  // Even a clean job may leave segments if a rank skipped its cleanup.
  remove_job_shm_files(config.job_id);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  ensure_standard_fds_open();
  return run(argc, argv);
}
