// What the collective entry points share: op handles to coll::Op, each
// communicator's sequence of nonblocking collectives, and the start of a
// collective call.
#pragma once
#include <vector>

#include "coll/coll.hpp"
#include "mpi/api.hpp"

namespace adi3::mpi {

// A checked (non-negative) MPI count as the core's size type.
inline std::size_t sz(MPI_Count n) { return static_cast<std::size_t>(n); }

int get_op(Runtime& rt, MPI_Op h, coll::Op* out);
// A predefined op handle's kind; false for any other handle (no error raised).
bool builtin_op(MPI_Op h, coll::OpKind* out);
coll::Sequence& sequence(CommObj& c);

// The start of a collective entry point: runtime and communicator, or the
// error to return (e != 0).
struct CollCall {
  CollCall(const char* f, MPI_Comm comm) : fn(f), rt(g_runtime) {
    if (!rt) [[unlikely]] {
      e = not_initialized(fn);
      return;
    }
    if (int err = get_comm(*rt, comm, &c)) [[unlikely]]
      e = world_error(err, fn);
  }
  const char* fn;
  Runtime* rt = nullptr;
  CommObj* c = nullptr;
  int e = 0;
  Device& dev() { return rt->dev(); }
  // MPI_X_init: the call builds a persistent request (see init()).
  bool persistent = false;
  coll::Sequence once;  // a persistent collective's own sequence (one tag)
  coll::Sequence& seq() { return persistent ? once : sequence(*c); }
  // The start of a persistent collective's init call: checks info and the
  // request pointer and reserves the operation's tag.
  int init(MPI_Info info, MPI_Request* req);
  // Reports e (0 passes through) through the communicator's handler.
  int done(int err) { return comm_error(c, err, fn); }
  // Runs a blocking collective, or turns the started one into an
  // MPI_Request when req is set.
  template <class Blocking, class Nonblocking>
  int run(MPI_Request* req, Blocking&& b, Nonblocking&& nb) {
    if (!req) return b();
    Request* r = nullptr;
    if (int err = nb(&r)) return err;
    return new_request(*rt, r, c->handle, persistent, req);
  }
};

// Checks of one (buf, count, type) side; MPI_IN_PLACE skips them.
int coll_side(Runtime& rt, const void* buf, MPI_Count count, MPI_Datatype dt, const Datatype** out);
// Checks counts (and displacements) arrays of n entries.
int coll_counts(const int* counts, const int* displs, int n, const char* what);
// ERR_COUNT for a count of a large-count (_c) call that a path taking int
// counts (intercommunicators, v-collectives) cannot carry.
int int_count(MPI_Count a, MPI_Count b = 0);

// The counts or displacements array of a _c call (MPI_Count / MPI_Aint) as
// the int array coll/ takes; an int array passes through. Only the first n
// entries are read (n = 0 where the array is not significant).
class IntArray {
 public:
  IntArray(const int* a, int) : p_(a) {}
  template <class T>
  IntArray(const T* a, int n) {
    if (!a) return;
    v_.resize(static_cast<std::size_t>(n));
    for (int i = 0; i < n && !e_; ++i) {
      e_ = int_count(a[i] < 0 ? -static_cast<MPI_Count>(a[i]) : static_cast<MPI_Count>(a[i]));
      v_[static_cast<std::size_t>(i)] = static_cast<int>(a[i]);
    }
    p_ = v_.data();
  }
  const int* get() const { return p_; }
  int error() const { return e_; }

 private:
  const int* p_ = nullptr;
  std::vector<int> v_;
  int e_ = 0;
};

// Entry points of the collectives. `call` is the shared implementation
// taking the CollCall and `request` (null for the blocking form); the int
// and large-count (_c) forms differ only in their parameter types; args
// names the parameters (ADI3_MPI_API).
#define ADI3_COLL_BLOCKING(name, params, args, ...) \
  ADI3_MPI_API(int, name, params, args) {           \
    ::adi3::mpi::CollCall k(__func__, comm);        \
    if (k.e) return k.e;                            \
    MPI_Request* request = nullptr;                 \
    return k.done(__VA_ARGS__);                     \
  }
#define ADI3_COLL_NONBLOCKING(name, params, args, ...)                                    \
  ADI3_MPI_API(int, name, params, args) {                                                 \
    ::adi3::mpi::CollCall k(__func__, comm);                                              \
    if (k.e) return k.e;                                                                  \
    int e = request ? 0 : ::adi3::mpi::raise(::adi3::ErrorClass::Arg, "request is null"); \
    return k.done(e ? e : __VA_ARGS__);                                                   \
  }
#define ADI3_COLL_PERSISTENT(name, params, args, ...) \
  ADI3_MPI_API(int, name, params, args) {             \
    ::adi3::mpi::CollCall k(__func__, comm);          \
    if (k.e) return k.e;                              \
    int e = k.init(info, request);                    \
    return k.done(e ? e : __VA_ARGS__);               \
  }

// A blocking entry point that tries the express path first
// (mpi/coll_express.hpp): `express` sets e and is true when it ran the
// call; else the regular `call` runs and the communicator learns whether
// the express path is open to it.
#define ADI3_COLL_BLOCKING_EXPRESS(name, params, args, express, ...) \
  ADI3_MPI_API(int, name, params, args) {                            \
    ::adi3::mpi::CollCall k(__func__, comm);                         \
    if (k.e) return k.e;                                             \
    int e = 0;                                                       \
    if (express) return k.done(e);                                   \
    MPI_Request* request = nullptr;                                  \
    e = __VA_ARGS__;                                                 \
    ::adi3::mpi::express_learn(k);                                   \
    return k.done(e);                                                \
  }

// The six entry points of one collective: blocking, nonblocking (iname) and
// persistent (_init), each with int and large-count (_c) counts. PARAMS(C, D)
// lists the parameters with count type C and displacement type D, NAMES
// their names; `call`
// serves the int forms and `call_c` the _c forms.
#define ADI3_COLL_FAMILY(name, iname, PARAMS, NAMES, call, call_c)                                                    \
  ADI3_COLL_BLOCKING(name, (PARAMS(int, int)), (NAMES), call)                                                         \
  ADI3_COLL_NONBLOCKING(iname, (PARAMS(int, int), MPI_Request * request), (NAMES, request), call)                     \
  ADI3_COLL_PERSISTENT(name##_init, (PARAMS(int, int), MPI_Info info, MPI_Request * request), (NAMES, info, request), \
                       call)                                                                                          \
  ADI3_COLL_BLOCKING(name##_c, (PARAMS(MPI_Count, MPI_Aint)), (NAMES), call_c)                                        \
  ADI3_COLL_NONBLOCKING(iname##_c, (PARAMS(MPI_Count, MPI_Aint), MPI_Request * request), (NAMES, request), call_c)    \
  ADI3_COLL_PERSISTENT(name##_init_c, (PARAMS(MPI_Count, MPI_Aint), MPI_Info info, MPI_Request * request),            \
                       (NAMES, info, request), call_c)
// The same whose blocking forms try the express path first.
#define ADI3_COLL_FAMILY_EXPRESS(name, iname, PARAMS, NAMES, express, call, call_c)                                   \
  ADI3_COLL_BLOCKING_EXPRESS(name, (PARAMS(int, int)), (NAMES), express, call)                                        \
  ADI3_COLL_NONBLOCKING(iname, (PARAMS(int, int), MPI_Request * request), (NAMES, request), call)                     \
  ADI3_COLL_PERSISTENT(name##_init, (PARAMS(int, int), MPI_Info info, MPI_Request * request), (NAMES, info, request), \
                       call)                                                                                          \
  ADI3_COLL_BLOCKING_EXPRESS(name##_c, (PARAMS(MPI_Count, MPI_Aint)), (NAMES), express, call_c)                       \
  ADI3_COLL_NONBLOCKING(iname##_c, (PARAMS(MPI_Count, MPI_Aint), MPI_Request * request), (NAMES, request), call_c)    \
  ADI3_COLL_PERSISTENT(name##_init_c, (PARAMS(MPI_Count, MPI_Aint), MPI_Info info, MPI_Request * request),            \
                       (NAMES, info, request), call_c)

}  // namespace adi3::mpi
