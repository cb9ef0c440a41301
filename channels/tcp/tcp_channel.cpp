// The TCP channel's data path: sends (writev when nothing waits), frame
// decoding on arrival, failures, and the epoll loop. Connection set-up
// and authentication are in handshake.cpp.
#include "channels/tcp/tcp_channel.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "channels/tcp/tags.hpp"

namespace adi3::tcp {
namespace {

std::runtime_error sys_error(const std::string& what) {
  return std::runtime_error("tcp channel: " + what + ": " + std::strerror(errno));
}

}  // namespace

TcpChannel::TcpChannel(ChannelBootstrap& boot, const TcpSettings& settings)
    : rank_(boot.rank()), size_(boot.size()), settings_(settings) {
  caps_.native = kPointToPoint;
  caps_.max_header = 128;
  caps_.max_payload = 256 * 1024;
  caps_.eager_limit = 65536;
  limits_ = {caps_.max_header, caps_.max_payload};
  peers_.reserve(static_cast<std::size_t>(size_));
  for (int p = 0; p < size_; ++p) peers_.push_back(std::make_unique<Peer>());
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epoll_fd_ < 0 || wake_fd_ < 0) {
    if (epoll_fd_ >= 0) close(epoll_fd_);
    if (wake_fd_ >= 0) close(wake_fd_);
    throw sys_error("epoll/eventfd");
  }
  watch(wake_fd_, tag(Tag::Wake, 0), false);
  try {
    listen_and_publish(boot);
  } catch (...) {
    if (listen_fd_ >= 0) close(listen_fd_);
    close(epoll_fd_);
    close(wake_fd_);
    throw;
  }
}

TcpChannel::~TcpChannel() {
  settle();
  // A goodbye tells each peer that the coming end of stream is no death.
  for (int r = 0; r < size_; ++r) {
    Peer& p = *peers_[static_cast<std::size_t>(r)];
    std::lock_guard g(p.m);
    if (p.dial) close(p.dial->fd);
    if (p.fd < 0) continue;
    if (p.state == State::Up) {
      timeval limit{1, 0};  // never hang in a destructor
      setsockopt(p.fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
      fcntl(p.fd, F_SETFL, fcntl(p.fd, F_GETFL) & ~O_NONBLOCK);
      append_frame(p.out, kFrameGoodbye, nullptr, 0, Payload{});
      flush_locked(r, p);
      shutdown(p.fd, SHUT_WR);
      // Unread bytes at close() would make the kernel reset the stream,
      // which the peer could see before our goodbye.
      fcntl(p.fd, F_SETFL, fcntl(p.fd, F_GETFL) | O_NONBLOCK);
      char sink[4096];
      while (recv(p.fd, sink, sizeof sink, 0) > 0) {
      }
    }
    close(p.fd);
  }
  for (auto& [id, hs] : incoming_) close(hs->fd);
  if (listen_fd_ >= 0) close(listen_fd_);
  close(epoll_fd_);
  close(wake_fd_);
}

// Before the goodbyes. send() took packets for peers whose connection was
// still being set up (queued), and the core counted them as sent: the last
// message of a finalize barrier can be one, and its peer waits for it. A
// half-done handshake, ours or a peer's, would also end as "connection
// broke" there, a failure. So connections are driven (what arrives now is
// dropped: this rank has finished communicating) until none is being set
// up and nothing waits to go, for at most the connect timeout (5 s at
// most: a peer that died is not waited for longer).
void TcpChannel::settle() {
  struct Drop final : PacketSink {
    void on_packet(int, const void*, std::size_t, const void*, std::size_t) override {}
    void on_peer_failed(int, const char*) override {}
  } drop;
  const auto deadline = Clock::now() + std::chrono::milliseconds(std::min(settings_.connect_timeout_ms, 5000));
  // A payload still being read into place belongs to a receive that is
  // gone by now: what is left of it is discarded.
  for (auto& peer : peers_) peer->where = Placement{};
  for (;;) {
    bool unsettled = !incoming_.empty();
    for (auto& peer : peers_) {
      std::lock_guard g(peer->m);
      if (peer->state == State::Dialing || peer->state == State::AwaitPeer ||
          (peer->state == State::Up && peer->pending())) {
        unsettled = true;
      }
    }
    if (!unsettled || Clock::now() >= deadline) return;
    poll(drop);
    wait(std::chrono::milliseconds(5));
  }
}

void TcpChannel::watch(int fd, uint64_t t, bool out) {
  epoll_event ev{EPOLLIN | (out ? uint32_t{EPOLLOUT} : 0u), {}};
  ev.data.u64 = t;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
}

void TcpChannel::rewatch(int fd, uint64_t t, bool out) {
  epoll_event ev{EPOLLIN | (out ? uint32_t{EPOLLOUT} : 0u), {}};
  ev.data.u64 = t;
  epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev);
}

void TcpChannel::tune_connection(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  // A host that stops answering (crash, cable, netns gone) is noticed
  // within timeout_ms: keepalive probes every second while idle, and
  // unacknowledged data times out.
  int secs = std::max(2, settings_.timeout_ms / 1000);
  int idle = 1, interval = 1, count = secs - 1;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
  unsigned user_timeout = static_cast<unsigned>(settings_.timeout_ms);
  setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof user_timeout);
}

void TcpChannel::append_frame(std::vector<char>& buf, uint16_t kind, const void* hdr, std::size_t hdr_bytes,
                              const Payload& payload) {
  std::size_t at = buf.size();
  buf.resize(at + kFrameHeaderBytes + hdr_bytes + payload.bytes);
  encode_frame_header(buf.data() + at, kind, hdr_bytes, payload.bytes);
  if (hdr_bytes) std::memcpy(buf.data() + at + kFrameHeaderBytes, hdr, hdr_bytes);
  payload.copy_to(buf.data() + at + kFrameHeaderBytes + hdr_bytes);
}

SendResult TcpChannel::send(int dest, const void* hdr, std::size_t hdr_bytes, const Payload& payload) {
  if (dest < 0 || dest >= size_ || hdr_bytes == 0 || hdr_bytes > limits_.max_header ||
      payload.bytes > limits_.max_payload) {
    return SendResult::Failed;
  }
  if (dest == rank_) {
    std::lock_guard g(self_mutex_);
    append_frame(self_, kFramePacket, hdr, hdr_bytes, payload);
    local_work_.store(true, std::memory_order_release);
    return SendResult::Sent;
  }
  Peer& p = *peers_[static_cast<std::size_t>(dest)];
  std::lock_guard g(p.m);
  if (p.state == State::Idle) start_dial_locked(dest, p);
  if (p.state == State::Dead) return SendResult::Failed;
  if (p.pending() >= settings_.pending_limit) {
    if (p.state == State::Up) flush_locked(dest, p);
    if (p.state == State::Dead) return SendResult::Failed;
    if (p.pending() >= settings_.pending_limit) return SendResult::Busy;
  }
  // The common case: frame header, packet header and payload in one
  // system call, no copy; only what the socket refuses is buffered. A
  // noncontiguous payload goes as the Segment's own pieces (its iovec) when
  // they are few enough; else it is packed into the queue below.
  char fh[kFrameHeaderBytes];
  iovec iov[kMaxSendIov];
  std::size_t niov = 0;
  if (p.state == State::Up && p.pending() == 0) {
    iov[0] = {fh, sizeof fh};
    iov[1] = {const_cast<void*>(hdr), hdr_bytes};
    niov = 2;
    if (payload.seg && payload.bytes) {
      std::size_t pieces = 0;
      const std::size_t described =
          payload.seg->to_iov(payload.first, payload.first + payload.bytes, iov + 2, kMaxSendIov - 2, &pieces);
      niov = described == payload.bytes ? 2 + pieces : 0;
      if (niov) iov_sends_.fetch_add(1, std::memory_order_relaxed);
    } else if (payload.bytes) {
      iov[niov++] = {const_cast<void*>(payload.data), payload.bytes};
    }
  }
  if (niov) {
    encode_frame_header(fh, kFramePacket, hdr_bytes, payload.bytes);
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = niov;
    ssize_t w = sendmsg(p.fd, &msg, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        lost_locked(dest, p, std::string("its connection broke (") + std::strerror(errno) + ")");
        return SendResult::Sent;  // poll() reports the failure
      }
      w = 0;
    }
    std::size_t done = static_cast<std::size_t>(w);
    for (std::size_t i = 0; i < msg.msg_iovlen; ++i) {
      const char* base = static_cast<const char*>(iov[i].iov_base);
      std::size_t skip = std::min(done, iov[i].iov_len);
      done -= skip;
      p.out.insert(p.out.end(), base + skip, base + iov[i].iov_len);
    }
    if (p.pending()) flush_locked(dest, p);  // (re)arms EPOLLOUT
    return SendResult::Sent;
  }
  append_frame(p.out, kFramePacket, hdr, hdr_bytes, payload);
  if (p.state == State::Up) flush_locked(dest, p);
  return SendResult::Sent;  // queued until the connection is up
}

bool TcpChannel::flush_locked(int peer, Peer& p) {
  while (p.pending()) {
    ssize_t w = ::send(p.fd, p.out.data() + p.out_head, p.pending(), MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (w < 0) {
      lost_locked(peer, p, std::string("its connection broke (") + std::strerror(errno) + ")");
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
  // EPOLLOUT only while bytes wait, so wait() wakes when they can go.
  if (p.state == State::Up && p.want_out != (p.pending() > 0)) want_out_locked(peer, p, p.pending() > 0);
  return true;
}

// Arms or disarms EPOLLOUT; while any connection has it armed, poll()
// asks epoll every pass (the event says when the bytes can go).
void TcpChannel::want_out_locked(int peer, Peer& p, bool out) {
  if (p.want_out != out) out_armed_.fetch_add(out ? 1 : -1, std::memory_order_relaxed);
  p.want_out = out;
  rewatch(p.fd, tag(Tag::Conn, static_cast<uint64_t>(peer)), out);
}

// A handshake ended with this connection carrying the pair's packets
// (called from poll() only): queued packets go.
void TcpChannel::came_up_locked(int peer, Peer& p) {
  p.state = State::Up;
  up_.push_back(peer);
  tune_connection(p.fd);
  p.want_out = false;
  want_out_locked(peer, p, true);  // flush_locked settles the registration
  flush_locked(peer, p);
}

int TcpChannel::deliver_self(PacketSink& sink) {
  // Handlers may send to this rank again: deliver what is here now.
  std::vector<char> now;
  {
    std::lock_guard g(self_mutex_);
    now.swap(self_);
  }
  int n = 0;
  for (std::size_t at = 0; at < now.size();) {
    Frame f;
    decode_frame(now.data() + at, now.size() - at, limits_, &f, nullptr);  // our own frames
    const char* body = now.data() + at + kFrameHeaderBytes;
    sink.on_packet(rank_, body, f.hdr_bytes, body + f.hdr_bytes, f.payload_bytes);
    at += f.total();
    ++n;
  }
  return n;
}

void TcpChannel::lost_locked(int peer, Peer& p, const std::string& how) {
  if (p.state == State::Dead) return;
  if (p.state == State::Dialing || p.state == State::AwaitPeer) handshakes_.fetch_sub(1, std::memory_order_relaxed);
  if (p.dial) {
    epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, p.dial->fd, nullptr);
    close(p.dial->fd);
    p.dial.reset();
  }
  p.state = State::Dead;
  if (p.want_out) out_armed_.fetch_sub(1, std::memory_order_relaxed);
  p.want_out = false;
  if (p.fd >= 0) {
    epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, p.fd, nullptr);
    shutdown(p.fd, SHUT_RDWR);  // closed in the destructor: the number is never reused meanwhile
  }
  p.out.clear();
  p.out_head = 0;
  if (!how.empty()) {
    std::lock_guard g(failures_mutex_);
    failures_.emplace_back(peer, "rank " + std::to_string(peer) + ": " + how);
    failures_pending_.store(true, std::memory_order_release);
    local_work_.store(true, std::memory_order_release);
  }
}

void TcpChannel::report_failures(PacketSink& sink) {
  if (!failures_pending_.exchange(false, std::memory_order_acq_rel)) return;
  std::vector<std::pair<int, std::string>> now;
  {
    std::lock_guard g(failures_mutex_);
    now.swap(failures_);
  }
  for (auto& [peer, why] : now) sink.on_peer_failed(peer, why.c_str());
}

void TcpChannel::expect_payload(int peer) {
  if (peer < 0 || peer >= size_ || peer == rank_) return;
  peers_[static_cast<std::size_t>(peer)]->probe.store(kProbeFrames, std::memory_order_relaxed);
}

void TcpChannel::wake() {
  uint64_t one = 1;
  ssize_t w = write(wake_fd_, &one, sizeof one);
  (void)w;
}

}  // namespace adi3::tcp
