// What every MPI entry point uses: the PMPI/MPI symbol pair, the
// initialization check, argument checks that name the bad value, handle
// lookups, status conversion and error-handler dispatch.
#pragma once
#include <cstdarg>
#include <type_traits>

#include <mpi.h>

#include "adi3/error.hpp"
#include "mpi/runtime.hpp"
#include "segment/datatype.hpp"

// Defines PMPI_name (the implementation) and MPI_name as a weak alias of
// it, so a profiling library can interpose MPI_name and call PMPI_name;
// args names the parameters, in order. The body that follows the macro
// runs inside the entry point's one try block: a C++ exception escaping
// the layers (std::bad_alloc from an allocation without an error path)
// must not unwind into the C caller, so it becomes an error code
// (ERR_NO_MEM for bad_alloc) reported through the handler of the
// communicator or window among the arguments (mpi/escape.cpp). The try
// costs nothing until something throws (table-driven unwinding), and the
// body (a function of internal linkage called once) is inlined into it.
#define ADI3_MPI_API(ret, name, params, args)                                   \
  namespace {                                                                   \
  struct PMPI_##name##_body {                                                   \
    [[gnu::always_inline]] static inline ret PMPI_##name params;                \
  };                                                                            \
  }                                                                             \
  extern "C" ret MPI_##name params __attribute__((weak, alias("PMPI_" #name))); \
  extern "C" __attribute__((visibility("default"))) ret PMPI_##name params {    \
    try {                                                                       \
      return PMPI_##name##_body::PMPI_##name args;                              \
    } catch (...) {                                                             \
      return ::adi3::mpi::Escaped<ret>{"PMPI_" #name} args;                     \
    }                                                                           \
  }                                                                             \
  ret PMPI_##name##_body::PMPI_##name params
// The same without the try, for the one entry point whose arguments
// cannot be forwarded (MPI_Pcontrol's "..."); it must not throw.
#define ADI3_MPI_API_NOTHROW(ret, name, params)                                 \
  extern "C" ret MPI_##name params __attribute__((weak, alias("PMPI_" #name))); \
  extern "C" __attribute__((visibility("default"))) ret PMPI_##name params

// MPI_name (int counts) and MPI_name_c (MPI_Count counts) from one shape:
// SHAPE(fname, C, ...) defines the entry point fname whose counts have type C
// (the extra arguments pass through to SHAPE).
#define ADI3_MPI_COUNT_FORMS(SHAPE, name, ...) \
  SHAPE(name, int, __VA_ARGS__)                \
  SHAPE(name##_c, MPI_Count, __VA_ARGS__)

// First statement of an entry point that needs MPI to be initialized:
// binds `rt` or reports the call as erroneous.
#define ADI3_MPI_ENTER()                             \
  ::adi3::mpi::Runtime* rt = ::adi3::mpi::g_runtime; \
  if (!rt) [[unlikely]]                              \
  return ::adi3::mpi::not_initialized(__func__)

namespace adi3::mpi {

// ---- an exception that escaped an entry point's body (ADI3_MPI_API) ----
// Called in its catch block: turns the exception in flight into a code of
// fn (ERR_NO_MEM for std::bad_alloc, std::length_error and a thread that
// could not start for want of resources, ERR_INTERN naming anything else) and reports it through the handler of win
// when it is a window handle, else of comm (MPI_COMM_WORLD's when neither is one).
int escaped(const char* fn, int comm, int win) noexcept;
// An MPI_ERR_NO_MEM code of fn as "rank R: <its message> in MPI_Xxx" (a new
// code; code itself when it is another class or names its call already).
// The error handlers' dispatch calls it, so every out-of-memory error says
// where it happened.
int name_no_mem(int code, const char* fn) noexcept;
// Picks the first communicator and window handle among an entry point's
// arguments (handles are ints whose top bits say their kind).
template <class R>
struct Escaped {
  const char* fn;
  template <class... A>
  R operator()(const A&... a) const noexcept {
    int comm = 0, win = 0;
    (note(a, &comm, &win), ...);
    const int code = escaped(fn, comm, win);
    if constexpr (std::is_same_v<R, int>) {
      return code;
    } else {
      return R{};  // MPI_Wtime and the like allocate nothing
    }
  }
  template <class T>
  static void note(const T&, int*, int*) {}
  static void note(int h, int* comm, int* win) {
    if (handle_class(h) == HandleClass::Null) return;
    if (!*comm && handle_kind(h) == Kind::Comm) *comm = h;
    if (!*win && handle_kind(h) == Kind::Win) *win = h;
  }
};

// MPI called outside Init..Finalize: reports through the default (fatal)
// handler.
int not_initialized(const char* fn);

// A code of class c with a message naming what was wrong (the device's
// ErrorLog, or the bare class when MPI is not running).
int raise(ErrorClass c, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// Error-handler dispatch: code == 0 passes through; otherwise the handler of
// comm (MPI_COMM_WORLD's when comm is null or invalid) runs and, unless it
// is fatal, code is returned. fn is the entry point (__func__).
int comm_error_report(CommObj* comm, int code, const char* fn);
inline int comm_error(CommObj* comm, int code, const char* fn) {
  return code == 0 ? 0 : comm_error_report(comm, code, fn);  // success stays inline
}
int comm_error(MPI_Comm comm, int code, const char* fn);
// Errors of calls tied to no communicator go to MPI_COMM_WORLD's handler.
inline int world_error(int code, const char* fn) { return comm_error(static_cast<CommObj*>(nullptr), code, fn); }
// Prints "[rank r] MPI_X: message" and ends the job.
[[noreturn]] void fatal(int code, const char* fn);
// Remembers the first error handed back to the program (a handler that
// returns) by a call that may leave a peer waiting for this rank (a
// collective, a matching call): MPI_Finalize then stops waiting for peers
// that never come. Local calls' errors never arm that wait.
void note_returned(int code, const char* fn);
// Marks code as an error after which no peer waits for this rank in its
// call (every rank got it back together from an agreement, or this rank
// still took its part): it does not arm MPI_Finalize's wait. Returns code.
int no_peer_waits(int code);

// A type made by MPI_Type_create_f90_*: its combiner and arguments (r for
// integers, p and r for reals and complexes); false for any other handle.
bool f90_params(Runtime& rt, MPI_Datatype dt, std::array<int, 3>* out);
// The handle of the MPI_Type_create_f90_* type whose object is t, else
// MPI_DATATYPE_NULL.
MPI_Datatype f90_handle(Runtime& rt, const Datatype* t);

// ---- handle lookups (0 or an error code) ----
// The predefined communicators and datatypes are found inline (every
// point-to-point call looks up both); the rest out of line.
int get_comm_slow(Runtime& rt, MPI_Comm h, CommObj** out);
inline int get_comm(Runtime& rt, MPI_Comm h, CommObj** out) {
  if (h == MPI_COMM_WORLD) {
    *out = &rt.world;
    return 0;
  }
  return get_comm_slow(rt, h, out);
}
int get_group(Runtime& rt, MPI_Group h, GroupPtr* out);
// Any valid datatype (committed or not).
int get_type(Runtime& rt, MPI_Datatype h, const Datatype** out);
// A datatype usable for communication: valid and committed.
int get_comm_type_slow(Runtime& rt, MPI_Datatype h, const Datatype** out);
inline int get_comm_type(Runtime& rt, MPI_Datatype h, const Datatype** out) {
  if (is_kind(h, Kind::Datatype, HandleClass::Builtin)) {
    auto i = static_cast<std::size_t>(handle_index(h));
    if (i < rt.builtin_types.size()) {
      *out = rt.builtin_types[i];  // predefined types are committed
      return 0;
    }
  }
  return get_comm_type_slow(rt, h, out);
}
int get_info(Runtime& rt, MPI_Info h, InfoObj** out);
// A copy of info's entries (none for MPI_INFO_NULL).
int info_entries(Runtime& rt, MPI_Info info, std::vector<std::pair<std::string, std::string>>* out);
// A new handle for t, taking over one reference the caller holds.
int add_type(Runtime& rt, Datatype* t, MPI_Datatype* out);
// The handle of t (a predefined or user datatype known to this runtime).
MPI_Datatype type_handle(Runtime& rt, const Datatype* t);

// ---- argument checks ----
// The checks every message makes are inline for the good case; the rest
// (and the message naming the bad value) out of line.
int check_count_slow(MPI_Count count, const char* what);
inline int check_count(MPI_Count count, const char* what = "count") {
  return count >= 0 ? 0 : check_count_slow(count, what);
}
// A sum or product of int counts that an int count must hold (ERR_COUNT naming it).
int check_total(long long total, const char* what);
// count * size and the memory count elements span must not overflow (ERR_COUNT naming them).
int check_extent(MPI_Count count, const Datatype* t);
// A null buffer is an error only when it would be accessed.
int check_buffer_slow(const void* buf, MPI_Count count, const Datatype* t);
inline int check_buffer(const void* buf, MPI_Count count, const Datatype* t) {
  // Small enough that neither count * size nor the span can overflow.
  constexpr MPI_Count kSmall = MPI_Count{1} << 31;
  if (buf && count < kSmall && t->size() < static_cast<std::size_t>(kSmall) && t->extent() < kSmall &&
      t->extent() > -kSmall && t->true_extent() < kSmall) [[likely]]
    return 0;
  return check_buffer_slow(buf, count, t);
}
int check_root(const CommObj& c, int root);

// ---- statuses ----
inline bool ignored(const MPI_Status* s) { return s == MPI_STATUS_IGNORE || s == nullptr; }
// Writes a core status into an MPI one; the MPI_ERROR field only when
// with_error (single-completion calls leave it alone).
void to_mpi(const Status& s, MPI_Status* out, bool with_error);
// The empty status of an inactive or null request.
void empty_status(MPI_Status* out, bool with_error);
// Bytes recorded in an MPI status.
std::size_t status_bytes(const MPI_Status* s);
void set_status_bytes(MPI_Status* s, std::size_t bytes);

// A new group handle (MPI_GROUP_EMPTY when ranks is empty).
int add_group(Runtime& rt, std::vector<int> ranks, MPI_Group* out);
// A new info handle holding entries.
int add_info(Runtime& rt, std::vector<std::pair<std::string, std::string>> entries, MPI_Info* out);
// Error handlers of communicators and windows: a user handler is shared by
// reference; builtin is the predefined handle when user is null.
void release_errhandler(Runtime& rt, ErrhandlerObj* e);
template <class Obj>
void set_errhandler(Runtime& rt, Obj& o, ErrhandlerObj* user, int builtin) {
  if (user) user->refs.fetch_add(1);
  ErrhandlerObj* old = o.errh;
  o.errh = user;
  o.errh_builtin = user ? MPI_ERRHANDLER_NULL : builtin;
  if (old) release_errhandler(rt, old);
}
// The handle MPI_X_get_errhandler gives (a user one gains a reference: the
// caller frees it).
template <class Obj>
MPI_Errhandler errhandler_handle(Obj& o) {
  if (!o.errh) return o.errh_builtin;
  o.errh->refs.fetch_add(1);
  return o.errh->handle;
}
// MPI_Comm/Win/Session/File_create_errhandler: a new user handler object.
int new_errhandler(Runtime& rt, MPI_Comm_errhandler_function* fn, bool for_win, MPI_Errhandler* out,
                   bool for_file = false);
// A user error handler object (predefined handles are not objects).
int get_errhandler(Runtime& rt, MPI_Errhandler h, ErrhandlerObj** out);

// A new intracommunicator over group with context index ctx (inherits
// parent's error handler); destroy_comm undoes it, releasing the index.
int make_comm(Runtime& rt, GroupPtr group, uint32_t ctx, const CommObj& parent, MPI_Comm* out);
void destroy_comm(Runtime& rt, CommObj* c);
// MPI_Comm_dup(_with_info)'s work: c's group, topology, attributes (copy
// callbacks run) and the given info.
int comm_dup(Runtime& rt, CommObj& c, const std::vector<std::pair<std::string, std::string>>& info, MPI_Comm* out);
// MPI_Comm_split's work (for topologies too). A member whose own arguments
// failed (`failed`: its error) still takes part; then every member fails
// (it with that error) instead of waiting for it.
int comm_split(Runtime& rt, CommObj& c, int color, int key, MPI_Comm* out, int failed = 0);
CommObj* comm_of(Runtime& rt, MPI_Comm h);
// ERR_COMM for operations defined here only on intracommunicators.
int need_intra(const CommObj& c, const char* what);
// An intercommunicator between local and remote (context index ctx), with
// parent's error handler.
int make_intercomm(Runtime& rt, GroupPtr local, GroupPtr remote, uint32_t ctx, const CommObj& parent, MPI_Comm* out);
// MPI_Comm_split / MPI_Comm_create on an intercommunicator (`failed`: this
// member's own error, with which it still takes part: every member of both
// groups then fails instead of waiting for it).
int inter_split(Runtime& rt, CommObj& c, int color, int key, MPI_Comm* out, int failed = 0);
int inter_create(Runtime& rt, CommObj& c, const GroupData& g, MPI_Comm* out, int failed = 0);
// MPI_Comm_create_group of comm c (also MPI_Comm_create_from_group's):
// `bad`, an error in the caller's other arguments, and a bad tag or null
// newcomm fail the call at every member of the group instead of leaving
// them waiting.
int create_group(Runtime& rt, CommObj& c, MPI_Group group, int tag, MPI_Comm* newcomm, int bad = 0);

// MPI_Request handles name the request pool's slot directly, so making,
// finding and dropping one touches no table: class Pool (bits 30-31), bits
// 1-10 of the slot's generation in bits 20-29, the slot in bits 0-19. A
// handle finds its request only while the slot holds a live request of that
// generation that a user handle names (Request::handle): a freed, stale or
// made-up handle gives ERR_REQUEST, never someone else's request (until the
// slot's generation wraps, after 1024 reuses of the slot).
constexpr unsigned kRequestSlotBits = 20;
static_assert(RequestPool::kMaxSlots <= (std::size_t{1} << kRequestSlotBits));
inline MPI_Request request_handle(const Request& r) {
  const uint64_t id = r.id();
  const auto slot = static_cast<unsigned>((id & 0xffffffffu) - 1);
  const auto gen = static_cast<unsigned>(id >> 33) & 0x3ffu;  // bits 1-10
  return static_cast<MPI_Request>((static_cast<unsigned>(HandleClass::Pool) << 30) | gen << kRequestSlotBits | slot);
}
// The request a handle names with the given mark (Request::kHandleLive
// for every call but MPI_Grequest_complete), or nullptr.
// With slots (Device::request_slots) read once by a caller that looks up
// many handles.
// Every handle's low bits name a slot that may be looked at (the pool has
// 2^20), so the class is tested after, in one compare with the generation:
// class Pool and the handle's generation bits followed by 1 (odd: live)
// against the slot's generation bits 0-10 under the class.
inline Request* find_request(const RequestPool::Slots& slots, MPI_Request h, uint8_t mark = Request::kHandleLive) {
  const auto u = static_cast<unsigned>(h);
  const unsigned want = (u >> kRequestSlotBits) << 1 | 1;
  return slots.find_if(u & ((1u << kRequestSlotBits) - 1), [&](const Request& r, uint32_t g) {
    return ((g & 0x7ffu) | static_cast<unsigned>(HandleClass::Pool) << 11) == want &&
           r.handle.load(std::memory_order_relaxed) == mark;
  });
}
inline Request* find_request(Runtime& rt, MPI_Request h, uint8_t mark = Request::kHandleLive) {
  return find_request(rt.dev().request_slots(), h, mark);
}
// The request and communicator of a non-null request handle, or
// ERR_REQUEST naming the handle.
int get_slot(Runtime& rt, MPI_Request h, ReqSlot* out);
// Hands out r under a new MPI request handle whose errors go to comm's
// handler (persistent: unused, the request knows). Cannot fail.
inline int new_request(Runtime&, Request* r, MPI_Comm comm, bool /*persistent*/, MPI_Request* out) {
  r->handle_comm = comm;
  r->handle.store(Request::kHandleLive, std::memory_order_relaxed);
  *out = request_handle(*r);
  return 0;
}

}  // namespace adi3::mpi
