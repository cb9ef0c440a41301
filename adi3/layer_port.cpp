// The layers' port: ordered packets to a peer, locking decided at run time
// and the agent (registered packet kinds: packet_kinds.cpp; progress hooks:
// progress_hooks.cpp). Reaches into its Device as a friend: the per-peer
// queues, the poll lock and the failure state are the device's.
#include "adi3/layer_port.hpp"

#include "adi3/device.hpp"
#include "emul/agent.hpp"

namespace adi3 {

LayerPort::LayerPort(Device& dev, std::size_t max_header, std::size_t max_payload)
    : dev_(dev), max_header_(max_header), max_payload_(max_payload) {}

LayerPort::~LayerPort() = default;  // the agent is gone already (~Device stops it first)

void LayerPort::quiesce_handlers() {
  if (!dev_.threads_enabled()) return;
  dev_.poll_lock_.lock();
  dev_.poll_lock_.unlock();
}

int LayerPort::check_packet(int peer, const void* hdr, std::size_t hdr_bytes, const Payload& payload) {
  ErrorLog& errors = dev_.errors_;
  if (peer < 0 || peer >= dev_.size_) {
    return errors.raise(ErrorClass::Arg, "send_packet: peer %d is not a rank of this device (0..%d)", peer,
                        dev_.size_ - 1);
  }
  if (!hdr || hdr_bytes == 0 || hdr_bytes > max_header_) {
    return errors.raise(ErrorClass::Arg, "send_packet to rank %d: header of %zu bytes (this channel carries 1 to %zu)",
                        peer, hdr_bytes, max_header_);
  }
  const std::size_t id = *static_cast<const uint8_t*>(hdr);
  if (!kinds_.registered(id)) {
    return errors.raise(ErrorClass::Arg, "send_packet to rank %d: packet id %zu is not a registered extension id", peer,
                        id);
  }
  if (payload.bytes > max_payload_) {
    return errors.raise(ErrorClass::Arg, "send_packet to rank %d: payload of %zu bytes (this channel carries %zu)",
                        peer, payload.bytes, max_payload_);
  }
  if (dev_.peer_failed_[static_cast<std::size_t>(peer)]) {
    return errors.raise(ErrorClass::ProcFailed, "send_packet: rank %d is gone: %s", peer,
                        dev_.failure_text_.empty() ? "its process failed" : dev_.failure_text_.data());
  }
  return 0;
}

int LayerPort::send_packet(int peer, const void* hdr, std::size_t hdr_bytes, const Payload& payload) {
  if (int e = check_packet(peer, hdr, hdr_bytes, payload)) return e;
  return dev_.queue_packet(peer, hdr, hdr_bytes, payload);
}

int LayerPort::try_send_packet(int peer, const void* hdr, std::size_t hdr_bytes, const Payload& payload, bool* sent) {
  *sent = false;
  if (int e = check_packet(peer, hdr, hdr_bytes, payload)) return e;
  if (int e = dev_.check_refused(peer)) return e;
  Device::Peer& p = dev_.peers_[static_cast<std::size_t>(peer)];
  MaybeLock g(p.lock, dev_.threads_enabled());
  if (!p.q.empty()) return 0;  // after what is queued: later
  const SendResult res = dev_.io_->send(peer, hdr, hdr_bytes, payload);
  if (res == SendResult::Failed) {
    return dev_.errors_.raise(ErrorClass::ProcFailed, "cannot send to rank %d: its process is gone", peer);
  }
  *sent = res == SendResult::Sent;
  return 0;
}

// ---- progress hooks ----

int LayerPort::add_progress_hook(bool (*fn)(void* ctx), void* ctx, bool on_demand) {
  return hooks_.add(fn, ctx, dev_.threads_enabled(), on_demand);
}

void LayerPort::remove_progress_hook(int id) { hooks_.remove(id, dev_.threads_enabled()); }

// ---- threads ----

void LayerPort::locks_on() {
  if (dev_.threads_.load(std::memory_order_relaxed)) return;
  dev_.pool_.enable_threads();
  dev_.matcher_.enable_threads();
  dev_.credits_.enable_threads();
  dev_.threads_.store(true, std::memory_order_release);
}

void LayerPort::enable_threads() {
  // The application's threads may call in from now on: config().thread_multiple
  // says so to paths that skip locks only for them (rma/native_fast.hpp), as
  // MPI_THREAD_MULTIPLE at start does.
  dev_.config_.thread_multiple = true;
  locks_on();
}

// ---- the agent (emul/agent.*) ----

bool LayerPort::require_agent(const char* why) {
  std::lock_guard<std::mutex> g(agent_mutex_);
  if (agent_) return true;
  if (dev_.config_.async_progress == AsyncProgress::Off) return false;
  // The caller is the only thread using the device (or threads are on
  // already): safe to turn the locks on before the agent exists. Only the
  // locks: the application's threads stay as they were (thread_multiple).
  locks_on();
  agent_why_ = why ? why : "";
  agent_ = std::make_unique<Agent>(dev_);
  agent_on_.store(true, std::memory_order_release);
  return true;
}

void LayerPort::stop_agent() {
  std::unique_ptr<Agent> gone;
  {
    std::lock_guard<std::mutex> g(agent_mutex_);
    agent_on_.store(false, std::memory_order_release);
    gone = std::move(agent_);
  }
  gone.reset();  // joins the thread outside the lock
}

std::string LayerPort::agent_reason() const {
  std::lock_guard<std::mutex> g(agent_mutex_);
  return agent_why_;
}

bool LayerPort::agent_pass() { return dev_.pass(false); }

}  // namespace adi3
