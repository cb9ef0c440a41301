#include "rank_process.hpp"

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace adi3::mpiexec {
namespace {

std::runtime_error sys_error(const std::string& what, int err) {
  return std::runtime_error(what + ": " + std::strerror(err));
}

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::array<UniqueFd, 2> make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    throw sys_error("pipe", errno);
  }
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings) {
    out.push_back(s.data());
  }
  out.push_back(nullptr);
  return out;
}

// Runs in the forked child: only async-signal-safe calls until exec.
[[noreturn]] void exec_child(const char* path, char* const* argv, char* const* envp, int stdin_fd, int out_fd,
                             int err_fd, int pmi_fd, int status_fd, const cpu_set_t* cpu_mask) {
  ::setpgid(0, 0);
  if (cpu_mask != nullptr) {
    // Best effort: the planner only hands out CPUs we may use.
    ::sched_setaffinity(0, sizeof(cpu_set_t), cpu_mask);
  }
  sigset_t none;
  sigemptyset(&none);
  // The launcher blocks the signals it reads through signalfd; the
  // mask survives exec, so a rank would otherwise ignore SIGTERM.
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::signal(SIGPIPE, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);

  bool ok = ::dup2(stdin_fd, STDIN_FILENO) >= 0 && ::dup2(out_fd, STDOUT_FILENO) >= 0 &&
            ::dup2(err_fd, STDERR_FILENO) >= 0 && (pmi_fd < 0 || ::fcntl(pmi_fd, F_SETFD, 0) == 0);
  if (ok) {
    ::execve(path, argv, envp);
  }
  int err = errno;
  [[maybe_unused]] auto n = ::write(status_fd, &err, sizeof err);
  ::_exit(127);
}

}  // namespace

std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    if (!is_executable_file(name)) {
      throw std::runtime_error(name + ": not an executable file");
    }
    return name;
  }
  const char* path_env = std::getenv("PATH");
  std::string path = path_env != nullptr ? path_env : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  for (;;) {
    std::size_t end = path.find(':', start);
    std::string dir = path.substr(start, end == std::string::npos ? std::string::npos : end - start);
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (is_executable_file(candidate)) {
      return candidate;
    }
    if (end == std::string::npos) {
      break;
    }
    start = end + 1;
  }
  throw std::runtime_error(name + ": command not found");
}

RankProcess spawn_rank(const std::string& path, const std::vector<std::string>& argv, std::vector<std::string> env,
                       int stdin_fd, const cpu_set_t* cpu_mask, bool pmi_socket) {
  UniqueFd pmi_parent, pmi_child;
  if (pmi_socket) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
      throw sys_error("socketpair", errno);
    }
    pmi_parent = UniqueFd(pair[0]);
    pmi_child = UniqueFd(pair[1]);
  }
  auto [out_r, out_w] = make_pipe();
  auto [err_r, err_w] = make_pipe();
  auto [status_r, status_w] = make_pipe();

  if (pmi_socket) env.push_back("PMI_FD=" + std::to_string(pmi_child.get()));
  std::vector<std::string> args = argv;
  std::string exec_path = path;
  auto c_argv = c_strings(args);
  auto c_env = c_strings(env);

  pid_t pid = ::fork();
  if (pid < 0) {
    throw sys_error("fork", errno);
  }
  if (pid == 0) {
    exec_child(exec_path.c_str(), c_argv.data(), c_env.data(), stdin_fd, out_w.get(), err_w.get(), pmi_child.get(),
               status_w.get(), cpu_mask);
  }
  // Also from the parent, so the group exists before we might signal it.
  ::setpgid(pid, pid);
  pmi_child.reset();
  out_w.reset();
  err_w.reset();
  status_w.reset();

  int child_errno = 0;
  ssize_t n;
  do {
    n = ::read(status_r.get(), &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  if (n > 0) {
    // exec failed: the child is about to _exit; collect it here.
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    throw sys_error("cannot execute " + path, child_errno);
  }

  // The job loop drains these without blocking when a rank fails.
  ::fcntl(out_r.get(), F_SETFL, O_NONBLOCK);
  ::fcntl(err_r.get(), F_SETFL, O_NONBLOCK);

  RankProcess rank;
  rank.pid = pid;
  rank.pmi = std::move(pmi_parent);
  rank.out = std::move(out_r);
  rank.err = std::move(err_r);
  return rank;
}

void signal_rank(pid_t pid, int sig) {
  if (pid <= 0) {
    return;
  }
  ::kill(-pid, sig);
  // The rank may have left its group (setsid); reach it directly too.
  ::kill(pid, sig);
}

std::string describe_signal(int sig) {
  const char* text = ::sigdescr_np(sig);
  return std::to_string(sig) + " (" + (text != nullptr ? text : "unknown signal") + ")";
}

}  // namespace adi3::mpiexec
