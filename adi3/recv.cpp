// The receive side: posting receives against the unexpected queue, arrivals
// against the posted queue, eager delivery, the receiver's half of
// rendezvous, probes, matched probes and cancel.
#include <algorithm>
#include <cstring>
#include <tbb/scalable_allocator.h>

#include "adi3/device.hpp"
#include "adi3/device_inline.hpp"
#include "adi3/request_start.hpp"
#include "segment/segment.hpp"

namespace adi3 {

namespace {

void set_proc_null(Status* s) {
  if (!s) return;
  *s = Status{};
  s->source = kProcNull;
  s->tag = kAnyTag;
}

}  // namespace

int Device::irecv_checked(void* buf, std::size_t count, const Datatype* type, int source, int tag, const Comm& comm,
                          Request** out) {
  *out = nullptr;
  if (int e = check_peer(source, comm, true, "source")) return e;
  if (int e = check_tag(tag, true)) return e;
  Request* r = pool_.get(this, RequestKind::Recv);
  if (!r) return no_request("a receive", source);
  init_recv(r, buf, count, type, source, tag, comm);
  if (!type->is_contiguous() && source != kProcNull && !(r->seg = make_segment(buf, count, type))) {
    release(r);
    return no_memory("the segment (%zu bytes) of a noncontiguous receive from rank %d", sizeof(Segment), source);
  }
  start_recv(r);
  *out = r;
  return 0;
}

// (Re)starts a receive whose pattern and buffer are set (irecv, start()).
void Device::start_recv(Request* r) {
  r->status = Status{};
  r->done = 0;
  clear_unshared(r, Request::kRndv | Request::kNeedsAck);
  if (r->source == kProcNull) {
    set_proc_null(&r->status);
    r->cc.store(0, std::memory_order_release);
    return;
  }
  hold(r, threads_enabled());
  r->cc.store(1, std::memory_order_relaxed);
  if (!r->type->is_contiguous() && !r->seg) r->seg = new Segment(r->buf, r->count, r->type);
  if (Request* u = matcher_.post(r)) matched(r, u);
}

std::size_t Device::capacity(const Request* r) const { return r->count * r->type->size(); }

void Device::unpack_at(Request* r, std::size_t offset, const void* data, std::size_t bytes) {
  if (!bytes) return;
  if (r->seg) {
    r->seg->unpack(offset, offset + bytes, data);
  } else {
    copy_bytes(static_cast<char*>(r->buf) + r->type->true_lb() + offset, data, bytes);
  }
}

// Receive r matched the earlier arrival u: r takes over u's message.
void Device::matched(Request* r, Request* u) {
  r->status.source = u->source;
  r->status.tag = u->tag;
  r->peer = u->peer;
  r->bytes = u->bytes;
  r->remote = u->remote;
  r->remote_addr = u->remote_addr;
  if (u->has(Request::kNeedsAck)) r->set(Request::kNeedsAck);
  if (u->has(Request::kRndv)) {
    release(u);
    start_rndv_recv(r);
  } else {
    deliver_eager(r, u->tmp, u->bytes);
    const int src = u->peer;
    const std::size_t bytes = u->bytes;
    release(u);
    eager_consumed(src, bytes);
  }
}

void Device::deliver_eager(Request* r, const void* data, std::size_t bytes) {
  std::size_t cap = capacity(r);
  std::size_t n = std::min(bytes, cap);
  unpack_at(r, 0, data, n);
  r->status.bytes = n;
  if (bytes > cap) {
    r->status.error = errors_.raise(ErrorClass::Truncate,
                                    "message of %zu bytes from rank %d (tag %d) truncated: the receive buffer "
                                    "holds %zu bytes",
                                    bytes, r->status.source, r->status.tag, cap);
  }
  if (r->has(Request::kNeedsAck)) {
    PacketHeader ack{PacketType::SyncAck, 0, 0, r->context, 0, 0, 0, r->remote, r->id(), 0};
    send_control(r->peer, ack);
  }
  complete(r);
}

void Device::start_rndv_recv(Request* r) {
  r->set(Request::kRndv);  // data packets for it are expected now
  std::size_t cap = capacity(r);
  r->want = std::min(r->bytes, cap);
  r->done = 0;
  r->status.bytes = r->want;
  if (r->bytes > cap) {
    r->status.error = errors_.raise(ErrorClass::Truncate,
                                    "message of %zu bytes from rank %d (tag %d) truncated: the receive buffer "
                                    "holds %zu bytes",
                                    r->bytes, r->status.source, r->status.tag, cap);
  }
  if (r->want > 0 && r->remote_addr && !r->seg && rndv_get_to(r->peer) && r->bytes >= caps_of(r->peer).get_min) {
    // Single copy: fetch the sender's buffer, then tell it we are done.
    char* dst = static_cast<char*>(r->buf) + r->type->true_lb();
    // While our own offer to the peer waits for its answer, the peer is
    // deciding the same for ours: the channel chooses for both alike.
    const bool crossing = peers_[static_cast<std::size_t>(r->peer)].offers.load(std::memory_order_relaxed) > 0;
    const int got = crossing ? channel_->get_crossing(r->peer, dst, r->remote_addr, r->want)
                             : channel_->get(r->peer, dst, r->remote_addr, r->want);
    if (got == 0) {
      PacketHeader fin{PacketType::Fin, 0, 0, r->context, 0, 0, r->want, r->remote, r->id(), 0};
      send_control(r->peer, fin);
      complete(r);
      return;
    }
  }
  // The data packets will name the receive by its wire id: a blocking
  // receive on the stack has none and moves to a pool request.
  if (r->kind == RequestKind::BlockingRecv && !(r = hand_off(r))) return;
  PacketHeader cts{PacketType::Cts, 0, 0, r->context, 0, 0, r->want, r->remote, r->id(), 0};
  if (r->want) io_->expect_payload(r->peer);  // a stream channel reads the data into place
  send_control(r->peer, cts);
  if (r->want == 0) complete(r);
}

void Device::on_eager(Device& d, int src, const PacketHeader& h, const void* payload, std::size_t bytes) {
  if (h.bytes != bytes) {
    d.refuse(src, "eager message says %llu bytes and carries %zu", static_cast<unsigned long long>(h.bytes), bytes);
    return;
  }
  if (!d.credits_.arrived(src, bytes)) {
    d.refuse(src,
             "eager message of %zu bytes beyond its credit: rank %d already holds its share of %lld unexpected "
             "bytes (ADI3_UNEXPECTED_BYTES)",
             bytes, d.rank_, static_cast<long long>(d.credits_.share()));
    return;
  }
  bool sync = h.flags & kPacketSync;
  bool lost = false;
  Request* r = d.matcher_.arrive({h.context, h.source, h.tag}, [&]() -> Request* {
    Request* u = d.pool_.get(&d, RequestKind::Recv);
    void* copy = bytes ? scratch_alloc(bytes) : nullptr;
    if (!u || (bytes && !copy)) {
      if (u) d.pool_.put(u);
      if (copy) scratch_free(copy);
      lost = true;
      return nullptr;
    }
    u->set(Request::kUnexpected);
    u->context = h.context;
    u->source = h.source;
    u->tag = h.tag;
    u->peer = src;
    u->bytes = bytes;
    if (bytes) {
      u->tmp = copy;
      std::memcpy(u->tmp, payload, bytes);
    }
    // The sender's request: a cancel names the message by it.
    u->remote = h.sreq;
    if (sync) u->set(Request::kNeedsAck);
    return u;
  });
  if (lost) {
    d.lost_to_memory(src, "an unexpected message of %zu bytes from rank %d (tag %d) could not be kept", bytes, src,
                     h.tag);
    return;
  }
  if (!r) return;
  r->status.source = h.source;
  r->status.tag = h.tag;
  r->peer = src;
  if (sync) {
    r->set(Request::kNeedsAck);
    r->remote = h.sreq;
  }
  if (!sync && !r->seg && bytes <= d.capacity(r) && !d.threads_enabled()) [[likely]] {
    // deliver_eager's common case in line: it fits, nothing to acknowledge,
    // and one thread completes r (as complete() does without threads). The
    // copy stays a call: copied in line, the 8-byte ping-pong measured
    // 0.087 -> 0.091 us (A/B alternated, libadi3 alone swapped).
    d.unpack_at(r, 0, payload, bytes);
    r->status.bytes = bytes;
    const int left = r->cc.load(std::memory_order_relaxed) - 1;
    r->cc.store(left, std::memory_order_release);
    if (left == 0) d.release(r);
  } else {
    d.deliver_eager(r, payload, bytes);
  }
  // eager_consumed in line: a Credit packet only once half a share is owed.
  if (const uint64_t back = d.credits_.consumed(src, bytes)) [[unlikely]] {
    PacketHeader c{PacketType::Credit, 0, 0, 0, 0, 0, back, 0, 0, 0};
    d.send_control(src, c);
  }
}

void Device::on_rts(Device& d, int src, const PacketHeader& h, const void*, std::size_t) {
  bool lost = false;
  Request* r = d.matcher_.arrive({h.context, h.source, h.tag}, [&]() -> Request* {
    Request* u = d.pool_.get(&d, RequestKind::Recv);
    if (!u) {
      lost = true;
      return nullptr;
    }
    u->set(Request::kUnexpected);
    u->set(Request::kRndv);
    u->context = h.context;
    u->source = h.source;
    u->tag = h.tag;
    u->peer = src;
    u->bytes = h.bytes;
    u->remote = h.sreq;
    u->remote_addr = h.addr;
    return u;
  });
  if (lost) {
    d.lost_to_memory(src, "the request-to-send of a message of %llu bytes from rank %d (tag %d) could not be kept",
                     static_cast<unsigned long long>(h.bytes), src, h.tag);
    return;
  }
  if (!r) return;
  r->status.source = h.source;
  r->status.tag = h.tag;
  r->peer = src;
  r->bytes = h.bytes;
  r->remote = h.sreq;
  r->remote_addr = h.addr;
  d.start_rndv_recv(r);
}

// Rendezvous data for the receive h.rreq, at offset h.addr: only a matched,
// incomplete receive from src, and only bytes it asked for and has not got.
void Device::on_data(Device& d, int src, const PacketHeader& h, const void* payload, std::size_t bytes) {
  Request* r = d.data_target(src, h, bytes);
  if (!r) return;
  d.unpack_at(r, h.addr, payload, bytes);
  r->done += bytes;
  if (r->done >= r->want) d.complete(r);
}

// The receive that data h (bytes long) from src is for, or nullptr (src
// refused) when it is for none or does not fit.
Request* Device::data_target(int src, const PacketHeader& h, std::size_t bytes) {
  Request* r = pool_.lookup(h.rreq);
  if (!r || (r->kind != RequestKind::Recv && r->kind != RequestKind::PersistentRecv) || r->peer != src ||
      r->context != h.context || !r->has(Request::kRndv) || r->has(Request::kUnexpected) || r->complete()) {
    refuse(src, "data for request id %#llx, which is no matched receive of this rank from rank %d",
           static_cast<unsigned long long>(h.rreq), src);
    return nullptr;
  }
  if (h.bytes != bytes || h.addr > r->want || bytes > r->want - h.addr || bytes > r->want - r->done) {
    refuse(src, "data of %zu bytes (header: %llu) at offset %llu for a receive that wants %zu bytes and has %zu", bytes,
           static_cast<unsigned long long>(h.bytes), static_cast<unsigned long long>(h.addr), r->want, r->done);
    return nullptr;
  }
  return r;
}

// The header of a packet whose payload may be placed (rendezvous data or
// an eager message, whose header is shorter) from a peer not refused.
bool Device::placeable_header(int src, const void* hdr, std::size_t hdr_bytes, PacketHeader* h) const {
  if (src < 0 || src >= size_ || peer_refused_[static_cast<std::size_t>(src)] || hdr_bytes == 0) return false;
  const auto type = static_cast<PacketType>(*static_cast<const uint8_t*>(hdr));
  if (type == PacketType::Data && hdr_bytes == sizeof(PacketHeader)) {
    std::memcpy(h, hdr, sizeof *h);
    return true;
  }
  if (type == PacketType::Eager && (hdr_bytes == sizeof(PacketHeader) || hdr_bytes == kEagerHeaderBytes)) {
    *h = PacketHeader{};
    std::memcpy(h, hdr, hdr_bytes);
    return true;
  }
  return false;
}

// A stream channel asks where a packet's payload goes before reading it:
// rendezvous data for a receive it fits (the checks of on_data; a packet
// that fails them is delivered and refused as usual), or an eager message
// a posted receive matches.
bool Device::place(int src, const void* hdr, std::size_t hdr_bytes, std::size_t bytes, Placement* where) {
  PacketHeader h;
  if (!placeable_header(src, hdr, hdr_bytes, &h)) return false;
  if (h.type == PacketType::Eager) return place_eager(src, h, bytes, where);
  Request* r = pool_.lookup(h.rreq);
  if (!r || (r->kind != RequestKind::Recv && r->kind != RequestKind::PersistentRecv) || r->peer != src ||
      r->context != h.context || !r->has(Request::kRndv) || r->has(Request::kUnexpected) || r->complete() ||
      h.bytes != bytes || h.addr > r->want || bytes > r->want - h.addr || bytes > r->want - r->done) {
    return false;
  }
  if (r->seg) {
    where->seg = r->seg;
    where->first = h.addr;
  } else {
    where->data = static_cast<char*>(r->buf) + r->type->true_lb() + h.addr;
  }
  return true;
}

// The payload place() said yes to is in the buffer. Nothing from src ran
// in between, and a matched rendezvous receive is neither cancelled nor
// completed by anything else, so the checks still hold; they are made
// again all the same (a peer failure would have ended the placement).
void Device::on_placed(int src, const void* hdr, std::size_t hdr_bytes, std::size_t bytes) {
  PacketHeader h;
  if (!placeable_header(src, hdr, hdr_bytes, &h)) {
    // Refused while its payload was read: the receive place_eager took
    // fails with the peer.
    if (src >= 0 && src < size_ && placing_[static_cast<std::size_t>(src)].r) {
      placed_eager(src, bytes, true);
    }
    return;
  }
  if (h.type == PacketType::Eager) return placed_eager(src, bytes, false);
  Request* r = data_target(src, h, bytes);
  if (!r) return;
  r->done += bytes;
  if (r->done >= r->want) complete(r);
}

// An eager message whose header is in and whose payload is still on its
// way: when a posted receive matches it (the matching on_eager would do;
// nothing else from src is delivered before it, so the order of matches
// is the same), the receive takes it now and the payload is read straight
// into its buffer. Unexpected messages are staged as before.
bool Device::place_eager(int src, const PacketHeader& h, std::size_t bytes, Placement* where) {
  // A small one is cheaper to copy: a placement makes a stream channel read
  // the next few headers on their own (a system call each).
  constexpr std::size_t kPlaceFrom = 8 * 1024;
  if (h.bytes != bytes || bytes < kPlaceFrom) return false;  // (on_eager refuses a wrong size)
  PlacingEager& pe = placing_[static_cast<std::size_t>(src)];
  if (pe.r) return false;  // (the channel places one payload per peer at a time)
  Request* r = matcher_.arrive({h.context, h.source, h.tag}, []() -> Request* { return nullptr; });
  if (!r) return false;
  // From here the message is this receive's, as in on_eager.
  r->status.source = h.source;
  r->status.tag = h.tag;
  r->peer = src;
  if (h.flags & kPacketSync) {
    r->set(Request::kNeedsAck);
    r->remote = h.sreq;
  }
  pe.r = r;
  if (bytes > capacity(r)) {
    // Longer than the receive: staged whole, truncated on delivery.
    if (!(pe.tmp = scratch_alloc(bytes))) {
      // Delivered at once with nothing (the receive fails with NO_MEM);
      // the payload is read and dropped.
      r->status.error = errors_.raise(ErrorClass::NoMem,
                                      "rank %d: out of memory allocating %zu bytes to receive a message from rank %d "
                                      "(tag %d) longer than its receive buffer",
                                      rank_, bytes, r->status.source, r->status.tag);
    }
    where->data = static_cast<char*>(pe.tmp);
  } else if (r->seg) {
    where->seg = r->seg;
    where->first = 0;
  } else {
    where->data = static_cast<char*>(r->buf) + r->type->true_lb();
  }
  return true;
}

// The eager payload place_eager placed is in: complete its receive (with
// the peer's failure when it was refused meanwhile).
void Device::placed_eager(int src, std::size_t bytes, bool refused) {
  PlacingEager& pe = placing_[static_cast<std::size_t>(src)];
  Request* r = pe.r;
  if (!r) return;
  pe.r = nullptr;
  // The bytes arrived under the sender's credit: counted and given back
  // at once, as for a message a posted receive took (on_eager).
  if (refused) {
    r->status.error = peer_failure_error();
    complete(r);
  } else if (!credits_.arrived(src, bytes)) {
    refuse(src,
           "eager message of %zu bytes beyond its credit: rank %d already holds its share of %lld unexpected "
           "bytes (ADI3_UNEXPECTED_BYTES)",
           bytes, rank_, static_cast<long long>(credits_.share()));
    r->status.error = peer_failure_error();
    complete(r);
  } else if (pe.tmp || r->status.error) {
    deliver_eager(r, pe.tmp, pe.tmp ? bytes : 0);  // truncated (or NO_MEM: nothing)
    eager_consumed(src, bytes);
  } else {
    r->status.bytes = bytes;
    if (r->has(Request::kNeedsAck)) {
      PacketHeader ack{PacketType::SyncAck, 0, 0, r->context, 0, 0, 0, r->remote, r->id(), 0};
      send_control(r->peer, ack);
    }
    complete(r);
    eager_consumed(src, bytes);
  }
  if (pe.tmp) scratch_free(pe.tmp);
  pe.tmp = nullptr;
}

// ---- probes ----

// One probe: iprobe leaves the message queued, improbe takes it (message !=
// nullptr). PROC_NULL finds the empty "no process" message at once.
int Device::probe_once(int source, int tag, const Comm& comm, bool* flag, Request** message, Status* status) {
  if (int e = check_peer(source, comm, true, "source")) return e;
  if (int e = check_tag(tag, true)) return e;
  if (message) *message = nullptr;
  if (source == kProcNull) {
    *flag = true;
    set_proc_null(status);
    return 0;
  }
  progress();
  Status s;
  Request* found = matcher_.probe({comm.context, source, tag}, message != nullptr, &s);
  if (message) *message = found;
  *flag = found != nullptr;
  if (*flag && status) *status = s;
  return 0;
}

// The blocking forms repeat the one-shot form until it finds a message.
int Device::probe_blocking(int source, int tag, const Comm& comm, Request** message, Status* status) {
  bool flag = false;
  int err = 0;
  // Probes until found; once found (or failed) it is not probed again: the
  // condition is also checked inside the sleep, and an mprobe must not take
  // a second message.
  int failed = block_until([&] {
    if (!err && !flag) err = probe_once(source, tag, comm, &flag, message, status);
    return err || flag;
  });
  return err ? err : failed;
}

int Device::iprobe(int source, int tag, const Comm& comm, bool* flag, Status* status) {
  return probe_once(source, tag, comm, flag, nullptr, status);
}

int Device::probe(int source, int tag, const Comm& comm, Status* status) {
  return probe_blocking(source, tag, comm, nullptr, status);
}

int Device::improbe(int source, int tag, const Comm& comm, bool* flag, Request** message, Status* status) {
  return probe_once(source, tag, comm, flag, message, status);
}

int Device::mprobe(int source, int tag, const Comm& comm, Request** message, Status* status) {
  return probe_blocking(source, tag, comm, message, status);
}

int Device::imrecv(void* buf, std::size_t count, const Datatype* type, Request** message, Request** out) {
  *out = nullptr;
  if (int e = check_buffer(buf, count, type)) return e;
  Request* u = *message;
  Request* r = pool_.get(this, RequestKind::Recv);
  if (!r) return no_request("a matched receive", u ? u->source : kProcNull);
  Segment* seg = nullptr;
  if (u && !type->is_contiguous() && !(seg = make_segment(buf, count, type))) {
    pool_.put(r);
    return no_memory("the segment (%zu bytes) of a noncontiguous matched receive from rank %d", sizeof(Segment),
                     u->source);
  }
  r->buf = buf;
  r->count = count;
  r->type = type;
  type->retain();
  if (!u) {  // the PROC_NULL message
    set_proc_null(&r->status);
    r->cc.store(0, std::memory_order_release);
    *out = r;
    return 0;
  }
  r->context = u->context;
  r->source = u->source;
  r->tag = u->tag;
  r->refs.fetch_add(1, std::memory_order_relaxed);
  r->seg = seg;
  *message = nullptr;
  *out = r;
  matched(r, u);
  return 0;
}

int Device::mrecv(void* buf, std::size_t count, const Datatype* type, Request** message, Status* status) {
  Request* r = nullptr;
  if (int e = imrecv(buf, count, type, message, &r)) return e;
  return wait(&r, status);
}

// ---- combined send and receive ----

int Device::sendrecv(const void* sbuf, std::size_t scount, const Datatype* stype, int dest, int stag, void* rbuf,
                     std::size_t rcount, const Datatype* rtype, int source, int rtag, const Comm& comm,
                     Status* status) {
  Request* reqs[2] = {nullptr, nullptr};
  if (int e = irecv(rbuf, rcount, rtype, source, rtag, comm, &reqs[0])) return e;
  if (int e = isend(sbuf, scount, stype, dest, stag, comm, SendMode::Standard, &reqs[1])) {
    cancel(reqs[0]);
    wait(&reqs[0], nullptr);
    return e;
  }
  int es = 0;
  int er = wait(&reqs[0], status);
  es = wait(&reqs[1], nullptr);
  return er ? er : es;
}

int Device::sendrecv_replace(void* buf, std::size_t count, const Datatype* type, int dest, int stag, int source,
                             int rtag, const Comm& comm, Status* status) {
  if (int e = check_buffer(buf, count, type)) return e;
  // The outgoing data is packed aside so the receive can reuse the buffer.
  std::size_t bytes = count * type->size();
  auto* packed = static_cast<char*>(scratch_alloc(bytes ? bytes : 1));
  if (!packed) return no_memory("a copy of the outgoing message of a sendrecv_replace (%zu bytes)", bytes);
  Segment seg(buf, count, type);
  seg.pack(0, bytes, packed);
  int e = sendrecv(packed, bytes, Datatype::byte(), dest, stag, buf, count, type, source, rtag, comm, status);
  scratch_free(packed);
  return e;
}

}  // namespace adi3
