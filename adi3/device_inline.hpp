// The point-to-point fast paths of Device, compiled into their callers (the
// MPI binding's entry points and the core's completion calls): the common
// case of a small contiguous standard-mode message from one thread goes
// from MPI_Send/Isend/Irecv/Wait to the channel without a call into the
// core, and its checks are made once. Whatever they do not cover (other
// modes, threads, noncontiguous or large messages, bad arguments, a busy
// channel) is handed to the general call, which checks and reports it.
#pragma once
#include "adi3/device.hpp"
#include "adi3/request_start.hpp"

namespace adi3 {

// What an eager packet carries of PacketHeader: its first 32 bytes. Built
// as such, the fast send writes no rreq and addr it never sends.
struct EagerHeader {
  PacketType type;
  uint8_t flags;
  uint16_t reserved;
  uint32_t context;
  int32_t source;
  int32_t tag;
  uint64_t bytes;
  uint64_t sreq;
};
static_assert(sizeof(EagerHeader) == kEagerHeaderBytes &&
              offsetof(EagerHeader, context) == offsetof(PacketHeader, context) &&
              offsetof(EagerHeader, tag) == offsetof(PacketHeader, tag) &&
              offsetof(EagerHeader, bytes) == offsetof(PacketHeader, bytes) &&
              offsetof(EagerHeader, sreq) == offsetof(PacketHeader, sreq));

[[gnu::always_inline]] inline int Device::finish_plain(Request** slot, Status* status) {
  Request* r = *slot;
  const int e = r->status.error;
  if (status) *status = r->status;
  // The user's reference goes: its MPI_Request no longer names r.
  if (r->handle.load(std::memory_order_relaxed) == Request::kHandleLive) {
    r->handle.store(Request::kNoHandle, std::memory_order_relaxed);
  }
  release(r);
  *slot = nullptr;
  return e;
}

// The caller checked: one thread, a contiguous type, bytes within the
// eager limit, a valid destination. Busy (nothing sent, no credit spent)
// when older traffic to peer is queued, credit is short or the channel is
// full; Failed when the peer is gone.
[[gnu::always_inline]] inline SendResult Device::eager_fast(const void* buf, std::size_t bytes, const Datatype* type,
                                                            int peer, int tag, const Comm& comm, uint64_t sreq) {
  const Peer& p = peers_[static_cast<std::size_t>(peer)];
  if (!p.q.empty() || !credits_.take(peer, bytes)) [[unlikely]]
    return SendResult::Busy;
  const EagerHeader h{PacketType::Eager, 0, 0, comm.context, comm.rank, tag, bytes, sreq};
  const SendResult res = io_->send(peer, &h, kEagerHeaderBytes,
                                   Payload{static_cast<const char*>(buf) + type->true_lb(), bytes, nullptr, 0});
  if (res != SendResult::Sent) [[unlikely]]
    credits_.untake(peer, bytes);
  return res;
}

[[gnu::always_inline]] inline int Device::send_fast(const void* buf, std::size_t count, const Datatype* type, int dest,
                                                    int tag, const Comm& comm) {
  const std::size_t bytes = count * type->size();
  if (static_cast<unsigned>(dest) < static_cast<unsigned>(comm.size) &&
      static_cast<unsigned>(tag) <= static_cast<unsigned>(kTagUb) && bytes <= eager_limit_ && type->is_contiguous() &&
      !threads_enabled() && refused_peers_.load(std::memory_order_relaxed) == 0) [[likely]] {
    if (eager_fast(buf, bytes, type, comm.to_peer(dest), tag, comm, 0) == SendResult::Sent) [[likely]]
      return 0;
  }
  return send_checked(buf, count, type, dest, tag, comm, SendMode::Standard);
}

[[gnu::always_inline]] inline int Device::isend_fast(const void* buf, std::size_t count, const Datatype* type, int dest,
                                                     int tag, const Comm& comm, Request** out) {
  const std::size_t bytes = count * type->size();
  if (static_cast<unsigned>(dest) < static_cast<unsigned>(comm.size) &&
      static_cast<unsigned>(tag) <= static_cast<unsigned>(kTagUb) && bytes <= eager_limit_ && type->is_contiguous() &&
      !threads_enabled() && refused_peers_.load(std::memory_order_relaxed) == 0) [[likely]] {
    // No request to be had is reported here: the general call would try
    // the pool again, and its second attempt could hide the failure.
    Request* r = pool_.get<false>(this, RequestKind::Send);
    if (!r) [[unlikely]]
      return no_request("a send", dest);
    // init_send for a fresh request (mode Standard, phase idle already).
    const int peer = comm.to_peer(dest);
    r->buf = const_cast<void*>(buf);
    r->count = count;
    r->type = type;
    type->retain();
    r->context = comm.context;
    r->source = comm.rank;
    r->tag = tag;
    r->peer = peer;
    r->bytes = bytes;
    // Taken by the channel at once: complete, and the operation holds no
    // reference (as in eager_now). Otherwise the general start queues it
    // or goes by rendezvous.
    if (eager_fast(buf, bytes, type, peer, tag, comm, r->id()) == SendResult::Sent) [[likely]] {
      r->cc.store(0, std::memory_order_release);
    } else {
      start_send(r);
    }
    *out = r;
    return 0;
  }
  return isend_checked(buf, count, type, dest, tag, comm, SendMode::Standard, out);
}

// A receive's pattern and buffer (irecv, irecv_fast, recv_init).
inline void Device::init_recv(Request* r, void* buf, std::size_t count, const Datatype* type, int source, int tag,
                              const Comm& comm) {
  r->buf = buf;
  r->count = count;
  r->type = type;
  type->retain();
  r->context = comm.context;
  r->source = source;
  r->tag = tag;
  r->peer = source >= 0 ? comm.to_peer(source) : -1;
}

[[gnu::always_inline]] inline int Device::irecv_fast(void* buf, std::size_t count, const Datatype* type, int source,
                                                     int tag, const Comm& comm, Request** out) {
  if ((static_cast<unsigned>(source) < static_cast<unsigned>(comm.size) || source == kAnySource) &&
      (static_cast<unsigned>(tag) <= static_cast<unsigned>(kTagUb) || tag == kAnyTag) && type->is_contiguous())
      [[likely]] {
    Request* r = pool_.get<false>(this, RequestKind::Recv);
    if (!r) [[unlikely]]
      return no_request("a receive", source);
    init_recv(r, buf, count, type, source, tag, comm);
    // start_recv for a fresh request (empty status, no flags, cc = 1).
    hold(r, threads_enabled());
    if (Request* u = matcher_.post(r)) matched(r, u);
    *out = r;
    return 0;
  }
  return irecv_checked(buf, count, type, source, tag, comm, out);
}

[[gnu::always_inline]] inline int Device::wait_fast(Request** slot, Status* status) {
  Request* r = *slot;
  if (r && !r->cls && !r->has(Request::kPersistent)) [[likely]] {
    if (!r->complete()) progress();
    if (r->complete()) [[likely]]
      return finish_plain(slot, status);
  }
  return wait(slot, status);
}

[[gnu::always_inline]] inline int Device::test_fast(Request** slot, bool* flag, Status* status) {
  Request* r = *slot;
  if (r && !r->cls && !r->has(Request::kPersistent)) [[likely]] {
    if (!r->complete()) progress();
    *flag = r->complete();
    return *flag ? finish_plain(slot, status) : 0;
  }
  return test(slot, flag, status);
}

}  // namespace adi3
