// MPI_Buffer_attach/detach/flush/iflush and MPI-4.1's communicator forms
// (the session forms are in session.cpp, over the same bodies). A buffered
// send uses its communicator's buffer, else its session's, else the
// process's (adi3/bsend.cpp looks them up in that order).
#include "mpi/buffers.hpp"

#include <atomic>

#include "greq/greq.hpp"

using namespace adi3;
using namespace adi3::mpi;

int adi3::mpi::attach_buffer(Runtime& rt, BsendBuffer& b, void* buffer, MPI_Count size) {
  if (buffer == MPI_BUFFER_AUTOMATIC) return rt.dev().buffer_attach_automatic(b, MPI_BUFFER_AUTOMATIC);
  if (size < 0) return raise(ErrorClass::Arg, "invalid buffer size %lld", size);
  if (!buffer && size > 0) return raise(ErrorClass::Buffer, "the buffer is null");
  return rt.dev().buffer_attach(b, buffer, static_cast<std::size_t>(size));
}

int adi3::mpi::detach_buffer(Runtime& rt, BsendBuffer& b, void* buffer_addr, MPI_Count* size, MPI_Count max) {
  void* p = nullptr;
  std::size_t n = 0;
  if (int e = rt.dev().buffer_detach(b, &p, &n)) return e;
  *static_cast<void**>(buffer_addr) = p;
  *size = static_cast<MPI_Count>(n);
  if (*size > max) {
    return raise(ErrorClass::ValueTooLarge,
                 "the detached buffer has %zu bytes, more than the int size argument holds (use the _c form)", n);
  }
  return 0;
}

namespace {

struct Flush {
  Device* dev;
  std::shared_ptr<BsendBuffer> buffer;  // outlives a freed communicator
  uint64_t mark;
  std::atomic<Request*> self{nullptr};
};

int flush_poll(void* p, Status*) {
  auto* f = static_cast<Flush*>(p);
  Request* self = f->self.load(std::memory_order_acquire);
  if (self && f->dev->buffer_flushed(*f->buffer, f->mark)) {
    f->self.store(nullptr, std::memory_order_release);  // complete once
    return grequest_complete(self);
  }
  return 0;
}

int flush_free(void* p) {
  delete static_cast<Flush*>(p);
  return 0;
}

// The messages cannot be withdrawn by the flush: cancel does nothing.
int flush_cancel(void*, int) { return 0; }

}  // namespace

int adi3::mpi::iflush_buffer(Runtime& rt, std::shared_ptr<BsendBuffer> b, MPI_Comm comm, MPI_Request* request) {
  if (!request) return raise(ErrorClass::Arg, "request is null");
  auto* f = new Flush{&rt.dev(), std::move(b), 0, {}};
  f->mark = rt.dev().buffer_mark(*f->buffer);
  Request* g = nullptr;
  if (int e = grequest_start_polled(rt.dev(), nullptr, flush_free, flush_cancel, flush_poll, nullptr, f, &g)) {
    delete f;
    return e;
  }
  f->self.store(g, std::memory_order_release);
  return new_request(rt, g, comm, false, request);
}

// ---- the process buffer ----

#define ADI3_BUFFER_ATTACH(fname, C, ...)                                                        \
  ADI3_MPI_API(int, fname, (void* buffer, C size), (buffer, size)) {                             \
    ADI3_MPI_ENTER();                                                                            \
    return world_error(attach_buffer(*rt, *rt->dev().process_buffer(), buffer, size), __func__); \
  }
ADI3_MPI_COUNT_FORMS(ADI3_BUFFER_ATTACH, Buffer_attach)
#undef ADI3_BUFFER_ATTACH

#define ADI3_BUFFER_DETACH(fname, C, ...)                                                             \
  ADI3_MPI_API(int, fname, (void* buffer_addr, C* size), (buffer_addr, size)) {                       \
    ADI3_MPI_ENTER();                                                                                 \
    return world_error(detach_buffer(*rt, *rt->dev().process_buffer(), buffer_addr, size), __func__); \
  }
ADI3_MPI_COUNT_FORMS(ADI3_BUFFER_DETACH, Buffer_detach)
#undef ADI3_BUFFER_DETACH

ADI3_MPI_API(int, Buffer_flush, (void), ()) {
  ADI3_MPI_ENTER();
  return world_error(rt->dev().buffer_flush(*rt->dev().process_buffer()), __func__);
}

ADI3_MPI_API(int, Buffer_iflush, (MPI_Request * request), (request)) {
  ADI3_MPI_ENTER();
  return world_error(iflush_buffer(*rt, rt->dev().process_buffer(), MPI_COMM_WORLD, request), __func__);
}

// ---- a communicator's buffer ----

namespace {

// The communicator's own buffer (every communicator has one, maybe detached).
#define ADI3_COMM_BUFFER(comm)                                                                  \
  ADI3_MPI_ENTER();                                                                             \
  CommObj* c = nullptr;                                                                         \
  if (int e_ = get_comm(*rt, comm, &c)) return world_error(e_, __func__);                       \
  const std::shared_ptr<BsendBuffer> own = c->pt2pt.buffers ? c->pt2pt.buffers->comm : nullptr; \
  if (!own) return comm_error(c, raise(ErrorClass::Intern, "communicator 0x%x has no buffer slot", comm), __func__)

}  // namespace

#define ADI3_COMM_ATTACH(fname, C, ...)                                                   \
  ADI3_MPI_API(int, fname, (MPI_Comm comm, void* buffer, C size), (comm, buffer, size)) { \
    ADI3_COMM_BUFFER(comm);                                                               \
    return comm_error(c, attach_buffer(*rt, *own, buffer, size), __func__);               \
  }
ADI3_MPI_COUNT_FORMS(ADI3_COMM_ATTACH, Comm_attach_buffer)
#undef ADI3_COMM_ATTACH

#define ADI3_COMM_DETACH(fname, C, ...)                                                              \
  ADI3_MPI_API(int, fname, (MPI_Comm comm, void* buffer_addr, C* size), (comm, buffer_addr, size)) { \
    ADI3_COMM_BUFFER(comm);                                                                          \
    return comm_error(c, detach_buffer(*rt, *own, buffer_addr, size), __func__);                     \
  }
ADI3_MPI_COUNT_FORMS(ADI3_COMM_DETACH, Comm_detach_buffer)
#undef ADI3_COMM_DETACH

ADI3_MPI_API(int, Comm_flush_buffer, (MPI_Comm comm), (comm)) {
  ADI3_COMM_BUFFER(comm);
  return comm_error(c, rt->dev().buffer_flush(*own), __func__);
}

ADI3_MPI_API(int, Comm_iflush_buffer, (MPI_Comm comm, MPI_Request* request), (comm, request)) {
  ADI3_COMM_BUFFER(comm);
  return comm_error(c, iflush_buffer(*rt, own, comm, request), __func__);
}
