// Completion of requests: the wait/test families, request_get_status,
// request_free, cancel, start/startall. MPI_Request handles map to core
// requests; a handle is released when the core frees its request.
#include <algorithm>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

#include "adi3/device_inline.hpp"
#include "mpi/api.hpp"

using namespace adi3;
using namespace adi3::mpi;

int adi3::mpi::get_slot(Runtime& rt, MPI_Request h, ReqSlot* out) {
  if (Request* r = find_request(rt, h)) [[likely]] {
    *out = ReqSlot{r, r->handle_comm};
    return 0;
  }
  if (static_cast<unsigned>(h) >> 30 == static_cast<unsigned>(HandleClass::Pool)) {
    return raise(ErrorClass::Request, "request handle 0x%x was freed or never created", h);
  }
  return raise(ErrorClass::Request, "0x%x is not a request handle", h);
}

namespace {

// Arrays for a call over n requests, on the stack up to a message-rate
// window (128): every element is written before it is read, so the local
// storage is left uninitialized and only n elements are constructed.
// Filled: the core writes every element before any is read, so none is
// constructed (T is an aggregate, whose objects the byte array's storage
// holds implicitly): a window's statuses cost no default values.
enum class Fill : bool { Construct, ByCore };
template <class T>
class Scratch {
 public:
  explicit Scratch(int n, Fill fill = Fill::Construct) {
    const auto count = static_cast<std::size_t>(n > 0 ? n : 0);
    if (count <= kLocal) {
      static_assert(std::is_aggregate_v<T> || std::is_scalar_v<T>);
      p_ = fill == Fill::ByCore ? std::launder(reinterpret_cast<T*>(local_))
                                : std::uninitialized_default_construct_n(reinterpret_cast<T*>(local_), count) - count;
    } else {
      heap_.resize(count);
      p_ = heap_.data();
    }
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  T& operator[](int i) { return p_[i]; }
  T* data() { return p_; }

 private:
  static_assert(std::is_trivially_destructible_v<T>);
  static constexpr std::size_t kLocal = 128;
  alignas(T) unsigned char local_[kLocal * sizeof(T)];
  std::vector<T> heap_;
  T* p_;
};

// Core requests of an array of handles (null handles give nullptr).
int gather(Runtime& rt, int n, const MPI_Request* reqs, Request** out, MPI_Comm* comms) {
  if (n < 0) return raise(ErrorClass::Count, "invalid count %d of requests", n);
  if (n > 0 && !reqs) return raise(ErrorClass::Arg, "array_of_requests is null");
  // The pool's chunk table once for the set (not once per handle).
  const RequestPool::Slots slots = rt.dev().request_slots();
  for (int i = 0; i < n; ++i) {
    const MPI_Request h = reqs[i];
    Request* r = nullptr;
    MPI_Comm comm = MPI_COMM_WORLD;
    if (h != MPI_REQUEST_NULL) {
      // The live user handle inline; get_slot names what is wrong otherwise.
      r = find_request(slots, h);
      if (!r) [[unlikely]] {
        ReqSlot s;
        return get_slot(rt, h, &s);
      }
      comm = r->handle_comm;
    }
    // Each element written once (a window's gather is per-message cost).
    out[i] = r;
    comms[i] = comm;
  }
  return 0;
}

// After the core finished request i: a freed request's handle becomes
// MPI_REQUEST_NULL (the core already unmarked the request).
void settle(Runtime&, MPI_Request* h, Request* r) {
  if (!r) *h = MPI_REQUEST_NULL;
}

bool in_status(int e) { return e && error_class_of(e) == ErrorClass::InStatus; }

// The core's waitall gives an error other than MPI_ERR_IN_STATUS only
// before it writes any status: the caller reports empty ones.
void empty_statuses(int n, Status* st) { std::fill_n(st, n, Status{}); }

// Programs compare the result of the multiple-completion calls with
// MPI_ERR_IN_STATUS itself, so return the class, not a code of it (the
// per-request errors are in the statuses).
int exact(int e) { return in_status(e) ? MPI_ERR_IN_STATUS : e; }

// Errors of a multiple-completion call go to the handler of the first
// failed request's communicator.
MPI_Comm failed_comm(int n, const Status* st, const MPI_Comm* comms) {
  for (int i = 0; i < n; ++i) {
    if (st[i].error) return comms[i];
  }
  return n > 0 ? comms[0] : MPI_COMM_WORLD;
}

[[gnu::always_inline]] inline int complete_one(const char* fn, MPI_Request* request, int* flag, MPI_Status* status) {
  Runtime* rt = g_runtime;
  if (!rt) return not_initialized(fn);
  if (!request) return world_error(raise(ErrorClass::Arg, "request is null"), fn);
  if (*request == MPI_REQUEST_NULL) {
    if (flag) *flag = 1;
    empty_status(status, false);
    return MPI_SUCCESS;
  }
  // The live user handle inline; get_slot names what is wrong otherwise.
  Request* r = find_request(*rt, *request);
  MPI_Comm comm = r ? r->handle_comm : MPI_COMM_WORLD;
  if (!r) [[unlikely]] {
    ReqSlot s;
    if (int e = get_slot(*rt, *request, &s)) return world_error(e, fn);
    r = s.req;
    comm = s.comm;
  }
  Status st;
  Status* sp = ignored(status) ? nullptr : &st;  // nothing to copy when ignored
  int e;
  if (flag) {
    bool f = false;
    e = rt->dev().test_fast(&r, &f, sp);
    *flag = f;
    if (f && sp) to_mpi(st, status, false);
  } else {
    e = rt->dev().wait_fast(&r, sp);
    if (sp) to_mpi(st, status, false);
  }
  settle(*rt, request, r);
  if (e == 0) [[likely]]
    return MPI_SUCCESS;  // no call to find the handler
  return comm_error(comm, e, fn);
}

}  // namespace

ADI3_MPI_API(int, Wait, (MPI_Request * request, MPI_Status* status), (request, status)) {
  return complete_one(__func__, request, nullptr, status);
}

ADI3_MPI_API(int, Test, (MPI_Request * request, int* flag, MPI_Status* status), (request, flag, status)) {
  if (!flag) return world_error(raise(ErrorClass::Arg, "flag is null"), __func__);
  return complete_one(__func__, request, flag, status);
}

ADI3_MPI_API(int, Waitall, (int count, MPI_Request reqs[], MPI_Status statuses[]), (count, reqs, statuses)) {
  ADI3_MPI_ENTER();
  Scratch<Request*> rs(count);
  Scratch<MPI_Comm> comms(count);
  if (int e = gather(*rt, count, reqs, rs.data(), comms.data())) return world_error(e, __func__);
  Scratch<Status> st(count, Fill::ByCore);
  int e = rt->dev().waitall(count, rs.data(), st.data());
  if (e && !in_status(e)) empty_statuses(count, st.data());
  for (int i = 0; i < count; ++i) {
    settle(*rt, &reqs[i], rs[i]);
    if (statuses != MPI_STATUSES_IGNORE && statuses) to_mpi(st[i], &statuses[i], in_status(e));
  }
  return comm_error(in_status(e) ? failed_comm(count, st.data(), comms.data()) : MPI_COMM_WORLD, exact(e), __func__);
}

ADI3_MPI_API(int, Testall, (int count, MPI_Request reqs[], int* flag, MPI_Status statuses[]),
             (count, reqs, flag, statuses)) {
  ADI3_MPI_ENTER();
  if (!flag) return world_error(raise(ErrorClass::Arg, "flag is null"), __func__);
  Scratch<Request*> rs(count);
  Scratch<MPI_Comm> comms(count);
  if (int e = gather(*rt, count, reqs, rs.data(), comms.data())) return world_error(e, __func__);
  Scratch<Status> st(count, Fill::ByCore);
  bool f = false;
  int e = rt->dev().testall(count, rs.data(), &f, st.data());
  *flag = f;
  if (f) {
    if (e && !in_status(e)) empty_statuses(count, st.data());
    for (int i = 0; i < count; ++i) {
      settle(*rt, &reqs[i], rs[i]);
      if (statuses != MPI_STATUSES_IGNORE && statuses) to_mpi(st[i], &statuses[i], in_status(e));
    }
  }
  return comm_error(in_status(e) ? failed_comm(count, st.data(), comms.data()) : MPI_COMM_WORLD, exact(e), __func__);
}

ADI3_MPI_API(int, Waitany, (int count, MPI_Request reqs[], int* index, MPI_Status* status),
             (count, reqs, index, status)) {
  ADI3_MPI_ENTER();
  if (!index) return world_error(raise(ErrorClass::Arg, "index is null"), __func__);
  Scratch<Request*> rs(count);
  Scratch<MPI_Comm> comms(count);
  if (int e = gather(*rt, count, reqs, rs.data(), comms.data())) return world_error(e, __func__);
  Status st;
  int e = rt->dev().waitany(count, rs.data(), index, &st);
  to_mpi(st, status, false);
  MPI_Comm comm = MPI_COMM_WORLD;
  if (*index != MPI_UNDEFINED) {
    comm = comms[*index];
    settle(*rt, &reqs[*index], rs[*index]);
  }
  return comm_error(comm, e, __func__);
}

ADI3_MPI_API(int, Testany, (int count, MPI_Request reqs[], int* index, int* flag, MPI_Status* status),
             (count, reqs, index, flag, status)) {
  ADI3_MPI_ENTER();
  if (!index || !flag) return world_error(raise(ErrorClass::Arg, "index or flag is null"), __func__);
  Scratch<Request*> rs(count);
  Scratch<MPI_Comm> comms(count);
  if (int e = gather(*rt, count, reqs, rs.data(), comms.data())) return world_error(e, __func__);
  Status st;
  bool f = false;
  int e = rt->dev().testany(count, rs.data(), index, &f, &st);
  *flag = f;
  if (f) to_mpi(st, status, false);
  MPI_Comm comm = MPI_COMM_WORLD;
  if (*index != MPI_UNDEFINED) {
    comm = comms[*index];
    settle(*rt, &reqs[*index], rs[*index]);
  }
  return comm_error(comm, e, __func__);
}

namespace {

int some(const char* fn, bool wait, int incount, MPI_Request reqs[], int* outcount, int indices[],
         MPI_Status statuses[]) {
  Runtime* rt = g_runtime;
  if (!rt) return not_initialized(fn);
  if (!outcount || (incount > 0 && !indices)) {
    return world_error(raise(ErrorClass::Arg, "outcount or array_of_indices is null"), fn);
  }
  Scratch<Request*> rs(incount);
  Scratch<MPI_Comm> comms(incount);
  if (int e = gather(*rt, incount, reqs, rs.data(), comms.data())) return world_error(e, fn);
  Scratch<Status> st(incount);
  int e = wait ? rt->dev().waitsome(incount, rs.data(), outcount, indices, st.data())
               : rt->dev().testsome(incount, rs.data(), outcount, indices, st.data());
  MPI_Comm comm = MPI_COMM_WORLD;
  if (*outcount != MPI_UNDEFINED) {
    for (int k = 0; k < *outcount; ++k) {
      int i = indices[k];
      if (st[k].error && comm == MPI_COMM_WORLD) comm = comms[i];
      settle(*rt, &reqs[i], rs[i]);
      if (statuses != MPI_STATUSES_IGNORE && statuses) to_mpi(st[k], &statuses[k], in_status(e));
    }
  }
  return comm_error(comm, exact(e), fn);
}

}  // namespace

ADI3_MPI_API(int, Waitsome, (int incount, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]),
             (incount, reqs, outcount, indices, statuses)) {
  return some(__func__, true, incount, reqs, outcount, indices, statuses);
}

ADI3_MPI_API(int, Testsome, (int incount, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]),
             (incount, reqs, outcount, indices, statuses)) {
  return some(__func__, false, incount, reqs, outcount, indices, statuses);
}

ADI3_MPI_API(int, Request_get_status, (MPI_Request request, int* flag, MPI_Status* status), (request, flag, status)) {
  ADI3_MPI_ENTER();
  if (!flag) return world_error(raise(ErrorClass::Arg, "flag is null"), __func__);
  if (request == MPI_REQUEST_NULL) {
    *flag = 1;
    empty_status(status, false);
    return MPI_SUCCESS;
  }
  ReqSlot s;
  if (int e = get_slot(*rt, request, &s)) return world_error(e, __func__);
  Status st;
  bool f = false;
  int e = rt->dev().request_get_status(s.req, &f, &st);
  *flag = f;
  if (f) to_mpi(st, status, false);
  return comm_error(s.comm, e, __func__);
}

ADI3_MPI_API(int, Request_free, (MPI_Request * request), (request)) {
  ADI3_MPI_ENTER();
  if (!request) return world_error(raise(ErrorClass::Arg, "request is null"), __func__);
  if (*request == MPI_REQUEST_NULL) {
    return world_error(raise(ErrorClass::Request, "MPI_Request_free of MPI_REQUEST_NULL"), __func__);
  }
  ReqSlot s;
  if (int e = get_slot(*rt, *request, &s)) return world_error(e, __func__);
  MPI_Comm comm = s.comm;
  Request* r = s.req;
  if (r->kind == RequestKind::Collective && r->has(Request::kPersistent) && r->has(Request::kActive)) {
    // MPI: a persistent collective is freed only when inactive.
    return comm_error(comm, raise(ErrorClass::Request, "MPI_Request_free of an active persistent collective request"),
                      __func__);
  }
  // An open generalized request: MPI_Grequest_complete still gets the
  // handle (the core leaves this mark; completion then frees the slot).
  if (r->kind == RequestKind::Generalized && r->cc.load(std::memory_order_acquire) != 0) {
    r->handle.store(Request::kHandleFreedOpen, std::memory_order_relaxed);
  }
  int e = rt->dev().request_free(&r);
  *request = MPI_REQUEST_NULL;
  return comm_error(comm, e, __func__);
}

ADI3_MPI_API(int, Cancel, (MPI_Request * request), (request)) {
  ADI3_MPI_ENTER();
  if (!request) return world_error(raise(ErrorClass::Arg, "request is null"), __func__);
  if (*request == MPI_REQUEST_NULL)
    return world_error(raise(ErrorClass::Request, "MPI_Cancel of MPI_REQUEST_NULL"), __func__);
  ReqSlot s;
  if (int e = get_slot(*rt, *request, &s)) return world_error(e, __func__);
  if (s.req->kind == RequestKind::Collective) {
    return comm_error(s.comm, raise(ErrorClass::Request, "MPI_Cancel of a collective request is erroneous"), __func__);
  }
  return comm_error(s.comm, rt->dev().cancel(s.req), __func__);
}

ADI3_MPI_API(int, Start, (MPI_Request * request), (request)) {
  ADI3_MPI_ENTER();
  if (!request) return world_error(raise(ErrorClass::Arg, "request is null"), __func__);
  if (*request == MPI_REQUEST_NULL)
    return world_error(raise(ErrorClass::Request, "MPI_Start of MPI_REQUEST_NULL"), __func__);
  ReqSlot s;
  if (int e = get_slot(*rt, *request, &s)) return world_error(e, __func__);
  return comm_error(s.comm, rt->dev().start(s.req), __func__);
}

ADI3_MPI_API(int, Startall, (int count, MPI_Request reqs[]), (count, reqs)) {
  ADI3_MPI_ENTER();
  Scratch<Request*> rs(count);
  Scratch<MPI_Comm> comms(count);
  if (int e = gather(*rt, count, reqs, rs.data(), comms.data())) return world_error(e, __func__);
  for (int i = 0; i < count; ++i) {
    if (!rs[i])
      return world_error(raise(ErrorClass::Request, "MPI_Startall: request %d is MPI_REQUEST_NULL", i), __func__);
  }
  for (int i = 0; i < count; ++i) {
    if (int e = rt->dev().start(rs[i])) return comm_error(comms[i], e, __func__);
  }
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Test_cancelled, (const MPI_Status* status, int* flag), (status, flag)) {
  ADI3_MPI_ENTER();
  if (ignored(status) || !flag) return world_error(raise(ErrorClass::Arg, "status or flag is null"), __func__);
  *flag = status->adi3_cancelled != 0;
  return MPI_SUCCESS;
}

// ---- MPI-4.1: MPI_Request_get_status_any/all/some ----
// Like their test forms, but no request is freed or made inactive. A
// request takes part when active: not MPI_REQUEST_NULL and not an inactive
// persistent request.
namespace {

struct Probe {
  bool active = false;
  bool done = false;
  Status st;
  MPI_Comm comm = MPI_COMM_WORLD;
};

int probe_requests(Runtime& rt, int n, const MPI_Request* reqs, std::vector<Probe>* out) {
  if (n < 0) return raise(ErrorClass::Count, "invalid count %d of requests", n);
  if (n > 0 && !reqs) return raise(ErrorClass::Arg, "array_of_requests is null");
  out->resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    Probe& p = (*out)[static_cast<std::size_t>(i)];
    if (reqs[i] == MPI_REQUEST_NULL) continue;
    ReqSlot s;
    if (int e = get_slot(rt, reqs[i], &s)) return e;
    p.comm = s.comm;
    Request* r = s.req;
    if ((r->has(Request::kPersistent) && !r->has(Request::kActive))) continue;
    p.active = true;
    if (int e = rt.dev().request_get_status(r, &p.done, &p.st)) return e;
  }
  return 0;
}

}  // namespace

ADI3_MPI_API(int, Request_get_status_any,
             (int count, MPI_Request array_of_requests[], int* index, int* flag, MPI_Status* status),
             (count, array_of_requests, index, flag, status)) {
  ADI3_MPI_ENTER();
  if (!index || !flag) return world_error(raise(ErrorClass::Arg, "index or flag is null"), __func__);
  std::vector<Probe> p;
  if (int e = probe_requests(*rt, count, array_of_requests, &p)) return world_error(e, __func__);
  bool any_active = false;
  for (int i = 0; i < count; ++i) {
    any_active |= p[static_cast<std::size_t>(i)].active;
    if (!p[static_cast<std::size_t>(i)].done) continue;
    const Probe& q = p[static_cast<std::size_t>(i)];
    *index = i;
    *flag = 1;
    to_mpi(q.st, status, false);
    return comm_error(q.comm, q.st.error, __func__);
  }
  *index = MPI_UNDEFINED;
  *flag = !any_active;  // none active: true, with an empty status
  if (!any_active) empty_status(status, false);
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Request_get_status_all,
             (int count, MPI_Request array_of_requests[], int* flag, MPI_Status array_of_statuses[]),
             (count, array_of_requests, flag, array_of_statuses)) {
  ADI3_MPI_ENTER();
  if (!flag) return world_error(raise(ErrorClass::Arg, "flag is null"), __func__);
  std::vector<Probe> p;
  if (int e = probe_requests(*rt, count, array_of_requests, &p)) return world_error(e, __func__);
  *flag = 1;
  for (const Probe& q : p) {
    if (q.active && !q.done) *flag = 0;
  }
  if (!*flag) return MPI_SUCCESS;
  MPI_Comm failed = MPI_COMM_NULL;
  for (int i = 0; i < count; ++i) {
    const Probe& q = p[static_cast<std::size_t>(i)];
    if (q.st.error && failed == MPI_COMM_NULL) failed = q.comm;
  }
  if (array_of_statuses != MPI_STATUSES_IGNORE) {
    for (int i = 0; i < count; ++i) {
      const Probe& q = p[static_cast<std::size_t>(i)];
      if (q.active)
        to_mpi(q.st, &array_of_statuses[i], failed != MPI_COMM_NULL);
      else
        empty_status(&array_of_statuses[i], failed != MPI_COMM_NULL);
    }
  }
  if (failed == MPI_COMM_NULL) return MPI_SUCCESS;
  comm_error(failed, raise(ErrorClass::InStatus, "a request failed (see its status)"), __func__);
  return MPI_ERR_IN_STATUS;
}

ADI3_MPI_API(int, Request_get_status_some,
             (int incount, MPI_Request array_of_requests[], int* outcount, int array_of_indices[],
              MPI_Status array_of_statuses[]),
             (incount, array_of_requests, outcount, array_of_indices, array_of_statuses)) {
  ADI3_MPI_ENTER();
  if (!outcount) return world_error(raise(ErrorClass::Arg, "outcount is null"), __func__);
  std::vector<Probe> p;
  if (int e = probe_requests(*rt, incount, array_of_requests, &p)) return world_error(e, __func__);
  bool any_active = false, failed = false;
  int n = 0;
  for (int i = 0; i < incount; ++i) {
    const Probe& q = p[static_cast<std::size_t>(i)];
    any_active |= q.active;
    if (q.done) failed |= q.st.error != 0;
  }
  if (!any_active) {
    *outcount = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  if (incount > 0 && !array_of_indices)
    return world_error(raise(ErrorClass::Arg, "array_of_indices is null"), __func__);
  MPI_Comm comm = MPI_COMM_WORLD;
  for (int i = 0; i < incount; ++i) {
    const Probe& q = p[static_cast<std::size_t>(i)];
    if (!q.done) continue;
    if (q.st.error) comm = q.comm;
    array_of_indices[n] = i;
    if (array_of_statuses != MPI_STATUSES_IGNORE) to_mpi(q.st, &array_of_statuses[n], failed);
    ++n;
  }
  *outcount = n;
  if (!failed) return MPI_SUCCESS;
  comm_error(comm, raise(ErrorClass::InStatus, "a request failed (see its status)"), __func__);
  return MPI_ERR_IN_STATUS;
}
