#include "signal_scope.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <string>

#include <pthread.h>
#include <sys/signalfd.h>

namespace adi3::mpiexec {

namespace {

sigset_t watched_signals() {
  sigset_t watched;
  sigemptyset(&watched);
  for (int sig : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) {
    sigaddset(&watched, sig);
  }
  return watched;
}

}  // namespace

void hold_job_signals() {
  sigset_t blocked = watched_signals();
  sigaddset(&blocked, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &blocked, nullptr);
}

SignalScope::SignalScope() {
  sigset_t watched = watched_signals();
  sigset_t blocked = watched;
  sigaddset(&blocked, SIGPIPE);
  if (::pthread_sigmask(SIG_BLOCK, &blocked, &old_) != 0) {
    throw std::runtime_error("cannot block signals");
  }
  fd_.reset(::signalfd(-1, &watched, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!fd_) {
    int err = errno;
    ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
    throw std::runtime_error(std::string("signalfd: ") + std::strerror(err));
  }
}

SignalScope::~SignalScope() {
  // A SIGPIPE left pending by a write to a closed stdout would kill us
  // the moment it is unblocked; it has already been handled as EPIPE.
  sigset_t pipe_only;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  const timespec zero{};
  while (::sigtimedwait(&pipe_only, nullptr, &zero) == SIGPIPE) {
  }
  ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
}

}  // namespace adi3::mpiexec
