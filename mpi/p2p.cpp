// Point-to-point: the send modes, receives, sendrecv, probes and matched
// probes, persistent initialization and the attached buffer. Arguments the
// core does not check itself (handles, counts, committed types) are
// checked here; the core names bad ranks and tags.
#include "adi3/device_inline.hpp"
#include "mpi/api.hpp"

using namespace adi3;
using namespace adi3::mpi;

namespace {

// Count, datatype (valid and committed) and buffer of one side.
int check_side_slow(Runtime& rt, const void* buf, MPI_Count count, MPI_Datatype dt, const Datatype** out) {
  if (int e = check_count(count)) return e;
  if (int e = get_comm_type(rt, dt, out)) return e;
  return check_buffer(buf, count, *out);
}
// The common case inline: a predefined type (a few bytes, extent = size)
// and a non-null buffer with fewer than 2^31 elements cannot overflow.
// A predefined datatype's handle is the first one's plus its index: one
// subtraction and one unsigned compare test class, kind and index at once.
// Forced inline: GCC left it a call from MPI_Isend and MPI_Irecv.
[[gnu::always_inline]] inline int check_side(Runtime& rt, const void* buf, MPI_Count count, MPI_Datatype dt,
                                             const Datatype** out) {
  constexpr auto kFirst = static_cast<unsigned>(make_handle(HandleClass::Builtin, Kind::Datatype, 0));
  const unsigned i = static_cast<unsigned>(dt) - kFirst;
  if (i < rt.builtin_types.size() && buf && static_cast<unsigned long long>(count) < (1ull << 31)) [[likely]] {
    *out = rt.builtin_types[i];
    return 0;
  }
  return check_side_slow(rt, buf, count, dt, out);
}

// The bodies below are compiled into each entry point (a call here costs as
// much as the checks): MPI_Send to the channel is one function deep.
[[gnu::always_inline]] inline int blocking_send(const char* fn, const void* buf, MPI_Count count, MPI_Datatype dt,
                                                int dest, int tag, MPI_Comm comm, SendMode mode) {
  Runtime* rt = g_runtime;
  if (!rt) return not_initialized(fn);
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, fn);
  const Datatype* t = nullptr;
  int e = check_side(*rt, buf, count, dt, &t);
  // The buffer is checked: the device checks only the rest.
  if (!e) {
    const auto n = static_cast<std::size_t>(count);
    e = mode == SendMode::Standard ? rt->dev().send_fast(buf, n, t, dest, tag, c->pt2pt)
                                   : rt->dev().send_checked(buf, n, t, dest, tag, c->pt2pt, mode);
  }
  return comm_error(c, e, fn);
}

[[gnu::always_inline]] inline int nonblocking_send(const char* fn, const void* buf, MPI_Count count, MPI_Datatype dt,
                                                   int dest, int tag, MPI_Comm comm, SendMode mode,
                                                   MPI_Request* request, bool persistent) {
  Runtime* rt = g_runtime;
  if (!rt) return not_initialized(fn);
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, fn);
  if (!request) return comm_error(c, raise(ErrorClass::Arg, "request is null"), fn);
  const Datatype* t = nullptr;
  int e = check_side(*rt, buf, count, dt, &t);
  Request* r = nullptr;
  if (!e) {
    auto n = static_cast<std::size_t>(count);
    if (persistent) {
      e = rt->dev().send_init(buf, n, t, dest, tag, c->pt2pt, mode, &r);
    } else {
      e = mode == SendMode::Standard ? rt->dev().isend_fast(buf, n, t, dest, tag, c->pt2pt, &r)
                                     : rt->dev().isend_checked(buf, n, t, dest, tag, c->pt2pt, mode, &r);
    }
  }
  if (!e) e = new_request(*rt, r, comm, persistent, request);
  return comm_error(c, e, fn);
}

[[gnu::always_inline]] inline int receive_request(const char* fn, void* buf, MPI_Count count, MPI_Datatype dt,
                                                  int source, int tag, MPI_Comm comm, MPI_Request* request,
                                                  bool persistent) {
  Runtime* rt = g_runtime;
  if (!rt) return not_initialized(fn);
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, fn);
  if (!request) return comm_error(c, raise(ErrorClass::Arg, "request is null"), fn);
  const Datatype* t = nullptr;
  int e = check_side(*rt, buf, count, dt, &t);
  Request* r = nullptr;
  if (!e) {
    auto n = static_cast<std::size_t>(count);
    e = persistent ? rt->dev().recv_init(buf, n, t, source, tag, c->pt2pt, &r)
                   : rt->dev().irecv_fast(buf, n, t, source, tag, c->pt2pt, &r);
  }
  if (!e) e = new_request(*rt, r, comm, persistent, request);
  return comm_error(c, e, fn);
}

int get_message(Runtime& rt, MPI_Message* message, Request*** slot, int* index) {
  if (!message) return raise(ErrorClass::Arg, "message is null");
  *index = -1;
  if (*message == MPI_MESSAGE_NO_PROC) return 0;
  if (is_kind(*message, Kind::Message, HandleClass::User)) {
    if (Request** r = rt.messages.get(handle_index(*message))) {
      *slot = r;
      *index = handle_index(*message);
      return 0;
    }
  }
  if (*message == MPI_MESSAGE_NULL) return raise(ErrorClass::Request, "the message is MPI_MESSAGE_NULL");
  return raise(ErrorClass::Request, "0x%x is not a matched message (MPI_Mprobe)", *message);
}

int new_message(Runtime& rt, Request* msg, MPI_Message* out) {
  if (!msg) {
    *out = MPI_MESSAGE_NO_PROC;
    return 0;
  }
  int i = rt.messages.add(msg);
  if (i < 0) return raise(ErrorClass::Intern, "too many matched messages");
  *out = make_handle(HandleClass::User, Kind::Message, i);
  return 0;
}

}  // namespace

namespace {

// Bodies shared by the int and large-count (_c) entry points.
[[gnu::always_inline]] inline int recv_impl(const char* fn, void* buf, MPI_Count count, MPI_Datatype dt, int source,
                                            int tag, MPI_Comm comm, MPI_Status* status) {
  Runtime* rt = g_runtime;
  if (!rt) return not_initialized(fn);
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, fn);
  const Datatype* t = nullptr;
  int e = check_side(*rt, buf, count, dt, &t);
  Status s;
  if (!e) {
    e = rt->dev().recv_checked(buf, static_cast<std::size_t>(count), t, source, tag, c->pt2pt, &s);
    to_mpi(s, status, false);
  }
  return comm_error(c, e, fn);
}

int sendrecv_impl(const char* fn, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                  int sendtag, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Status* status) {
  Runtime* rt = g_runtime;
  if (!rt) return not_initialized(fn);
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, fn);
  const Datatype *st = nullptr, *rt_type = nullptr;
  int e = check_side(*rt, sendbuf, sendcount, sendtype, &st);
  if (!e) e = check_side(*rt, recvbuf, recvcount, recvtype, &rt_type);
  Status s;
  if (!e) {
    e = rt->dev().sendrecv(sendbuf, static_cast<std::size_t>(sendcount), st, dest, sendtag, recvbuf,
                           static_cast<std::size_t>(recvcount), rt_type, source, recvtag, c->pt2pt, &s);
    to_mpi(s, status, false);
  }
  return comm_error(c, e, fn);
}

int sendrecv_replace_impl(const char* fn, void* buf, MPI_Count count, MPI_Datatype dt, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  Runtime* rt = g_runtime;
  if (!rt) return not_initialized(fn);
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, fn);
  const Datatype* t = nullptr;
  int e = check_side(*rt, buf, count, dt, &t);
  Status s;
  if (!e) {
    e = rt->dev().sendrecv_replace(buf, static_cast<std::size_t>(count), t, dest, sendtag, source, recvtag, c->pt2pt,
                                   &s);
    to_mpi(s, status, false);
  }
  return comm_error(c, e, fn);
}

int mrecv_impl(const char* fn, void* buf, MPI_Count count, MPI_Datatype dt, MPI_Message* message, MPI_Status* status) {
  Runtime* rt = g_runtime;
  if (!rt) return not_initialized(fn);
  Request** slot = nullptr;
  int index;
  if (int e = get_message(*rt, message, &slot, &index)) return world_error(e, fn);
  const Datatype* t = nullptr;
  if (int e = check_side(*rt, buf, count, dt, &t)) return world_error(e, fn);
  Request* msg = slot ? *slot : nullptr;
  if (slot) rt->messages.remove(index);
  *message = MPI_MESSAGE_NULL;
  Status s;
  int e = rt->dev().mrecv(buf, static_cast<std::size_t>(count), t, &msg, &s);
  to_mpi(s, status, false);
  return world_error(e, fn);
}

int imrecv_impl(const char* fn, void* buf, MPI_Count count, MPI_Datatype dt, MPI_Message* message,
                MPI_Request* request) {
  Runtime* rt = g_runtime;
  if (!rt) return not_initialized(fn);
  Request** slot = nullptr;
  int index;
  if (int e = get_message(*rt, message, &slot, &index)) return world_error(e, fn);
  if (!request) return world_error(raise(ErrorClass::Arg, "request is null"), fn);
  const Datatype* t = nullptr;
  if (int e = check_side(*rt, buf, count, dt, &t)) return world_error(e, fn);
  Request* msg = slot ? *slot : nullptr;
  if (slot) rt->messages.remove(index);
  *message = MPI_MESSAGE_NULL;
  Request* r = nullptr;
  int e = rt->dev().imrecv(buf, static_cast<std::size_t>(count), t, &msg, &r);
  if (!e) e = new_request(*rt, r, MPI_COMM_WORLD, false, request);
  return world_error(e, fn);
}

}  // namespace

#define ADI3_SEND(fname, C, mode)                                                                         \
  ADI3_MPI_API(int, fname, (const void* buf, C count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm), \
               (buf, count, dt, dest, tag, comm)) {                                                       \
    return blocking_send(__func__, buf, count, dt, dest, tag, comm, SendMode::mode);                      \
  }
ADI3_MPI_COUNT_FORMS(ADI3_SEND, Send, Standard)
ADI3_MPI_COUNT_FORMS(ADI3_SEND, Bsend, Buffered)
ADI3_MPI_COUNT_FORMS(ADI3_SEND, Ssend, Synchronous)
ADI3_MPI_COUNT_FORMS(ADI3_SEND, Rsend, Ready)
#undef ADI3_SEND

// Nonblocking sends (persistent = false) and persistent ones (true).
#define ADI3_ISEND(fname, C, mode, persistent)                                                                      \
  ADI3_MPI_API(int, fname,                                                                                          \
               (const void* buf, C count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request* request), \
               (buf, count, dt, dest, tag, comm, request)) {                                                        \
    return nonblocking_send(__func__, buf, count, dt, dest, tag, comm, SendMode::mode, request, persistent);        \
  }
ADI3_MPI_COUNT_FORMS(ADI3_ISEND, Isend, Standard, false)
ADI3_MPI_COUNT_FORMS(ADI3_ISEND, Ibsend, Buffered, false)
ADI3_MPI_COUNT_FORMS(ADI3_ISEND, Issend, Synchronous, false)
ADI3_MPI_COUNT_FORMS(ADI3_ISEND, Irsend, Ready, false)
ADI3_MPI_COUNT_FORMS(ADI3_ISEND, Send_init, Standard, true)
ADI3_MPI_COUNT_FORMS(ADI3_ISEND, Bsend_init, Buffered, true)
ADI3_MPI_COUNT_FORMS(ADI3_ISEND, Ssend_init, Synchronous, true)
ADI3_MPI_COUNT_FORMS(ADI3_ISEND, Rsend_init, Ready, true)
#undef ADI3_ISEND

#define ADI3_IRECV(fname, C, persistent)                                                                        \
  ADI3_MPI_API(int, fname,                                                                                      \
               (void* buf, C count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Request* request), \
               (buf, count, dt, source, tag, comm, request)) {                                                  \
    return receive_request(__func__, buf, count, dt, source, tag, comm, request, persistent);                   \
  }
ADI3_MPI_COUNT_FORMS(ADI3_IRECV, Irecv, false)
ADI3_MPI_COUNT_FORMS(ADI3_IRECV, Recv_init, true)
#undef ADI3_IRECV

#define ADI3_RECV(fname, C, ...)                                                                              \
  ADI3_MPI_API(int, fname,                                                                                    \
               (void* buf, C count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Status* status), \
               (buf, count, dt, source, tag, comm, status)) {                                                 \
    return recv_impl(__func__, buf, count, dt, source, tag, comm, status);                                    \
  }
ADI3_MPI_COUNT_FORMS(ADI3_RECV, Recv)
#undef ADI3_RECV

#define ADI3_SENDRECV(fname, C, ...)                                                                                  \
  ADI3_MPI_API(                                                                                                       \
      int, fname,                                                                                                     \
      (const void* sendbuf, C sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf, C recvcount,    \
       MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status),                            \
      (sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, status)) {   \
    return sendrecv_impl(__func__, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, \
                         recvtag, comm, status);                                                                      \
  }
ADI3_MPI_COUNT_FORMS(ADI3_SENDRECV, Sendrecv)
#undef ADI3_SENDRECV

#define ADI3_SENDRECV_REPLACE(fname, C, ...)                                                                        \
  ADI3_MPI_API(int, fname,                                                                                          \
               (void* buf, C count, MPI_Datatype dt, int dest, int sendtag, int source, int recvtag, MPI_Comm comm, \
                MPI_Status* status),                                                                                \
               (buf, count, dt, dest, sendtag, source, recvtag, comm, status)) {                                    \
    return sendrecv_replace_impl(__func__, buf, count, dt, dest, sendtag, source, recvtag, comm, status);           \
  }
ADI3_MPI_COUNT_FORMS(ADI3_SENDRECV_REPLACE, Sendrecv_replace)
#undef ADI3_SENDRECV_REPLACE

ADI3_MPI_API(int, Probe, (int source, int tag, MPI_Comm comm, MPI_Status* status), (source, tag, comm, status)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  Status s;
  int e = rt->dev().probe(source, tag, c->pt2pt, &s);
  if (!e) to_mpi(s, status, false);
  return comm_error(c, e, __func__);
}

ADI3_MPI_API(int, Iprobe, (int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status),
             (source, tag, comm, flag, status)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  if (!flag) return comm_error(c, raise(ErrorClass::Arg, "flag is null"), __func__);
  Status s;
  bool f = false;
  int e = rt->dev().iprobe(source, tag, c->pt2pt, &f, &s);
  if (!e) {
    *flag = f;
    if (f) to_mpi(s, status, false);
  }
  return comm_error(c, e, __func__);
}

ADI3_MPI_API(int, Mprobe, (int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status),
             (source, tag, comm, message, status)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  if (!message) return comm_error(c, raise(ErrorClass::Arg, "message is null"), __func__);
  Status s;
  Request* msg = nullptr;
  int e = rt->dev().mprobe(source, tag, c->pt2pt, &msg, &s);
  if (!e) e = new_message(*rt, msg, message);
  if (!e) to_mpi(s, status, false);
  return comm_error(c, e, __func__);
}

ADI3_MPI_API(int, Improbe, (int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status),
             (source, tag, comm, flag, message, status)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  if (!message || !flag) return comm_error(c, raise(ErrorClass::Arg, "message or flag is null"), __func__);
  Status s;
  Request* msg = nullptr;
  bool f = false;
  int e = rt->dev().improbe(source, tag, c->pt2pt, &f, &msg, &s);
  if (!e) {
    *flag = f;
    if (f) {
      e = new_message(*rt, msg, message);
      to_mpi(s, status, false);
    }
  }
  return comm_error(c, e, __func__);
}

#define ADI3_MRECV(fname, C, ...)                                                                           \
  ADI3_MPI_API(int, fname, (void* buf, C count, MPI_Datatype dt, MPI_Message* message, MPI_Status* status), \
               (buf, count, dt, message, status)) {                                                         \
    return mrecv_impl(__func__, buf, count, dt, message, status);                                           \
  }
ADI3_MPI_COUNT_FORMS(ADI3_MRECV, Mrecv)
#undef ADI3_MRECV

#define ADI3_IMRECV(fname, C, ...)                                                                            \
  ADI3_MPI_API(int, fname, (void* buf, C count, MPI_Datatype dt, MPI_Message* message, MPI_Request* request), \
               (buf, count, dt, message, request)) {                                                          \
    return imrecv_impl(__func__, buf, count, dt, message, request);                                           \
  }
ADI3_MPI_COUNT_FORMS(ADI3_IMRECV, Imrecv)
#undef ADI3_IMRECV
