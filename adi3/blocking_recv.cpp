// The blocking receive. Without threads its request lives on the caller's
// stack, not in the pool: it is posted like any receive and the progress
// engine completes it, but getting, recycling and reporting a pool request
// cost more than the receive itself for a small message.
//
// A posted request needs a wire id only when a rendezvous must stream its
// data (clear-to-send: the data packets find the receive by that id). Then
// the engine hands the receive over to a pool request (hand_off) and
// completes the stack one; the caller finishes with a wait on the new one.
// An eager message, and a rendezvous the receiver fetches itself (native
// get, then fin), complete the stack request directly.
#include "adi3/device.hpp"

namespace adi3 {

int Device::recv_checked(void* buf, std::size_t count, const Datatype* type, int source, int tag, const Comm& comm,
                         Status* status) {
  // With threads on (MPI_THREAD_MULTIPLE, the agent) the pool request's
  // reference counting keeps the memory alive for whichever thread
  // completes it; without threads the caller's stack does.
  if (source == kProcNull || !type->is_contiguous() || threads_enabled()) [[unlikely]] {
    Request* r = nullptr;
    if (int e = irecv_checked(buf, count, type, source, tag, comm, &r)) return e;
    return wait(&r, status);
  }
  if (int e = check_peer(source, comm, true, "source")) return e;
  if (int e = check_tag(tag, true)) return e;
  Request s;
  s.kind = RequestKind::BlockingRecv;
  s.dev = this;
  // No reference on the type: the caller's outlives the call.
  s.buf = buf;
  s.count = count;
  s.type = type;
  s.context = comm.context;
  s.source = source;
  s.tag = tag;
  s.peer = source >= 0 ? comm.to_peer(source) : -1;
  // The caller's reference and the operation's: the engine's release never
  // drops the last one, so it never gives s to the pool.
  s.refs.store(2, std::memory_order_relaxed);
  s.cc.store(1, std::memory_order_relaxed);
  if (Request* u = matcher_.post(&s)) matched(&s, u);
  if (int e = block_until([&] { return s.complete(); })) {
    // Nothing may point at s once we return. No other thread runs the
    // engine, so s is either still posted or complete.
    if (matcher_.cancel(&s)) return e;
  }
  if (auto* q = static_cast<Request*>(s.ext)) return wait(&q, status);
  if (status) *status = s.status;
  return s.status.error;
}

// A stack receive that must stream a rendezvous message: a pool request
// takes over (it gets the wire id the data packets name), the stack one
// completes pointing at it. nullptr when no request can be had (the message
// is lost: the stack receive fails, the sender is treated as failed).
Request* Device::hand_off(Request* s) {
  Request* q = pool_.get(this, RequestKind::Recv);
  if (!q) {
    s->status.error = no_request("a rendezvous receive", s->status.source);
    lost_to_memory(s->peer, "the rendezvous receive of a message of %zu bytes from rank %d could not be kept", s->bytes,
                   s->peer);
    complete(s);
    return nullptr;
  }
  q->buf = s->buf;
  q->count = s->count;
  q->type = s->type;
  q->type->retain();
  q->context = s->context;
  q->source = s->source;
  q->tag = s->tag;
  q->peer = s->peer;
  q->status = s->status;
  q->bytes = s->bytes;
  q->want = s->want;
  q->done = s->done;
  q->remote = s->remote;
  q->remote_addr = s->remote_addr;
  q->set(Request::kRndv);
  // The caller's reference (taken over from s) and the operation's.
  q->refs.store(2, std::memory_order_relaxed);
  s->ext = q;
  complete(s);
  return q;
}

}  // namespace adi3
