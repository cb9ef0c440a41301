// Native operations on a window in shared memory: puts and gets are copies
// between the origin buffer and the target's memory mapped here (through a
// bounded bounce buffer when both sides are noncontiguous: no
// whole-message temporary), accumulates combine under the target's
// accumulate stripes (rma/atomic_acc.*), and passive-target locks are the
// target's lock word.
// Everything completes before the call returns: flush has nothing to wait
// for but a fence. Regions reached by cross-memory attach take puts and
// gets of contiguous target data only (the router sends the rest to the
// emulation).
#include <algorithm>
#include <cstring>
#include <optional>

#include "channels/common/bulk_copy.hpp"
#include "adi3/device.hpp"
#include "rma/atomic_acc.hpp"
#include "rma/native.hpp"
#include "rma/native_copy.hpp"
#include "rma/window_state.hpp"

namespace adi3::rma::native {
namespace {

// The target memory of the operation.
struct Where {
  NativePeer* peer;
  const Datatype* t;  // target type (derived or predefined)
  uint64_t count;
  char* addr;  // mapped (nullptr for a region without loads/stores)
};

Where where(WindowState& w, const OpArgs& a, const Checked& c) {
  NativePeer& p = w.native->peers[static_cast<std::size_t>(a.target)];
  Where x{&p, c.derived ? a.ttype : Datatype::builtin(c.elem), c.count, nullptr};
  if (p.mem) x.addr = p.mem + c.disp_bytes;
  return x;
}

// Copies the packed stream of src into dst (same size), through a bounce
// buffer when neither is one run.
void stream_copy(const void* sbuf, std::size_t scount, const Datatype* st, void* dbuf, std::size_t dcount,
                 const Datatype* dt, std::size_t bytes) {
  char* s = run_of(sbuf, scount, st);
  char* d = run_of(dbuf, dcount, dt);
  if (s && d) {
    bulk_move(d, s, bytes);
    return;
  }
  if (s) {
    Segment(dbuf, dcount, dt).unpack(0, bytes, s);
    return;
  }
  if (d) {
    Segment(const_cast<void*>(sbuf), scount, st).pack(0, bytes, d);
    return;
  }
  Segment src(const_cast<void*>(sbuf), scount, st), dst(dbuf, dcount, dt);
  std::vector<char> tmp(std::min(bytes, kBounce));
  for (std::size_t at = 0; at < bytes; at += tmp.size()) {
    const std::size_t n = std::min(tmp.size(), bytes - at);
    src.pack(at, at + n, tmp.data());
    dst.unpack(at, at + n, tmp.data());
  }
}

// One element of es bytes of type t at b, packed into to: by hand when the
// type is one run (no Segment), and back (one_out).
void one_in(const void* b, const Datatype* t, std::size_t es, char* to) {
  if (const char* p = run_of(b, 1, t)) {
    std::memcpy(to, p, es);
  } else {
    Segment(const_cast<void*>(b), 1, t).pack(0, es, to);
  }
}
void one_out(const char* from, const Datatype* t, std::size_t es, void* b) {
  if (char* p = run_of(b, 1, t)) {
    std::memcpy(p, from, es);
  } else {
    Segment(b, 1, t).unpack(0, es, from);
  }
}

// Put/get through the interface (cross-memory attach): contiguous target.
int copy_remote(WindowState& w, const OpArgs& a, const Checked& c, bool put) {
  NativePeer& p = w.native->peers[static_cast<std::size_t>(a.target)];
  const Datatype* t = c.derived ? a.ttype : Datatype::builtin(c.elem);
  const uint64_t off = p.mem_off + c.disp_bytes + static_cast<uint64_t>(t->true_lb());
  void* obuf = put ? const_cast<void*>(a.origin) : a.result;
  char* o = run_of(obuf, static_cast<std::size_t>(a.ocount), a.otype);
  auto fail = [&] {
    return w.dev.errors().raise(ErrorClass::Other, "%s to rank %d: the one-sided %s failed: %s", a.name, a.target,
                                put ? "put" : "get", std::strerror(errno));
  };
  if (o) {
    int rc = put ? w.native->os.put(*p.mem_r, off, o, c.bytes) : w.native->os.get(*p.mem_r, off, o, c.bytes);
    return rc == 0 ? 0 : fail();
  }
  Segment seg(obuf, static_cast<std::size_t>(a.ocount), a.otype);
  std::vector<char> tmp(std::min(c.bytes, kBounce));
  for (std::size_t at = 0; at < c.bytes; at += tmp.size()) {
    const std::size_t n = std::min(tmp.size(), c.bytes - at);
    if (put) {
      seg.pack(at, at + n, tmp.data());
      if (w.native->os.put(*p.mem_r, off + at, tmp.data(), n)) return fail();
    } else {
      if (w.native->os.get(*p.mem_r, off + at, tmp.data(), n)) return fail();
      seg.unpack(at, at + n, tmp.data());
    }
  }
  return w.native->os.flush(p.mem_r->peer) == 0 ? 0 : fail();
}

// The word buffers of an accumulate, one chunk (whole elements, at most
// kBounce bytes) at a time: the operand (in) and the target's contents
// (out, when wanted). Small operations (fetch_and_op, 8-byte accumulates)
// stay on the stack.
class Bounce {
 public:
  Bounce(std::size_t bytes, std::size_t es, bool want_out) : chunk(std::max(es, kBounce / es * es)) {
    const std::size_t words = (std::min(bytes, chunk) + 7) / 8;
    if (words > 8) {
      big_in_.resize(words);
      big_out_.resize(want_out ? words : 0);
      in = big_in_.data();
      out = big_out_.data();
    }
  }
  Bounce(const Bounce&) = delete;
  Bounce& operator=(const Bounce&) = delete;

  const std::size_t chunk;
  uint64_t* in = small_in_;
  uint64_t* out = small_out_;

 private:
  alignas(16) uint64_t small_in_[8];
  alignas(16) uint64_t small_out_[8];
  std::vector<uint64_t> big_in_, big_out_;
};

// The accumulate family into memory reached by cross-memory attach (a
// window from create, or a heap region attached to a dynamic window):
// read, combine here, write back, under the stripes of the target's control
// block, which every other path to that memory takes too
// (rma/atomic_acc.hpp), so accumulates stay atomic per element whoever
// applies them. Under our exclusive lock nobody else may touch the memory:
// no stripes. The operation's first byte is at offset off of region r and
// at woff in the target's stripe numbering.
int acc_remote(WindowState& w, const OpArgs& a, const Checked& c, RemoteRegion& r, uint64_t off, std::size_t woff) {
  NativeWin& nw = *w.native;
  NativePeer& p = nw.peers[static_cast<std::size_t>(a.target)];
  const std::size_t es = Datatype::builtin(c.elem)->size();
  const coll::OpKind op = a.op ? a.op->kind() : coll::OpKind::Replace;
  const bool excl = nw.held[static_cast<std::size_t>(a.target)] == 2;
  OneSided& os = nw.os;
  auto fail = [&] {
    return w.dev.errors().raise(ErrorClass::Other, "%s to rank %d: the one-sided read-modify-write failed: %s", a.name,
                                a.target, std::strerror(errno));
  };
  if (a.kind == Msg::Cas) {
    alignas(16) char sw[64], cmp[64], cur[64];
    one_in(a.origin, a.ttype, es, sw);
    one_in(a.compare, a.ttype, es, cmp);
    const StripeRange s(*p.ctl, woff, es);
    if (!excl) s.lock();
    int rc = os.get(r, off, cur, es);
    if (rc == 0 && std::memcmp(cur, cmp, es) == 0) rc = os.put(r, off, sw, es);
    if (!excl) s.unlock();
    if (rc) return fail();
    one_out(cur, a.ttype, es, a.result);
    return 0;
  }
  const bool fetch = a.kind == Msg::GetAcc || a.kind == Msg::Fop;
  const bool has_in = op != coll::OpKind::NoOp;
  const Bounce b(c.bytes, es, true);
  const std::size_t chunk = b.chunk;
  uint64_t* in = b.in;
  uint64_t* cur = b.out;
  const std::size_t scount = a.kind == Msg::Fop ? 1 : static_cast<std::size_t>(a.ocount);
  const Datatype* stype = a.kind == Msg::Fop ? a.ttype : a.otype;
  const std::size_t rcount = a.kind == Msg::Fop ? 1 : static_cast<std::size_t>(a.rcount);
  const Datatype* rtype = a.kind == Msg::Fop ? a.ttype : a.rtype;
  // A contiguous operand on its element's alignment is used in place, and
  // a contiguous result buffer takes the old contents straight (a
  // fetch_and_op of a predefined type builds no Segment: about 600
  // instructions of its 2,500 at the origin, callgrind).
  const char* in_run = has_in ? run_of(a.origin, scount, stype) : nullptr;
  if (in_run && reinterpret_cast<uintptr_t>(in_run) % std::min<std::size_t>(es, 16)) in_run = nullptr;
  char* out_run = fetch ? run_of(a.result, rcount, rtype) : nullptr;
  std::optional<Segment> src, dst;
  if (has_in && !in_run) src.emplace(const_cast<void*>(a.origin), scount, stype);
  if (fetch && !out_run) dst.emplace(a.result, rcount, rtype);
  // The stripes of the whole range, taken once: a chunk of 32 KiB or more
  // needs every stripe anyway, and taking 512 stripes per 64 KiB chunk cost
  // a quarter of a 4 MiB accumulate. (Taken in ascending order like every
  // other taker's, so no two origins deadlock.)
  const StripeRange s(*p.ctl, woff, c.bytes);
  if (!excl) s.lock();
  int rc = 0;
  for (std::size_t at = 0; at < c.bytes && rc == 0; at += chunk) {
    const std::size_t n = std::min(chunk, c.bytes - at);
    const void* operand = in;
    if (in_run) {
      operand = in_run + at;
    } else if (has_in) {
      src->pack(at, at + n, in);
    }
    if (fetch || (op != coll::OpKind::Replace && has_in)) rc = os.get(r, off + at, cur, n);
    if (rc == 0 && out_run) {
      std::memcpy(out_run + at, cur, n);
    } else if (rc == 0 && fetch) {
      dst->unpack(at, at + n, cur);
    }
    if (rc == 0 && op == coll::OpKind::Replace) {
      rc = os.put(r, off + at, operand, n);
    } else if (rc == 0 && has_in) {
      coll::apply(op, c.elem, operand, cur, n / es, es);
      rc = os.put(r, off + at, cur, n);
    }
  }
  if (!excl) s.unlock();
  return rc ? fail() : 0;
}

// Bytes [lo, hi) from x.addr that count elements of t touch.
void span_of(uint64_t count, const Datatype* t, std::ptrdiff_t* lo, std::ptrdiff_t* hi) {
  const std::ptrdiff_t k = count ? static_cast<std::ptrdiff_t>(count - 1) * t->extent() : 0;
  *lo = t->true_lb() + std::min<std::ptrdiff_t>(k, 0);
  *hi = t->true_ub() + std::max<std::ptrdiff_t>(k, 0);
}

// Accumulate family into mapped memory, chunk by chunk (whole elements).
// The stripes of the whole target range are taken once, around every chunk
// (rma/atomic_acc.hpp): per 64 KiB chunk they would be all 512 again.
void accumulate(const OpArgs& a, const Checked& c, const Where& x, const AccTarget& target) {
  AccTarget tgt = target;
  StripeRange stripes;
  if (!tgt.exclusive) {
    std::ptrdiff_t lo, hi;
    span_of(x.count, x.t, &lo, &hi);
    if (c.bytes != 0 && hi > lo) {
      stripes =
          StripeRange(*tgt.ctl, static_cast<std::size_t>(x.addr + lo - tgt.data), static_cast<std::size_t>(hi - lo));
      tgt.exclusive = true;
    }
  }
  const std::size_t es = Datatype::builtin(c.elem)->size();
  const coll::OpKind op = a.op ? a.op->kind() : coll::OpKind::Replace;
  const bool fetch = a.kind == Msg::GetAcc || a.kind == Msg::Fop;
  const bool has_in = op != coll::OpKind::NoOp;
  const Bounce b(c.bytes, es, fetch);
  const std::size_t chunk = b.chunk;
  uint64_t* in = b.in;
  uint64_t* old = b.out;
  const std::size_t scount = a.kind == Msg::Fop ? 1 : static_cast<std::size_t>(a.ocount);
  const std::size_t rcount = a.kind == Msg::Fop ? 1 : static_cast<std::size_t>(a.rcount);
  const Datatype* stype = a.kind == Msg::Fop ? a.ttype : a.otype;
  const Datatype* rtype = a.kind == Msg::Fop ? a.ttype : a.rtype;
  // Contiguous origin and result buffers are used in place (the common
  // fetch_and_op / accumulate of predefined types: no Segment to build);
  // the kernels want the operand aligned to its element.
  const char* in_run = has_in ? run_of(a.origin, scount, stype) : nullptr;
  if (in_run && reinterpret_cast<uintptr_t>(in_run) % std::min<std::size_t>(es, 16)) in_run = nullptr;
  char* out_run = fetch ? run_of(a.result, rcount, rtype) : nullptr;
  Segment src, dst;
  if (has_in && !in_run) src = Segment(const_cast<void*>(a.origin), scount, stype);
  if (fetch && !out_run) dst = Segment(a.result, rcount, rtype);
  // Taken after the allocations above: a failing one (std::bad_alloc,
  // MPI_ERR_NO_MEM) leaves no stripe held.
  stripes.lock();
  for (std::size_t at = 0; at < c.bytes; at += chunk) {
    const std::size_t n = std::min(chunk, c.bytes - at);
    const void* operand = in;
    if (in_run) {
      operand = in_run + at;
    } else if (has_in) {
      src.pack(at, at + n, in);
    }
    combine_atomic(tgt, x.addr, x.count, x.t, at, n, operand, op, c.elem,
                   fetch ? (out_run ? out_run + at : static_cast<void*>(old)) : nullptr);
    if (fetch && !out_run) dst.unpack(at, at + n, old);
  }
  stripes.unlock();
}

// The accumulate family (and compare_and_swap) into mapped memory: x.addr
// is the target data, tgt says how its elements are locked.
void acc_mapped(const OpArgs& a, const Checked& c, const Where& x, const AccTarget& tgt) {
  if (a.kind != Msg::Cas) {
    accumulate(a, c, x, tgt);
    return;
  }
  const std::size_t es = x.t->size();
  alignas(16) char sw[64], cmp[64], old[64];
  one_in(a.origin, a.ttype, es, sw);
  one_in(a.compare, a.ttype, es, cmp);
  cas_element(tgt.ctl, tgt.data, x.addr + x.t->true_lb(), c.elem, sw, cmp, old, nullptr, tgt.exclusive);
  one_out(old, a.ttype, es, a.result);
}

// The accumulate family into a region attached to a dynamic window. Every
// element takes its stripe (the window's cma_acc: heap regions are reached
// by cross-memory attach, and the target's own application of packets
// locks the same stripes), numbered by the element's address at the
// target (a dynamic window's base is address 0).
int dyn_acc(WindowState& w, const OpArgs& a, const Checked& c) {
  DynAccess d;
  if (int e = dyn_enter(w, a, c, &d)) return e;
  if (!d.r) return 0;  // refused: the error waits for the synchronization
  NativePeer& p = w.native->peers[static_cast<std::size_t>(a.target)];
  const bool excl = w.native->held[static_cast<std::size_t>(a.target)] == 2;
  int rc = 0;
  if (d.r->direct) {
    const Datatype* t = c.derived ? a.ttype : Datatype::builtin(c.elem);
    char* first = static_cast<char*>(d.r->direct) + d.off;
    // Address 0 of the target, as seen here: stripe offsets count from it.
    auto* zero = reinterpret_cast<char*>(reinterpret_cast<uintptr_t>(first) - d.addr);
    const AccTarget tgt{p.ctl, zero, excl};
    acc_mapped(a, c, Where{&p, t, c.count, first - t->true_lb()}, tgt);
  } else {
    rc = acc_remote(w, a, c, *d.r, d.off, static_cast<std::size_t>(d.addr));
  }
  dyn_leave(d);
  return rc;
}

}  // namespace

bool can(const WindowState& w, Msg kind, int target, bool contiguous_target) {
  if (w.native->nic) return false;  // route_op asks nic_can
  const NativePeer& p = w.native->peers[static_cast<std::size_t>(target)];
  if (p.mem) return true;  // loads, stores, atomics: anything
  // Dynamic windows: contiguous puts and gets, and the accumulate family,
  // by the table of attached regions (route_op then asks dyn_native, which
  // knows the region).
  if (p.dyn) return contiguous_target || (kind != Msg::Put && kind != Msg::Get);
  if (!p.mem_r) return false;
  if (kind == Msg::Put) return (p.mem_r->ops & kOsPut) && contiguous_target;
  if (kind == Msg::Get) return (p.mem_r->ops & kOsGet) && contiguous_target;
  // Accumulates: read, combine, write back under the target's stripes.
  return w.native->cma_acc && (p.mem_r->ops & (kOsGet | kOsPut)) == (kOsGet | kOsPut) && contiguous_target;
}

int run(WindowState& w, const OpArgs& a, const Checked& c) {
  if (w.native->nic) return nic_run(w, a, c);
  // Any of these may load (cross-memory attach, accumulates under an
  // exclusive lock) or store: WindowState::before_load.
  w.before_load();
  w.stored();
  const Where x = where(w, a, c);
  const bool copy = a.kind == Msg::Put || a.kind == Msg::Get;
  if (!x.addr) {
    if (x.peer->dyn) return copy ? dyn_copy(w, a, c, a.kind == Msg::Put) : dyn_acc(w, a, c);
    if (copy) return copy_remote(w, a, c, a.kind == Msg::Put);
    const std::size_t woff = c.disp_bytes + static_cast<std::size_t>(x.t->true_lb());
    return acc_remote(w, a, c, *x.peer->mem_r, x.peer->mem_off + woff, woff);
  }
  // Large copies into or out of one target run go through the channel,
  // which may share them with the target (OneSidedCaps::split_min).
  if (copy && c.bytes >= w.native->os.caps().split_min && run_of(x.addr, x.count, x.t) && x.peer->mem_r) {
    return copy_remote(w, a, c, a.kind == Msg::Put);
  }
  switch (a.kind) {
    case Msg::Put:
      stream_copy(a.origin, static_cast<std::size_t>(a.ocount), a.otype, x.addr, x.count, x.t, c.bytes);
      return 0;
    case Msg::Get:
      stream_copy(x.addr, x.count, x.t, a.result, static_cast<std::size_t>(a.ocount), a.otype, c.bytes);
      return 0;
    default: {
      const AccTarget tgt{x.peer->ctl, x.peer->mem, w.native->held[static_cast<std::size_t>(a.target)] == 2};
      acc_mapped(a, c, x, tgt);
      return 0;
    }
  }
}

void cas_element(Control* ctl, char* data, char* p, Builtin e, const void* swap, const void* compare, void* old,
                 NicAtomics* nic, bool exclusive) {
  const std::size_t es = Datatype::builtin(e)->size();
  if (nic) {
    // A NIC window: every element through the NIC (rma/atomic_acc.hpp). A
    // failure leaves the element (the device reported it).
    if (!nic_cas(*nic, reinterpret_cast<uintptr_t>(p), es, swap, compare, old)) std::memset(old, 0, es);
    return;
  }
  // The element's stripe, like every accumulate on it (rma/atomic_acc.hpp).
  uint32_t& s = stripe_of(*ctl, static_cast<std::size_t>(p - data));
  if (!exclusive) stripe_lock(s);
  std::memcpy(old, p, es);
  if (std::memcmp(old, compare, es) == 0) std::memcpy(p, swap, es);
  if (!exclusive) stripe_unlock(s);
}

int lock(WindowState& w, int target, bool exclusive) {
  if (w.native->nic) return nic_lock(w, target, exclusive);
  Control* c = w.native->peers[static_cast<std::size_t>(target)].ctl;
  const uint32_t ticket = lock_ticket(*c);
  if (int e = lock_wait(w, *c, exclusive, ticket)) return e;
  lock_entered(*c, exclusive, ticket);
  return 0;
}

int lock_wait(WindowState& w, Control& c, bool exclusive, uint32_t ticket) {
  return w.dev.block_until([&] { return lock_held(c, exclusive, ticket); });
}

void unlock(WindowState& w, int target, bool exclusive) {
  if (w.native->nic) return nic_unlock(w, target, exclusive);
  lock_release(*w.native->peers[static_cast<std::size_t>(target)].ctl, exclusive);
}

}  // namespace adi3::rma::native
