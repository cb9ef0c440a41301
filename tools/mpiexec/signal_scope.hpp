// Signals for the job loop, read through a signalfd: no handler, hence
// no global state, and no race between a signal and poll().
#pragma once

#include "unique_fd.hpp"

#include <csignal>

namespace adi3::mpiexec {

// Blocks the signals SignalScope watches, for the rest of the process. main
// calls it first: an interrupt that arrives while mpiexec is still starting
// (loading hwloc, parsing options) then stays pending until the job's loop
// reads it and stops the job as usual, instead of killing mpiexec with the
// default action. Its children reset the mask before exec.
void hold_job_signals();

// While alive, blocks SIGCHLD, SIGINT, SIGTERM and SIGHUP in the calling
// thread and delivers them on fd(); SIGPIPE is blocked too, so a closed
// stdout yields EPIPE instead of killing the launcher. Children must
// reset the mask before exec (spawn_rank does).
class SignalScope {
 public:
  SignalScope();
  ~SignalScope();
  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;

  int fd() const { return fd_.get(); }

 private:
  sigset_t old_{};
  UniqueFd fd_;
};

}  // namespace adi3::mpiexec
