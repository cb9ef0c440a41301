// Command line of mpiexec.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace adi3::mpiexec {

struct Options {
  int nprocs = 0;
  std::optional<std::string> channel;                     // exported as ADI3_CHANNEL
  std::vector<std::pair<std::string, std::string>> genv;  // -genv K V, in order
  bool tag_output = false;                                // prefix lines with "[rank] "
  std::optional<double> timeout_seconds;                  // whole-job wall clock limit
  std::optional<std::string> bind_to;                     // --bind-to (validated); unset: core
  std::string map_by = "core";                            // --map-by
  bool report_bindings = false;                           // --report-bindings
  std::optional<std::string> hosts;                       // --hosts a:2,b:2
  std::optional<std::string> hostfile;                    // --hostfile F
  std::string launcher = "exec";                          // --launcher exec|ssh
  std::optional<std::string> launcher_exec;               // --launcher-exec "ip netns exec"
  std::optional<std::string> iface;                       // --iface: the PMI port's interface (--launcher ssh)
  bool help = false;
  std::vector<std::string> command;  // program and its arguments
};

// Bad command line; main prints the message and the usage text.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses argv[1..]. timeout_env is the value of the timeout variable (or
// nullptr), timeout_env_name its name for messages; --timeout on the
// command line wins over it.
Options parse_options(const std::vector<std::string>& args, const char* timeout_env,
                      const char* timeout_env_name = "ADI3_MPIEXEC_TIMEOUT");

// The timeout variable in effect: ADI3_MPIEXEC_TIMEOUT, else Hydra's
// MPIEXEC_TIMEOUT (so jobs and test suites written for MPICH get theirs).
// Returns its value (or nullptr) and sets *name.
const char* timeout_from_environment(const char** name);

std::string usage_text();

}  // namespace adi3::mpiexec
