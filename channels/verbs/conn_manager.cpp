#include "channels/verbs/conn_manager.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace adi3::verbs {
namespace {

constexpr uint32_t kMagic = 0x61336d63;  // "a3mc"
constexpr auto kFirstRetry = std::chrono::milliseconds(20);
constexpr auto kMaxRetry = std::chrono::milliseconds(1000);

// A datagram: this header, then the sender's queue pair address (REQ, REP).
struct Wire {
  uint32_t magic;
  uint8_t type;
  uint8_t addr_len;
  uint16_t reserved;
  int32_t to;
};
constexpr std::size_t kMaxAddr = VerbsDevice::kMaxDatagram - sizeof(Wire);

}  // namespace

ConnManager::ConnManager(VerbsDevice& dev, int rank, int size, std::chrono::milliseconds timeout, Hooks& hooks)
    : dev_(dev),
      rank_(rank),
      size_(size),
      timeout_(timeout),
      hooks_(hooks),
      state_(static_cast<std::size_t>(size), State::None),
      local_(static_cast<std::size_t>(size)) {}

bool ConnManager::create(int peer) {
  try {
    local_[static_cast<std::size_t>(peer)] = dev_.create_qp(peer);
    if (local_[static_cast<std::size_t>(peer)].size() > kMaxAddr)
      throw std::runtime_error("queue pair address too long for a datagram");
    hooks_.qp_created(peer);
  } catch (const std::exception& e) {
    fail(peer, std::string("cannot make a queue pair to it: ") + e.what());
    return false;
  }
  return true;
}

bool ConnManager::connect(int peer, const std::string& addr) {
  try {
    dev_.connect(peer, addr);
  } catch (const std::exception& e) {
    fail(peer, std::string("cannot connect its queue pair: ") + e.what());
    return false;
  }
  return true;
}

void ConnManager::want(int peer) {
  const auto i = static_cast<std::size_t>(peer);
  if (state_[i] != State::None) return;
  if (!create(peer)) return;
  if (peer == rank_) {  // loopback: our queue pair connects to itself
    if (connect(peer, local_[i])) state_[i] = State::Ready;
    return;
  }
  state_[i] = State::Requested;
  send(peer, kReq);
  start_timer(peer);
}

void ConnManager::send(int peer, Type t) {
  char buf[VerbsDevice::kMaxDatagram];
  const std::string& addr = t == kRtu ? std::string() : local_[static_cast<std::size_t>(peer)];
  Wire w{kMagic, t, static_cast<uint8_t>(addr.size()), 0, peer};
  std::memcpy(buf, &w, sizeof w);
  std::memcpy(buf + sizeof w, addr.data(), addr.size());
  // Not sent (no send slot): the timer resends it.
  (void)dev_.send_datagram(peer, buf, sizeof w + addr.size());
}

void ConnManager::progress() {
  char buf[VerbsDevice::kMaxDatagram];
  int from = -1;
  for (int n; (n = dev_.recv_datagram(buf, sizeof buf, &from)) >= 0;)
    on_datagram(from, buf, static_cast<std::size_t>(n));
  if (under_way_.empty()) return;
  const auto now = std::chrono::steady_clock::now();
  for (std::size_t k = 0; k < under_way_.size();) {
    Timer& t = under_way_[k];
    if (now >= t.deadline) {
      const int peer = t.peer;
      char secs[32];
      std::snprintf(secs, sizeof secs, "%.1f", static_cast<double>(timeout_.count()) / 1000.0);
      fail(peer, std::string("no answer to the connection request within ") + secs + " s (ADI3_VERBS_CONNECT_TIMEOUT)");
      continue;  // fail() removed it
    }
    if (now >= t.next) {
      send(t.peer, state_[static_cast<std::size_t>(t.peer)] == State::Requested ? kReq : kRep);
      t.interval = std::min(kMaxRetry, t.interval * 2);
      t.next = now + t.interval;
    }
    ++k;
  }
}

void ConnManager::on_datagram(int from, const char* data, std::size_t len) {
  Wire w;
  if (from < 0 || from >= size_ || from == rank_ || len < sizeof w) return;
  std::memcpy(&w, data, sizeof w);
  if (w.magic != kMagic || w.to != rank_ || w.addr_len > kMaxAddr || len != sizeof w + w.addr_len) return;
  const std::string addr(data + sizeof w, w.addr_len);
  const auto i = static_cast<std::size_t>(from);
  switch (w.type) {
    case kReq:
      if (addr.empty()) return;
      // Both asked at once: the lower rank's request wins, the lower rank
      // ignores the higher's (its own request will be answered).
      if (state_[i] == State::Requested && rank_ < from) return;
      if (state_[i] == State::None || state_[i] == State::Requested) {
        if (state_[i] == State::None && !create(from)) return;
        if (!connect(from, addr)) return;
        if (state_[i] == State::None) start_timer(from);  // Requested: its timer goes on, now resending REP
        state_[i] = State::Accepted;
        send(from, kRep);
      } else if (state_[i] == State::Accepted || (state_[i] == State::Ready && rank_ > from)) {
        send(from, kRep);  // our REP was lost: the same queue pair again
      }
      return;
    case kRep:
      if (addr.empty()) return;
      if (state_[i] == State::Requested) {
        if (!connect(from, addr)) return;
        state_[i] = State::Ready;
        done(from);
        send(from, kRtu);
      } else if (state_[i] == State::Ready) {
        send(from, kRtu);  // our RTU was lost
      }
      return;
    case kRtu:
      if (state_[i] == State::Accepted) {
        state_[i] = State::Ready;
        done(from);
      }
      return;
    default:
      return;
  }
}

void ConnManager::heard_from(int peer) {
  if (state_[static_cast<std::size_t>(peer)] != State::Accepted) return;
  state_[static_cast<std::size_t>(peer)] = State::Ready;
  done(peer);
}

void ConnManager::drop(int peer) {
  if (state_[static_cast<std::size_t>(peer)] != State::Ready) state_[static_cast<std::size_t>(peer)] = State::Failed;
  done(peer);
}

void ConnManager::start_timer(int peer) {
  const auto now = std::chrono::steady_clock::now();
  under_way_.push_back({peer, now + kFirstRetry, now + timeout_, kFirstRetry});
}

void ConnManager::done(int peer) {
  std::erase_if(under_way_, [&](const Timer& t) { return t.peer == peer; });
}

void ConnManager::fail(int peer, std::string why) {
  state_[static_cast<std::size_t>(peer)] = State::Failed;
  done(peer);
  hooks_.connect_failed(peer, std::move(why));
}

}  // namespace adi3::verbs
