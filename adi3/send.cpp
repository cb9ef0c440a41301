// The send side: eager (the whole message in one packet), rendezvous
// (request-to-send, then either the receiver's native get or data packets
// after clear-to-send), synchronous and ready modes, and the per-peer send
// queue that keeps MPI's order when the channel is busy.
#include <cstring>

#include "adi3/device.hpp"
#include "adi3/request_start.hpp"
#include "segment/segment.hpp"

namespace adi3 {

namespace {

bool contiguous(const Datatype* t) { return t->is_contiguous(); }

const char* base_of(const void* buf, const Datatype* t) { return static_cast<const char*>(buf) + t->true_lb(); }

uint8_t packet_flags(SendMode mode) {
  return mode == SendMode::Synchronous ? uint8_t{kPacketSync} : mode == SendMode::Ready ? uint8_t{kPacketReady} : 0;
}

// Sends r's eager packet, header and all its data, in one channel call (the
// queued path and the at-once path alike); a failed peer is recorded in r.
[[gnu::always_inline]] inline SendResult send_eager_packet(Channel& io, ErrorLog& errors, Request* r) {
  const bool contig = contiguous(r->type);
  PacketHeader h{PacketType::Eager, packet_flags(r->mode), 0, r->context, r->source, r->tag, r->bytes, r->id(), 0, 0};
  const Payload data =
      contig ? Payload{base_of(r->buf, r->type), r->bytes, nullptr, 0} : Payload{nullptr, r->bytes, r->seg, 0};
  const SendResult res = io.send(r->peer, &h, kEagerHeaderBytes, data);
  if (res == SendResult::Failed) {
    r->status.error = errors.raise(ErrorClass::ProcFailed, "send to rank %d failed: its process is gone", r->peer);
  }
  return res;
}

}  // namespace

int Device::send_checked(const void* buf, std::size_t count, const Datatype* type, int dest, int tag, const Comm& comm,
                         SendMode mode) {
  if (int e = check_peer(dest, comm, false, "destination")) return e;
  if (int e = check_tag(tag, comm.context == kInternalContext)) return e;
  if (dest == kProcNull) return 0;
  if (int e = check_refused(comm.to_peer(dest))) return e;
  if (mode == SendMode::Buffered) return bsend(buf, count, type, dest, tag, comm, nullptr);

  // Fast path: a small message that can go out at once needs no request.
  std::size_t bytes = count * type->size();
  if (mode != SendMode::Synchronous && bytes <= eager_limit_) {
    SendResult res = try_send_now(buf, count, type, comm.to_peer(dest), tag, comm, mode);
    if (res == SendResult::Sent) return 0;
    if (res == SendResult::Failed) {
      return errors_.raise(ErrorClass::ProcFailed, "send to rank %d (tag %d) failed: the peer's process is gone", dest,
                           tag);
    }
  }
  Request* r = nullptr;
  if (int e = isend_checked(buf, count, type, dest, tag, comm, mode, &r)) return e;
  return wait(&r, nullptr);
}

// Sends a small message straight to the channel unless older traffic to the
// same peer is still queued (MPI's order) or the channel is busy.
SendResult Device::try_send_now(const void* buf, std::size_t count, const Datatype* type, int peer, int tag,
                                const Comm& comm, SendMode mode) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  std::size_t bytes = count * type->size();
  PacketHeader h{PacketType::Eager,
                 mode == SendMode::Ready ? uint8_t{kPacketReady} : uint8_t{0},
                 0,
                 comm.context,
                 comm.rank,
                 tag,
                 bytes,
                 0,
                 0,
                 0};
  MaybeLock g(p.lock, threads_enabled());
  if (!p.q.empty()) return SendResult::Busy;
  // Without credit toward the peer the message goes by rendezvous (isend).
  if (!credits_.take(peer, bytes)) return SendResult::Busy;
  SendResult res;
  if (contiguous(type)) {
    res = io_->send(peer, &h, kEagerHeaderBytes, Payload{base_of(buf, type), bytes, nullptr, 0});
  } else {
    Segment seg(const_cast<void*>(buf), count, type);
    res = io_->send(peer, &h, kEagerHeaderBytes, Payload{nullptr, bytes, &seg, 0});
  }
  if (res != SendResult::Sent) credits_.untake(peer, bytes);
  return res;
}

int Device::isend_checked(const void* buf, std::size_t count, const Datatype* type, int dest, int tag, const Comm& comm,
                          SendMode mode, Request** out) {
  *out = nullptr;
  if (int e = check_peer(dest, comm, false, "destination")) return e;
  if (int e = check_tag(tag, comm.context == kInternalContext)) return e;
  if (dest != kProcNull) {
    if (int e = check_refused(comm.to_peer(dest))) return e;
  }
  if (mode == SendMode::Buffered) return bsend(buf, count, type, dest, tag, comm, out);
  Request* r = pool_.get(this, RequestKind::Send);
  if (!r) return no_request("a send", dest);
  init_send(r, buf, count, type, dest, tag, comm, mode);
  if (!contiguous(type) && dest != kProcNull && !(r->seg = make_segment(buf, count, type))) {
    release(r);
    return no_memory("the segment (%zu bytes) of a noncontiguous send to rank %d", sizeof(Segment), dest);
  }
  start_send(r);
  *out = r;
  return 0;
}

void Device::init_send(Request* r, const void* buf, std::size_t count, const Datatype* type, int dest, int tag,
                       const Comm& comm, SendMode mode) {
  r->buf = const_cast<void*>(buf);
  r->count = count;
  r->type = type;
  type->retain();
  r->mode = mode;
  r->context = comm.context;
  r->source = comm.rank;
  r->tag = tag;
  r->peer = dest == kProcNull ? kProcNull : comm.to_peer(dest);
  r->bytes = count * type->size();
}

// (Re)starts a send whose envelope and buffer are set: isend and persistent
// start() both land here.
void Device::start_send(Request* r) {
  r->status = Status{};
  r->done = 0;
  r->remote = 0;  // no answer from the receiver yet
  clear_unshared(r, Request::kRndv | Request::kSync);
  if (r->peer == kProcNull) {
    r->cc.store(0, std::memory_order_release);
    return;
  }
  if (!contiguous(r->type) && !r->seg) r->seg = new Segment(r->buf, r->count, r->type);
  bool sync = r->mode == SendMode::Synchronous;
  // Eager when small and the receiver has room for it unexpected (flow.hpp).
  if (r->bytes <= eager_limit_ && credits_.take(r->peer, r->bytes)) {
    if (!sync && eager_now(r)) return;
    // In flight: the operation holds a reference until it completes.
    hold(r, threads_enabled());
    // A synchronous eager send also waits for the receiver's acknowledgement.
    r->cc.store(sync ? 2 : 1, std::memory_order_relaxed);
    if (sync) r->set(Request::kSync);
    queue_or_emit(r, kEagerOut);
  } else {
    hold(r, threads_enabled());
    r->cc.store(1, std::memory_order_relaxed);
    r->set(Request::kRndv);
    queue_or_emit(r, kRtsOut);
  }
}

// A standard or ready eager send (its credit taken) that the channel takes
// at once, with nothing queued before it: complete before any other code
// can see it, so the operation never holds a reference and nothing counts
// it down. False (nothing sent) when it must queue.
bool Device::eager_now(Request* r) {
  Peer& p = peers_[static_cast<std::size_t>(r->peer)];
  {
    MaybeLock g(p.lock, threads_enabled());
    if (!p.q.empty() || send_eager_packet(*io_, errors_, r) == SendResult::Busy) return false;
  }
  r->phase = kIdle;
  r->cc.store(0, std::memory_order_release);
  return true;
}

// Sets what r must emit next and emits it now, or queues it behind older
// traffic to the same peer. The phase is set under the peer's lock so a
// clear-to-send handled by another thread cannot interleave.
void Device::queue_or_emit(Request* r, uint8_t phase) {
  Peer& p = peers_[static_cast<std::size_t>(r->peer)];
  {
    MaybeLock g(p.lock, threads_enabled());
    r->phase = phase;
    if (p.q.empty() && emit(r)) return;
    if (!p.q.push_back({r, nullptr})) {
      // The queue could not grow: the send fails here, whole (nothing of
      // it is queued), rather than the process.
      if (r->phase == kEagerOut) credits_.untake(r->peer, r->bytes);
      r->phase = kIdle;
      r->status.error = no_memory("a send-queue slot for a message to rank %d", r->peer);
      for (int parts = r->cc.load(std::memory_order_acquire); parts > 0; --parts) complete(r);
      return;
    }
  }
  pending_peers_.fetch_add(1, std::memory_order_relaxed);
}

// Emits what r still has to send; true when it is all out. Called with the
// peer's lock held. May complete r.
bool Device::emit(Request* r) {
  const bool contig = contiguous(r->type);
  const char* base = contig ? base_of(r->buf, r->type) : nullptr;
  auto payload = [&](std::size_t first, std::size_t n) {
    return contig ? Payload{base + first, n, nullptr, 0} : Payload{nullptr, n, r->seg, first};
  };
  const uint8_t flags = packet_flags(r->mode);

  switch (r->phase) {
    case kEagerOut: {
      const SendResult res = send_eager_packet(*io_, errors_, r);
      if (res == SendResult::Busy) return false;
      r->phase = kIdle;
      // A synchronous send's acknowledgement will never come.
      if (res == SendResult::Failed && r->has(Request::kSync)) r->cc.fetch_sub(1, std::memory_order_acq_rel);
      complete(r);  // locally complete: the channel holds the data
      return true;
    }
    case kRtsOut: {
      // Offer our buffer for a single-copy get when the data is contiguous.
      uint64_t addr = contig && rndv_get_to(r->peer) ? reinterpret_cast<uintptr_t>(base) : 0;
      PacketHeader h{PacketType::Rts, flags, 0, r->context, r->source, r->tag, r->bytes, r->id(), 0, addr};
      // Idle before the packet leaves: the answer may complete r at once.
      r->phase = kIdle;
      // Counted before it leaves too: another thread may handle the answer.
      std::atomic<uint32_t>& offers = peers_[static_cast<std::size_t>(r->peer)].offers;
      const bool offer = addr && offers_get(r);
      if (offer) {
        offers.fetch_add(1, std::memory_order_relaxed);
        channel_->offer_began(r->peer, base, r->bytes);
      }
      SendResult res = io_->send(r->peer, &h, sizeof h, Payload{});
      if (res != SendResult::Sent && offer) {
        offers.fetch_sub(1, std::memory_order_relaxed);
        channel_->offer_ended(r->peer, base, r->bytes);
      }
      if (res == SendResult::Busy) {
        r->phase = kRtsOut;
        return false;
      }
      if (res == SendResult::Failed) {
        r->status.error = errors_.raise(ErrorClass::ProcFailed, "send to rank %d failed: its process is gone", r->peer);
        complete(r);
      }
      return true;
    }
    case kDataOut: {
      while (r->done < r->want) {
        std::size_t n = std::min(chunk_, r->want - r->done);
        PacketHeader h{PacketType::Data, 0, 0, r->context, r->source, r->tag, n, r->id(), r->remote, r->done};
        SendResult res = io_->send(r->peer, &h, sizeof h, payload(r->done, n));
        if (res == SendResult::Busy) return false;
        if (res == SendResult::Failed) {
          r->status.error = errors_.raise(ErrorClass::ProcFailed, "send to rank %d failed after %zu of %zu bytes",
                                          r->peer, r->done, r->want);
          break;
        }
        r->done += n;
      }
      r->phase = kIdle;
      complete(r);
      return true;
    }
    default:
      return true;
  }
}

// A packet to peer now, or copied to the back of its queue when older items
// wait there or the channel is busy: nothing overtakes, nothing is dropped.
int Device::queue_packet(int peer, const void* hdr, std::size_t hdr_bytes, const Payload& payload) {
  if (int e = check_refused(peer)) return e;
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  {
    MaybeLock g(p.lock, threads_enabled());
    if (p.q.empty()) {
      SendResult res = io_->send(peer, hdr, hdr_bytes, payload);
      if (res == SendResult::Sent) return 0;
      if (res == SendResult::Failed) {
        return errors_.raise(ErrorClass::ProcFailed, "cannot send to rank %d: its process is gone", peer);
      }
    }
    OutPacket* copy = OutPacket::make(hdr, hdr_bytes, payload);
    if (!copy || !p.q.push_back({nullptr, copy})) {
      if (copy) OutPacket::destroy(copy);
      return no_memory("a copy of a packet for rank %d while the channel is busy (%zu bytes)", peer,
                       hdr_bytes + payload.bytes);
    }
  }
  pending_peers_.fetch_add(1, std::memory_order_relaxed);
  return 0;
}

// Emits the peer's queue in order until the channel is busy.
bool Device::drain_peer(int peer) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  bool any = false;
  MaybeLock g(p.lock, threads_enabled());
  while (!p.q.empty()) {
    OutItem it = p.q.front();
    if (it.req) {
      // emit() may complete and recycle the request; the slot only holds
      // its address, which is not read again.
      if (!emit(it.req)) return any;
    } else {
      SendResult res = io_->send(peer, it.pkt->hdr(), it.pkt->hdr_bytes,
                                 Payload{it.pkt->payload(), it.pkt->payload_bytes, nullptr, 0});
      if (res == SendResult::Busy) return any;
      // Failed: the peer is gone; its failure is reported to waits on it.
      OutPacket::destroy(it.pkt);
    }
    p.q.pop_front();
    pending_peers_.fetch_sub(1, std::memory_order_relaxed);
    any = true;
  }
  return any;
}

bool Device::drain_sends() {
  bool any = false;
  const bool mt = threads_enabled();
  for (int peer = 0; peer < size_; ++peer) {
    Peer& p = peers_[static_cast<std::size_t>(peer)];
    // Single-threaded, a peer with nothing queued is skipped without its
    // lock; with threads, drain_peer looks at the queue under the lock.
    if (!mt && p.q.empty()) continue;
    any |= drain_peer(peer);
  }
  return any;
}

// The send an answer from src names: a live, incomplete send of this rank to
// src in the packet's context. Anything else is refused (src is then
// treated as failed) and nullptr returned.
Request* Device::answered_send(int src, const PacketHeader& h, const char* what) {
  Request* r = pool_.lookup(h.sreq);
  if (!r || (r->kind != RequestKind::Send && r->kind != RequestKind::PersistentSend) || r->peer != src ||
      r->context != h.context || r->complete()) {
    refuse(src, "%s for request id %#llx, which is no pending send of this rank to rank %d (context %u)", what,
           static_cast<unsigned long long>(h.sreq), src, h.context);
    return nullptr;
  }
  return r;
}

// Clear-to-send: stream h.bytes (at most the message) to the receive h.rreq.
void Device::on_cts(Device& d, int src, const PacketHeader& h, const void*, std::size_t) {
  Request* r = d.answered_send(src, h, "clear-to-send");
  if (!r) return;
  if (!r->has(Request::kRndv) || r->phase != kIdle || r->remote != 0 || h.rreq == 0) {
    d.refuse(src, "clear-to-send for a send that is not waiting for one (phase %d)", r->phase);
    return;
  }
  if (h.bytes > r->bytes) {
    d.refuse(src, "clear-to-send asks for %llu bytes of a message of %zu", static_cast<unsigned long long>(h.bytes),
             r->bytes);
    return;
  }
  d.offer_answered(r);
  r->remote = h.rreq;
  r->want = h.bytes;
  r->done = 0;
  d.queue_or_emit(r, kDataOut);
}

// The receiver fetched the data itself (native get).
void Device::on_fin(Device& d, int src, const PacketHeader& h, const void*, std::size_t) {
  Request* r = d.answered_send(src, h, "fin");
  if (!r) return;
  if (!r->has(Request::kRndv) || r->phase != kIdle || r->remote != 0 || h.bytes > r->bytes) {
    d.refuse(src, "fin (%llu bytes) for a send that is not waiting for one", static_cast<unsigned long long>(h.bytes));
    return;
  }
  d.offer_answered(r);
  r->remote = h.rreq ? h.rreq : 1;  // answered: a second fin or clear-to-send is refused
  d.complete(r);
}

// A rendezvous send whose buffer the peer may fetch itself: contiguous, over
// a channel with a native get, and large enough for the peer to use it.
bool Device::offers_get(const Request* r) const {
  return contiguous(r->type) && rndv_get_to(r->peer) && r->bytes >= caps_of(r->peer).get_min;
}

// The peer answered r's request-to-send (clear-to-send, fin, or withdrawn
// by a cancel): it no longer counts as an offer crossing the peer's sends.
void Device::offer_answered(const Request* r) {
  if (!offers_get(r)) return;
  channel_->offer_ended(r->peer, base_of(r->buf, r->type), r->bytes);
  std::atomic<uint32_t>& offers = peers_[static_cast<std::size_t>(r->peer)].offers;
  uint32_t n = offers.load(std::memory_order_relaxed);
  while (n > 0 && !offers.compare_exchange_weak(n, n - 1, std::memory_order_relaxed)) {
  }
}

// A synchronous eager send was matched: its second and last part.
void Device::on_sync_ack(Device& d, int src, const PacketHeader& h, const void*, std::size_t) {
  Request* r = d.answered_send(src, h, "synchronous-send acknowledgement");
  if (!r) return;
  if (!r->has(Request::kSync) || r->has(Request::kRndv)) {
    d.refuse(src, "acknowledgement for a send that waits for none");
    return;
  }
  r->clear(Request::kSync);
  d.complete(r);
}

}  // namespace adi3
