// MPI_Cancel. A pending receive is withdrawn from the posted queue. A send
// that has not left is dropped from its peer's queue; one that has left but
// may not be matched yet is withdrawn by asking the receiver to remove it
// from its unexpected queue (communication type 2, local completion,
// emulated over point-to-point): the receiver's progress engine answers, so
// the sender's wait returns without a matching receive being posted.
#include "adi3/device.hpp"

namespace adi3 {

int Device::cancel(Request* r) {
  if (!r) return errors_.raise(ErrorClass::Request, "MPI_Cancel on a null request");
  switch (r->kind) {
    case RequestKind::Recv:
    case RequestKind::PersistentRecv:
      if (matcher_.cancel(r)) {
        r->status.cancelled = true;
        complete(r);
      }
      return 0;
    case RequestKind::Send:
    case RequestKind::PersistentSend:
      return r->mode == SendMode::Buffered ? cancel_buffered(r) : cancel_send(r);
    case RequestKind::Generalized:
      return r->cls && r->cls->cancel ? r->cls->cancel(*r, r->complete()) : 0;
    default:
      return 0;
  }
}

// A buffered send's request completed when the data went into the attached
// buffer; the message itself travels as an internal standard send. Cancel
// withdraws that one and re-arms the user's request until the outcome is
// known: then wait returns and MPI_Test_cancelled tells which it was.
int Device::cancel_buffered(Request* u) {
  Request* inner = u->buffered;
  if (!inner) return 0;  // to MPI_PROC_NULL, or a persistent one never started
  if (u->has(Request::kPersistent) && !u->has(Request::kActive)) return 0;
  if (!u->complete()) return 0;  // its cancel is pending already
  u->status.cancelled = false;
  u->refs.fetch_add(1, std::memory_order_relaxed);  // released by its completion
  u->cc.store(1, std::memory_order_release);
  inner->buffered = u;
  bool asked = false;
  int e = cancel_send(inner, &asked);
  if (!asked) resolve_buffered_cancel(inner);  // withdrawn here, or matched already
  return e;
}

void Device::resolve_buffered_cancel(Request* inner) {
  Request* u = inner->buffered;
  inner->buffered = nullptr;
  u->status.cancelled = inner->status.cancelled;
  complete(u);
}

int Device::cancel_send(Request* r, bool* asked) {
  if (r->peer < 0) return 0;
  Peer& p = peers_[static_cast<std::size_t>(r->peer)];
  {
    MaybeLock g(p.lock, threads_enabled());
    if (r->phase == kDataOut || r->phase == kCancelAsked) return 0;  // matched already, or asked already
    if (r->complete()) {
      // A synchronous or rendezvous send completes only after the match.
      if (r->has(Request::kRndv) || r->has(Request::kSync)) return 0;
      if (r->has(Request::kPersistent) && !r->has(Request::kActive)) return 0;
      // A standard eager send is complete once the channel took it, yet may
      // wait unmatched at the receiver: re-arm it until the answer comes
      // (MPI: the wait then returns whether or not it was cancelled).
      r->refs.fetch_add(1, std::memory_order_relaxed);  // released by the completion
      r->phase = kCancelAsked;
      r->cc.store(1, std::memory_order_release);
    }
    if ((r->phase == kEagerOut || r->phase == kRtsOut) && p.q.remove(r)) {
      // Still queued here: nothing left, cancel locally.
      pending_peers_.fetch_sub(1, std::memory_order_relaxed);
      if (r->phase == kEagerOut) credits_.untake(r->peer, r->bytes);  // it never left
      r->phase = kIdle;
      r->status.cancelled = true;
      for (int parts = r->cc.load(std::memory_order_acquire); parts > 0; --parts) complete(r);
      return 0;
    }
  }
  // On its way or waiting at the receiver. The answer needs r alive even if
  // the send completes normally and its user frees it meanwhile.
  r->refs.fetch_add(1, std::memory_order_relaxed);
  ++r->cancels_pending;
  PacketHeader h{PacketType::CancelSend, 0, 0, r->context, r->source, r->tag, 0, r->id(), 0, 0};
  if (asked) *asked = true;
  return send_control(r->peer, h);
}

void Device::on_cancel_send(Device& d, int src, const PacketHeader& h, const void*, std::size_t) {
  Request* u = d.matcher_.withdraw({h.context, h.source, h.tag}, src, h.sreq);
  if (u) {
    const bool eager = !u->has(Request::kRndv);
    const std::size_t bytes = u->bytes;
    d.release(u);
    if (eager) d.eager_consumed(src, bytes);  // its credit goes back
  }
  PacketHeader ack{PacketType::CancelAck, 0, 0, h.context, 0, 0, u ? 1u : 0u, h.sreq, 0, 0};
  d.send_control(src, ack);
}

void Device::on_cancel_ack(Device& d, int src, const PacketHeader& h, const void*, std::size_t) {
  // The send stays alive (cancel_send's reference) until its answer, so it
  // must be one of ours to src with an answer due.
  Request* r = d.pool_.lookup(h.sreq);
  if (!r || (r->kind != RequestKind::Send && r->kind != RequestKind::PersistentSend) || r->peer != src ||
      r->cancels_pending == 0 || h.bytes > 1 || (h.bytes == 1 && r->complete())) {
    d.refuse(src, "cancel answer for request id %#llx, which has no cancel pending at rank %d",
             static_cast<unsigned long long>(h.sreq), src);
    return;
  }
  --r->cancels_pending;
  const bool rearmed = r->phase == kCancelAsked;
  if (rearmed) r->phase = kIdle;
  if (h.bytes == 1) {
    // Withdrawn before any receive took it: no clear-to-send or
    // acknowledgement will come, so this is the send's last part.
    r->status.cancelled = true;
    if (r->has(Request::kRndv)) d.offer_answered(r);
    d.complete(r);
  } else if (rearmed) {
    d.complete(r);  // a receive took it: the send stands
  }
  if (r->buffered) d.resolve_buffered_cancel(r);  // the internal send of an Ibsend or persistent bsend
  d.release(r);                                   // the reference cancel_send took
}

}  // namespace adi3
