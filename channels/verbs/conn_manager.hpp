// Lazy connection of the verbs channel's reliable-connected queue pairs.
//
// At start each rank publishes only its datagram address (one key); the
// queue pair to a peer is made when the channel first needs it, and the
// two sides trade queue pair addresses in datagrams (UD on hardware):
//
//   active A                          passive B
//   create_qp(B); REQ(addr A)  --->   create_qp(A); connect(A); REP(addr B)
//   connect(B); RTU            <---
//   (may send now: B is RTR)   --->   ready on RTU, or on the first record
//                                     that arrives over the queue pair
//
// B sends nothing over the queue pair before it is ready, because until A
// has connected its side a request from B would reach a queue pair that
// is not ready to receive. Datagrams may be lost: REQ is resent until REP
// comes, REP until RTU comes (A answers a repeated REP with RTU again), with
// growing intervals, until the connect timeout fails the peer. When both
// sides ask at once, the lower rank stays active and the higher one answers
// as passive with the queue pair it already made, so each rank makes
// exactly one queue pair per peer whatever the timing. A connection to this
// rank itself needs no datagram.
//
// Used under the channel's lock. Every datagram is checked (magic, type,
// length, addressed to this rank) before use; the device vouches for the
// sender's rank.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "channels/verbs/verbs_device.hpp"

namespace adi3::verbs {

class ConnManager {
 public:
  struct Hooks {
    virtual ~Hooks() = default;
    // The queue pair to peer exists: post its receives. May throw
    // std::runtime_error (the peer then fails).
    virtual void qp_created(int peer) = 0;
    // The connection cannot be made (reason in why).
    virtual void connect_failed(int peer, std::string why) = 0;
  };

  ConnManager(VerbsDevice& dev, int rank, int size, std::chrono::milliseconds timeout, Hooks& hooks);

  bool ready(int peer) const { return state_[static_cast<std::size_t>(peer)] == State::Ready; }
  // Starts connecting to peer if nothing is under way (idempotent).
  void want(int peer);
  // Takes arrived datagrams; resends what went unanswered; fails what
  // timed out.
  void progress();
  // A record arrived from peer over its queue pair: peer has connected
  // its side (stands in for a lost or late RTU).
  void heard_from(int peer);
  // The peer failed: stop connecting to it.
  void drop(int peer);
  // Connections under way (their retransmissions need progress).
  bool pending() const { return !under_way_.empty(); }

 private:
  enum class State : uint8_t { None, Requested, Accepted, Ready, Failed };
  enum Type : uint8_t { kReq = 1, kRep = 2, kRtu = 3 };

  void send(int peer, Type t);
  void on_datagram(int from, const char* data, std::size_t len);
  bool create(int peer);
  bool connect(int peer, const std::string& addr);
  void start_timer(int peer);
  void done(int peer);
  void fail(int peer, std::string why);

  VerbsDevice& dev_;
  int rank_, size_;
  std::chrono::milliseconds timeout_;
  Hooks& hooks_;
  std::vector<State> state_;
  std::vector<std::string> local_;  // our queue pair's address per peer
  struct Timer {
    int peer;
    std::chrono::steady_clock::time_point next, deadline;
    std::chrono::milliseconds interval;
  };
  std::vector<Timer> under_way_;
};

}  // namespace adi3::verbs
