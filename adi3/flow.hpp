// Flow control of eager messages: a receiver holds at most a budget of
// unexpected eager bytes (ADI3_UNEXPECTED_BYTES). The budget is shared out
// as credit, an equal share per sender: a sender spends credit on every
// eager message and, lacking it, sends by rendezvous instead (which parks
// only an envelope at the receiver and moves the data once a receive
// matches). The receiver gives the credit of a message back when the
// message is consumed (delivered to a receive, or withdrawn by a cancel),
// in batches of half a share, by a Credit packet.
//
// Order is untouched: the protocol is chosen when a send starts and every
// packet to a peer leaves through its one FIFO, so an eager message and a
// rendezvous one match in the order they were sent.
//
// The receiver does not trust its senders: one that exceeds its share (or
// returns more credit than it was given) is refused as failed.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "adi3/request.hpp"
#include "adi3/hot_inline.hpp"

namespace adi3 {

class EagerCredits {
 public:
  // What one eager message costs its receiver while unexpected: its bytes
  // plus the request slot that holds it.
  static constexpr std::size_t kMessageCost = (sizeof(Request) + 63) / 64 * 64;
  static constexpr std::size_t charge(std::size_t bytes) { return bytes + kMessageCost; }

  // budget 0: no limit (no accounting, no Credit packets).
  EagerCredits(std::size_t budget, int ranks);
  bool enabled() const { return share_ > 0; }
  // Until called, one thread uses the accounts: no locked instructions
  // (LayerPort::enable_threads calls it while no other thread runs).
  void enable_threads() { threaded_.store(true, std::memory_order_relaxed); }
  // Each sender's credit toward this rank (and ours toward each peer).
  int64_t share() const { return share_; }

  // ---- sender side ----
  // Spends charge(bytes) of the credit toward peer; false (nothing spent)
  // when too little is left: the message must go by rendezvous.
  ADI3_HOT_INLINE bool take(int peer, std::size_t bytes) {
    if (!enabled()) return true;
    const auto c = static_cast<int64_t>(charge(bytes));
    std::atomic<int64_t>& credit = peers_[static_cast<std::size_t>(peer)].credit;
    int64_t have = credit.load(std::memory_order_relaxed);
    if (!threaded()) {
      if (have < c) return false;
      credit.store(have - c, std::memory_order_relaxed);
      return true;
    }
    do {
      if (have < c) return false;
    } while (!credit.compare_exchange_weak(have, have - c, std::memory_order_relaxed));
    return true;
  }
  // Gives back what take() spent on a message that did not leave.
  void untake(int peer, std::size_t bytes) {
    if (enabled()) add(peers_[static_cast<std::size_t>(peer)].credit, static_cast<int64_t>(charge(bytes)));
  }
  // peer returned `amount`; false when that is more than it was given.
  bool returned(int peer, uint64_t amount);
  int64_t credit(int peer) const {
    return peers_[static_cast<std::size_t>(peer)].credit.load(std::memory_order_relaxed);
  }

  // ---- receiver side ----
  // An eager message of `bytes` from src arrived; false when src has more
  // unexpected bytes outstanding than its share (it ignored its credit).
  bool arrived(int src, std::size_t bytes) {
    if (!enabled()) return true;
    return add(peers_[static_cast<std::size_t>(src)].used, static_cast<int64_t>(charge(bytes))) <= share_;
  }
  // An eager message of src was consumed; returns the credit to send back
  // now (0: keep collecting).
  uint64_t consumed(int src, std::size_t bytes) {
    if (!enabled()) return 0;
    PerPeer& p = peers_[static_cast<std::size_t>(src)];
    if (add(p.owed, static_cast<int64_t>(charge(bytes))) < share_ / 2) [[likely]]
      return 0;
    return give_back(p);
  }

 private:
  struct alignas(64) PerPeer {
    std::atomic<int64_t> credit{0};  // ours toward the peer
    std::atomic<int64_t> used{0};    // the peer's: arrived and not yet returned
    std::atomic<int64_t> owed{0};    // the peer's: consumed and not yet returned
  };
  // What consumed() returns once half a share is owed to the peer.
  uint64_t give_back(PerPeer& p);
  bool threaded() const { return threaded_.load(std::memory_order_relaxed); }
  // v += d, returning the new value: a plain load and store single-threaded.
  int64_t add(std::atomic<int64_t>& v, int64_t d) {
    if (!threaded()) {
      const int64_t now = v.load(std::memory_order_relaxed) + d;
      v.store(now, std::memory_order_relaxed);
      return now;
    }
    return v.fetch_add(d, std::memory_order_relaxed) + d;
  }

  int64_t share_ = 0;
  std::atomic<bool> threaded_{false};
  std::unique_ptr<PerPeer[]> peers_;
};

}  // namespace adi3
