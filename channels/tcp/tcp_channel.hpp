// The TCP channel: ranks on any hosts, one authenticated TCP connection per
// pair of ranks, set up on first use.
//
// Connections. Every rank listens (address.hpp) and publishes ip:port in
// the key-value space. The first send to a peer dials it (nonblocking); the
// handshake (wire.hpp) proves both sides hold the job's secret. When two
// ranks dial each other at once, the connection dialled by the lower rank
// wins: the acceptor answers 'R' to the other, which its dialler then
// drops, so exactly one connection carries the pair's packets and nothing
// was sent on the loser. Unauthenticated or malformed connections are
// closed with a logged line and never reach the core; a bad frame from an
// authenticated peer makes that peer failed (reported to the core).
//
// Data. Packets are frames (8-byte frame header, packet header, payload);
// a frame goes out with one writev when nothing is queued, and what the
// socket does not take waits in the peer's buffer (Busy beyond a limit).
// Arrivals are read in chunks into a staging buffer and delivered from
// there, except payloads the core can take in place (rendezvous data:
// PacketSink::place), which are read with readv straight into the
// receive buffer, over the Segment's iovec when it is noncontiguous
// (receive.cpp).
// One epoll set holds the listener, the handshakes, the connections and
// an eventfd for wake().
//
// Threads (MPI_THREAD_MULTIPLE): the core serializes poll() and serializes
// send() per destination, but send() and poll() run concurrently; each
// peer's connection state and outgoing buffer are under the peer's mutex,
// which both take.
//
// Peer death: a reset or end of stream without a goodbye, a handshake that
// does not finish within ADI3_TCP_CONNECT_TIMEOUT, or (keepalive and
// TCP_USER_TIMEOUT) a host that stops answering within ADI3_TCP_TIMEOUT.
#pragma once
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "adi3/config.hpp"
#include "channels/channel.hpp"
#include "channels/plugin.hpp"
#include "channels/tcp/wire.hpp"

namespace adi3::tcp {

std::span<const Knob> tcp_knobs();

struct TcpSettings {
  std::string interface;                // ADI3_TCP_IF
  std::string address;                  // ADI3_TCP_ADDRESS
  std::size_t pending_limit = 4 << 20;  // queued outgoing bytes per peer before Busy
  int connect_timeout_ms = 10000;       // a handshake must finish by then
  int timeout_ms = 5000;                // an unanswering peer is dead after this
  std::size_t max_read = 0;             // tests: bytes one read call takes at most (0: no bound)
  static TcpSettings from_env();
};

class TcpChannel final : public Channel {
 public:
  // Collective over all ranks of the bootstrap. Throws std::runtime_error.
  TcpChannel(ChannelBootstrap& boot, const TcpSettings& settings);
  ~TcpChannel() override;

  const char* name() const override { return "tcp"; }
  const ChannelCaps& caps() const override { return caps_; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  SendResult send(int dest, const void* hdr, std::size_t hdr_bytes, const Payload& payload) override;
  int poll(PacketSink& sink) override;
  void wait(std::chrono::microseconds timeout) override;
  void wake() override;
  void expect_payload(int peer) override;

  // For tests: this rank's advertised ip:port, and connections refused.
  const std::string& address() const { return self_address_; }
  std::size_t refused_connections() const { return refused_.load(std::memory_order_relaxed); }
  // Sends whose noncontiguous payload went straight from the user's
  // buffer as the Segment's iovec (no packing).
  std::size_t iov_sends() const { return iov_sends_.load(std::memory_order_relaxed); }
  // Pieces of a noncontiguous payload one sendmsg takes (beyond: packed).
  static constexpr std::size_t kMaxSendIov = 64;
  // Payload bytes read straight into place (PacketSink::place), and bytes
  // of such payloads that had already arrived in the staging buffer with
  // their header and were copied from there.
  std::size_t placed_bytes() const { return placed_bytes_.load(std::memory_order_relaxed); }
  std::size_t staged_bytes() const { return staged_bytes_.load(std::memory_order_relaxed); }
  // Pieces of a placed payload one readv fills.
  static constexpr std::size_t kMaxRecvIov = 64;
  // A header read on its own: a frame header and the core's 48-byte header.
  static constexpr std::size_t kProbeBytes = 8 + 48;
  // Packets after expect_payload (or a placed payload) whose headers are
  // read on their own before the channel goes back to chunked reads.
  static constexpr int kProbeFrames = 16;
  // With this many connections or fewer, poll() reads them directly (one
  // recv each, the one that finds a packet is its only system call) and
  // asks epoll only every kEpollEvery-th pass, after a sleep, and while
  // handshakes run or output waits (poll.cpp).
  static constexpr std::size_t kDirectPeers = 2;
  static constexpr unsigned kEpollEvery = 16;

 private:
  using Clock = std::chrono::steady_clock;
  enum class State : uint8_t { Idle, Dialing, AwaitPeer, Up, Dead };
  // A connection being authenticated (either side).
  struct Handshake {
    int fd = -1;
    bool dialer = false;
    int peer = -1;  // dialer: whom we dial; acceptor: who claims to call (after Hello)
    int step = 0;   // dialer: 0 connecting, 1 awaiting challenge, 2 awaiting verdict; acceptor: 0 hello, 1 proof
    Nonce mine{}, theirs{};
    char in[kChallengeBytes] = {};
    std::size_t in_len = 0;
    std::string remote;  // ip:port for messages
    Clock::time_point deadline;
  };
  struct Peer {
    std::mutex m;  // everything below but the read side
    State state = State::Idle;
    int fd = -1;  // the connection once Up (kept open until the destructor)
    std::unique_ptr<Handshake> dial;
    Clock::time_point await_deadline;
    std::vector<char> out;  // framed bytes not yet written, from out_head
    std::size_t out_head = 0;
    bool want_out = false;
    std::string address;  // ip:port it listens on
    // read side: poll() only
    std::vector<char> in;
    std::size_t in_len = 0;
    bool said_goodbye = false;
    // A payload being read into place: its packet's header, where it
    // goes (neither seg nor data: discarded), its size, bytes read so far.
    bool placing = false;
    std::vector<char> place_hdr;
    Placement where;
    std::size_t place_bytes = 0, place_done = 0;
    // >0: read headers on their own, a placeable payload may follow (set
    // by expect_payload from any thread, and after a placed payload).
    std::atomic<int> probe{0};
    std::size_t pending() const { return out.size() - out_head; }
  };

  // tcp_channel.cpp
  void append_frame(std::vector<char>& buf, uint16_t kind, const void* hdr, std::size_t hdr_bytes,
                    const Payload& payload);
  bool flush_locked(int peer, Peer& p);  // false: the connection broke
  // receive.cpp
  int read_from(int peer, PacketSink& sink);
  bool read_staged(int peer, int fd, Peer& p, PacketSink& sink, int* n);
  bool read_placed(int peer, int fd, Peer& p, PacketSink& sink, int* n);
  void decode_staged(int peer, Peer& p, PacketSink& sink, int* n);
  std::size_t probe_want(const Peer& p) const;
  bool read_failed(int peer, Peer& p, ssize_t r);
  int deliver_self(PacketSink& sink);
  void lost_locked(int peer, Peer& p, const std::string& how);
  void report_failures(PacketSink& sink);
  void watch(int fd, uint64_t tag, bool out);
  void rewatch(int fd, uint64_t tag, bool out);
  void want_out_locked(int peer, Peer& p, bool out);
  void came_up_locked(int peer, Peer& p);
  // poll.cpp
  bool direct_pass();
  int read_direct(PacketSink& sink);
  int poll_events(PacketSink& sink);
  void tune_connection(int fd);
  void settle();  // the destructor's: queued packets leave, handshakes finish

  // handshake.cpp
  void listen_and_publish(ChannelBootstrap& boot);
  void start_dial_locked(int peer, Peer& p);
  void on_dial_event(int peer, uint32_t events);
  void accept_new();
  void on_incoming_event(uint64_t id, uint32_t events);
  void admit(std::unique_ptr<Handshake> hs);
  void check_deadlines();
  void refuse_connection(Handshake& hs, const std::string& why);
  bool pump_out(int fd, const char* data, std::size_t n);
  int read_some(Handshake& hs, std::size_t want);

  int rank_, size_;
  TcpSettings settings_;
  ChannelCaps caps_;
  FrameLimits limits_;
  Key key_;
  std::string self_address_;
  std::vector<std::unique_ptr<Peer>> peers_;
  std::mutex self_mutex_;
  std::vector<char> self_;  // frames to this rank itself
  int epoll_fd_ = -1, wake_fd_ = -1, listen_fd_ = -1;
  std::unordered_map<uint64_t, std::unique_ptr<Handshake>> incoming_;  // poll() only
  uint64_t next_incoming_ = 1;
  std::atomic<int> handshakes_{0};  // dials and incoming: deadlines to check
  std::mutex failures_mutex_;
  std::vector<std::pair<int, std::string>> failures_;  // to report from poll()
  std::atomic<bool> failures_pending_{false};
  std::atomic<bool> local_work_{false};  // self_ or failures_ wait: wait() must not sleep
  std::atomic<std::size_t> refused_{0};
  std::atomic<std::size_t> iov_sends_{0};
  std::atomic<std::size_t> placed_bytes_{0}, staged_bytes_{0};
  // Direct reads (poll.cpp): the connections that came up (poll() only,
  // in that order), where the next direct pass starts, passes so far,
  // connections with EPOLLOUT armed, and "a sleep ended: ask epoll".
  std::vector<int> up_;
  std::size_t up_next_ = 0;
  unsigned passes_ = 0;
  std::atomic<int> out_armed_{0};
  std::atomic<bool> epoll_due_{false};
};

}  // namespace adi3::tcp
