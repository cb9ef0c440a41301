// The TCP channel's connections: listening, dialling a peer on first use,
// accepting, and the authentication handshake of wire.hpp, as nonblocking
// state machines driven by poll(). Nothing an unauthenticated connection
// sends reaches the core; each refusal is logged and closes only that
// connection.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "channels/tcp/address.hpp"
#include "channels/tcp/tags.hpp"
#include "channels/tcp/tcp_channel.hpp"

namespace adi3::tcp {
namespace {

// Unauthenticated connections held at once; more are closed at accept.
constexpr std::size_t kMaxIncoming = 64;
// Refusals logged per channel (an attacker must not fill the disk).
constexpr std::size_t kMaxLogged = 50;

std::string key_for(int rank) { return "adi3-tcp-" + std::to_string(rank); }
constexpr const char* kSecretKey = "adi3-tcp-secret";

std::string hex(const Nonce& n) {
  static constexpr char d[] = "0123456789abcdef";
  std::string s;
  for (unsigned char c : n) {
    s += d[c >> 4];
    s += d[c & 15];
  }
  return s;
}

bool parse_address(const std::string& text, sockaddr_in* out) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon + 1 >= text.size() || text.size() - colon > 6) return false;
  int port = 0;
  for (std::size_t i = colon + 1; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    port = port * 10 + (text[i] - '0');
  }
  if (port <= 0 || port > 65535) return false;
  *out = sockaddr_in{};
  out->sin_family = AF_INET;
  out->sin_port = htons(static_cast<uint16_t>(port));
  return inet_pton(AF_INET, text.substr(0, colon).c_str(), &out->sin_addr) == 1;
}

std::string remote_of(const sockaddr_in& a) {
  char ip[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &a.sin_addr, ip, sizeof ip);
  return std::string(ip) + ":" + std::to_string(ntohs(a.sin_port));
}

}  // namespace

void TcpChannel::listen_and_publish(ChannelBootstrap& boot) {
  ListenPlan plan = plan_listen(settings_.interface, settings_.address, boot.host_count() > 1);
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw std::runtime_error(std::string("tcp channel: socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  inet_pton(AF_INET, plan.bind_ip.c_str(), &addr.sin_addr);
  socklen_t len = sizeof addr;
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(listen_fd_, 128) != 0 ||
      getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    throw std::runtime_error("tcp channel: cannot listen on " + plan.bind_ip + ": " + std::strerror(errno));
  }
  self_address_ = plan.advertise_ip + ":" + std::to_string(ntohs(addr.sin_port));
  boot.put(key_for(rank_), self_address_);
  // The secret comes from the launcher (our mpiexec); under other
  // launchers rank 0 makes one and hands it over the key-value space,
  // which only the job's processes can read.
  std::optional<std::string> secret = boot.job_secret();
  if (!secret && rank_ == 0) {
    secret = hex(random_nonce());
    boot.put(kSecretKey, *secret);
  }
  boot.fence();
  if (!secret) secret = boot.get(kSecretKey);
  if (!secret || secret->empty()) throw std::runtime_error("tcp channel: no job secret (rank 0 published none)");
  key_ = Key{*secret, boot.job_id()};
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    std::optional<std::string> where = boot.get(key_for(r));
    sockaddr_in check{};
    if (!where || !parse_address(*where, &check)) {
      throw std::runtime_error("tcp channel: rank " + std::to_string(r) + " published no usable address (" +
                               where.value_or("nothing") + ")");
    }
    peers_[static_cast<std::size_t>(r)]->address = *where;
  }
  watch(listen_fd_, tag(Tag::Listen, 0), false);
}

void TcpChannel::start_dial_locked(int peer, Peer& p) {
  sockaddr_in to{};
  parse_address(p.address, &to);  // checked at start-up
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0 || (connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0 && errno != EINPROGRESS)) {
    std::string why = std::string("cannot connect to it at ") + p.address + " (" + std::strerror(errno) + ")";
    if (fd >= 0) close(fd);
    lost_locked(peer, p, why);
    return;
  }
  auto hs = std::make_unique<Handshake>();
  hs->fd = fd;
  hs->dialer = true;
  hs->peer = peer;
  hs->mine = random_nonce();
  hs->remote = p.address;
  hs->deadline = Clock::now() + std::chrono::milliseconds(settings_.connect_timeout_ms);
  p.dial = std::move(hs);
  p.state = State::Dialing;
  handshakes_.fetch_add(1, std::memory_order_relaxed);
  watch(fd, tag(Tag::Dial, static_cast<uint64_t>(peer)), true);  // writable: connect finished
}

bool TcpChannel::pump_out(int fd, const char* data, std::size_t n) {
  // Handshake messages are tiny and go out on an idle socket: they fit.
  while (n) {
    ssize_t w = ::send(fd, data, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    data += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

int TcpChannel::read_some(Handshake& hs, std::size_t want) {
  while (hs.in_len < want) {
    ssize_t r = recv(hs.fd, hs.in + hs.in_len, want - hs.in_len, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    if (r <= 0) return -1;
    hs.in_len += static_cast<std::size_t>(r);
  }
  return 1;
}

void TcpChannel::on_dial_event(int peer, uint32_t events) {
  Peer& p = *peers_[static_cast<std::size_t>(peer)];
  std::lock_guard g(p.m);
  Handshake* hs = p.dial.get();
  if (!hs) return;  // abandoned meanwhile
  auto fail = [&](const std::string& why) { lost_locked(peer, p, why); };
  if (hs->step == 0) {
    if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) return;
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(hs->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err) return fail("cannot connect to it at " + hs->remote + " (" + std::strerror(err) + ")");
    char hello[kHelloBytes];
    encode_hello(hello, Hello{rank_, peer, hs->mine});
    if (!pump_out(hs->fd, hello, sizeof hello)) return fail("its connection broke during the handshake");
    hs->step = 1;
    rewatch(hs->fd, tag(Tag::Dial, static_cast<uint64_t>(peer)), false);
    return;
  }
  if (hs->step == 1) {
    int got = read_some(*hs, kChallengeBytes);
    if (got < 0) return fail("it closed the connection during the handshake (" + hs->remote + ")");
    if (got == 0) return;
    Challenge c;
    std::string why;
    if (!decode_challenge(hs->in, size_, &c, &why)) return fail(hs->remote + " answered with " + why);
    if (c.rank != peer) return fail(hs->remote + " answered as rank " + std::to_string(c.rank));
    if (!mac_equal(handshake_mac(key_, Role::Server, rank_, peer, hs->mine, c.nonce), c.mac.data())) {
      return fail(hs->remote + " did not prove it holds this job's secret (another job, or an impostor)");
    }
    Mac proof = handshake_mac(key_, Role::Client, rank_, peer, hs->mine, c.nonce);
    if (!pump_out(hs->fd, reinterpret_cast<const char*>(proof.data()), proof.size())) {
      return fail("its connection broke during the handshake");
    }
    hs->step = 2;
    hs->in_len = 0;
    return;
  }
  int got = read_some(*hs, 1);  // exactly the verdict: frames may follow it
  if (got < 0) return fail("it closed the connection during the handshake (" + hs->remote + ")");
  if (got == 0) return;
  if (hs->in[0] == kAccept) {
    p.fd = hs->fd;
    p.dial.reset();
    handshakes_.fetch_sub(1, std::memory_order_relaxed);
    came_up_locked(peer, p);
  } else if (hs->in[0] == kReject) {
    // It dials us too and its connection wins (it has the lower rank).
    epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, hs->fd, nullptr);
    close(hs->fd);
    p.dial.reset();
    p.state = State::AwaitPeer;
    p.await_deadline = Clock::now() + std::chrono::milliseconds(settings_.connect_timeout_ms);
  } else {
    fail(hs->remote + " sent an unknown handshake verdict");
  }
}

void TcpChannel::accept_new() {
  for (;;) {
    sockaddr_in from{};
    socklen_t len = sizeof from;
    int fd = accept4(listen_fd_, reinterpret_cast<sockaddr*>(&from), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN, or a connection that went away before we took it
    auto hs = std::make_unique<Handshake>();
    hs->fd = fd;
    hs->remote = remote_of(from);
    if (incoming_.size() >= kMaxIncoming) {
      refuse_connection(*hs, "too many connections are being authenticated at once");
      continue;
    }
    hs->mine = random_nonce();
    hs->deadline = Clock::now() + std::chrono::milliseconds(settings_.connect_timeout_ms);
    uint64_t id = next_incoming_++;
    watch(fd, tag(Tag::Incoming, id), false);
    incoming_.emplace(id, std::move(hs));
    handshakes_.fetch_add(1, std::memory_order_relaxed);
  }
}

void TcpChannel::refuse_connection(Handshake& hs, const std::string& why) {
  if (refused_.fetch_add(1, std::memory_order_relaxed) < kMaxLogged) {
    std::fprintf(stderr, "adi3 tcp: rank %d refused a connection from %s: %s\n", rank_, hs.remote.c_str(), why.c_str());
  }
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, hs.fd, nullptr);
  close(hs.fd);
  hs.fd = -1;
}

void TcpChannel::on_incoming_event(uint64_t id, uint32_t /*events*/) {
  auto it = incoming_.find(id);
  if (it == incoming_.end()) return;
  Handshake& hs = *it->second;
  auto refuse = [&](const std::string& why) {
    refuse_connection(hs, why);
    incoming_.erase(it);
    handshakes_.fetch_sub(1, std::memory_order_relaxed);
  };
  // A dialler that hangs up is no threat and may be a rank that dropped its
  // dial because ours won (both dialled at once): closed without a word.
  auto hung_up = [&] {
    epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, hs.fd, nullptr);
    close(hs.fd);
    incoming_.erase(it);
    handshakes_.fetch_sub(1, std::memory_order_relaxed);
  };
  if (hs.step == 0) {
    int got = read_some(hs, kHelloBytes);
    if (got < 0) return hung_up();
    if (got == 0) return;
    Hello h;
    std::string why;
    if (!decode_hello(hs.in, size_, &h, &why)) return refuse(why);
    if (h.to != rank_)
      return refuse("it dialled rank " + std::to_string(h.to) + ", this is rank " + std::to_string(rank_));
    if (h.from == rank_) return refuse("it claims to be this rank itself");
    hs.peer = h.from;
    hs.theirs = h.nonce;
    char out[kChallengeBytes];
    encode_challenge(out,
                     Challenge{rank_, hs.mine, handshake_mac(key_, Role::Server, h.from, rank_, h.nonce, hs.mine)});
    if (!pump_out(hs.fd, out, sizeof out)) return hung_up();
    hs.step = 1;
    hs.in_len = 0;
    return;
  }
  int got = read_some(hs, kProofBytes);
  if (got < 0) return hung_up();
  if (got == 0) return;
  Mac want = handshake_mac(key_, Role::Client, hs.peer, rank_, hs.theirs, hs.mine);
  if (!mac_equal(want, reinterpret_cast<const unsigned char*>(hs.in))) {
    return refuse("claims rank " + std::to_string(hs.peer) +
                  " but did not prove it holds this job's secret (another job, or an impostor)");
  }
  std::unique_ptr<Handshake> done = std::move(it->second);
  incoming_.erase(it);
  handshakes_.fetch_sub(1, std::memory_order_relaxed);
  admit(std::move(done));
}

// An authenticated connection from hs->peer: keep it, or answer 'R' when
// the pair's connection is (or will be) the one this rank dialled.
void TcpChannel::admit(std::unique_ptr<Handshake> hs) {
  const int peer = hs->peer;
  Peer& p = *peers_[static_cast<std::size_t>(peer)];
  std::lock_guard g(p.m);
  auto reject = [&](const char* why) {
    const char verdict = kReject;
    pump_out(hs->fd, &verdict, 1);
    if (why) {
      refuse_connection(*hs, why);
    } else {
      epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, hs->fd, nullptr);
      close(hs->fd);
    }
  };
  if (p.state == State::Dead) return reject("it claims a rank that already failed");
  // Authenticated, so it is that rank. A higher rank whose dial crossed
  // ours finishes its handshake here after it took our connection and
  // dropped its dial: expected, not worth a log line.
  if (p.state == State::Up) return reject(peer > rank_ ? nullptr : "it claims a rank that is already connected");
  if (p.state == State::Dialing && peer > rank_) return reject(nullptr);  // our dial wins
  if (p.dial) {
    epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, p.dial->fd, nullptr);
    close(p.dial->fd);
    p.dial.reset();
  }
  if (p.state == State::Dialing || p.state == State::AwaitPeer) handshakes_.fetch_sub(1, std::memory_order_relaxed);
  const char verdict = kAccept;
  if (!pump_out(hs->fd, &verdict, 1)) {
    close(hs->fd);
    epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, hs->fd, nullptr);
    p.state = State::Idle;  // a later send dials again
    return;
  }
  p.fd = hs->fd;
  came_up_locked(peer, p);
}

void TcpChannel::check_deadlines() {
  const auto now = Clock::now();
  for (auto it = incoming_.begin(); it != incoming_.end();) {
    if (it->second->deadline > now) {
      ++it;
      continue;
    }
    refuse_connection(*it->second,
                      "it did not finish the handshake within " + std::to_string(settings_.connect_timeout_ms) + " ms");
    it = incoming_.erase(it);
    handshakes_.fetch_sub(1, std::memory_order_relaxed);
  }
  for (int r = 0; r < size_; ++r) {
    Peer& p = *peers_[static_cast<std::size_t>(r)];
    std::lock_guard g(p.m);
    if (p.state == State::Dialing && p.dial && p.dial->deadline <= now) {
      lost_locked(r, p,
                  "no connection to it at " + p.address + " within " + std::to_string(settings_.connect_timeout_ms) +
                      " ms (host unreachable, or rank stuck)");
    } else if (p.state == State::AwaitPeer && p.await_deadline <= now) {
      lost_locked(r, p, "it did not connect back within " + std::to_string(settings_.connect_timeout_ms) + " ms");
    }
  }
}

}  // namespace adi3::tcp
