#include "channels/shm/peer_watch.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace adi3::shm {

PeerWatch::~PeerWatch() {
  for (auto& p : peers_) {
    if (p.pidfd >= 0) close(p.pidfd);
  }
}

void PeerWatch::watch(int rank, pid_t pid) {
  if (rank < 0) return;
  if (peers_.size() <= static_cast<std::size_t>(rank)) peers_.resize(static_cast<std::size_t>(rank) + 1);
  newly_dead_.reserve(peers_.size());
  fds_.reserve(peers_.size());
  fd_ranks_.reserve(peers_.size());
  Peer& p = peers_[static_cast<std::size_t>(rank)];
  p.pid = pid;
  p.watched = true;
#ifdef SYS_pidfd_open
  // pidfds are close-on-exec from birth.
  p.pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#endif
}

bool PeerWatch::gone(const Peer& p) {
  if (p.pidfd >= 0) {
    pollfd f{p.pidfd, POLLIN, 0};
    return poll(&f, 1, 0) == 1 && (f.revents & (POLLIN | POLLHUP | POLLERR));
  }
  return kill(p.pid, 0) != 0 && errno == ESRCH;
}

void PeerWatch::collect() {
  newly_dead_.clear();
  fds_.clear();
  fd_ranks_.clear();
  for (std::size_t r = 0; r < peers_.size(); ++r) {
    Peer& p = peers_[r];
    if (!p.watched || p.dead) continue;
    if (p.pidfd >= 0) {
      fds_.push_back({p.pidfd, POLLIN, 0});  // within the capacity watch() reserved
      fd_ranks_.push_back(static_cast<int>(r));
    } else if (gone(p)) {
      p.dead = true;
    }
  }
  if (!fds_.empty() && poll(fds_.data(), fds_.size(), 0) > 0) {
    for (std::size_t i = 0; i < fds_.size(); ++i) {
      if (fds_[i].revents & (POLLIN | POLLHUP | POLLERR)) peers_[static_cast<std::size_t>(fd_ranks_[i])].dead = true;
    }
  }
  for (std::size_t r = 0; r < peers_.size(); ++r) {
    Peer& p = peers_[r];
    if (p.dead && !p.reported) {
      p.reported = true;
      newly_dead_.push_back(static_cast<int>(r));
    }
  }
}

bool PeerWatch::check_one(int rank) {
  if (rank < 0 || static_cast<std::size_t>(rank) >= peers_.size()) return false;
  Peer& p = peers_[static_cast<std::size_t>(rank)];
  if (p.watched && !p.dead && gone(p)) p.dead = true;
  return p.dead;
}

}  // namespace adi3::shm
