// The communication calls: each is checked (rma/check.cpp) against the
// epoch and the target's window, routed (rma/route.cpp), and queued to its
// target as one item (emul/origin.cpp), which leaves at once when its gate
// is open and the data fits a packet.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "adi3/device.hpp"
#include "adi3/out_of_memory.hpp"
#include "emul/emul.hpp"
#include "rma/check.hpp"
#include "rma/native_cma.hpp"
#include "rma/native.hpp"
#include "rma/native_fast.hpp"
#include "rma/route.hpp"
#include "rma/type_desc.hpp"
#include "rma/window_state.hpp"

namespace adi3 {
namespace rma {
namespace {

using A = WindowState::Access;

// The gate of an operation to a target in the current epoch, or RmaSync.
int epoch_gate(WindowState& w, const OpArgs& a, Gate* g) {
  ErrorLog& log = w.dev.errors();
  Target& t = w.targets[static_cast<std::size_t>(a.target)];
  switch (w.access) {
    case A::Fence:
      if (a.req) break;
      *g = w.fence_lazy ? Gate{Gate::Fence, w.fence_no} : Gate{};
      return 0;
    case A::Pscw:
      if (a.req) break;
      if (std::find(w.start_group.begin(), w.start_group.end(), a.target) == w.start_group.end()) {
        return log.raise(ErrorClass::RmaSync, "%s on rank %d: rank %d is not in the group of Win_start", a.name,
                         w.comm.rank, a.target);
      }
      *g = t.epoch_gate;
      return 0;
    case A::Lock:
    case A::LockAll:
      if (!t.locked) {
        return log.raise(ErrorClass::RmaSync, "%s on rank %d: rank %d is not locked (Win_lock it first)", a.name,
                         w.comm.rank, a.target);
      }
      *g = t.lock_nocheck ? Gate{} : Gate{Gate::Lock, t.lock_epoch};
      return 0;
    case A::None:
      return log.raise(ErrorClass::RmaSync,
                       "%s on rank %d to rank %d: no access epoch is open (call Win_fence, Win_start, Win_lock or "
                       "Win_lock_all first)",
                       a.name, w.comm.rank, a.target);
  }
  return log.raise(ErrorClass::RmaSync, "%s on rank %d: request-based operations need a passive-target epoch (lock)",
                   a.name, w.comm.rank);
}

// Where the data of a contiguous type at buf starts (buf may be MPI_BOTTOM
// with absolute addresses in the type: integer arithmetic, as Segment does).
char* first_byte(const void* buf, const Datatype* t) {
  return reinterpret_cast<char*>(reinterpret_cast<uintptr_t>(buf) + static_cast<uintptr_t>(t->true_lb()));
}

// The es bytes of one element of a predefined type at src into dst.
void pack_one(const void* src, const Datatype* t, std::size_t es, uint8_t* dst) {
  if (t->is_contiguous()) {
    std::memcpy(dst, first_byte(src, t), es);
  } else {
    Segment(const_cast<void*>(src), 1, t).pack(0, es, dst);
  }
}

// A request-based operation's request, taken before anything is issued:
// out of requests (ADI3_MAX_REQUESTS) the call fails with ERR_NO_MEM and
// nothing was started.
int rma_request(WindowState& w, const OpArgs& a, Request** out) {
  char what[96];
  std::snprintf(what, sizeof what, "%s on rank %d to rank %d", a.name, w.comm.rank, a.target);
  return w.dev.new_request(RequestKind::Rma, what, out);
}

// A request-based operation's request until the operation or the user's
// handle owns it: released when the call fails or throws before that, so
// out of memory leaves no request behind.
class RequestGuard {
 public:
  RequestGuard(Device& dev, Request** out) : dev_(dev), out_(out) {}
  RequestGuard(const RequestGuard&) = delete;
  RequestGuard& operator=(const RequestGuard&) = delete;
  ~RequestGuard() {
    if (req_) dev_.release(req_);
    if (out_ && !kept_) *out_ = nullptr;
  }
  Request*& get() { return req_; }
  // The operation ended in the call (done, or failed with e).
  int finish(int e) {
    if (req_ && !e) {
      req_->cc.store(0, std::memory_order_relaxed);
      *out_ = req_;
      kept_ = true;
      req_ = nullptr;
    }
    return e;
  }
  // The operation runs on (it holds a reference; the user's handle holds
  // the one the guard had).
  void keep() {
    if (!req_) return;
    *out_ = req_;
    kept_ = true;
    req_ = nullptr;
  }

 private:
  Device& dev_;
  Request** out_;
  Request* req_ = nullptr;
  bool kept_ = false;
};

// The emulated path: the operation as one queue item (and, when it fetches,
// a reply record). Everything that allocates happens before anything is
// committed; if the queue cannot take the item, what was committed is
// undone and the call fails with ERR_NO_MEM, leaving no half-built
// operation, reply record, retained type or request behind.
int emulate(WindowState& w, const OpArgs& a, const Checked& c, const Gate& gate, RequestGuard& rq) {
  Device& dev = w.dev;
  Target& t = w.targets[static_cast<std::size_t>(a.target)];
  // A derived target type travels as its description (emul/origin.cpp
  // send_desc, unless the target holds it): encoded here, where one that
  // cannot travel is refused before anything is committed, and kept in the
  // item for send_desc.
  std::vector<uint8_t> desc;
  if (c.derived && t.last_desc != a.ttype) {
    std::string why;
    if (!encode_type(a.ttype, desc, &why)) {
      return dev.errors().raise(ErrorClass::Type, "%s to rank %d: the target datatype cannot travel: %s", a.name,
                                a.target, why.c_str());
    }
  }
  Item it;
  it.desc = std::move(desc);
  it.kind = a.kind;
  it.gate = gate;
  it.disp = c.disp_bytes;
  it.count = c.count;
  it.elem = static_cast<uint8_t>(c.elem);
  it.op = a.op ? static_cast<uint8_t>(a.op->kind()) : static_cast<uint8_t>(coll::OpKind::Replace);
  it.total = c.bytes;
  const std::size_t max = dev.port().max_packet_payload();
  const std::size_t es = Datatype::builtin(c.elem)->size();
  it.chunk = (a.kind == Msg::Put || es == 0) ? max : std::max<std::size_t>(es, max / es * es);
  const bool fetches = a.kind == Msg::Get || a.kind == Msg::GetAcc || a.kind == Msg::Fop || a.kind == Msg::Cas;
  const bool no_op = a.op && a.op->kind() == coll::OpKind::NoOp;
  it.rndv = emul::rndv_fits(w, a.kind, a.target, c.bytes);
  if (a.kind == Msg::Fop || a.kind == Msg::Cas) {
    // One element, packed (a pair type's padding stays home).
    it.inline_len = static_cast<uint8_t>(a.kind == Msg::Cas ? 2 * es : es);
    if (a.origin) pack_one(a.origin, a.ttype, es, it.inline_data);
    if (a.kind == Msg::Cas) pack_one(a.compare, a.ttype, es, it.inline_data + es);
  } else if (it.rndv) {
    // A large put or get: its data goes as a point-to-point message from or
    // into the origin buffer itself (emul/rndv.cpp), no packer or unpacker.
    it.ubuf = a.kind == Msg::Get ? a.result : const_cast<void*>(a.origin);
    it.ucount = a.ocount;
    it.utype = a.otype;
  } else if (a.kind != Msg::Get && !no_op) {
    // Contiguous data goes from the buffer itself: no packer to set up.
    if (a.otype->is_contiguous()) {
      it.data = first_byte(a.origin, a.otype);
    } else {
      it.src = allocating("the packer of a one-sided operation's origin data", sizeof(Segment), [&] {
        return std::make_unique<Segment>(const_cast<void*>(a.origin), static_cast<std::size_t>(a.ocount), a.otype);
      });
    }
  }
  std::unique_ptr<Pending> fresh;
  decltype(w.pending)::node_type reused;  // a finished operation's record, when one is spare
  Pending* p = nullptr;
  if (fetches) {
    if (!w.spare_pending.empty()) {
      reused = std::move(w.spare_pending.back());
      w.spare_pending.pop_back();
      p = reused.mapped().get();
    } else {
      fresh = allocating("the reply record of a one-sided operation", sizeof(Pending),
                         [] { return std::make_unique<Pending>(); });
      p = fresh.get();
    }
    p->target = a.target;
    const Datatype* rt = a.kind == Msg::Get ? a.otype : a.kind == Msg::GetAcc ? a.rtype : a.ttype;
    const int64_t rc = a.kind == Msg::Get ? a.ocount : a.kind == Msg::GetAcc ? a.rcount : 1;
    if (rt->is_contiguous() || it.rndv) {
      p->direct = first_byte(a.result, rt);
    } else {
      p->dst = allocating("the unpacker of a one-sided operation's result", sizeof(Segment),
                          [&] { return std::make_unique<Segment>(a.result, static_cast<std::size_t>(rc), rt); });
    }
    p->total = c.bytes;
    p->req = rq.get();
  } else {
    it.req = rq.get();
  }
  // Commit: from here on the operation exists.
  uint64_t token = 0;
  if (fetches) {
    token = w.next_token;
    if (reused) {
      reused.key() = token;
      allocating("the reply record of a one-sided operation", sizeof(Pending),
                 [&] { w.pending.insert(std::move(reused)); });
    } else {
      allocating("the reply record of a one-sided operation", sizeof(Pending),
                 [&] { w.pending.emplace(token, std::move(fresh)); });
    }
    ++w.next_token;
    it.token = token;
    ++t.replies;
  }
  if (c.derived) {
    it.ttype = a.ttype;
    a.ttype->retain();
  }
  if (it.utype) it.utype->retain();  // the user may free it before the message starts
  Request* req = rq.get();
  if (req) req->refs.store(2, std::memory_order_relaxed);  // the user's handle and the operation
  try {
    emul::push(w, a.target, std::move(it));
  } catch (const std::bad_alloc&) {
    if (it.sent == 0) {
      // Nothing of it left (a queue that could not grow took nothing): undo.
      if (req) req->refs.store(1, std::memory_order_relaxed);
      if (fetches) {
        w.pending.erase(token);
        --t.replies;
      }
      t.tail_fetch = false;  // a flush must ask, not rely on this reply
      if (it.ttype) it.ttype->release();
      if (it.utype) it.utype->release();
      throw OutOfMemory("a queue entry of a one-sided operation", sizeof(Item));
    }
    // Partly sent: that cannot be taken back. The operation ends with what
    // went (a fetch waits for the replies to that much only) and the window
    // reports the loss at its next synchronization.
    const int e = dev.errors().raise(ErrorClass::NoMem,
                                     "rank %d: out of memory allocating a queue entry of a one-sided operation (%zu "
                                     "bytes): %s to rank %d was cut short after %zu of %zu bytes",
                                     dev.rank(), sizeof(Item), a.name, a.target, it.sent, it.total);
    if (!w.deferred_error) w.deferred_error = e;
    if (it.ttype) it.ttype->release();
    if (fetches) {
      Pending& pend = *w.pending.at(token);
      pend.total = it.sent;
      pend.error = e;
    } else if (it.req) {
      it.req->status.error = e;
      dev.complete(it.req);
    }
  }
  ++w.emulated_ops;
  t.emul_inflight = true;
  rq.keep();
  return 0;
}

int issue(WindowState& w, const OpArgs& a) {
  if (a.req) *a.req = nullptr;
  std::lock_guard g(w.mu);
  Checked c;
  if (int e = check_op(w, a, &c)) return e;
  RequestGuard rq(w.dev, a.req);
  if (a.req) {
    if (int e = rma_request(w, a, &rq.get())) return e;
  }
  if (a.target == kProcNull) return rq.finish(0);
  Gate gate;
  if (int e = epoch_gate(w, a, &gate)) return rq.finish(e);
  // A fence epoch counts the operations issued in it (a fence with
  // NOPRECEDE after one is an error): only those that were.
  const bool fence = w.access == A::Fence;
  if (c.bytes == 0) {
    if (fence) ++w.fence_ops;
    return rq.finish(0);
  }
  // Native active target: the target's post or fence count may have come
  // since we last looked (it is in its control block, no packet says so).
  if (gate.kind != Gate::None && gate.kind != Gate::Lock && w.native_active() &&
      !gate_open(w.targets[static_cast<std::size_t>(a.target)], gate)) {
    native::refresh(w, a.target);
  }
  if (route_op(w, a, c, gate).path == Path::Native) {
    if (fence) ++w.fence_ops;
    ++w.native_ops;
    return rq.finish(native::run(w, a, c));
  }
  const int e = emulate(w, a, c, gate, rq);  // refuses a target type that cannot travel
  if (!e && fence) ++w.fence_ops;
  return e;
}

}  // namespace
}  // namespace rma

using rma::OpArgs;

namespace {
OpArgs args(rma::Msg kind, const char* name, const void* origin, std::int64_t ocount, const Datatype* otype, int target,
            std::ptrdiff_t disp, std::int64_t tcount, const Datatype* ttype) {
  OpArgs a;
  a.kind = kind;
  a.name = name;
  a.origin = origin;
  a.ocount = ocount;
  a.otype = otype;
  a.target = target;
  a.disp = disp;
  a.tcount = tcount;
  a.ttype = ttype;
  return a;
}

// On a window from create, an operation to a target polling inside the
// library goes as a packet (route_op): when it is one the emulation's short
// path takes (emul/quick.cpp), it goes there, without check_op, route_op
// and a queue item (put+flush: about 1400 instructions at the origin ->
// 750; fetch_and_op and compare_and_swap take quick_fetch_now). The target
// applies such a packet as it applies the general path's, under the same
// element locks (emul/apply.cpp, native::cas_element), so accumulates stay
// atomic whichever path each origin took. a.polls carries the channel's
// verdict on to the general path (0, not asked, for a large put or get:
// rma::bulk_by_cma). A put, get, fetch_and_op or
// compare_and_swap to a target found not polling (0) tries the lean
// cross-memory-attach paths first (rma/native_cma.hpp).
bool polls_short(rma::WindowState& w, OpArgs& a) {
  if (a.otype != a.ttype || !a.ttype || a.ocount != a.tcount || a.tcount <= 0 || a.tcount > (int64_t{1} << 40)) {
    return false;
  }
  // A large put or get takes cross-memory attach whatever the target does
  // (rma::bulk_by_cma): the channel is not asked (its look counts streams).
  uint64_t bytes;
  if (__builtin_mul_overflow(static_cast<uint64_t>(a.tcount), static_cast<uint64_t>(a.ttype->size()), &bytes))
    return false;  // the general path refuses it
  if (rma::bulk_by_cma(a.kind, bytes)) {
    a.polls = 0;
    return false;
  }
  a.polls = rma::polls_now(w, a.target);
  return a.polls == 1;
}
}  // namespace

int Window::put(const void* origin, std::int64_t ocount, const Datatype* otype, int target, std::ptrdiff_t disp,
                std::int64_t tcount, const Datatype* ttype) {
  if (rma::native::fast_copy(*st_, true, const_cast<void*>(origin), ocount, otype, target, disp, tcount, ttype))
    return 0;
  if (emul::quick_put(*st_, origin, ocount, otype, target, disp, tcount, ttype)) return 0;
  OpArgs a = args(rma::Msg::Put, "Put", origin, ocount, otype, target, disp, tcount, ttype);
  if (polls_short(*st_, a) && emul::quick_put_now(*st_, origin, tcount, ttype, target, disp)) return 0;
  if (a.polls == 0) {
    if (const int e = rma::native::cma_copy(*st_, true, const_cast<void*>(origin), tcount, ttype, target, disp); e >= 0)
      return e;
  }
  return rma::issue(*st_, a);
}

int Window::get(void* origin, std::int64_t ocount, const Datatype* otype, int target, std::ptrdiff_t disp,
                std::int64_t tcount, const Datatype* ttype) {
  if (rma::native::fast_copy(*st_, false, origin, ocount, otype, target, disp, tcount, ttype)) return 0;
  if (emul::quick_get(*st_, origin, ocount, otype, target, disp, tcount, ttype)) return 0;
  OpArgs a = args(rma::Msg::Get, "Get", nullptr, ocount, otype, target, disp, tcount, ttype);
  a.result = origin;
  if (polls_short(*st_, a) && emul::quick_get_now(*st_, origin, tcount, ttype, target, disp)) return 0;
  if (a.polls == 0) {
    if (const int e = rma::native::cma_copy(*st_, false, origin, tcount, ttype, target, disp); e >= 0) return e;
  }
  return rma::issue(*st_, a);
}

int Window::accumulate(const void* origin, std::int64_t ocount, const Datatype* otype, int target, std::ptrdiff_t disp,
                       std::int64_t tcount, const Datatype* ttype, const coll::Op& op) {
  if (rma::native::fast_acc(*st_, origin, ocount, otype, target, disp, tcount, ttype, op.kind())) return 0;
  if (emul::quick_acc(*st_, origin, ocount, otype, target, disp, tcount, ttype, op.kind())) return 0;
  OpArgs a = args(rma::Msg::Acc, "Accumulate", origin, ocount, otype, target, disp, tcount, ttype);
  a.op = &op;
  if (op.kind() < coll::OpKind::NoOp && polls_short(*st_, a) &&
      emul::quick_acc_now(*st_, origin, tcount, ttype, target, disp, op.kind())) {
    return 0;
  }
  return rma::issue(*st_, a);
}

int Window::get_accumulate(const void* origin, std::int64_t ocount, const Datatype* otype, void* result,
                           std::int64_t rcount, const Datatype* rtype, int target, std::ptrdiff_t disp,
                           std::int64_t tcount, const Datatype* ttype, const coll::Op& op) {
  if (emul::quick_get_acc(*st_, origin, ocount, otype, result, rcount, rtype, target, disp, tcount, ttype, op.kind())) {
    return 0;
  }
  OpArgs a = args(rma::Msg::GetAcc, "Get_accumulate", origin, ocount, otype, target, disp, tcount, ttype);
  a.result = result;
  a.rcount = rcount;
  a.rtype = rtype;
  a.op = &op;
  return rma::issue(*st_, a);
}

int Window::fetch_and_op(const void* origin, void* result, const Datatype* type, int target, std::ptrdiff_t disp,
                         const coll::Op& op) {
  if (rma::native::fast_atomic(*st_, origin, nullptr, result, type, target, disp, false, op.kind())) return 0;
  if (emul::quick_fop(*st_, origin, result, type, target, disp, op.kind())) return 0;
  OpArgs a = args(rma::Msg::Fop, "Fetch_and_op", origin, 1, type, target, disp, 1, type);
  a.result = result;
  a.op = &op;
  if (polls_short(*st_, a) &&
      emul::quick_fetch_now(*st_, rma::Msg::Fop, origin, nullptr, result, 1, type, target, disp, op.kind())) {
    return 0;
  }
  if (a.polls == 0) {
    if (const int e = rma::native::cma_atomic(*st_, origin, nullptr, result, type, target, disp, op.kind()); e >= 0)
      return e;
  }
  return rma::issue(*st_, a);
}

int Window::compare_and_swap(const void* origin, const void* compare, void* result, const Datatype* type, int target,
                             std::ptrdiff_t disp) {
  if (rma::native::fast_atomic(*st_, origin, compare, result, type, target, disp, true, coll::OpKind::NoOp)) return 0;
  if (emul::quick_cas(*st_, origin, compare, result, type, target, disp)) return 0;
  OpArgs a = args(rma::Msg::Cas, "Compare_and_swap", origin, 1, type, target, disp, 1, type);
  a.result = result;
  a.compare = compare;
  if (polls_short(*st_, a) && emul::quick_fetch_now(*st_, rma::Msg::Cas, origin, compare, result, 1, type, target, disp,
                                                    coll::OpKind::Replace)) {
    return 0;
  }
  if (a.polls == 0 && compare) {
    if (const int e = rma::native::cma_atomic(*st_, origin, compare, result, type, target, disp, coll::OpKind::Replace);
        e >= 0)
      return e;
  }
  return rma::issue(*st_, a);
}

int Window::rput(const void* origin, std::int64_t ocount, const Datatype* otype, int target, std::ptrdiff_t disp,
                 std::int64_t tcount, const Datatype* ttype, Request** req) {
  if (!req) return st_->dev.errors().raise(ErrorClass::Request, "Rput: the request argument is null");
  OpArgs a = args(rma::Msg::Put, "Rput", origin, ocount, otype, target, disp, tcount, ttype);
  a.req = req;
  return rma::issue(*st_, a);
}

int Window::rget(void* origin, std::int64_t ocount, const Datatype* otype, int target, std::ptrdiff_t disp,
                 std::int64_t tcount, const Datatype* ttype, Request** req) {
  if (!req) return st_->dev.errors().raise(ErrorClass::Request, "Rget: the request argument is null");
  OpArgs a = args(rma::Msg::Get, "Rget", nullptr, ocount, otype, target, disp, tcount, ttype);
  a.result = origin;
  a.req = req;
  return rma::issue(*st_, a);
}

int Window::raccumulate(const void* origin, std::int64_t ocount, const Datatype* otype, int target, std::ptrdiff_t disp,
                        std::int64_t tcount, const Datatype* ttype, const coll::Op& op, Request** req) {
  if (!req) return st_->dev.errors().raise(ErrorClass::Request, "Raccumulate: the request argument is null");
  OpArgs a = args(rma::Msg::Acc, "Raccumulate", origin, ocount, otype, target, disp, tcount, ttype);
  a.op = &op;
  a.req = req;
  return rma::issue(*st_, a);
}

int Window::rget_accumulate(const void* origin, std::int64_t ocount, const Datatype* otype, void* result,
                            std::int64_t rcount, const Datatype* rtype, int target, std::ptrdiff_t disp,
                            std::int64_t tcount, const Datatype* ttype, const coll::Op& op, Request** req) {
  if (!req) return st_->dev.errors().raise(ErrorClass::Request, "Rget_accumulate: the request argument is null");
  OpArgs a = args(rma::Msg::GetAcc, "Rget_accumulate", origin, ocount, otype, target, disp, tcount, ttype);
  a.result = result;
  a.rcount = rcount;
  a.rtype = rtype;
  a.op = &op;
  a.req = req;
  return rma::issue(*st_, a);
}

}  // namespace adi3
