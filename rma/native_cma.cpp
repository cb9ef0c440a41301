#include "rma/native_cma.hpp"

#include <cerrno>
#include <cstring>
#include <mutex>

#include "adi3/device.hpp"
#include "emul/emul.hpp"
#include "rma/native.hpp"
#include "rma/native_fast.hpp"
#include "rma/route.hpp"
#include "rma/window_state.hpp"

namespace adi3::rma::native {
namespace {

// The target's peer when operations of kind on its memory take a lean
// path, but for their range: the window's part of cma_target's tests (the
// epoch, the target's memory, the interface operations ops it needs),
// which only calls on the window change; else nullptr.
NativePeer* cma_peer(const WindowState& w, Msg kind, unsigned ops, int target) {
  if (!w.native_usable || w.native->nic || w.flavor == WinFlavor::Dynamic) return nullptr;
  NativeWin& nw = *w.native;
  const auto r = static_cast<std::size_t>(target);  // kProcNull and negatives: huge
  if (r >= nw.peers.size() || r >= w.targets.size()) return nullptr;
  NativePeer& p = nw.peers[r];
  if (p.mem || !p.mem_r || !p.ctl || (p.mem_r->ops & ops) != ops) return nullptr;
  if (w.info.emulate_ops & (1u << static_cast<unsigned>(kind))) return nullptr;
  return lean_epoch(w, nw, w.targets[r]) ? &p : nullptr;
}

// Whether [disp * unit, + bytes) lies in target's window (*off: its offset
// there); from here on the operation is the native path's (native::run's
// counts). load: it reads the target's memory with no locked instruction
// before (a get, an atomic under our exclusive lock:
// WindowState::before_load); store: it may write it. (The fast path's
// rules, rma/native_fast.hpp: a get raises no `unfenced`, so a stream of
// gets does not fence before each.)
bool cma_take(WindowState& w, int target, std::ptrdiff_t disp, uint64_t bytes, uint64_t* off, bool load, bool store) {
  const PeerWin& pw = w.peers[static_cast<std::size_t>(target)];
  if (disp < 0 || __builtin_mul_overflow(static_cast<uint64_t>(disp), static_cast<uint64_t>(pw.disp_unit), off) ||
      *off > static_cast<uint64_t>(pw.size) || bytes > static_cast<uint64_t>(pw.size) - *off) {
    return false;
  }
  if (load) w.before_load();
  if (store) w.stored();
  ++w.native_ops;
  if (w.access == WindowState::Access::Fence) ++w.fence_ops;
  return true;
}

// Under w.mu: the target's peer when an operation of kind on [disp * unit,
// + bytes) of its memory takes a lean path (what check_op and route_op
// would find for this case, in their order of cost; anything else, errors
// included, is theirs to say), with *off the range's offset in its window;
// else nullptr (cma_peer, cma_take).
NativePeer* cma_target(WindowState& w, Msg kind, unsigned ops, int target, std::ptrdiff_t disp, uint64_t bytes,
                       uint64_t* off, bool load, bool store) {
  NativePeer* p = cma_peer(w, kind, ops, target);
  return p && cma_take(w, target, disp, bytes, off, load, store) ? p : nullptr;
}

// The put or get of a range cma_take took: the one system call.
int cma_move(WindowState& w, NativePeer& p, bool put, void* buf, uint64_t off, uint64_t bytes, int target) {
  OneSided& os = w.native->os;
  const int rc = put ? os.put(*p.mem_r, p.mem_off + off, buf, bytes) : os.get(*p.mem_r, p.mem_off + off, buf, bytes);
  if (rc) {
    return w.dev.errors().raise(ErrorClass::Other, "%s to rank %d: the one-sided %s failed: %s", put ? "Put" : "Get",
                                target, put ? "put" : "get", std::strerror(errno));
  }
  return 0;
}

}  // namespace

int cma_copy(WindowState& w, bool put, void* buf, int64_t count, const Datatype* t, int target, std::ptrdiff_t disp) {
  Builtin b;
  if (!buf || count <= 0 || !t->builtin_id(&b) || t->true_lb() != 0 || !t->is_contiguous()) return -1;
  uint64_t bytes;
  if (__builtin_mul_overflow(static_cast<uint64_t>(count), static_cast<uint64_t>(t->size()), &bytes) || !bytes)
    return -1;
  std::lock_guard g(w.mu);
  uint64_t off;
  NativePeer* p = cma_target(w, put ? Msg::Put : Msg::Get, put ? kOsPut : kOsGet, target, disp, bytes, &off, !put, put);
  return p ? cma_move(w, *p, put, buf, off, bytes, target) : -1;
}

bool cma_epoch(const WindowState& w, int target) {
  return cma_peer(w, Msg::Put, kOsPut | kOsGet, target) &&
         !(w.info.emulate_ops & (1u << static_cast<unsigned>(Msg::Get)));
}

int cma_copy_known(WindowState& w, bool put, void* buf, uint64_t bytes, int target, std::ptrdiff_t disp) {
  uint64_t off;
  if (!cma_take(w, target, disp, bytes, &off, !put, put)) return -1;
  return cma_move(w, w.native->peers[static_cast<std::size_t>(target)], put, buf, off, bytes, target);
}

namespace {

// The read-modify-write of one element of e at offset off of p's window
// (a range cma_take took): compare null, fetch_and_op's f; else
// compare_and_swap. Under the element's stripe in the target's control
// block (the one cas_element and the fast path take; every run containing
// the element holds it too), unless we hold its exclusive lock (excl). No
// write back when nothing changes (MPI_NO_OP, a compare that fails): one
// system call then. *wrote: whether it wrote.
int cma_rmw(WindowState& w, NativePeer& p, uint64_t off, bool excl, FastElem e, FastOp f, const void* origin,
            const void* compare, void* result, int target, bool* wrote) {
  const bool cas = compare != nullptr;
  OneSided& os = w.native->os;
  uint32_t& stripe = stripe_of(*p.ctl, static_cast<std::size_t>(off));
  int rc = 0;
  auto apply = [&](auto word) {
    using W = decltype(word);
    W v = 0, cur = 0;
    if (origin && f != FastOp::Read) std::memcpy(&v, origin, sizeof v);
    if (!excl) stripe_lock(stripe);
    rc = os.get(*p.mem_r, p.mem_off + off, &cur, sizeof cur);
    if (rc == 0) {
      W next = cur;
      bool write = true;
      if (cas) {
        W c;
        std::memcpy(&c, compare, sizeof c);
        write = cur == c;
      } else {
        write = f != FastOp::Read;
        fast_element(&next, v, f);
      }
      if (write) rc = os.put(*p.mem_r, p.mem_off + off, cas ? &v : &next, sizeof next);
      *wrote = write;
    }
    if (!excl) stripe_unlock(stripe);
    if (rc == 0) std::memcpy(result, &cur, sizeof cur);
  };
  by_word(e.size, apply);
  if (rc) {
    return w.dev.errors().raise(ErrorClass::Other, "%s to rank %d: the one-sided read-modify-write failed: %s",
                                cas ? "Compare_and_swap" : "Fetch_and_op", target, std::strerror(errno));
  }
  return 0;
}

// What cma_rmw does to elements of e: compare_and_swap (cas), else
// fetch_and_op's op; None when the lean atomics do not take the case.
FastOp rmw_op(FastElem e, bool cas, const void* origin, const void* result, coll::OpKind op) {
  if (!result || !e.size) return FastOp::None;
  if (cas) return origin && e.cas ? FastOp::Replace : FastOp::None;
  const FastOp f = fast_op(op, e);
  return f != FastOp::Read && !origin ? FastOp::None : f;
}

// Whether we hold target's exclusive lock: no stripe's locked instruction
// then comes before the read.
bool held_exclusive(const WindowState& w, int target) {
  const auto r = static_cast<std::size_t>(target);
  return w.native_usable && r < w.native->held.size() && w.native->held[r] == 2;
}

}  // namespace

int cma_atomic(WindowState& w, const void* origin, const void* compare, void* result, const Datatype* t, int target,
               std::ptrdiff_t disp, coll::OpKind op) {
  const bool cas = compare != nullptr;
  const FastElem e = fast_elem_of(t);  // a predefined type of 4 or 8 bytes, no padding
  const FastOp f = rmw_op(e, cas, origin, result, op);
  if (f == FastOp::None) return -1;
  std::lock_guard g(w.mu);
  uint64_t off;
  const bool excl = held_exclusive(w, target);
  NativePeer* p = w.native_usable && w.native->cma_acc ? cma_target(w, cas ? Msg::Cas : Msg::Fop, kOsGet | kOsPut,
                                                                    target, disp, e.size, &off, excl, true)
                                                       : nullptr;
  bool wrote = false;
  return p ? cma_rmw(w, *p, off, excl, e, f, origin, compare, result, target, &wrote) : -1;
}

int cma_atomic_known(WindowState& w, Msg kind, const void* origin, const void* compare, void* result, FastElem e,
                     const Datatype* t, int target, std::ptrdiff_t disp, coll::OpKind op, LeanAtomic* how) {
  const bool cas = kind == Msg::Cas;
  const FastOp f = rmw_op(e, cas, origin, result, op);
  if (f == FastOp::None || (cas && !compare) || !w.native->cma_acc ||
      (w.info.emulate_ops & (1u << static_cast<unsigned>(kind)))) {
    return -1;
  }
  // A read that is likely all there is to do (MPI_NO_OP; a compare_and_swap
  // whose compare the binding expects to fail, as in a spin on a lock word)
  // costs one system call, less than the packet's round trip even to a
  // polling target (get's rule, cma_copy_route): no look then.
  const bool read_only = how->first && (f == FastOp::Read || (cas && !how->cas_wrote));
  const int8_t polls = read_only ? 0 : rma::polls_now(w, target);
  if (polls < 0) return -1;
  if (polls) {
    // rmw_op's yes proved what quick_fetch_now would test again.
    Builtin b;
    if (!t->builtin_id(&b)) return -1;
    how->packet = true;
    return emul::quick_fetch_known(w, kind, origin, compare, result, b, e.size, target, disp, op) ? 0 : -1;
  }
  uint64_t off;
  const bool excl = held_exclusive(w, target);
  if (!cma_take(w, target, disp, e.size, &off, excl, true)) return -1;
  how->lean = true;
  how->took_first = read_only;
  return cma_rmw(w, w.native->peers[static_cast<std::size_t>(target)], off, excl, e, f, origin, cas ? compare : nullptr,
                 result, target, &how->wrote);
}

int cma_copy_route(WindowState& w, bool put, void* buf, int64_t count, const Datatype* t, int target,
                   std::ptrdiff_t disp, bool* first) {
  const bool was_first = *first;
  *first = false;
  if (count <= 0 || count > (int64_t{1} << 40)) return -1;
  // (Window::get's order: a large block by cross-memory attach without a
  // look, else the look, then the copy or the packet.)
  if (rma::bulk_by_cma(put ? Msg::Put : Msg::Get, static_cast<uint64_t>(count) * t->size()))
    return cma_copy(w, put, buf, count, t, target, disp);
  // The first put or get of an interval takes one system call (no target,
  // nothing for the flush to wait for) even to a polling target: it beats
  // the packet's round trip the flush would wait for (get/flush, put/flush,
  // lock/get/unlock), and the look at the target is not needed. The ones
  // behind it look: to a polling target they go as packets, batched into
  // one round trip (emul/batch.cpp), where one call each would cost more.
  // Where a call costs more than the round trip (NativeWindow::lean_first
  // false), the binding hands every one in as not first.
  // Not a put in a fence epoch: no round trip waits for it there (its
  // packet's arrival is counted by the fence), so the call would only add.
  if (was_first && !(put && w.access == WindowState::Access::Fence)) {
    if (const int e = cma_copy(w, put, buf, count, t, target, disp); e >= 0) {
      *first = true;
      return e;
    }
  }
  const int8_t polls = rma::polls_now(w, target);
  if (polls < 0) return -1;
  if (polls == 0) return cma_copy(w, put, buf, count, t, target, disp);
  // The packet, on this look's verdict: a second look by the general path
  // (Window::put) found a target that had just gone quiet asleep and took
  // the system call (s29: put/flush 3.2 us, the packet 0.9). quick_put_now
  // declines a put that waits for the flush behind it: the general path.
  if (put) return emul::quick_put_now(w, buf, count, t, target, disp) ? 0 : -1;
  return emul::quick_get_now(w, buf, count, t, target, disp) ? 0 : -1;
}

int cma_atomic_route(WindowState& w, Msg kind, const void* origin, const void* compare, void* result, const Datatype* t,
                     int target, std::ptrdiff_t disp, coll::OpKind op) {
  const int8_t polls = rma::polls_now(w, target);
  if (polls < 0) return -1;
  const bool cas = kind == Msg::Cas;
  if (polls == 0)
    return cas && !compare ? -1 : cma_atomic(w, origin, cas ? compare : nullptr, result, t, target, disp, op);
  return emul::quick_fetch_now(w, kind, origin, compare, result, 1, t, target, disp, cas ? coll::OpKind::Replace : op)
             ? 0
             : -1;
}

}  // namespace adi3::rma::native
