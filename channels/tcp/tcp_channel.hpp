// The TCP channel: ranks are processes connected pairwise by TCP sockets
// (over loopback by default). Deliberately simple: a second, independent
// process channel, so the plugin machinery and the core suites are shown to
// work with more than shm. Packets are framed on the byte stream; sends
// that the socket cannot take now wait in a per-peer buffer (Busy beyond a
// limit). A peer that closes its socket without a goodbye frame died.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <vector>

#include "adi3/config.hpp"
#include "channels/channel.hpp"
#include "channels/plugin.hpp"

namespace adi3::tcp {

std::span<const Knob> tcp_knobs();

struct TcpSettings {
  std::string address;        // IPv4 address to listen on and advertise
  std::size_t pending_limit;  // queued outgoing bytes per peer before Busy
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

 private:
  struct Peer {
    int fd = -1;
    std::vector<char> out;  // framed bytes not yet written, from out_head
    std::size_t out_head = 0;
    std::vector<char> in;  // bytes read, not yet delivered
    std::size_t in_len = 0;
    bool dead = false;
    bool said_goodbye = false;
    bool want_out = false;  // EPOLLOUT registered
    std::size_t pending() const { return out.size() - out_head; }
  };

  void connect_all(ChannelBootstrap& boot);
  void append_frame(std::vector<char>& buf, uint16_t kind, const void* hdr, std::size_t hdr_bytes,
                    const Payload& payload);
  bool flush(int peer);  // false: the connection broke
  int read_from(int peer, PacketSink& sink);
  int deliver_self(PacketSink& sink);
  void lost(int peer, const std::string& how);

  int rank_, size_;
  TcpSettings settings_;
  ChannelCaps caps_;
  std::vector<Peer> peers_;
  std::vector<char> self_;  // frames to this rank itself
  int epoll_fd_ = -1;
  int wake_fd_ = -1;                                   // eventfd: wake() ends a wait()
  std::vector<std::pair<int, std::string>> failures_;  // to report from poll()
  std::atomic<bool> local_work_{false};                // self_ or failures_ wait: wait() must not sleep
};

}  // namespace adi3::tcp
