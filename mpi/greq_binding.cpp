// Generalized requests (MPI_Grequest_*) and the MPI-4 MPI_Isendrecv(_replace),
// which are generalized requests polled by the progress engine: done when
// both their send and their receive are.
#include <atomic>
#include <vector>

#include "greq/greq.hpp"
#include "mpi/api.hpp"
#include "segment/pack.hpp"

using namespace adi3;
using namespace adi3::mpi;

namespace {

// ---- MPI_Grequest_start: the user's callbacks see MPI_Status ----

struct UserGreq {
  MPI_Grequest_query_function* query;
  MPI_Grequest_free_function* free;
  MPI_Grequest_cancel_function* cancel;
  void* extra;
};

// Runs a user callback that fills an MPI_Status, and takes back what it set.
template <class Fn>
int with_mpi_status(Status* s, Fn&& fn) {
  MPI_Status ms;
  to_mpi(*s, &ms, true);
  int e = fn(&ms);
  s->source = ms.MPI_SOURCE;
  s->tag = ms.MPI_TAG;
  s->bytes = status_bytes(&ms);
  s->cancelled = ms.adi3_cancelled != 0;
  return e;
}

int user_query(void* p, Status* s) {
  auto* u = static_cast<UserGreq*>(p);
  if (!u->query) return 0;
  return with_mpi_status(s, [&](MPI_Status* ms) { return u->query(u->extra, ms); });
}

int user_free(void* p) {
  auto* u = static_cast<UserGreq*>(p);
  int e = u->free ? u->free(u->extra) : 0;
  delete u;
  return e;
}

int user_cancel(void* p, int complete) {
  auto* u = static_cast<UserGreq*>(p);
  return u->cancel ? u->cancel(u->extra, complete) : 0;
}

// ---- MPI_Isendrecv ----

struct Pair {
  Device* dev;
  Request* send = nullptr;
  Request* recv = nullptr;
  std::atomic<Request*> self{nullptr};
  std::vector<std::byte> packed;  // _replace: the outgoing copy
};

int pair_poll(void* p, Status*) {
  auto* x = static_cast<Pair*>(p);
  Request* self = x->self.load(std::memory_order_acquire);
  if (self && x->send->complete() && x->recv->complete()) {
    x->self.store(nullptr, std::memory_order_release);  // complete once
    return grequest_complete(self);
  }
  return 0;
}

int pair_query(void* p, Status* s) {
  auto* x = static_cast<Pair*>(p);
  Status r = x->recv->status;
  s->source = r.source;
  s->tag = r.tag;
  s->bytes = r.bytes;
  s->cancelled = r.cancelled;
  return r.error ? r.error : x->send->status.error;
}

int pair_free(void* p) {
  auto* x = static_cast<Pair*>(p);
  Status s;
  // Both are complete: wait only reclaims them.
  if (x->send) x->dev->wait(&x->send, &s);
  if (x->recv) x->dev->wait(&x->recv, &s);
  delete x;
  return 0;
}

int pair_cancel(void* p, int complete) {
  auto* x = static_cast<Pair*>(p);
  return complete ? 0 : x->dev->cancel(x->recv);
}

// The generalized request is taken before the send and the receive start:
// out of requests (ADI3_MAX_REQUESTS) nothing has started and x is deleted.
// Until finish_pair sets self, polls leave it incomplete.
int begin_pair(Runtime& rt, Pair* x, Request** g) {
  int e = grequest_start_polled(rt.dev(), pair_query, pair_free, pair_cancel, pair_poll, nullptr, x, g);
  if (e) delete x;
  return e;
}

// The send or the receive could not start: the receive, if posted, is
// withdrawn and the request completed and freed at once (pair_free deletes x).
void abandon_pair(Runtime& rt, Pair* x, Request* g) {
  if (x->recv) {
    rt.dev().cancel(x->recv);
    Status s;
    rt.dev().wait(&x->recv, &s);
  }
  grequest_complete(g);
  rt.dev().request_free(&g);
}

int finish_pair(Runtime& rt, Pair* x, Request* g, MPI_Comm comm, MPI_Request* request) {
  x->self.store(g, std::memory_order_release);
  return new_request(rt, g, comm, false, request);
}

int side(Runtime& rt, const void* buf, int count, MPI_Datatype dt, const Datatype** out) {
  if (int e = check_count(count)) return e;
  if (int e = get_comm_type(rt, dt, out)) return e;
  return check_buffer(buf, count, *out);
}

}  // namespace

ADI3_MPI_API(int, Grequest_start,
             (MPI_Grequest_query_function * query_fn, MPI_Grequest_free_function* free_fn,
              MPI_Grequest_cancel_function* cancel_fn, void* extra_state, MPI_Request* request),
             (query_fn, free_fn, cancel_fn, extra_state, request)) {
  ADI3_MPI_ENTER();
  if (!request) return world_error(raise(ErrorClass::Arg, "request is null"), __func__);
  auto* u = new UserGreq{query_fn, free_fn, cancel_fn, extra_state};
  Request* g = nullptr;
  if (int e = grequest_start(rt->dev(), user_query, user_free, user_cancel, u, &g)) {
    delete u;
    return world_error(e, __func__);
  }
  return world_error(new_request(*rt, g, MPI_COMM_WORLD, false, request), __func__);
}

ADI3_MPI_API(int, Grequest_complete, (MPI_Request request), (request)) {
  ADI3_MPI_ENTER();
  // A handle freed by MPI_Request_free before completion still names it.
  Request* r = find_request(*rt, request);
  if (!r) r = find_request(*rt, request, Request::kHandleFreedOpen);
  if (!r) {
    if (static_cast<unsigned>(request) >> 30 != static_cast<unsigned>(HandleClass::Pool)) {
      return world_error(raise(ErrorClass::Request, "0x%x is not a generalized request", request), __func__);
    }
    return world_error(raise(ErrorClass::Request, "request 0x%x was freed or never created", request), __func__);
  }
  if (r->kind != RequestKind::Generalized) {
    return world_error(raise(ErrorClass::Request, "0x%x is not a generalized request", request), __func__);
  }
  return world_error(grequest_complete(r), __func__);  // runs free_fn if the request was freed
}

ADI3_MPI_API(int, Isendrecv,
             (const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
              int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Request* request),
             (sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm,
              request)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  if (!request) return comm_error(c, raise(ErrorClass::Arg, "request is null"), __func__);
  const Datatype *st = nullptr, *rtype = nullptr;
  int e = side(*rt, sendbuf, sendcount, sendtype, &st);
  if (!e) e = side(*rt, recvbuf, recvcount, recvtype, &rtype);
  if (e) return comm_error(c, e, __func__);
  auto* x = new Pair;
  x->dev = &rt->dev();
  Request* g = nullptr;
  if (int ge = begin_pair(*rt, x, &g)) return comm_error(c, ge, __func__);
  e = rt->dev().irecv(recvbuf, static_cast<std::size_t>(recvcount), rtype, source, recvtag, c->pt2pt, &x->recv);
  if (!e) {
    e = rt->dev().isend(sendbuf, static_cast<std::size_t>(sendcount), st, dest, sendtag, c->pt2pt, SendMode::Standard,
                        &x->send);
  }
  if (e) {
    abandon_pair(*rt, x, g);
    return comm_error(c, e, __func__);
  }
  return comm_error(c, finish_pair(*rt, x, g, comm, request), __func__);
}

ADI3_MPI_API(int, Isendrecv_replace,
             (void* buf, int count, MPI_Datatype dt, int dest, int sendtag, int source, int recvtag, MPI_Comm comm,
              MPI_Request* request),
             (buf, count, dt, dest, sendtag, source, recvtag, comm, request)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  if (!request) return comm_error(c, raise(ErrorClass::Arg, "request is null"), __func__);
  const Datatype* t = nullptr;
  if (int e = side(*rt, buf, count, dt, &t)) return comm_error(c, e, __func__);
  auto* x = new Pair;
  x->dev = &rt->dev();
  Request* g = nullptr;
  if (int ge = begin_pair(*rt, x, &g)) return comm_error(c, ge, __func__);
  // The outgoing data is copied first: the receive overwrites buf.
  std::size_t bytes = 0, pos = 0;
  (void)pack_size(static_cast<std::size_t>(count), t, &bytes);
  x->packed.resize(bytes);
  int e = 0;
  if (ErrorClass pc = pack(buf, static_cast<std::size_t>(count), t, x->packed.data(), bytes, &pos);
      pc != ErrorClass::Success) {
    e = raise(pc, "cannot copy the send data");
  }
  if (!e) e = rt->dev().irecv(buf, static_cast<std::size_t>(count), t, source, recvtag, c->pt2pt, &x->recv);
  if (!e) {
    e = rt->dev().isend(x->packed.data(), pos, Datatype::builtin(Builtin::kPacked), dest, sendtag, c->pt2pt,
                        SendMode::Standard, &x->send);
  }
  if (e) {
    abandon_pair(*rt, x, g);
    return comm_error(c, e, __func__);
  }
  return comm_error(c, finish_pair(*rt, x, g, comm, request), __func__);
}

// ---- MPIX_Grequest_*: MPICH's classes with poll and wait functions ----

struct adi3_mpix_grequest_class {
  MPI_Grequest_query_function* query;
  MPI_Grequest_free_function* free;
  MPI_Grequest_cancel_function* cancel;
  MPIX_Grequest_poll_function* poll;
  MPIX_Grequest_wait_function* wait;
  adi3::GreqClass* cls;  // the core class whose callbacks are the adapters below
  bool one_shot;         // made by MPIX_Grequest_start: dies with its request
};

namespace {

// What the core hands our adapters: the user's class and extra state.
struct ClassGreq {
  adi3_mpix_grequest_class* c;
  void* extra;
};

int class_query(void* p, Status* s) {
  auto* g = static_cast<ClassGreq*>(p);
  if (!g->c->query) return 0;
  return with_mpi_status(s, [&](MPI_Status* ms) { return g->c->query(g->extra, ms); });
}

int class_free(void* p) {
  auto* g = static_cast<ClassGreq*>(p);
  int e = g->c->free ? g->c->free(g->extra) : 0;
  if (g->c->one_shot) delete g->c;
  delete g;
  return e;
}

int class_cancel(void* p, int complete) {
  auto* g = static_cast<ClassGreq*>(p);
  return g->c->cancel ? g->c->cancel(g->extra, complete) : 0;
}

int class_poll(void* p, Status* s) {
  auto* g = static_cast<ClassGreq*>(p);
  return with_mpi_status(s, [&](MPI_Status* ms) { return g->c->poll(g->extra, ms); });
}

// The core passes our ClassGreq states; the user's wait function wants its own.
int class_wait(int count, void** states, double timeout, Status* s) {
  std::vector<void*> extras(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) extras[static_cast<std::size_t>(i)] = static_cast<ClassGreq*>(states[i])->extra;
  auto* c = static_cast<ClassGreq*>(states[0])->c;
  return with_mpi_status(s, [&](MPI_Status* ms) { return c->wait(count, extras.data(), timeout, ms); });
}

}  // namespace

namespace {

// A class record and its core class; one-shot records (MPIX_Grequest_start)
// die with their request, the others are owned by the runtime.
int create_class(Runtime& rt, MPI_Grequest_query_function* query_fn, MPI_Grequest_free_function* free_fn,
                 MPI_Grequest_cancel_function* cancel_fn, MPIX_Grequest_poll_function* poll_fn,
                 MPIX_Grequest_wait_function* wait_fn, bool one_shot, MPIX_Grequest_class* out) {
  auto* c = new adi3_mpix_grequest_class{query_fn, free_fn, cancel_fn, poll_fn, wait_fn, nullptr, one_shot};
  if (int e = grequest_class_create(class_query, class_free, class_cancel, poll_fn ? class_poll : nullptr,
                                    wait_fn ? class_wait : nullptr, &c->cls)) {
    delete c;
    return e;
  }
  if (!one_shot) {
    std::lock_guard<std::mutex> g(rt.extension_lock);
    rt.extensions.emplace_back(c, [](void* p) {
      auto* cls = static_cast<adi3_mpix_grequest_class*>(p);
      (void)grequest_class_free(&cls->cls);
      delete cls;
    });
  }
  *out = c;
  return MPI_SUCCESS;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int MPIX_Grequest_class_create(
    MPI_Grequest_query_function* query_fn, MPI_Grequest_free_function* free_fn, MPI_Grequest_cancel_function* cancel_fn,
    MPIX_Grequest_poll_function* poll_fn, MPIX_Grequest_wait_function* wait_fn, MPIX_Grequest_class* greq_class) {
  ADI3_MPI_ENTER();
  if (!greq_class) return world_error(raise(ErrorClass::Arg, "greq_class is null"), __func__);
  // MPICH has no class free: the runtime releases classes at MPI_Finalize.
  return world_error(create_class(*rt, query_fn, free_fn, cancel_fn, poll_fn, wait_fn, false, greq_class), __func__);
}

extern "C" __attribute__((visibility("default"))) int MPIX_Grequest_class_allocate(MPIX_Grequest_class greq_class,
                                                                                   void* extra_state,
                                                                                   MPI_Request* request) {
  ADI3_MPI_ENTER();
  if (!greq_class || !request) return world_error(raise(ErrorClass::Arg, "greq_class or request is null"), __func__);
  auto* g = new ClassGreq{greq_class, extra_state};
  Request* r = nullptr;
  if (int e = grequest_class_allocate(rt->dev(), greq_class->cls, g, &r)) {
    delete g;
    return world_error(e, __func__);
  }
  return world_error(new_request(*rt, r, MPI_COMM_WORLD, false, request), __func__);
}

extern "C" __attribute__((visibility("default"))) int MPIX_Grequest_start(MPI_Grequest_query_function* query_fn,
                                                                          MPI_Grequest_free_function* free_fn,
                                                                          MPI_Grequest_cancel_function* cancel_fn,
                                                                          MPIX_Grequest_poll_function* poll_fn,
                                                                          MPIX_Grequest_wait_function* wait_fn,
                                                                          void* extra_state, MPI_Request* request) {
  // A one-request class: the same adapters, so poll and wait run through
  // the progress engine like any class's.
  ADI3_MPI_ENTER();
  if (!request) return world_error(raise(ErrorClass::Arg, "request is null"), __func__);
  MPIX_Grequest_class c = nullptr;
  if (int e = create_class(*rt, query_fn, free_fn, cancel_fn, poll_fn, wait_fn, true, &c)) {
    return world_error(e, __func__);
  }
  int e = MPIX_Grequest_class_allocate(c, extra_state, request);
  // The core class lives on while its request does; a failed allocation
  // leaves nothing that would free the record.
  (void)grequest_class_free(&c->cls);
  if (e) delete c;
  return e;
}
