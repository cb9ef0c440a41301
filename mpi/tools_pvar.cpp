// MPI_T performance variables: queue depths and counts the device keeps
// anyway (nothing is added to a hot path for them). All are continuous
// (always counting: start/stop give MPI_T_ERR_PVAR_NO_STARTSTOP) and bound
// to no object; levels are read-only, the counter may be reset or written
// per handle (a handle remembers the value it counts from).
#include <memory>
#include <algorithm>

#include "mpi/runtime.hpp"
#include "mpi/tools.hpp"

using namespace adi3;
using namespace adi3::mpi;
using namespace adi3::mpi::tools;

namespace {

// 0 while MPI is not running.
template <class F>
unsigned long long from_device(F&& f) {
  Runtime* rt = g_runtime;
  return rt ? static_cast<unsigned long long>(f(rt->dev())) : 0;
}

struct Session {
  std::vector<struct PvarHandle*> handles;
};

struct PvarHandle {
  int index;
  Session* session;
  unsigned long long base = 0;  // a counter counts from here
};

bool is_counter(int index) { return pvars()[static_cast<std::size_t>(index)].var_class == MPI_T_PVAR_CLASS_COUNTER; }

Session* session_of(MPI_T_pvar_session s) {
  return state().pvar_sessions.count(s) ? reinterpret_cast<Session*>(s) : nullptr;
}

// The handle h of session s, or an error (ALL_HANDLES only where allowed).
int handle_of(MPI_T_pvar_session s, MPI_T_pvar_handle h, Session** sess, PvarHandle** out) {
  if (!(*sess = session_of(s))) return MPI_T_ERR_INVALID_SESSION;
  if (h == MPI_T_PVAR_ALL_HANDLES) {
    *out = nullptr;
    return MPI_SUCCESS;
  }
  if (!state().pvar_handles.count(h)) return MPI_T_ERR_INVALID_HANDLE;
  *out = reinterpret_cast<PvarHandle*>(h);
  return (*out)->session == *sess ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
}

// A call on one handle with a value buffer (read, write, readreset); a
// counter's handle only when `counter`.
int one_handle(MPI_T_pvar_session s, MPI_T_pvar_handle h, const void* buf, bool counter, PvarHandle** out) {
  Session* sess = nullptr;
  if (int e = handle_of(s, h, &sess, out)) return e;
  if (!*out) return MPI_T_ERR_INVALID_HANDLE;  // these take one handle
  if (!buf) return MPI_ERR_ARG;
  if (counter && !is_counter((*out)->index)) return MPI_T_ERR_PVAR_NO_WRITE;
  return MPI_SUCCESS;
}

unsigned long long now_of(const PvarHandle& h) { return pvars()[static_cast<std::size_t>(h.index)].read(); }

unsigned long long value(const PvarHandle& h) { return pvars()[static_cast<std::size_t>(h.index)].read() - h.base; }

}  // namespace

const std::vector<Pvar>& adi3::mpi::tools::pvars() {
  static const std::vector<Pvar> v = {
      {"unexpected_queue_length", "messages that arrived before a matching receive was posted", MPI_T_PVAR_CLASS_LEVEL,
       [] { return from_device([](Device& d) { return d.unexpected_depth(); }); }},
      {"posted_queue_length", "receives posted and not yet matched", MPI_T_PVAR_CLASS_LEVEL,
       [] { return from_device([](Device& d) { return d.posted_depth(); }); }},
      {"live_requests", "requests in use (user and internal)", MPI_T_PVAR_CLASS_LEVEL,
       [] { return from_device([](Device& d) { return d.live_requests(); }); }},
      {"buffered_sends_in_flight", "buffered-mode messages not yet transmitted out of their buffer",
       MPI_T_PVAR_CLASS_LEVEL, [] { return from_device([](Device& d) { return d.buffered_in_flight(); }); }},
      {"refused_packets", "packets from other processes that failed their checks and were dropped",
       MPI_T_PVAR_CLASS_COUNTER, [] { return from_device([](Device& d) { return d.refused_packets(); }); }},
      {"channel_connections",
       "connections the channel made to peers (verbs: reliable-connected queue pairs, made on first use; 0 for "
       "channels without per-peer connections)",
       MPI_T_PVAR_CLASS_COUNTER, [] { return from_device([](Device& d) { return d.channel().connections(); }); }},
  };
  return v;
}

void adi3::mpi::tools::drop_pvar_sessions() {
  for (const void* s : state().pvar_sessions) delete static_cast<const Session*>(s);
  for (const void* h : state().pvar_handles) delete static_cast<const PvarHandle*>(h);
  state().pvar_sessions.clear();
  state().pvar_handles.clear();
}

ADI3_T_NUMBER(pvar_get_num, pvars().size())

ADI3_T_API(pvar_get_info,
           (int pvar_index, char* name, int* name_len, int* verbosity, int* var_class, MPI_Datatype* datatype,
            MPI_T_enum* enumtype, char* desc, int* desc_len, int* bind, int* readonly, int* continuous, int* atomic),
           (pvar_index, name, name_len, verbosity, var_class, datatype, enumtype, desc, desc_len, bind, readonly,
            continuous, atomic)) {
  ADI3_T_ENTER();
  if (pvar_index < 0 || static_cast<std::size_t>(pvar_index) >= pvars().size()) return MPI_T_ERR_INVALID_INDEX;
  const Pvar& p = pvars()[static_cast<std::size_t>(pvar_index)];
  put_string(p.name, name, name_len);
  put_string(p.desc, desc, desc_len);
  if (verbosity) *verbosity = MPI_T_VERBOSITY_USER_BASIC;
  if (var_class) *var_class = p.var_class;
  if (datatype) *datatype = MPI_UNSIGNED_LONG_LONG;
  if (enumtype) *enumtype = MPI_T_ENUM_NULL;
  if (bind) *bind = MPI_T_BIND_NO_OBJECT;
  if (readonly) *readonly = !is_counter(pvar_index);
  if (continuous) *continuous = 1;
  if (atomic) *atomic = 0;
  return MPI_SUCCESS;
}

ADI3_T_API(pvar_get_index, (const char* name, int var_class, int* pvar_index), (name, var_class, pvar_index)) {
  ADI3_T_ENTER();
  return find_index(pvars(), name, pvar_index,
                    [&](const Pvar& p) { return p.var_class == var_class ? p.name : nullptr; });
}

ADI3_T_API(pvar_session_create, (MPI_T_pvar_session * session), (session)) {
  ADI3_T_ENTER();
  if (!session) return MPI_ERR_ARG;
  auto s = std::make_unique<Session>();
  state().pvar_sessions.insert(s.get());  // may throw: s is still owned here
  *session = reinterpret_cast<MPI_T_pvar_session>(s.release());
  return MPI_SUCCESS;
}

ADI3_T_API(pvar_session_free, (MPI_T_pvar_session * session), (session)) {
  ADI3_T_ENTER();
  if (!session) return MPI_ERR_ARG;
  Session* s = session_of(*session);
  if (!s) return MPI_T_ERR_INVALID_SESSION;
  for (PvarHandle* h : s->handles) {
    state().pvar_handles.erase(h);
    delete h;
  }
  state().pvar_sessions.erase(s);
  delete s;
  *session = MPI_T_PVAR_SESSION_NULL;
  return MPI_SUCCESS;
}

ADI3_T_API(pvar_handle_alloc,
           (MPI_T_pvar_session session, int pvar_index, void* obj_handle, MPI_T_pvar_handle* handle, int* count),
           (session, pvar_index, obj_handle, handle, count)) {
  ADI3_T_ENTER();
  (void)obj_handle;  // bound to no object
  Session* s = session_of(session);
  if (!s) return MPI_T_ERR_INVALID_SESSION;
  if (pvar_index < 0 || static_cast<std::size_t>(pvar_index) >= pvars().size()) return MPI_T_ERR_INVALID_INDEX;
  if (!handle || !count) return MPI_ERR_ARG;
  auto h = std::make_unique<PvarHandle>(PvarHandle{pvar_index, s});
  s->handles.push_back(h.get());
  try {
    state().pvar_handles.insert(h.get());
  } catch (...) {
    s->handles.pop_back();  // all or nothing
    throw;
  }
  *handle = reinterpret_cast<MPI_T_pvar_handle>(h.release());
  *count = 1;
  return MPI_SUCCESS;
}

ADI3_T_API(pvar_handle_free, (MPI_T_pvar_session session, MPI_T_pvar_handle* handle), (session, handle)) {
  ADI3_T_ENTER();
  if (!handle || *handle == MPI_T_PVAR_ALL_HANDLES) return MPI_T_ERR_INVALID_HANDLE;
  Session* s = nullptr;
  PvarHandle* h = nullptr;
  if (int e = handle_of(session, *handle, &s, &h)) return e;
  s->handles.erase(std::find(s->handles.begin(), s->handles.end(), h));
  state().pvar_handles.erase(h);
  delete h;
  *handle = MPI_T_PVAR_HANDLE_NULL;
  return MPI_SUCCESS;
}

// Continuous variables: always started (MPI-4.1 15.3.7).
#define ADI3_T_STARTSTOP(name)                                                                  \
  ADI3_T_API(name, (MPI_T_pvar_session session, MPI_T_pvar_handle handle), (session, handle)) { \
    ADI3_T_ENTER();                                                                             \
    Session* s = nullptr;                                                                       \
    PvarHandle* h = nullptr;                                                                    \
    if (int e = handle_of(session, handle, &s, &h)) return e;                                   \
    return h ? MPI_T_ERR_PVAR_NO_STARTSTOP : MPI_SUCCESS;                                       \
  }
ADI3_T_STARTSTOP(pvar_start)
ADI3_T_STARTSTOP(pvar_stop)
#undef ADI3_T_STARTSTOP

ADI3_T_API(pvar_read, (MPI_T_pvar_session session, MPI_T_pvar_handle handle, void* buf), (session, handle, buf)) {
  ADI3_T_ENTER();
  PvarHandle* h = nullptr;
  if (int e = one_handle(session, handle, buf, false, &h)) return e;
  *static_cast<unsigned long long*>(buf) = value(*h);
  return MPI_SUCCESS;
}

ADI3_T_API(pvar_write, (MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void* buf),
           (session, handle, buf)) {
  ADI3_T_ENTER();
  PvarHandle* h = nullptr;
  if (int e = one_handle(session, handle, buf, true, &h)) return e;
  // The handle reads the written value from now on, counting up from it.
  h->base = now_of(*h) - *static_cast<const unsigned long long*>(buf);
  return MPI_SUCCESS;
}

ADI3_T_API(pvar_reset, (MPI_T_pvar_session session, MPI_T_pvar_handle handle), (session, handle)) {
  ADI3_T_ENTER();
  Session* s = nullptr;
  PvarHandle* h = nullptr;
  if (int e = handle_of(session, handle, &s, &h)) return e;
  if (!h) {  // every handle of the session that can be reset
    for (PvarHandle* x : s->handles) {
      if (is_counter(x->index)) x->base = now_of(*x);
    }
    return MPI_SUCCESS;
  }
  if (!is_counter(h->index)) return MPI_T_ERR_PVAR_NO_WRITE;
  h->base = now_of(*h);
  return MPI_SUCCESS;
}

ADI3_T_API(pvar_readreset, (MPI_T_pvar_session session, MPI_T_pvar_handle handle, void* buf), (session, handle, buf)) {
  ADI3_T_ENTER();
  PvarHandle* h = nullptr;
  if (int e = one_handle(session, handle, buf, true, &h)) return e;
  const unsigned long long now = now_of(*h);
  *static_cast<unsigned long long*>(buf) = now - h->base;
  h->base = now;
  return MPI_SUCCESS;
}
