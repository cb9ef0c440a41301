// The seams for the layers above the core: ordered packets to a peer,
// refused packets, locking decided at run time and the agent (registered
// packet kinds: packet_kinds.cpp; progress hooks: progress_hooks.cpp).
#include <cstdarg>
#include <cstdio>

#include "adi3/device.hpp"
#include "emul/agent.hpp"

namespace adi3 {

void Device::quiesce_handlers() {
  if (!threads_enabled()) return;
  poll_lock_.lock();
  poll_lock_.unlock();
}

int Device::check_packet(int peer, const void* hdr, std::size_t hdr_bytes, const Payload& payload) {
  if (peer < 0 || peer >= size_) {
    return errors_.raise(ErrorClass::Arg, "send_packet: peer %d is not a rank of this device (0..%d)", peer, size_ - 1);
  }
  if (!hdr || hdr_bytes == 0 || hdr_bytes > max_header_) {
    return errors_.raise(ErrorClass::Arg, "send_packet to rank %d: header of %zu bytes (this channel carries 1 to %zu)",
                         peer, hdr_bytes, max_header_);
  }
  const std::size_t id = *static_cast<const uint8_t*>(hdr);
  if (!kinds_.registered(id)) {
    return errors_.raise(ErrorClass::Arg, "send_packet to rank %d: packet id %zu is not a registered extension id",
                         peer, id);
  }
  if (payload.bytes > max_packet_payload()) {
    return errors_.raise(ErrorClass::Arg, "send_packet to rank %d: payload of %zu bytes (this channel carries %zu)",
                         peer, payload.bytes, max_packet_payload());
  }
  if (peer_failed_[static_cast<std::size_t>(peer)]) {
    return errors_.raise(ErrorClass::ProcFailed, "send_packet: rank %d is gone: %s", peer,
                         failure_text_.empty() ? "its process failed" : failure_text_.data());
  }
  return 0;
}

int Device::send_packet(int peer, const void* hdr, std::size_t hdr_bytes, const Payload& payload) {
  if (int e = check_packet(peer, hdr, hdr_bytes, payload)) return e;
  return queue_packet(peer, hdr, hdr_bytes, payload);
}

int Device::try_send_packet(int peer, const void* hdr, std::size_t hdr_bytes, const Payload& payload, bool* sent) {
  *sent = false;
  if (int e = check_packet(peer, hdr, hdr_bytes, payload)) return e;
  if (int e = check_refused(peer)) return e;
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  MaybeLock g(p.lock, threads_enabled());
  if (!p.q.empty()) return 0;  // after what is queued: later
  const SendResult res = io_->send(peer, hdr, hdr_bytes, payload);
  if (res == SendResult::Failed) {
    return errors_.raise(ErrorClass::ProcFailed, "cannot send to rank %d: its process is gone", peer);
  }
  *sent = res == SendResult::Sent;
  return 0;
}

void Device::drop(int src, const char* fmt, ...) {
  char why[200];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  refused_.fetch_add(1, std::memory_order_relaxed);
  errors_.raise(ErrorClass::Intern, "rank %d refused a packet from rank %d: %s", rank_, src, why);
}

void Device::refuse(int src, const char* fmt, ...) {
  char why[200];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  drop(src, "%s", why);  // counted and reported as any refused packet
  if (src < 0 || src >= size_ || src == rank_ || peer_refused_[static_cast<std::size_t>(src)]) return;
  // A peer that breaks the protocol cannot be trusted with anything more:
  // it is failed for this rank, which goes on serving the others.
  peer_refused_[static_cast<std::size_t>(src)] = 1;
  refused_peers_.fetch_add(1, std::memory_order_relaxed);  // check_refused looks from now on
  char text[320];
  std::snprintf(text, sizeof text, "rank %d is treated as failed: it sent a bad packet to rank %d (%s)", src, rank_,
                why);
  std::fprintf(stderr, "adi3: %s\n", text);
  on_peer_failed(src, text);
}

// ---- threads ----

namespace {
// The locks on (enable_threads and require_agent).
void locks_on(RequestPool& pool, Matcher& matcher, EagerCredits& credits, std::atomic<bool>& threads) {
  if (threads.load(std::memory_order_relaxed)) return;
  pool.enable_threads();
  matcher.enable_threads();
  credits.enable_threads();
  threads.store(true, std::memory_order_release);
}
}  // namespace

void Device::enable_threads() {
  // The application's threads may call in from now on: config().thread_multiple
  // says so to paths that skip locks only for them (rma/native_fast.hpp), as
  // MPI_THREAD_MULTIPLE at start does.
  config_.thread_multiple = true;
  locks_on(pool_, matcher_, credits_, threads_);
}

// ---- the agent (emul/agent.*) ----

bool Device::require_agent(const char* why) {
  std::lock_guard<std::mutex> g(agent_mutex_);
  if (agent_) return true;
  if (config_.async_progress == AsyncProgress::Off) return false;
  // The caller is the only thread using the device (or threads are on
  // already): safe to turn the locks on before the agent exists. Only the
  // locks: the application's threads stay as they were (thread_multiple).
  locks_on(pool_, matcher_, credits_, threads_);
  agent_why_ = why ? why : "";
  agent_ = std::make_unique<Agent>(*this);
  agent_on_.store(true, std::memory_order_release);
  return true;
}

void Device::stop_agent() {
  std::unique_ptr<Agent> gone;
  {
    std::lock_guard<std::mutex> g(agent_mutex_);
    agent_on_.store(false, std::memory_order_release);
    gone = std::move(agent_);
  }
  gone.reset();  // joins the thread outside the lock
}

std::string Device::agent_reason() const {
  std::lock_guard<std::mutex> g(agent_mutex_);
  return agent_why_;
}

}  // namespace adi3
