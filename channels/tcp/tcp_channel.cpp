#include "channels/tcp/tcp_channel.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace adi3::tcp {
namespace {

constexpr uint16_t kPacket = 0, kGoodbye = 1;
constexpr uint32_t kWakeTag = UINT32_MAX;
constexpr std::size_t kReadChunk = 256 * 1024;

struct FrameHeader {
  uint32_t payload_bytes;
  uint16_t hdr_bytes;
  uint16_t kind;
};

std::runtime_error sys_error(const std::string& what) {
  return std::runtime_error("tcp channel: " + what + ": " + std::strerror(errno));
}

std::string key_for(int rank) { return "adi3-tcp-" + std::to_string(rank); }

void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

void write_all_blocking(int fd, const void* p, std::size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n) {
    ssize_t w = ::send(fd, c, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw sys_error("send during start-up");
    c += w;
    n -= static_cast<std::size_t>(w);
  }
}

void read_all_blocking(int fd, void* p, std::size_t n) {
  char* c = static_cast<char*>(p);
  while (n) {
    ssize_t r = ::recv(fd, c, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) throw sys_error("recv during start-up");
    c += r;
    n -= static_cast<std::size_t>(r);
  }
}

}  // namespace

TcpChannel::TcpChannel(ChannelBootstrap& boot, const TcpSettings& settings)
    : rank_(boot.rank()), size_(boot.size()), settings_(settings), peers_(static_cast<std::size_t>(size_)) {
  caps_.native = kPointToPoint;
  caps_.max_header = 128;
  caps_.max_payload = 256 * 1024;
  caps_.eager_limit = 65536;
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epoll_fd_ < 0 || wake_fd_ < 0) throw sys_error("epoll/eventfd");
  epoll_event ev{EPOLLIN, {}};
  ev.data.u32 = kWakeTag;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
  connect_all(boot);
}

TcpChannel::~TcpChannel() {
  // A goodbye tells each peer that the coming end of stream is no death.
  for (int p = 0; p < size_; ++p) {
    Peer& peer = peers_[static_cast<std::size_t>(p)];
    if (peer.fd < 0) continue;
    if (!peer.dead) {
      timeval limit{1, 0};  // never hang in a destructor
      setsockopt(peer.fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
      fcntl(peer.fd, F_SETFL, fcntl(peer.fd, F_GETFL) & ~O_NONBLOCK);
      append_frame(peer.out, kGoodbye, nullptr, 0, Payload{});
      flush(p);
      shutdown(peer.fd, SHUT_WR);
    }
    close(peer.fd);
  }
  if (epoll_fd_ >= 0) close(epoll_fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
}

// Every rank listens; each connects to the ranks below it and accepts the
// ones above it. Connections complete in the listen backlog before the
// accept, so the order cannot deadlock.
void TcpChannel::connect_all(ChannelBootstrap& boot) {
  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (lfd < 0) throw sys_error("socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  if (inet_pton(AF_INET, settings_.address.c_str(), &addr.sin_addr) != 1) {
    close(lfd);
    throw std::runtime_error("tcp channel: ADI3_TCP_ADDRESS '" + settings_.address + "' is not an IPv4 address");
  }
  socklen_t len = sizeof addr;
  if (bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(lfd, size_) != 0 ||
      getsockname(lfd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    int e = errno;
    close(lfd);
    errno = e;
    throw sys_error("listen on " + settings_.address);
  }
  boot.put(key_for(rank_), settings_.address + ":" + std::to_string(ntohs(addr.sin_port)));
  boot.fence();

  auto adopt = [&](int peer, int fd) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    set_nonblocking(fd);
    peers_[static_cast<std::size_t>(peer)].fd = fd;
    epoll_event ev{EPOLLIN, {}};
    ev.data.u32 = static_cast<uint32_t>(peer);
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
  };
  try {
    for (int p = 0; p < rank_; ++p) {
      std::optional<std::string> where = boot.get(key_for(p));
      auto colon = where ? where->rfind(':') : std::string::npos;
      if (colon == std::string::npos)
        throw std::runtime_error("tcp channel: rank " + std::to_string(p) + " published no address");
      sockaddr_in to{};
      to.sin_family = AF_INET;
      to.sin_port = htons(static_cast<uint16_t>(std::stoi(where->substr(colon + 1))));
      inet_pton(AF_INET, where->substr(0, colon).c_str(), &to.sin_addr);
      int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
        if (fd >= 0) close(fd);
        throw sys_error("connect to rank " + std::to_string(p) + " at " + *where);
      }
      int32_t me = rank_;
      write_all_blocking(fd, &me, sizeof me);
      adopt(p, fd);
    }
    for (int k = rank_ + 1; k < size_; ++k) {
      int fd = accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) throw sys_error("accept");
      int32_t who = -1;
      read_all_blocking(fd, &who, sizeof who);
      if (who <= rank_ || who >= size_ || peers_[static_cast<std::size_t>(who)].fd >= 0) {
        close(fd);
        throw std::runtime_error("tcp channel: unexpected connection claiming rank " + std::to_string(who));
      }
      adopt(who, fd);
    }
  } catch (...) {
    close(lfd);
    throw;
  }
  close(lfd);
}

void TcpChannel::append_frame(std::vector<char>& buf, uint16_t kind, const void* hdr, std::size_t hdr_bytes,
                              const Payload& payload) {
  FrameHeader f{static_cast<uint32_t>(payload.bytes), static_cast<uint16_t>(hdr_bytes), kind};
  std::size_t at = buf.size();
  buf.resize(at + sizeof f + hdr_bytes + payload.bytes);
  std::memcpy(buf.data() + at, &f, sizeof f);
  if (hdr_bytes) std::memcpy(buf.data() + at + sizeof f, hdr, hdr_bytes);
  payload.copy_to(buf.data() + at + sizeof f + hdr_bytes);
}

SendResult TcpChannel::send(int dest, const void* hdr, std::size_t hdr_bytes, const Payload& payload) {
  if (dest == rank_) {
    append_frame(self_, kPacket, hdr, hdr_bytes, payload);
    local_work_.store(true, std::memory_order_release);
    return SendResult::Sent;
  }
  Peer& p = peers_[static_cast<std::size_t>(dest)];
  if (p.dead) return SendResult::Failed;
  if (p.pending() >= settings_.pending_limit && (!flush(dest) || p.pending() >= settings_.pending_limit)) {
    return p.dead ? SendResult::Failed : SendResult::Busy;
  }
  append_frame(p.out, kPacket, hdr, hdr_bytes, payload);
  flush(dest);
  return SendResult::Sent;  // queued even if the connection just broke: poll() reports that
}

bool TcpChannel::flush(int peer) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  while (p.pending()) {
    ssize_t w = ::send(p.fd, p.out.data() + p.out_head, p.pending(), MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (w < 0) {
      lost(peer, std::string("its connection broke (") + std::strerror(errno) + ")");
      return false;
    }
    p.out_head += static_cast<std::size_t>(w);
  }
  if (!p.pending()) {
    p.out.clear();
    p.out_head = 0;
  } else if (p.out_head > p.out.size() / 2) {
    p.out.erase(p.out.begin(), p.out.begin() + static_cast<std::ptrdiff_t>(p.out_head));
    p.out_head = 0;
  }
  // Ask for EPOLLOUT only while bytes wait, so wait() wakes when they can go.
  if (p.want_out != (p.pending() > 0) && !p.dead) {
    p.want_out = p.pending() > 0;
    epoll_event ev{EPOLLIN | (p.want_out ? uint32_t{EPOLLOUT} : 0u), {}};
    ev.data.u32 = static_cast<uint32_t>(peer);
    epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, p.fd, &ev);
  }
  return true;
}

int TcpChannel::read_from(int peer, PacketSink& sink) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  if (p.in.size() - p.in_len < kReadChunk) p.in.resize(p.in_len + kReadChunk);
  ssize_t r = ::recv(p.fd, p.in.data() + p.in_len, p.in.size() - p.in_len, 0);
  if (r == 0) {
    lost(peer, p.said_goodbye ? "" : "it closed its connection without a goodbye: its process is gone");
    return 0;
  }
  if (r < 0) {
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      lost(peer, std::string("its connection broke (") + std::strerror(errno) + ")");
    }
    return 0;
  }
  p.in_len += static_cast<std::size_t>(r);
  int n = 0;
  std::size_t at = 0;
  while (p.in_len - at >= sizeof(FrameHeader)) {
    FrameHeader f;
    std::memcpy(&f, p.in.data() + at, sizeof f);
    std::size_t whole = sizeof f + f.hdr_bytes + f.payload_bytes;
    if (p.in_len - at < whole) {
      if (p.in.size() < whole) p.in.resize(whole + kReadChunk);  // room for the rest of a big frame
      break;
    }
    const char* body = p.in.data() + at + sizeof f;
    if (f.kind == kGoodbye) {
      p.said_goodbye = true;
    } else {
      sink.on_packet(peer, body, f.hdr_bytes, body + f.hdr_bytes, f.payload_bytes);
      ++n;
    }
    at += whole;
  }
  if (at) {
    std::memmove(p.in.data(), p.in.data() + at, p.in_len - at);
    p.in_len -= at;
  }
  return n;
}

int TcpChannel::deliver_self(PacketSink& sink) {
  // Handlers may send to this rank again: deliver what is here now.
  std::vector<char> now;
  now.swap(self_);
  int n = 0;
  for (std::size_t at = 0; at < now.size();) {
    FrameHeader f;
    std::memcpy(&f, now.data() + at, sizeof f);
    const char* body = now.data() + at + sizeof f;
    sink.on_packet(rank_, body, f.hdr_bytes, body + f.hdr_bytes, f.payload_bytes);
    at += sizeof f + f.hdr_bytes + f.payload_bytes;
    ++n;
  }
  return n;
}

void TcpChannel::lost(int peer, const std::string& how) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  if (p.dead) return;
  p.dead = true;
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, p.fd, nullptr);
  if (!how.empty()) {
    failures_.emplace_back(peer, "rank " + std::to_string(peer) + ": " + how);
    local_work_.store(true, std::memory_order_release);
  }
}

int TcpChannel::poll(PacketSink& sink) {
  local_work_.store(false, std::memory_order_relaxed);
  int n = self_.empty() ? 0 : deliver_self(sink);
  epoll_event ev[16];
  int ready = epoll_wait(epoll_fd_, ev, 16, 0);
  for (int i = 0; i < ready; ++i) {
    uint32_t tag = ev[i].data.u32;
    if (tag == kWakeTag) {
      uint64_t drain;
      while (read(wake_fd_, &drain, sizeof drain) > 0) {
      }
      continue;
    }
    int peer = static_cast<int>(tag);
    if (ev[i].events & EPOLLOUT) flush(peer);
    if (ev[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) n += read_from(peer, sink);
  }
  if (!failures_.empty()) {
    auto now = std::move(failures_);
    failures_.clear();
    for (auto& [peer, why] : now) sink.on_peer_failed(peer, why.c_str());
  }
  return n;
}

void TcpChannel::wait(std::chrono::microseconds timeout) {
  if (local_work_.load(std::memory_order_acquire)) return;
  epoll_event ev[1];
  timespec ts{static_cast<time_t>(timeout.count() / 1000000), static_cast<long>(timeout.count() % 1000000) * 1000};
  // Only sleeps: the events stay pending (level-triggered) for poll().
  epoll_pwait2(epoll_fd_, ev, 1, &ts, nullptr);
}

void TcpChannel::wake() {
  uint64_t one = 1;
  ssize_t w = write(wake_fd_, &one, sizeof one);
  (void)w;
}

}  // namespace adi3::tcp
