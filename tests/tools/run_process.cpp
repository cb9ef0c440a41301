#include "run_process.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace adi3::test {

long long monotonic_ns(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

ProcessResult run_process(const std::vector<std::string>& argv, const RunOptions& options) {
  using Clock = std::chrono::steady_clock;
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    env.emplace_back(*e);
  }
  for (const auto& [k, v] : options.env) {
    env.push_back(k + "=" + v);  // glibc getenv finds the first match, so put overrides first
    std::rotate(env.begin(), env.end() - 1, env.end());
  }
  std::vector<char*> c_argv;
  std::vector<char*> c_env;
  auto args = argv;
  for (auto& a : args) c_argv.push_back(a.data());
  c_argv.push_back(nullptr);
  for (auto& e : env) c_env.push_back(e.data());
  c_env.push_back(nullptr);

  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe failed");
  }
  auto start = Clock::now();
  pid_t pid = ::fork();
  if (pid < 0) {
    throw std::runtime_error("fork failed");
  }
  if (pid == 0) {
    int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    ::execve(c_argv[0], c_argv.data(), c_env.data());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);

  ProcessResult result;
  int fds[2] = {out_pipe[0], err_pipe[0]};
  std::string* sinks[2] = {&result.out, &result.err};
  bool signal_sent = !options.send_signal;
  int status = 0;
  bool reaped = false;
  while (!reaped || fds[0] >= 0 || fds[1] >= 0) {
    auto now = Clock::now();
    if (!signal_sent && now - start >= options.send_signal->second) {
      ::kill(pid, options.send_signal->first);
      signal_sent = true;
    }
    if (!result.hit_limit && now - start >= options.limit) {
      ::kill(pid, SIGKILL);
      result.hit_limit = true;
    }
    if (!reaped && ::waitpid(pid, &status, WNOHANG) == pid) {
      reaped = true;
      result.ended = Clock::now();
    }
    pollfd pfds[2];
    int count = 0;
    for (int fd : fds) {
      if (fd >= 0) pfds[count++] = {fd, POLLIN, 0};
    }
    if (count == 0) {
      ::usleep(1000);  // only waiting for the exit now
      continue;
    }
    if (::poll(pfds, static_cast<nfds_t>(count), 5) < 0 && errno != EINTR) {
      throw std::runtime_error("poll failed");
    }
    for (int i = 0; i < count; ++i) {
      if (pfds[i].revents == 0) continue;
      int which = pfds[i].fd == fds[0] ? 0 : 1;
      char buf[4096];
      ssize_t n = ::read(pfds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[which]->append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds[which]);
        fds[which] = -1;
      }
    }
  }
  result.seconds = std::chrono::duration<double>(result.ended - start).count();
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.term_signal = WTERMSIG(status);
  }
  return result;
}

}  // namespace adi3::test
