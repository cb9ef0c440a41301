// Persistent requests: the request is set up once and restarted by start();
// it is itself the active operation, so a restart allocates nothing.
#include "adi3/device.hpp"
#include "adi3/device_inline.hpp"

namespace adi3 {

int Device::send_init(const void* buf, std::size_t count, const Datatype* type, int dest, int tag, const Comm& comm,
                      SendMode mode, Request** out) {
  *out = nullptr;
  if (int e = check_buffer(buf, count, type)) return e;
  if (int e = check_peer(dest, comm, false, "destination")) return e;
  if (int e = check_tag(tag, false)) return e;
  Request* r = pool_.get(this, RequestKind::PersistentSend);
  if (!r) return no_request("a persistent send", dest);
  init_send(r, buf, count, type, dest, tag, comm, mode);
  r->set(Request::kPersistent);
  r->cc.store(0, std::memory_order_release);
  if (mode == SendMode::Buffered) {
    // Each start copies into the attached buffer: keep comm and dest.
    r->remote = static_cast<uint64_t>(dest);
    if (!(r->ext = new (std::nothrow) Comm(comm))) {
      release(r);
      return no_memory("the communicator copy of a persistent buffered send to rank %d", dest);
    }
  } else if (!type->is_contiguous() && dest != kProcNull && !(r->seg = make_segment(buf, count, type))) {
    release(r);
    return no_memory("the segment (%zu bytes) of a noncontiguous persistent send to rank %d", sizeof(Segment), dest);
  }
  *out = r;
  return 0;
}

int Device::recv_init(void* buf, std::size_t count, const Datatype* type, int source, int tag, const Comm& comm,
                      Request** out) {
  *out = nullptr;
  if (int e = check_buffer(buf, count, type)) return e;
  if (int e = check_peer(source, comm, true, "source")) return e;
  if (int e = check_tag(tag, true)) return e;
  Request* r = pool_.get(this, RequestKind::PersistentRecv);
  if (!r) return no_request("a persistent receive", source);
  init_recv(r, buf, count, type, source, tag, comm);
  if (!type->is_contiguous() && source != kProcNull && !(r->seg = make_segment(buf, count, type))) {
    release(r);
    return no_memory("the segment (%zu bytes) of a noncontiguous persistent receive from rank %d", sizeof(Segment),
                     source);
  }
  r->set(Request::kPersistent);
  r->cc.store(0, std::memory_order_release);
  *out = r;
  return 0;
}

int Device::start(Request* r) {
  if (!r || !r->has(Request::kPersistent)) {
    return errors_.raise(ErrorClass::Request, "MPI_Start on a request that is not persistent");
  }
  if (r->has(Request::kActive)) {
    return errors_.raise(ErrorClass::Request, "MPI_Start on a persistent request that is still active");
  }
  r->set(Request::kActive);
  r->status = Status{};
  if (r->cls && r->cls->start) return r->cls->start(*r);  // persistent collectives
  if (r->kind == RequestKind::PersistentRecv) {
    start_recv(r);
    return 0;
  }
  if (r->mode == SendMode::Buffered) {
    // The data is copied into the attached buffer now; the request is done.
    const Comm& comm = *static_cast<Comm*>(r->ext);
    int e = bsend(r->buf, r->count, r->type, static_cast<int>(r->remote), r->tag, comm, nullptr, r);
    r->status.error = e;
    r->cc.store(0, std::memory_order_release);
    return e;
  }
  r->clear(Request::kSync);
  start_send(r);
  return 0;
}

int Device::startall(int n, Request* const* reqs) {
  for (int i = 0; i < n; ++i) {
    if (int e = start(reqs[i])) return e;
  }
  return 0;
}

}  // namespace adi3
