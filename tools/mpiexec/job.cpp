#include "job.hpp"

#include "adi3/bootstrap/pmi_wire.hpp"
#include "environment.hpp"
#include "line_forwarder.hpp"
#include "pmi_port.hpp"
#include "pmi_server.hpp"
#include "rank_command.hpp"
#include "rank_process.hpp"
#include "signal_scope.hpp"
#include "unique_fd.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

#include <fcntl.h>
#include <poll.h>
#include <sys/signalfd.h>  // signalfd_siginfo
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace adi3::mpiexec {
namespace {

using Clock = std::chrono::steady_clock;

struct Rank {
  int index = 0;
  RankProcess proc;
  std::string pmi_inbuf;
  LineForwarder out_fwd;
  LineForwarder err_fwd;
  bool exited = false;
};

class Job {
 public:
  explicit Job(const JobConfig& config)
      : config_(config), server_(PmiServerConfig{config.nprocs, "adi3_kvs_" + config.job_id, 0, 0, 0}) {
    if (!config.process_mapping.empty()) server_.set_process_mapping(config.process_mapping);
    if (config.pmi_over_tcp) {
      std::vector<bool> expected(static_cast<std::size_t>(config.nprocs), false);
      for (std::size_t r = 0; r < config.rank_host.size() && r < expected.size(); ++r) {
        expected[r] = !config.rank_host[r].empty();
      }
      port_ = std::make_unique<PmiPort>(config.pmi_iface, env_value(config.env, "ADI3_JOB_SECRET"), expected);
    }
  }

  // Only reached with live ranks if the loop threw: never orphan them.
  ~Job() {
    for (auto& rank : ranks_) {
      if (!rank.exited) {
        signal_rank(rank.proc.pid, SIGKILL);
        ::waitpid(rank.proc.pid, nullptr, 0);
      }
    }
  }
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  int run() {
    start_ranks();
    if (config_.timeout) {
      timeout_at_ = Clock::now() + *config_.timeout;
    }
    while (!finished()) {
      poll_once();
      check_deadlines();
    }
    return exit_status_.value_or(0);
  }

 private:
  void start_ranks() {
    // Rank 0 may read piped input; a terminal stays with mpiexec,
    // because a rank outside the foreground group reading it would stop.
    UniqueFd devnull(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    bool share_stdin = ::isatty(STDIN_FILENO) == 0;
    ranks_.reserve(static_cast<std::size_t>(config_.nprocs));
    const std::string pmi_port = port_ ? port_->address() : std::string();
    for (int r = 0; r < config_.nprocs; ++r) {
      std::string prefix;
      if (config_.tag_output) {
        // Appended piecewise: GCC 12 -O3 warns (-Wrestrict, a false
        // positive) on "[" + std::to_string(r).
        prefix.append("[").append(std::to_string(r)).append("] ");
      }
      try {
        RankCommand cmd = rank_command(config_, r, pmi_port);
        int stdin_fd = cmd.secret_in.valid()     ? cmd.secret_in.get()
                       : (r == 0 && share_stdin) ? STDIN_FILENO
                                                 : devnull.get();
        const cpu_set_t* mask = config_.cpu_masks.empty() ? nullptr : &config_.cpu_masks[static_cast<std::size_t>(r)];
        RankProcess proc = spawn_rank(cmd.path, cmd.argv, std::move(cmd.env), stdin_fd, mask, cmd.pmi_socket);
        ranks_.push_back(Rank{r, std::move(proc), {}, LineForwarder(prefix), LineForwarder(prefix), false});
      } catch (const std::exception& e) {
        fail(127);
        stop_job("cannot start rank " + std::to_string(r) + ": " + e.what());
        return;
      }
    }
  }

  bool finished() {
    bool any_live = std::any_of(ranks_.begin(), ranks_.end(), [](const Rank& r) { return !r.exited; });
    if (any_live) {
      return false;
    }
    bool any_output = std::any_of(ranks_.begin(), ranks_.end(),
                                  [](const Rank& r) { return r.proc.out.valid() || r.proc.err.valid(); });
    if (!any_output) {
      return true;
    }
    if (!drain_until_) {
      drain_until_ = Clock::now() + config_.output_drain;
    }
    return false;
  }

  void poll_once() {
    std::vector<pollfd> fds;
    std::vector<std::pair<Rank*, int>> owners;  // kind: 0 pmi, 1 out, 2 err
    fds.push_back({signals_.fd(), POLLIN, 0});
    owners.emplace_back(nullptr, -1);
    for (auto& rank : ranks_) {
      const UniqueFd* ends[] = {&rank.proc.pmi, &rank.proc.out, &rank.proc.err};
      for (int kind = 0; kind < 3; ++kind) {
        if (ends[kind]->valid()) {
          fds.push_back({ends[kind]->get(), POLLIN, 0});
          owners.emplace_back(&rank, kind);
        }
      }
    }
    const std::size_t port_at = fds.size();
    if (port_) port_->add_poll_fds(fds);
    int n = ::poll(fds.data(), fds.size(), poll_timeout_ms());
    if (n < 0) {
      if (errno == EINTR) {
        return;
      }
      throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    }
    // Data first, deaths last: a rank's final PMI lines and output
    // must be seen before its exit is judged.
    for (std::size_t i = 1; i < port_at; ++i) {
      if (fds[i].revents == 0) {
        continue;
      }
      auto [rank, kind] = owners[i];
      const UniqueFd& end = kind == 0 ? rank->proc.pmi : kind == 1 ? rank->proc.out : rank->proc.err;
      if (end.get() != fds[i].fd) {
        continue;  // closed while handling an earlier descriptor
      }
      if (kind == 0) {
        read_pmi(*rank);
      } else {
        read_output(*rank, kind == 2);
      }
    }
    if (port_) {
      for (auto& [r, fd] : port_->handle(fds.data() + port_at, fds.size() - port_at, message)) {
        if (static_cast<std::size_t>(r) >= ranks_.size()) continue;  // not started
        Rank& rank = ranks_[static_cast<std::size_t>(r)];
        if (!rank.exited) rank.proc.pmi = std::move(fd);
      }
    }
    if (fds[0].revents != 0) {
      read_signals();
    }
  }

  int poll_timeout_ms() const {
    std::optional<Clock::time_point> next;
    for (const auto& deadline : {timeout_at_, kill_at_, drain_until_, auth_until_}) {
      if (deadline && (!next || *deadline < *next)) {
        next = deadline;
      }
    }
    if (!next) {
      return -1;
    }
    auto left = std::chrono::ceil<std::chrono::milliseconds>(*next - Clock::now()).count();
    return static_cast<int>(std::clamp<long long>(left, 0, 60'000));
  }

  void read_pmi(Rank& rank) {
    char buf[4096];
    for (;;) {
      ssize_t n = ::recv(rank.proc.pmi.get(), buf, sizeof buf, MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return;
      }
      if (n <= 0) {
        rank.proc.pmi.reset();  // the rank closed its end (or died)
        return;
      }
      rank.pmi_inbuf.append(buf, static_cast<std::size_t>(n));
      std::size_t newline;
      while (rank.proc.pmi.valid() && (newline = rank.pmi_inbuf.find('\n')) != std::string::npos) {
        std::string line = rank.pmi_inbuf.substr(0, newline);
        rank.pmi_inbuf.erase(0, newline + 1);
        handle_pmi_line(rank, line);
      }
      if (rank.pmi_inbuf.size() > pmi::kMaxLineLength) {
        protocol_failure(rank, "PMI line longer than " + std::to_string(pmi::kMaxLineLength) + " bytes");
        return;
      }
    }
  }

  void handle_pmi_line(Rank& rank, const std::string& line) {
    PmiOutcome outcome = server_.handle_line(rank.index, line);
    for (const auto& [to, text] : outcome.replies) {
      send_reply(ranks_[static_cast<std::size_t>(to)], text);
    }
    if (outcome.abort_code) {
      int status = *outcome.abort_code & 0xff;
      fail(status == 0 ? 1 : status);
      drain_output(rank);
      stop_job(who(rank) + " called abort with code " + std::to_string(*outcome.abort_code));
      rank.proc.pmi.reset();  // it sends nothing more that matters
    }
    if (outcome.error) {
      protocol_failure(rank, *outcome.error);
    }
    check_barrier_deadlock();
  }

  void send_reply(Rank& rank, std::string_view text) {
    // Blocking send: replies are small and a PMI client reads each
    // one before its next request, so the socket buffer never fills.
    while (rank.proc.pmi.valid() && !text.empty()) {
      ssize_t n = ::send(rank.proc.pmi.get(), text.data(), text.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n < 0) {
        rank.proc.pmi.reset();  // the rank is gone; its exit is judged separately
        return;
      }
      text.remove_prefix(static_cast<std::size_t>(n));
    }
  }

  void protocol_failure(Rank& rank, const std::string& what) {
    fail(1);
    stop_job(who(rank) + ": PMI protocol error: " + what);
    rank.proc.pmi.reset();
  }

  // Forwards one chunk; false when nothing is available (or at EOF).
  bool read_output(Rank& rank, bool is_err) {
    UniqueFd& fd = is_err ? rank.proc.err : rank.proc.out;
    LineForwarder& fwd = is_err ? rank.err_fwd : rank.out_fwd;
    int target = is_err ? STDERR_FILENO : STDOUT_FILENO;
    if (!fd.valid()) {
      return false;
    }
    char buf[65536];
    ssize_t n;
    do {
      n = ::read(fd.get(), buf, sizeof buf);
    } while (n < 0 && errno == EINTR);
    if (n > 0) {
      write_all(target, fwd.feed(std::string_view(buf, static_cast<std::size_t>(n))));
      return true;
    }
    if (n < 0 && errno == EAGAIN) {
      return false;
    }
    write_all(target, fwd.finish());
    fd.reset();
    return false;
  }

  // What a failing rank said last (e.g. its abort reason) should
  // appear before mpiexec's verdict about it.
  void drain_output(Rank& rank) {
    while (read_output(rank, true)) {
    }
    while (read_output(rank, false)) {
    }
  }

  void read_signals() {
    signalfd_siginfo info{};
    bool child_exited = false;
    while (::read(signals_.fd(), &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
      int sig = static_cast<int>(info.ssi_signo);
      if (sig == SIGCHLD) {
        child_exited = true;
      } else if (!stopping_) {
        fail(128 + sig);
        stop_job("received signal " + describe_signal(sig));
      } else {
        // Asked twice: do not wait out the grace period.
        kill_all(SIGKILL);
      }
    }
    if (child_exited) {
      reap();
    }
  }

  void reap() {
    for (auto& rank : ranks_) {
      if (rank.exited) {
        continue;
      }
      int status = 0;
      pid_t pid = ::waitpid(rank.proc.pid, &status, WNOHANG);
      if (pid == rank.proc.pid) {
        on_exit(rank, status);
      }
    }
  }

  void on_exit(Rank& rank, int status) {
    // Whatever it wrote to PMI before dying (abort, finalize) counts.
    if (rank.proc.pmi.valid()) {
      read_pmi(rank);
    }
    rank.exited = true;
    rank.proc.pmi.reset();
    drain_output(rank);
    bool finalized = server_.finalized(rank.index);
    if (stopping_) {
      return;  // we are killing it; its status says nothing new
    }
    if (WIFSIGNALED(status)) {
      int sig = WTERMSIG(status);
      fail(128 + sig);
      report_failure(rank, "killed by signal " + describe_signal(sig), finalized);
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
      fail(WEXITSTATUS(status));
      report_failure(rank, "exited with code " + std::to_string(WEXITSTATUS(status)), finalized);
    }
    ++exited_ranks_;
    check_barrier_deadlock();
  }

  void report_failure(const Rank& rank, const std::string& how, bool finalized) {
    if (finalized) {
      // The others are past their last collective; let them finish.
      message(who(rank) + " " + how + " after finalize");
    } else {
      stop_job(who(rank) + " " + how);
    }
  }

  // PMI-1 barriers span the whole job, so once any rank has exited,
  // ranks waiting in one would hang until the timeout.
  void check_barrier_deadlock() {
    if (!stopping_ && exited_ranks_ > 0 && server_.barrier_waiting() > 0) {
      fail(1);
      stop_job(std::to_string(exited_ranks_) +
               " rank(s) exited while others wait in a barrier that can no longer complete");
    }
  }

  void check_deadlines() {
    if (port_) auth_until_ = port_->expire(message);
    auto now = Clock::now();
    if (timeout_at_ && now >= *timeout_at_) {
      timeout_at_.reset();
      fail(kTimeoutExitStatus);
      if (!stopping_) {
        char seconds[32];
        std::snprintf(seconds, sizeof seconds, "%g", static_cast<double>(config_.timeout->count()) / 1000.0);
        stop_job(std::string("job exceeded its timeout of ") + seconds + " s");
      }
    }
    if (kill_at_ && now >= *kill_at_) {
      kill_at_.reset();
      kill_all(SIGKILL);
    }
    if (drain_until_ && now >= *drain_until_) {
      for (auto& rank : ranks_) {
        // Helpers of the ranks still hold the pipes; stop waiting.
        write_all(STDOUT_FILENO, rank.out_fwd.finish());
        write_all(STDERR_FILENO, rank.err_fwd.finish());
        rank.proc.out.reset();
        rank.proc.err.reset();
      }
    }
  }

  void stop_job(const std::string& reason) {
    if (stopping_) {
      return;
    }
    stopping_ = true;
    message(reason + "; stopping the job");
    kill_all(SIGTERM);
    kill_at_ = Clock::now() + config_.kill_grace;
  }

  void kill_all(int sig) {
    for (auto& rank : ranks_) {
      if (!rank.exited) {
        signal_rank(rank.proc.pid, sig);
      }
    }
  }

  // The first failure decides the exit status.
  void fail(int status) {
    if (!exit_status_) {
      exit_status_ = status;
    }
  }

  std::string who(const Rank& rank) const {
    return "rank " + std::to_string(rank.index) + " (pid " + std::to_string(rank.proc.pid) + ")";
  }

  static void message(const std::string& text) { write_all(STDERR_FILENO, "mpiexec: " + text + "\n"); }

  const JobConfig& config_;
  SignalScope signals_;
  PmiServer server_;
  std::vector<Rank> ranks_;
  bool stopping_ = false;
  int exited_ranks_ = 0;  // counted only while the job is not stopping
  std::optional<int> exit_status_;
  std::optional<Clock::time_point> timeout_at_;
  std::optional<Clock::time_point> kill_at_;
  std::optional<Clock::time_point> drain_until_;
  std::unique_ptr<PmiPort> port_;  // --launcher ssh: ranks on other hosts connect here
  std::optional<Clock::time_point> auth_until_;
};

}  // namespace

int run_job(const JobConfig& config) {
  Job job(config);
  return job.run();
}

}  // namespace adi3::mpiexec
