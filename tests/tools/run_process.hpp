// Runs a command to completion for the launcher tests, capturing its
// output, exit status and wall time.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace adi3::test {

struct ProcessResult {
  int exit_code = -1;   // -1 unless it exited normally
  int term_signal = 0;  // signal that killed it, else 0
  std::string out;
  std::string err;
  std::chrono::steady_clock::time_point ended;
  double seconds = 0;      // start to exit
  bool hit_limit = false;  // the test had to SIGKILL it
};

struct RunOptions {
  std::vector<std::pair<std::string, std::string>> env;                  // added to ours
  std::optional<std::pair<int, std::chrono::milliseconds>> send_signal;  // (signal, delay)
  std::chrono::seconds limit{30};
};

ProcessResult run_process(const std::vector<std::string>& argv, const RunOptions& options = {});

// Nanoseconds on the steady (CLOCK_MONOTONIC) clock that every process
// on the machine shares; lets a test compare a child's timestamps.
long long monotonic_ns(std::chrono::steady_clock::time_point t);

}  // namespace adi3::test
