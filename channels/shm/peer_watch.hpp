// Notices peer processes that died. A pidfd per peer (taken while the peer
// is certainly alive, so a recycled pid cannot fool us) becomes readable
// when that process exits, even before its parent reaps it; one poll()
// checks them all. Without pidfds (old kernels) kill(pid, 0) is used.
#pragma once
#include <poll.h>
#include <sys/types.h>

#include <vector>

namespace adi3::shm {

class PeerWatch {
 public:
  PeerWatch() = default;
  ~PeerWatch();
  PeerWatch(const PeerWatch&) = delete;
  PeerWatch& operator=(const PeerWatch&) = delete;

  // Starts watching `rank`, running as `pid`.
  void watch(int rank, pid_t pid);
  // Checks every watched peer not yet found dead; calls on_dead(rank, pid)
  // for each newly dead one. One system call.
  template <class F>
  void check(F&& on_dead) {
    collect();
    for (int r : newly_dead_) on_dead(r, peers_[static_cast<std::size_t>(r)].pid);
  }
  // Checks one peer now; true if it is dead (reported by check() too).
  bool check_one(int rank);
  bool dead(int rank) const {
    return rank >= 0 && static_cast<std::size_t>(rank) < peers_.size() && peers_[static_cast<std::size_t>(rank)].dead;
  }

 private:
  struct Peer {
    pid_t pid = 0;
    int pidfd = -1;
    bool watched = false;
    bool dead = false;
    bool reported = false;
  };
  void collect();
  static bool gone(const Peer& p);

  std::vector<Peer> peers_;
  // Sized by watch(): collect() runs in progress (and in the agent thread),
  // where an allocation that fails would have nobody to report to.
  std::vector<int> newly_dead_;
  std::vector<pollfd> fds_;
  std::vector<int> fd_ranks_;
};

}  // namespace adi3::shm
