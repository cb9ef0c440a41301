// Device construction, the progress engine, packet dispatch and the
// device's own barrier. Point-to-point lives in send.cpp/recv.cpp, the
// wait/test families in completion.cpp.
#include "adi3/device.hpp"

#include "emul/agent.hpp"
#include "adi3/sizes.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <tbb/scalable_allocator.h>

namespace adi3 {

Device::Device(std::unique_ptr<Channel> channel, const Config& config)
    : channel_(std::move(channel)),
      io_(channel_->data_path()),
      calls_(channel_->call_count()),
      config_(config),
      rank_(channel_->rank()),
      size_(channel_->size()),
      pool_(false, config_.max_requests),
      credits_(config_.unexpected_bytes, size_),
      peers_(static_cast<std::size_t>(size_)),
      port_(*this, channel_->caps().max_header, channel_->caps().max_payload),
      peer_failed_(static_cast<std::size_t>(size_), 0),
      peer_refused_(static_cast<std::size_t>(size_), 0),
      placing_(static_cast<std::size_t>(size_)) {
  world_.context = 0;
  world_.rank = rank_;
  world_.size = size_;
  const ChannelCaps& caps = channel_->caps();
  eager_limit_ = config_.eager_limit ? config_.eager_limit : caps.eager_limit;
  if (eager_limit_ > caps.max_payload) eager_limit_ = caps.max_payload;
  chunk_ = config_.rndv_chunk ? config_.rndv_chunk : caps.max_payload;
  if (chunk_ > caps.max_payload) chunk_ = caps.max_payload;
  set_handler(PacketType::Eager, &Device::on_eager);
  set_handler(PacketType::Rts, &Device::on_rts);
  set_handler(PacketType::Cts, &Device::on_cts);
  set_handler(PacketType::Data, &Device::on_data);
  set_handler(PacketType::Fin, &Device::on_fin);
  set_handler(PacketType::SyncAck, &Device::on_sync_ack);
  set_handler(PacketType::CancelSend, &Device::on_cancel_send);
  set_handler(PacketType::CancelAck, &Device::on_cancel_ack);
  set_handler(PacketType::Credit, &Device::on_credit);
  set_handler(PacketType::Refused, &Device::on_refused);
  if (config_.thread_multiple) port_.enable_threads();
  if (config_.async_progress == AsyncProgress::On) port_.require_agent("ADI3_ASYNC_PROGRESS=on");
}

Device::~Device() {
  port_.stop_agent();  // no other thread touches the device from here on
  // Unexpected messages nobody received: reclaim their memory.
  matcher_.drain_unexpected([&](Request* u) { release(u); });
}

void Device::complete(Request* r) {
  if (!threads_enabled()) {
    // One thread uses the device: nobody else counts r down, so no locked
    // instruction (generalized requests complete by storing 0, not here).
    const int left = r->cc.load(std::memory_order_relaxed) - 1;
    r->cc.store(left, std::memory_order_release);
    if (left == 0) release_unshared(r);
    return;
  }
  if (r->cc.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    // Another thread of this rank may sleep in a wait on r.
    channel_->wake();
    release(r);
  }
}

void Device::release_parts(Request* r) {
  if (r->tmp && r->has(Request::kUnexpected)) scratch_free(r->tmp);
  if (r->seg) delete r->seg;
  if (r->kind == RequestKind::PersistentSend && r->mode == SendMode::Buffered) delete static_cast<Comm*>(r->ext);
  if (r->buffered) release(r->buffered);  // a buffered send's internal send (none pending: see cancel.cpp)
  if (r->type) r->type->release();
}

void Device::add_pollable(Request* r) {
  // The list holds a reference: a poll may complete r and its user may have
  // freed it already, yet the loop below still reads it.
  r->refs.fetch_add(1, std::memory_order_relaxed);
  MaybeLock g(pollable_lock_, threads_enabled());
  pollables_.push_back(*r);
  pollable_count_.fetch_add(1, std::memory_order_release);
}

bool Device::poll_pollables() {
  if (pollable_count_.load(std::memory_order_acquire) == 0) return false;
  bool any = false;
  MaybeLock g(pollable_lock_, threads_enabled());
  for (auto it = pollables_.begin(); it != pollables_.end();) {
    Request& r = *it++;
    if (!r.complete()) {
      r.cls->poll(r, r.status);
      if (!r.complete()) continue;
      any = true;
    }
    static_cast<ByTagHook&>(r).unlink();
    pollable_count_.fetch_sub(1, std::memory_order_relaxed);
    release(&r);
  }
  return any;
}

bool Device::progress() {
  if (port_.agent_on_.load(std::memory_order_relaxed)) {
    // Tells the agent a user thread is in the library (see emul/agent.hpp);
    // racing increments may be lost, only the change matters.
    port_.user_polls_.store(port_.user_polls_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  return pass(true);
}

bool Device::pass(bool user) {
  bool any = false;
  const bool mt = threads_enabled();
  if (!mt || poll_lock_.try_lock()) {
    any = io_->poll(*this) > 0;
    if (mt) poll_lock_.unlock();
  }
  if (pending_peers_.load(std::memory_order_relaxed) > 0) any |= drain_sends();
  if (port_.hooks_.due()) any |= port_.hooks_.run(mt);
  if (user && pollable_count_.load(std::memory_order_acquire) > 0) any |= poll_pollables();
  if (bsend_live_.load(std::memory_order_acquire) > 0) reap_bsends();
  return any;
}

void Device::sleep_once() { channel_->wait(std::chrono::microseconds(config_.sleep_us)); }

// Every byte here came from another process: the id and the header size
// are checked before anything reads the header.
void Device::on_packet(int src, const void* hdr, std::size_t hdr_bytes, const void* payload, std::size_t bytes) {
  if (src < 0 || src >= size_ || peer_refused_[static_cast<std::size_t>(src)]) return;
  if (hdr_bytes == 0 || hdr_bytes > port_.max_header_) {
    refuse(src, "header of %zu bytes (this channel carries 1 to %zu)", hdr_bytes, port_.max_header_);
    return;
  }
  const std::size_t id = *static_cast<const uint8_t*>(hdr);
  // A short eager packet (the message-rate and latency traffic) straight to
  // its handler: no table, no indirect call.
  if (id == static_cast<std::size_t>(PacketType::Eager) && hdr_bytes == kEagerHeaderBytes) [[likely]] {
    PacketHeader h;
    std::memcpy(&h, hdr, kEagerHeaderBytes);
    h.rreq = 0;
    h.addr = 0;
    on_eager(*this, src, h, payload, bytes);
    return;
  }
  if (id < kCoreIds) {
    Handler fn = handlers_[id];
    if (!fn) {
      refuse(src, "unknown core packet id %zu", id);
      return;
    }
    PacketHeader h;
    if (hdr_bytes == sizeof(PacketHeader)) [[likely]] {
      std::memcpy(&h, hdr, sizeof h);
    } else {
      refuse(src, "core packet id %zu with a header of %zu bytes (want %zu%s)", id, hdr_bytes, sizeof(PacketHeader),
             id == static_cast<std::size_t>(PacketType::Eager) ? " or 32" : "");
      return;
    }
    fn(*this, src, h, payload, bytes);
    return;
  }
  if (id >= static_cast<std::size_t>(PacketType::Count)) {
    refuse(src, "packet id %zu out of range (ids run below %d)", id, static_cast<int>(PacketType::Count));
    return;
  }
  void* ctx;
  PacketHandler fn = port_.kinds_.handler(id, &ctx);
  if (!fn) {
    drop(src, "packet id %zu is not registered on this rank", id);
    return;
  }
  fn(ctx, src, hdr, hdr_bytes, payload, bytes);
}

void Device::drop(int src, const char* fmt, ...) {
  char why[200];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  count_dropped(src, why);
}

void Device::count_dropped(int src, const char* why) {
  refused_.fetch_add(1, std::memory_order_relaxed);
  errors_.raise(ErrorClass::Intern, "rank %d refused a packet from rank %d: %s", rank_, src, why);
}

void Device::refuse(int src, const char* fmt, ...) {
  char why[200];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  count_dropped(src, why);  // counted and reported as any refused packet
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

void Device::on_peer_failed(int peer, const char* why) {
  if (peer < 0 || peer >= size_ || peer_failed_[static_cast<std::size_t>(peer)]) return;
  // Atomic: check_alive_slow reads it from any thread.
  std::atomic_ref<uint8_t>(peer_failed_[static_cast<std::size_t>(peer)]).store(1, std::memory_order_relaxed);
  failure_text_.assign(why, why + std::strlen(why) + 1);
  failure_class_ = ErrorClass::ProcFailed;
  failed_peers_.fetch_add(1, std::memory_order_release);
}

int Device::check_refused_slow(int peer) {
  if (peer < 0 || peer >= size_ || !peer_refused_[static_cast<std::size_t>(peer)]) return 0;
  return errors_.raise(ErrorClass::ProcFailed, "cannot send to rank %d: it was refused as failed", peer);
}

int Device::peer_failure_error() {
  return errors_.raise(failure_class_, "rank %d cannot complete: %s", rank_,
                       failure_text_.empty() ? "a peer process failed" : failure_text_.data());
}

int Device::send_control(int peer, const PacketHeader& h, const void* payload, std::size_t bytes) {
  const int e = queue_packet(peer, &h, sizeof h, Payload{payload, bytes, nullptr, 0});
  // A control packet that cannot be queued would leave peer waiting for
  // ever: the conversation is over, and said so on both sides' waits.
  if (e && error_class_of(e) == ErrorClass::NoMem) {
    lost_to_memory(peer, "a control packet (id %d) to rank %d could not be queued", static_cast<int>(h.type), peer);
  }
  return e;
}

int Device::barrier() {
  // Dissemination barrier: ceil(log2 n) rounds of zero-byte messages.
  Comm c;
  c.context = kInternalContext;
  c.rank = rank_;
  c.size = size_;
  for (int dist = 1; dist < size_; dist <<= 1) {
    int to = (rank_ + dist) % size_;
    int from = (rank_ - dist + size_) % size_;
    Request* r = nullptr;
    if (int e = irecv(nullptr, 0, Datatype::byte(), from, dist, c, &r)) return e;
    if (int e = send(nullptr, 0, Datatype::byte(), to, dist, c)) return e;
    if (int e = wait(&r, nullptr)) return e;
  }
  return 0;
}

int Device::finalize() {
  // Everything this rank still has to emit goes out before the barrier.
  if (int e = block_until([&] {
        return pending_peers_.load(std::memory_order_acquire) == 0 && bsend_live_.load(std::memory_order_acquire) == 0;
      })) {
    return e;
  }
  const int e = barrier();
  // No progress after finalize: stop the agent, so that none of its passes is
  // half-way (a completion that counted a request down but has not yet
  // dropped its reference) when the caller looks at what is left.
  port_.stop_agent();
  return e;
}

int Device::check_peer_slow(int rank, const Comm& comm, bool allow_any, const char* what) {
  if (rank == kProcNull || (allow_any && rank == kAnySource)) return 0;
  if (rank < 0 || rank >= comm.size) {
    return errors_.raise(ErrorClass::Rank, "invalid %s rank %d: the communicator has %d ranks (0..%d)%s", what, rank,
                         comm.size, comm.size - 1, allow_any ? ", or ANY_SOURCE / PROC_NULL" : ", or PROC_NULL");
  }
  return 0;
}

int Device::check_tag_slow(int tag, bool allow_any) {
  if (allow_any && tag == kAnyTag) return 0;
  if (tag < 0 || tag > kTagUb) {
    return errors_.raise(ErrorClass::Tag, "invalid tag %d: tags run from 0 to %d%s", tag, kTagUb,
                         allow_any ? " (or ANY_TAG)" : "");
  }
  return 0;
}

int Device::check_buffer_slow(const void* buf, std::size_t count, const Datatype* type) {
  if (!type) return errors_.raise(ErrorClass::Type, "datatype is null");
  if (!type->is_committed()) return errors_.raise(ErrorClass::Type, "datatype is not committed");
  if (static_cast<long long>(count) < 0) {
    return errors_.raise(ErrorClass::Count, "invalid count %lld: must be non-negative", static_cast<long long>(count));
  }
  std::size_t bytes = 0;
  if (!checked_bytes(count, type->size(), &bytes)) {
    return errors_.raise(ErrorClass::Count,
                         "count %zu of a %zu-byte datatype overflows: a message holds at most %td bytes", count,
                         type->size(), PTRDIFF_MAX);
  }
  std::ptrdiff_t span = 0;
  if (!checked_span(count, type->extent(), type->true_extent(), &span)) {
    return errors_.raise(ErrorClass::Count,
                         "count %zu of a datatype of extent %td overflows: the buffer would span more than %td bytes",
                         count, type->extent(), PTRDIFF_MAX);
  }
  if (!buf && count > 0 && type->size() > 0 && type->true_lb() == 0 && type->is_contiguous()) {
    return errors_.raise(ErrorClass::Buffer, "null buffer with count %zu", count);
  }
  return 0;
}

}  // namespace adi3
