// Buffered mode: the message is packed into the user-attached buffer and
// sent from there; the block is reclaimed when that internal send completes.
#include "adi3/device.hpp"
#include "segment/segment.hpp"

namespace adi3 {

int Device::buffer_attach(void* buf, std::size_t bytes) {
  MaybeLock g(bsend_lock_, threads_enabled());
  if (bsend_.attached()) {
    return errors_.raise(ErrorClass::Buffer, "MPI_Buffer_attach: a buffer is already attached (detach it first)");
  }
  if (!buf || !bsend_.attach(buf, bytes)) {
    return errors_.raise(ErrorClass::Buffer, "MPI_Buffer_attach: buffer of %zu bytes at %p is too small (at least %zu)",
                         bytes, buf, BsendBuffer::kOverhead);
  }
  return 0;
}

int Device::buffer_detach(void** buf, std::size_t* bytes) {
  // Detach blocks until every buffered message has been transmitted.
  if (int e = block_until([&] {
        reap_bsends();
        return bsend_live_.load(std::memory_order_acquire) == 0;
      })) {
    return e;
  }
  MaybeLock g(bsend_lock_, threads_enabled());
  if (!bsend_.attached()) {
    *buf = nullptr;
    *bytes = 0;
    return 0;
  }
  bsend_.detach(buf, bytes);
  return 0;
}

void Device::reap_bsends() {
  MaybeLock g(bsend_lock_, threads_enabled());
  for (auto it = bsends_.begin(); it != bsends_.end();) {
    Request& r = *it++;
    if (!r.complete()) continue;
    static_cast<ByCtxHook&>(r).unlink();
    bsend_.release(r.tmp);
    r.tmp = nullptr;
    release(&r);
    bsend_live_.fetch_sub(1, std::memory_order_release);
  }
}

int Device::bsend(const void* buf, std::size_t count, const Datatype* type, int dest, int tag, const Comm& comm,
                  Request** out, Request* link) {
  std::size_t bytes = count * type->size();
  // The user's handle first: when it cannot be had, nothing was sent.
  Request* handle = nullptr;
  if (out && !(handle = pool_.get(this, RequestKind::Send))) return no_request("a buffered send", dest);
  auto fail = [&](int e) {
    if (handle) pool_.put(handle);
    return e;
  };
  Request* inner = nullptr;
  if (dest != kProcNull) {
    void* block = nullptr;
    for (int attempt = 0; attempt < 2 && !block; ++attempt) {
      if (attempt) {
        progress();  // completed buffered sends give their space back
        reap_bsends();
      }
      MaybeLock g(bsend_lock_, threads_enabled());
      if (!bsend_.attached()) {
        return fail(errors_.raise(ErrorClass::Buffer,
                                  "buffered send of %zu bytes to rank %d: no buffer is attached "
                                  "(call MPI_Buffer_attach)",
                                  bytes, dest));
      }
      block = bsend_.allocate(bytes);
      if (!block && attempt) {
        return fail(
            errors_.raise(ErrorClass::Buffer,
                          "buffered send of %zu bytes to rank %d (tag %d) does not fit: the largest free block of "
                          "the attached buffer is %zu bytes (each message also needs %zu bytes of overhead)",
                          bytes, dest, tag, bsend_.largest_free(), BsendBuffer::kOverhead));
      }
    }
    if (!(inner = pool_.get(this, RequestKind::Send))) {
      {
        MaybeLock g(bsend_lock_, threads_enabled());
        bsend_.release(block);
      }
      return fail(no_request("a buffered send", dest));
    }
    Segment seg(const_cast<void*>(buf), count, type);
    seg.pack(0, bytes, block);
    init_send(inner, block, bytes, Datatype::byte(), dest, tag, comm, SendMode::Standard);
    inner->tmp = block;
    // The user's request keeps it (taken before it can complete and be reaped).
    if (out || link) inner->refs.fetch_add(1, std::memory_order_relaxed);
    {
      MaybeLock g(bsend_lock_, threads_enabled());
      bsends_.push_back(*inner);
      bsend_live_.fetch_add(1, std::memory_order_release);
    }
    start_send(inner);
  }
  if (out) {
    // The user's request is complete: the data is already in the buffer.
    link = handle;
    link->mode = SendMode::Buffered;
    link->cc.store(0, std::memory_order_release);
    *out = link;
  }
  if (link) {
    // It keeps this start's internal send so MPI_Cancel can reach it (a
    // persistent request drops its previous start's).
    if (link->buffered) release(link->buffered);
    link->buffered = inner;
  }
  return 0;
}

}  // namespace adi3
