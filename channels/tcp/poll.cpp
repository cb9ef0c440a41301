// The TCP channel's progress: what one poll() pass looks at, and the sleep.
//
// A pass either asks epoll which descriptors are ready (the listener,
// handshakes, the wake eventfd, connections readable or writable) or, with
// kDirectPeers connections or fewer, reads each connection directly: an
// idle pass then costs one recv per connection instead of one epoll_wait,
// and a pass that finds a packet saves the epoll_wait before its recv (one
// system call of the three a small message costs on loopback: sendmsg,
// epoll_wait, recv). Epoll is still asked every kEpollEvery-th pass (new
// connections, the eventfd), after every sleep (what woke it may be
// anything), and on every pass while a handshake runs or bytes wait for
// EPOLLOUT. Direct passes start at the next connection each time, so no
// connection is always read first.
#include <sys/epoll.h>
#include <unistd.h>

#include "channels/tcp/tags.hpp"
#include "channels/tcp/tcp_channel.hpp"

namespace adi3::tcp {

int TcpChannel::poll(PacketSink& sink) {
  int n = 0;
  // (A load before each exchange: no locked instruction on an idle pass.)
  if (local_work_.load(std::memory_order_relaxed) && local_work_.exchange(false, std::memory_order_acq_rel)) {
    n += deliver_self(sink);
  }
  n += direct_pass() ? read_direct(sink) : poll_events(sink);
  if (handshakes_.load(std::memory_order_relaxed) > 0) check_deadlines();
  if (failures_pending_.load(std::memory_order_relaxed)) report_failures(sink);
  return n;
}

bool TcpChannel::direct_pass() {
  if (up_.empty() || up_.size() > kDirectPeers) return false;
  if (handshakes_.load(std::memory_order_relaxed) > 0 || out_armed_.load(std::memory_order_relaxed) > 0) return false;
  if (epoll_due_.load(std::memory_order_relaxed)) {
    epoll_due_.store(false, std::memory_order_relaxed);
    return false;
  }
  return ++passes_ % kEpollEvery != 0;
}

int TcpChannel::read_direct(PacketSink& sink) {
  const std::size_t k = up_.size();
  int n = 0;
  for (std::size_t i = 0; i < k; ++i) n += read_from(up_[(up_next_ + i) % k], sink);
  up_next_ = (up_next_ + 1) % k;
  return n;
}

int TcpChannel::poll_events(PacketSink& sink) {
  int n = 0;
  epoll_event ev[32];
  const int ready = epoll_wait(epoll_fd_, ev, 32, 0);
  for (int i = 0; i < ready; ++i) {
    const uint64_t id = tag_id(ev[i].data.u64);
    const uint32_t events = ev[i].events;
    switch (tag_kind(ev[i].data.u64)) {
      case Tag::Wake: {
        uint64_t drain;
        while (read(wake_fd_, &drain, sizeof drain) > 0) {
        }
        break;
      }
      case Tag::Listen:
        accept_new();
        break;
      case Tag::Dial:
        on_dial_event(static_cast<int>(id), events);
        break;
      case Tag::Incoming:
        on_incoming_event(id, events);
        break;
      case Tag::Conn: {
        int peer = static_cast<int>(id);
        if (events & EPOLLOUT) {
          Peer& p = *peers_[id];
          std::lock_guard g(p.m);
          if (p.state == State::Up) flush_locked(peer, p);
        }
        if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) n += read_from(peer, sink);
        break;
      }
    }
  }
  return n;
}

void TcpChannel::wait(std::chrono::microseconds timeout) {
  if (local_work_.load(std::memory_order_acquire)) return;
  epoll_event ev[1];
  timespec ts{static_cast<time_t>(timeout.count() / 1000000), static_cast<long>(timeout.count() % 1000000) * 1000};
  // Only sleeps: the events stay pending (level-triggered) for poll(),
  // whose next pass asks epoll.
  epoll_pwait2(epoll_fd_, ev, 1, &ts, nullptr);
  epoll_due_.store(true, std::memory_order_relaxed);
}

}  // namespace adi3::tcp
