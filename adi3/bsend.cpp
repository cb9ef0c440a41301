// Buffered mode: the message is packed into an attached buffer and sent
// from there; the block is reclaimed when that internal send completes. The
// buffer is the communicator's, else its session's, else the process's
// (MPI-4.1 3.6).
#include <algorithm>

#include "adi3/device.hpp"
#include "segment/segment.hpp"

namespace adi3 {

int Device::buffer_attach(BsendBuffer& b, void* buf, std::size_t bytes) {
  MaybeLock g(bsend_lock_, threads_enabled());
  if (b.attached()) {
    return errors_.raise(ErrorClass::Buffer, "MPI_Buffer_attach: a buffer is already attached (detach it first)");
  }
  if (!buf || !b.attach(buf, bytes)) {
    return errors_.raise(ErrorClass::Buffer, "MPI_Buffer_attach: buffer of %zu bytes at %p is too small (at least %zu)",
                         bytes, buf, BsendBuffer::kOverhead);
  }
  return 0;
}

int Device::buffer_attach_automatic(BsendBuffer& b, void* tag) {
  MaybeLock g(bsend_lock_, threads_enabled());
  if (b.attached()) {
    return errors_.raise(ErrorClass::Buffer, "MPI_Buffer_attach: a buffer is already attached (detach it first)");
  }
  b.attach_automatic(tag);
  return 0;
}

bool Device::buffer_flushed(BsendBuffer& b, uint64_t mark) {
  if (bsend_live_.load(std::memory_order_acquire) == 0) return true;
  reap_bsends();
  MaybeLock g(bsend_lock_, threads_enabled());
  if (b.live() == 0) return true;
  for (Request& r : bsends_) {
    if (BsendBuffer::owner_of(r.tmp) == &b && BsendBuffer::ticket_of(r.tmp) < mark) return false;
  }
  return true;
}

uint64_t Device::buffer_mark(BsendBuffer& b) {
  MaybeLock g(bsend_lock_, threads_enabled());
  return b.tickets();
}

int Device::buffer_flush(BsendBuffer& b) {
  const uint64_t mark = buffer_mark(b);
  return block_until([&] { return buffer_flushed(b, mark); });
}

int Device::buffer_detach(BsendBuffer& b, void** buf, std::size_t* bytes) {
  // Detach blocks until every message in the buffer has been transmitted.
  if (int e = block_until([&] {
        reap_bsends();
        MaybeLock g(bsend_lock_, threads_enabled());
        return b.live() == 0;
      })) {
    return e;
  }
  MaybeLock g(bsend_lock_, threads_enabled());
  if (!b.attached()) {
    *buf = nullptr;
    *bytes = 0;
    return 0;
  }
  b.detach(buf, bytes);
  return 0;
}

namespace {

// Returns a block to its buffer (the caller holds the lock). When that was
// the buffer's last message, a freed communicator's buffer may go now.
void give_back(std::vector<std::shared_ptr<BsendBuffer>>& busy, void* block) {
  BsendBuffer* owner = BsendBuffer::owner_of(block);
  BsendBuffer::release(block);
  if (owner->live() > 0) return;
  auto it = std::find_if(busy.begin(), busy.end(), [&](auto& p) { return p.get() == owner; });
  if (it != busy.end()) busy.erase(it);
}

}  // namespace

void Device::reap_bsends() {
  MaybeLock g(bsend_lock_, threads_enabled());
  for (auto it = bsends_.begin(); it != bsends_.end();) {
    Request& r = *it++;
    if (!r.complete()) continue;
    static_cast<ByCtxHook&>(r).unlink();
    give_back(bsend_busy_, r.tmp);
    r.tmp = nullptr;
    release(&r);
    bsend_live_.fetch_sub(1, std::memory_order_release);
  }
}

namespace {

// The first attached buffer in MPI-4.1's order (the caller holds the lock).
const std::shared_ptr<BsendBuffer>& pick_buffer(const Comm& comm, const std::shared_ptr<BsendBuffer>& process) {
  if (const BsendChain* c = comm.buffers.get()) {
    if (c->comm && c->comm->attached()) return c->comm;
    if (c->session && c->session->attached()) return c->session;
  }
  return process;
}

}  // namespace

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
      const std::shared_ptr<BsendBuffer>& into = pick_buffer(comm, bsend_);
      if (!into->attached()) {
        return fail(errors_.raise(ErrorClass::Buffer,
                                  "buffered send of %zu bytes to rank %d: no buffer is attached "
                                  "(call MPI_Buffer_attach)",
                                  bytes, dest));
      }
      if (into->automatic() && !(block = into->allocate(bytes))) {
        return fail(no_memory("the automatic buffer of a buffered send to rank %d (%zu bytes)", dest, bytes));
      }
      if (!block) block = into->allocate(bytes);
      if (!block && attempt) {
        return fail(
            errors_.raise(ErrorClass::Buffer,
                          "buffered send of %zu bytes to rank %d (tag %d) does not fit: the largest free block of "
                          "the attached buffer is %zu bytes (each message also needs %zu bytes of overhead)",
                          bytes, dest, tag, into->largest_free(), BsendBuffer::kOverhead));
      }
      if (block && into->live() == 1 && into != bsend_) bsend_busy_.push_back(into);
    }
    if (!(inner = pool_.get(this, RequestKind::Send))) {
      {
        MaybeLock g(bsend_lock_, threads_enabled());
        give_back(bsend_busy_, block);
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
