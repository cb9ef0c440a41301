// MPI-4 Sessions over the world model: MPI_Session_init starts the runtime
// when nothing has (and the last MPI_Session_finalize of such a runtime ends
// it); the process sets are mpi://WORLD and mpi://SELF; a communicator from
// a group is agreed over MPI_COMM_WORLD (MPI_Comm_create_group, with a tag
// derived from the string tag every member passes). Session objects live in
// their own table, like info objects, since they may precede the runtime.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <strings.h>

#include "mpi/api.hpp"
#include "mpi/buffers.hpp"

using namespace adi3;
using namespace adi3::mpi;

namespace {

struct SessionObj {
  std::vector<std::pair<std::string, std::string>> info;
  MPI_Errhandler errh = MPI_ERRORS_ARE_FATAL;  // a predefined or user handle
  ErrhandlerObj* user = nullptr;               // a user handler (holds a reference)
  // Buffered mode on the session's communicators (MPI-4.1).
  std::shared_ptr<BsendBuffer> buffer = std::make_shared<BsendBuffer>();
};

struct SessionStore {
  HandleTable<SessionObj*> table;
  int live = 0;
  bool started_runtime = false;  // MPI_Session_init started it: the last finalize ends it
  ~SessionStore() {
    table.for_each([](int, SessionObj* s) { delete s; });
  }
};

SessionStore& store() {
  static SessionStore s;
  return s;
}

constexpr Kind kSessionKind = static_cast<Kind>(13);

int get_session(MPI_Session h, SessionObj** out) {
  if (h == MPI_SESSION_NULL) return raise(ErrorClass::Session, "the session is MPI_SESSION_NULL");
  if (is_kind(h, kSessionKind, HandleClass::User)) {
    if (SessionObj** s = store().table.get(handle_index(h))) {
      *out = *s;
      return 0;
    }
    return raise(ErrorClass::Session, "session handle 0x%x was finalized or never created", h);
  }
  return raise(ErrorClass::Session, "0x%x is not a session handle", h);
}

// Reports code through the session's error handler (code == 0 passes).
int session_error(MPI_Session h, SessionObj* s, int code, const char* fn) {
  if (!code) return 0;
  if (!s) return world_error(code, fn);
  if (s->errh == MPI_ERRORS_RETURN) return code;
  if (!s->user) fatal(code, fn);  // MPI_ERRORS_ARE_FATAL or MPI_ERRORS_ABORT
  MPI_Session self = h;
  int c = code;
  // Created by MPI_Session_create_errhandler: the function takes a session.
  reinterpret_cast<MPI_Session_errhandler_function*>(s->user->fn)(&self, &c);
  return code;
}

// A session's error handler: predefined, or a user one it keeps a reference to.
int set_handler(SessionObj& s, MPI_Errhandler h) {
  ErrhandlerObj* user = nullptr;
  if (h != MPI_ERRORS_ARE_FATAL && h != MPI_ERRORS_RETURN && h != MPI_ERRORS_ABORT) {
    if (int e = get_errhandler(*g_runtime, h, &user)) return e;
    user->refs.fetch_add(1);
  }
  if (s.user) release_errhandler(*g_runtime, s.user);
  s.user = user;
  s.errh = h;
  return 0;
}

// The start of a session call: the session, or an error through MPI_COMM_WORLD's handler.
#define ADI3_SESSION(h)                                       \
  SessionObj* s = nullptr;                                    \
  if (g_runtime == nullptr) return not_initialized(__func__); \
  if (int e_ = get_session(h, &s)) return world_error(e_, __func__)

int thread_level(const std::vector<std::pair<std::string, std::string>>& info) {
  for (auto& [k, v] : info) {
    if (k != "thread_level") continue;
    if (v == "MPI_THREAD_MULTIPLE") return MPI_THREAD_MULTIPLE;
    if (v == "MPI_THREAD_SERIALIZED") return MPI_THREAD_SERIALIZED;
    if (v == "MPI_THREAD_FUNNELED") return MPI_THREAD_FUNNELED;
  }
  return MPI_THREAD_SINGLE;
}

// The entries of an info handle (null: none); works before MPI_Init.
int entries_of(MPI_Info info, std::vector<std::pair<std::string, std::string>>* out) {
  if (info == MPI_INFO_NULL) return 0;
  int n = 0;
  if (int e = PMPI_Info_get_nkeys(info, &n)) return e;
  for (int i = 0; i < n; ++i) {
    char key[MPI_MAX_INFO_KEY + 1];
    char value[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    if (int e = PMPI_Info_get_nthkey(info, i, key)) return e;
    if (int e = PMPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag)) return e;
    if (flag) out->emplace_back(key, value);
  }
  return 0;
}

const char* pset(const char* name) {
  if (!name) return nullptr;
  if (strcasecmp(name, "mpi://WORLD") == 0) return "mpi://WORLD";
  if (strcasecmp(name, "mpi://SELF") == 0) return "mpi://SELF";
  return nullptr;
}

}  // namespace

bool adi3::mpi::sessions_keep_runtime() {
  SessionStore& st = store();
  if (st.live == 0) return false;
  st.started_runtime = true;
  return true;
}

ADI3_MPI_API(int, Session_init, (MPI_Info info, MPI_Errhandler errhandler, MPI_Session* session),
             (info, errhandler, session)) {
  if (!session) return world_error(raise(ErrorClass::Arg, "session is null"), __func__);
  auto* obj = new SessionObj;
  if (int e = entries_of(info, &obj->info)) {
    delete obj;
    return e;
  }
  if (g_state.load() == 2) {
    delete obj;
    return world_error(raise(ErrorClass::Other, "MPI_Session_init after the runtime ended"), __func__);
  }
  SessionStore& st = store();
  if (g_state.load() == 0) {
    start_runtime(thread_level(obj->info), nullptr);
    st.started_runtime = true;
  }
  if (errhandler != MPI_ERRHANDLER_NULL) {
    if (int e = set_handler(*obj, errhandler)) {
      delete obj;
      return world_error(e, __func__);
    }
  }
  int i = st.table.add(obj);
  if (i < 0) {
    delete obj;
    return world_error(raise(ErrorClass::Intern, "too many sessions"), __func__);
  }
  ++st.live;
  *session = make_handle(HandleClass::User, kSessionKind, i);
  obj->info.emplace_back("mpi_session_thread_level", std::to_string(thread_level(obj->info)));
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Session_finalize, (MPI_Session * session), (session)) {
  if (!session) return world_error(raise(ErrorClass::Arg, "session is null"), __func__);
  ADI3_SESSION(*session);
  // Its buffered messages leave before the user may reuse the buffer.
  if (int e = g_runtime->dev().buffer_flush(*s->buffer)) return session_error(*session, s, e, __func__);
  SessionStore& st = store();
  st.table.remove(handle_index(*session));
  if (s->user) release_errhandler(*g_runtime, s->user);
  delete s;
  *session = MPI_SESSION_NULL;
  // The runtime ends with its last user: the last session, unless the
  // World Model still runs.
  if (--st.live == 0 && st.started_runtime && g_world.load() != 1) {
    st.started_runtime = false;
    return stop_runtime(__func__);
  }
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Session_get_num_psets, (MPI_Session session, MPI_Info info, int* npset_names),
             (session, info, npset_names)) {
  ADI3_SESSION(session);
  (void)info;
  if (!npset_names) return session_error(session, s, raise(ErrorClass::Arg, "npset_names is null"), __func__);
  *npset_names = 2;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Session_get_nth_pset, (MPI_Session session, MPI_Info info, int n, int* pset_len, char* pset_name),
             (session, info, n, pset_len, pset_name)) {
  ADI3_SESSION(session);
  (void)info;
  if (!pset_len) return session_error(session, s, raise(ErrorClass::Arg, "pset_len is null"), __func__);
  if (n < 0 || n > 1) {
    return session_error(session, s, raise(ErrorClass::Arg, "invalid process set number %d (there are 2)", n),
                         __func__);
  }
  const char* name = n == 0 ? "mpi://WORLD" : "mpi://SELF";
  int len = static_cast<int>(std::strlen(name)) + 1;
  if (*pset_len == 0) {  // a query of the length
    *pset_len = len;
    return MPI_SUCCESS;
  }
  if (!pset_name) return session_error(session, s, raise(ErrorClass::Arg, "pset_name is null"), __func__);
  int copy = std::min(len, *pset_len) - 1;
  std::memcpy(pset_name, name, static_cast<std::size_t>(copy));
  pset_name[copy] = '\0';
  *pset_len = len;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Session_get_pset_info, (MPI_Session session, const char* pset_name, MPI_Info* info),
             (session, pset_name, info)) {
  ADI3_SESSION(session);
  const char* p = pset(pset_name);
  if (!info) return session_error(session, s, raise(ErrorClass::Arg, "info is null"), __func__);
  if (!p) {
    return session_error(session, s, raise(ErrorClass::Arg, "unknown process set \"%s\"", pset_name ? pset_name : ""),
                         __func__);
  }
  int size = std::strcmp(p, "mpi://WORLD") == 0 ? g_runtime->world.size() : 1;
  return add_info(*g_runtime, {{"mpi_size", std::to_string(size)}}, info);
}

ADI3_MPI_API(int, Session_get_info, (MPI_Session session, MPI_Info* info_used), (session, info_used)) {
  ADI3_SESSION(session);
  if (!info_used) return session_error(session, s, raise(ErrorClass::Arg, "info_used is null"), __func__);
  return session_error(session, s, add_info(*g_runtime, s->info, info_used), __func__);
}

ADI3_MPI_API(int, Group_from_session_pset, (MPI_Session session, const char* pset_name, MPI_Group* newgroup),
             (session, pset_name, newgroup)) {
  ADI3_SESSION(session);
  const char* p = pset(pset_name);
  if (!newgroup) return session_error(session, s, raise(ErrorClass::Arg, "newgroup is null"), __func__);
  if (!p) {
    return session_error(session, s, raise(ErrorClass::Arg, "unknown process set \"%s\"", pset_name ? pset_name : ""),
                         __func__);
  }
  // A group of its own that names the session (its communicators use the
  // session's buffer).
  const CommObj& from = std::strcmp(p, "mpi://WORLD") == 0 ? g_runtime->world : g_runtime->self;
  auto g = std::make_shared<GroupData>(*from.group);
  g->session_buffer = s->buffer;
  int i = g_runtime->groups.add(std::move(g));
  if (i < 0) return session_error(session, s, raise(ErrorClass::Intern, "too many groups"), __func__);
  *newgroup = make_handle(HandleClass::User, Kind::Group, i);
  return MPI_SUCCESS;
}

namespace {

// The tag every member derives from the string tag (FNV-1a, folded into the
// tags every implementation allows).
int tag_of(const char* stringtag) {
  std::uint32_t h = 2166136261u;
  for (const char* c = stringtag; *c; ++c) h = (h ^ static_cast<unsigned char>(*c)) * 16777619u;
  return static_cast<int>(h % 32768u);
}

// What MPI_Comm_create_from_group and the intercommunicator form set on the
// new communicator.
int adopt(MPI_Comm comm, MPI_Info info, MPI_Errhandler errhandler) {
  if (errhandler != MPI_ERRHANDLER_NULL) {
    if (int e = PMPI_Comm_set_errhandler(comm, errhandler)) return e;
  }
  if (info != MPI_INFO_NULL) return PMPI_Comm_set_info(comm, info);
  return MPI_SUCCESS;
}

}  // namespace

// Collective over the group's members, which pass the same string tag.
ADI3_MPI_API(int, Comm_create_from_group,
             (MPI_Group group, const char* stringtag, MPI_Info info, MPI_Errhandler errhandler, MPI_Comm* newcomm),
             (group, stringtag, info, errhandler, newcomm)) {
  ADI3_MPI_ENTER();
  // A null stringtag or newcomm still takes part (the call fails at every member).
  const int bad = stringtag ? 0 : raise(ErrorClass::Arg, "stringtag is null");
  if (int e = create_group(*rt, rt->world, group, stringtag ? tag_of(stringtag) : -1, newcomm, bad))
    return world_error(e, __func__);
  if (*newcomm == MPI_COMM_NULL) return MPI_SUCCESS;
  return adopt(*newcomm, info, errhandler);
}

// MPI-4.0: both groups' members call it with the same string tag; each
// group makes its communicator, whose leaders then meet over
// MPI_COMM_WORLD (every group is a subset of it: no dynamic processes).
ADI3_MPI_API(int, Intercomm_create_from_groups,
             (MPI_Group local_group, int local_leader, MPI_Group remote_group, int remote_leader, const char* stringtag,
              MPI_Info info, MPI_Errhandler errhandler, MPI_Comm* newintercomm),
             (local_group, local_leader, remote_group, remote_leader, stringtag, info, errhandler, newintercomm)) {
  ADI3_MPI_ENTER();
  if (!stringtag) return world_error(raise(ErrorClass::Arg, "stringtag is null"), __func__);
  if (!newintercomm) return world_error(raise(ErrorClass::Arg, "newintercomm is null"), __func__);
  GroupPtr remote;
  if (int e = get_group(*rt, remote_group, &remote)) return world_error(e, __func__);
  if (remote_leader < 0 || remote_leader >= remote->size()) {
    return world_error(raise(ErrorClass::Rank, "invalid remote_leader %d: the remote group has %d members",
                             remote_leader, remote->size()),
                       __func__);
  }
  MPI_Comm local = MPI_COMM_NULL;
  if (int e = PMPI_Comm_create_group(MPI_COMM_WORLD, local_group, tag_of(stringtag), &local)) return e;
  if (local == MPI_COMM_NULL) {
    return world_error(raise(ErrorClass::Group, "the calling process is not in local_group"), __func__);
  }
  int e =
      PMPI_Intercomm_create(local, local_leader, MPI_COMM_WORLD, remote->ranks[static_cast<std::size_t>(remote_leader)],
                            tag_of(stringtag), newintercomm);
  PMPI_Comm_free(&local);
  if (e) return e;
  return adopt(*newintercomm, info, errhandler);
}

ADI3_MPI_API(int, Session_create_errhandler, (MPI_Session_errhandler_function * fn, MPI_Errhandler* errhandler),
             (fn, errhandler)) {
  // A communicator handler object holds the function (both take a pointer
  // to an int handle and a code).
  return PMPI_Comm_create_errhandler(reinterpret_cast<MPI_Comm_errhandler_function*>(fn), errhandler);
}

ADI3_MPI_API(int, Session_set_errhandler, (MPI_Session session, MPI_Errhandler errhandler), (session, errhandler)) {
  ADI3_SESSION(session);
  return session_error(session, s, set_handler(*s, errhandler), __func__);
}

ADI3_MPI_API(int, Session_get_errhandler, (MPI_Session session, MPI_Errhandler* errhandler), (session, errhandler)) {
  ADI3_SESSION(session);
  if (!errhandler) return session_error(session, s, raise(ErrorClass::Arg, "errhandler is null"), __func__);
  if (s->user) s->user->refs.fetch_add(1);  // the caller frees the handle it gets
  *errhandler = s->errh;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Session_call_errhandler, (MPI_Session session, int errorcode), (session, errorcode)) {
  ADI3_SESSION(session);
  session_error(session, s, errorcode, __func__);
  return MPI_SUCCESS;  // the handler ran (unless it was fatal)
}

// ---- the session's buffer (MPI-4.1) ----

#define ADI3_SESSION_ATTACH(fname, C, ...)                                                           \
  ADI3_MPI_API(int, fname, (MPI_Session session, void* buffer, C size), (session, buffer, size)) {   \
    ADI3_SESSION(session);                                                                           \
    return session_error(session, s, attach_buffer(*g_runtime, *s->buffer, buffer, size), __func__); \
  }
ADI3_MPI_COUNT_FORMS(ADI3_SESSION_ATTACH, Session_attach_buffer)
#undef ADI3_SESSION_ATTACH

#define ADI3_SESSION_DETACH(fname, C, ...)                                                                    \
  ADI3_MPI_API(int, fname, (MPI_Session session, void* buffer_addr, C* size), (session, buffer_addr, size)) { \
    ADI3_SESSION(session);                                                                                    \
    return session_error(session, s, detach_buffer(*g_runtime, *s->buffer, buffer_addr, size), __func__);     \
  }
ADI3_MPI_COUNT_FORMS(ADI3_SESSION_DETACH, Session_detach_buffer)
#undef ADI3_SESSION_DETACH

ADI3_MPI_API(int, Session_flush_buffer, (MPI_Session session), (session)) {
  ADI3_SESSION(session);
  return session_error(session, s, g_runtime->dev().buffer_flush(*s->buffer), __func__);
}

// The request's errors go to MPI_COMM_WORLD's handler (a request has no session).
ADI3_MPI_API(int, Session_iflush_buffer, (MPI_Session session, MPI_Request* request), (session, request)) {
  ADI3_SESSION(session);
  return session_error(session, s, iflush_buffer(*g_runtime, s->buffer, MPI_COMM_WORLD, request), __func__);
}

ADI3_MPI_API(MPI_Fint, Session_c2f, (MPI_Session session), (session)) { return session; }
ADI3_MPI_API(MPI_Session, Session_f2c, (MPI_Fint session), (session)) { return session; }
