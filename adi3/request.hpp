// Request: the one object every nonblocking operation, every queued message
// and every generalized request is. Completion is a counter (several
// transfers may complete one request), lifetime is a reference count (a
// request freed by the user while active still completes, then is reclaimed),
// and the request itself is the node of every queue it sits in.
#pragma once
#include <atomic>
#include <boost/intrusive/list.hpp>
#include <cstddef>
#include <cstdint>

#include "adi3/hot_inline.hpp"
#include "adi3/types.hpp"

namespace adi3 {

class Device;
class Datatype;
class Segment;
struct Request;

enum class RequestKind : uint8_t {
  Send,
  Recv,
  PersistentSend,
  PersistentRecv,
  Generalized,
  Rma,
  Collective,
  // A blocking receive's request on the caller's stack (blocking_recv.cpp):
  // never in the pool, so no wire id; completed by the engine like Recv.
  BlockingRecv,
};

namespace bi = boost::intrusive;
struct QueueTag;  // posted bucket, send queue, or any single list
struct BySrcTag;  // unexpected: by (context, source)
struct ByTagTag;  // unexpected: by (context, tag)
struct ByCtxTag;  // unexpected: by context
using AutoUnlink = bi::link_mode<bi::auto_unlink>;
using QueueHook = bi::list_base_hook<bi::tag<QueueTag>, AutoUnlink>;
using BySrcHook = bi::list_base_hook<bi::tag<BySrcTag>, AutoUnlink>;
using ByTagHook = bi::list_base_hook<bi::tag<ByTagTag>, AutoUnlink>;
using ByCtxHook = bi::list_base_hook<bi::tag<ByCtxTag>, AutoUnlink>;

template <class Tag>
using RequestList =
    bi::list<Request, bi::base_hook<bi::list_base_hook<bi::tag<Tag>, AutoUnlink>>, bi::constant_time_size<false>>;

// Behaviour a request kind adds to the common path (generalized requests,
// collectives, RMA). Plain send/receive requests have none.
struct RequestClass {
  // Fills the status of a completed request; runs in the wait/test that
  // completes it and in request_get_status. Returns an error code.
  int (*query)(Request& r, Status& s) = nullptr;
  // Runs once, when the user's handle goes: in the wait/test that reports
  // the request (after query), or in request_free, where the request may
  // still be active. Returns an error code.
  int (*free)(Request& r) = nullptr;
  // MPI_Cancel on the request.
  int (*cancel)(Request& r, bool complete) = nullptr;
  // Advances the operation without a user thread; called by the progress
  // engine while the request is active.
  int (*poll)(Request& r, Status& s) = nullptr;
  // Blocks until the given requests (all of this class, none complete yet)
  // complete; wait and waitall hand their requests to it. nullptr: the core
  // polls. Returns an error code (the wait call then returns it).
  int (*wait)(int count, Request* const* reqs, Status& s) = nullptr;
  // Restarts a persistent request of this class (MPI_Start); the core has
  // already made it active with an empty status. Returns an error code.
  int (*start)(Request& r) = nullptr;
};

struct Request : QueueHook, BySrcHook, ByTagHook, ByCtxHook {
  enum Flags : uint8_t {
    kPersistent = 1,  // survives completion, restarted by start()
    kActive = 2,      // persistent: started and not yet completed by wait/test
    kUnexpected = 4,  // created by an arrival that matched no posted receive
    kSync = 8,        // synchronous send: completes after the match
    kNeedsAck = 16,   // receive of a sync send: acknowledge at the match
    kUserFreed = 32,  // request_free called while active
    kRndv = 64,       // message travels by rendezvous
    kDone = 128,      // wait/test already reported completion (greq query ran)
  };

  std::atomic<int> cc{0};    // outstanding parts; complete when 0
  std::atomic<int> refs{0};  // user handle + in-flight operation
  RequestKind kind = RequestKind::Send;
  // Atomic: the progress engine sets bits (kNeedsAck, kRndv) on a posted
  // receive while its owner thread tests others (kPersistent, kActive).
  std::atomic<uint8_t> flags{0};
  uint8_t phase = 0;  // what the send queue must still emit (see Device)
  SendMode mode = SendMode::Standard;
  Status status;

  // Envelope: the pattern of a posted receive, the actual one otherwise.
  uint32_t context = 0;
  int32_t source = 0;
  int32_t tag = 0;
  uint64_t seq = 0;  // posting order, for MPI's order among wildcards
  int peer = -1;     // channel rank of the other side

  // User buffer.
  void* buf = nullptr;
  std::size_t count = 0;
  const Datatype* type = nullptr;
  Segment* seg = nullptr;  // only for noncontiguous types

  // Protocol state.
  std::size_t bytes = 0;     // message size
  std::size_t want = 0;      // receive: bytes that fit and will be moved
  std::size_t done = 0;      // bytes moved so far
  uint64_t remote = 0;       // the peer's request id
  uint64_t remote_addr = 0;  // rendezvous: sender's buffer, for native get
  void* tmp = nullptr;       // unexpected eager data, or a bsend block
  const RequestClass* cls = nullptr;
  void* ext = nullptr;  // per-kind state beside the request
  Device* dev = nullptr;
  uint64_t wire_id = 0;         // set by the pool
  uint8_t cancels_pending = 0;  // CancelSend packets out, answers due
  // Buffered mode: the user's request (Ibsend, persistent bsend) holds a
  // reference to its internal send out of the attached buffer; that send
  // points back while a cancel of the user's request is pending (cancel.cpp).
  Request* buffered = nullptr;
  // The MPI binding's (mpi/) record of the user's MPI_Request, which names
  // the request's pool slot: whether a handle names it (kHandle*) and the
  // communicator whose handler reports its errors. The core only clears
  // kHandleLive where it drops the user's reference (finish, request_free),
  // so a stale handle never names a request that lives on for others.
  enum HandleState : uint8_t {
    kNoHandle = 0,
    kHandleLive = 1,
    // A generalized request freed before MPI_Grequest_complete: only that
    // call may still name it (MPI-4.1 13.2).
    kHandleFreedOpen = 2,
  };
  std::atomic<uint8_t> handle{kNoHandle};
  int32_t handle_comm = 0;

  // The pool's own (request_pool.hpp): the slot's generation (odd while
  // live; lookups read it from any thread) and, while free, the next free
  // slot. reset() leaves them and wire_id alone.
  std::atomic<uint32_t> pool_gen{0};
  Request* pool_next = nullptr;

  // A fresh request's state, set in place when the pool hands the slot out
  // again (cheaper than destroying and rebuilding it); the hooks are
  // unlinked already. A field added above must be reset here too.
  // Without the envelope (kEnvelope false), buf, count, type, context,
  // source, tag and peer keep the last occupant's values: for a caller
  // that sets them all before anything reads them (the fast isend/irecv).
  // kCounts false: cc and refs are left for the caller, which stores their
  // first values itself (RequestPool::start: one store each, not two).
  // Forced inline: GCC left reset<false, false> a call in MPI_Isend/Irecv.
  template <bool kEnvelope = true, bool kCounts = true>
  ADI3_HOT_INLINE void reset() {
    if constexpr (kCounts) {
      cc.store(0, std::memory_order_relaxed);
      refs.store(0, std::memory_order_relaxed);
    }
    kind = RequestKind::Send;
    flags.store(0, std::memory_order_relaxed);
    phase = 0;
    mode = SendMode::Standard;
    status = Status{};
    if constexpr (kEnvelope) {
      context = 0;
      source = 0;
      tag = 0;
      peer = -1;
      buf = nullptr;
      count = 0;
      type = nullptr;
    }
    seq = 0;
    seg = nullptr;
    bytes = 0;
    want = 0;
    done = 0;
    remote = 0;
    remote_addr = 0;
    tmp = nullptr;
    cls = nullptr;
    ext = nullptr;
    dev = nullptr;
    cancels_pending = 0;
    buffered = nullptr;
    handle.store(kNoHandle, std::memory_order_relaxed);
    handle_comm = 0;
  }

  bool complete() const { return cc.load(std::memory_order_acquire) == 0; }
  bool has(Flags f) const { return (flags.load(std::memory_order_relaxed) & f) != 0; }
  void set(Flags f) { flags.fetch_or(f, std::memory_order_relaxed); }
  void clear(Flags f) { flags.fetch_and(static_cast<uint8_t>(~f), std::memory_order_relaxed); }
  // The request's name on the wire (RequestPool::lookup turns it back).
  uint64_t id() const { return wire_id; }
};

}  // namespace adi3
