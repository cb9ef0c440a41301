// In-process harness for the TCP channel: N TcpChannels (one per "rank")
// in one process over real sockets, sharing a local key-value space, plus
// a raw client that speaks (or abuses) the handshake.
#pragma once
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <barrier>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "channels/tcp/tcp_channel.hpp"
#include "channels/tcp/wire.hpp"
#include "tests/tcp/dial.hpp"

namespace adi3::tcp::testing {

inline const std::string kSecret = "0123456789abcdef0123456789abcdef";
inline const std::string kJob = "tcp-test-job";

struct SharedSpace {
  explicit SharedSpace(int n) : fence(n) {}
  std::mutex m;
  std::map<std::string, std::string> kvs;
  std::barrier<> fence;
};

class LocalBoot final : public ChannelBootstrap {
 public:
  LocalBoot(SharedSpace& s, int rank, int size) : s_(s), rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const std::string& job_id() const override { return kJob; }
  void put(std::string_view k, std::string_view v) override {
    std::lock_guard g(s_.m);
    s_.kvs[std::string(k)] = std::string(v);
  }
  void fence() override { s_.fence.arrive_and_wait(); }
  std::optional<std::string> get(std::string_view k) override {
    std::lock_guard g(s_.m);
    auto it = s_.kvs.find(std::string(k));
    if (it == s_.kvs.end()) return std::nullopt;
    return it->second;
  }
  void barrier() override { s_.fence.arrive_and_wait(); }
  std::size_t max_value_length() const override { return 1024; }
  std::optional<std::string> job_secret() const override { return kSecret; }

 private:
  SharedSpace& s_;
  int rank_, size_;
};

// Records what a channel delivers.
struct Sink final : PacketSink {
  struct Packet {
    int src;
    std::string hdr, payload;
  };
  std::vector<Packet> got;
  std::vector<std::pair<int, std::string>> failed;
  void on_packet(int src, const void* h, std::size_t hb, const void* p, std::size_t pb) override {
    got.push_back({src, std::string(static_cast<const char*>(h), hb), std::string(static_cast<const char*>(p), pb)});
  }
  void on_peer_failed(int peer, const char* why) override { failed.emplace_back(peer, why); }
};

// Channels for ranks [0, made) of a job of `size` ranks (ranks beyond
// `made` exist only in the key-value space, for impostors to claim).
struct Job {
  Job(int made, int size, TcpSettings settings = {}) : space(size), sinks(static_cast<std::size_t>(made)) {
    settings.address = "127.0.0.1";
    std::vector<std::thread> threads;
    channels.resize(static_cast<std::size_t>(made));
    for (int r = 0; r < size; ++r) {
      threads.emplace_back([&, r] {
        LocalBoot boot(space, r, size);
        if (r < made) {
          channels[static_cast<std::size_t>(r)] = std::make_unique<TcpChannel>(boot, settings);
        } else {  // a rank slot for the test to impersonate: published, never served
          boot.put("adi3-tcp-" + std::to_string(r), "127.0.0.1:9");
          boot.fence();
        }
      });
    }
    for (auto& t : threads) t.join();
  }
  TcpChannel& ch(int r) { return *channels[static_cast<std::size_t>(r)]; }
  Sink& sink(int r) { return sinks[static_cast<std::size_t>(r)]; }
  void poll_all() {
    for (std::size_t r = 0; r < channels.size(); ++r) channels[r]->poll(sinks[r]);
  }
  // Polls every channel until cond() or the deadline; returns cond().
  bool until(const std::function<bool()>& cond, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    auto end = std::chrono::steady_clock::now() + limit;
    while (!cond()) {
      if (std::chrono::steady_clock::now() > end) return false;
      poll_all();
    }
    return true;
  }
  SharedSpace space;
  std::vector<std::unique_ptr<TcpChannel>> channels;
  std::vector<Sink> sinks;
};

inline bool write_all(int fd, const void* p, std::size_t n) {
  return ::send(fd, p, n, MSG_NOSIGNAL) == static_cast<ssize_t>(n);
}

// Reads n bytes unless the peer closes or the poller (run meanwhile on
// another thread) makes no answer; returns how many came.
inline std::size_t read_n(int fd, void* p, std::size_t n) {
  std::size_t got = 0;
  while (got < n) {
    ssize_t r = recv(fd, static_cast<char*>(p) + got, n - got, 0);
    if (r <= 0) break;
    got += static_cast<std::size_t>(r);
  }
  return got;
}

}  // namespace adi3::tcp::testing
