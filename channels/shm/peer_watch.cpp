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
  std::vector<pollfd> fds;
  std::vector<int> ranks;
  for (std::size_t r = 0; r < peers_.size(); ++r) {
    Peer& p = peers_[r];
    if (!p.watched || p.dead) continue;
    if (p.pidfd >= 0) {
      fds.push_back({p.pidfd, POLLIN, 0});
      ranks.push_back(static_cast<int>(r));
    } else if (gone(p)) {
      p.dead = true;
    }
  }
  if (!fds.empty() && poll(fds.data(), fds.size(), 0) > 0) {
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) peers_[static_cast<std::size_t>(ranks[i])].dead = true;
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
