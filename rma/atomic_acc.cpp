#include "rma/atomic_acc.hpp"

#include <sys/uio.h>

#include <atomic>
#include <cstring>

#include "rma/native_sync.hpp"
#include "segment/segment.hpp"

namespace adi3::rma {
namespace {

using coll::OpKind;

// One element at p (es bytes, aligned to es, es 4 or 8): lock-free.
template <class W>
void element_hw(char* p, const char* in, OpKind op, Builtin e, bool int_class, char* old) {
  std::atomic_ref<W> a(*reinterpret_cast<W*>(p));
  W v;
  std::memcpy(&v, in, sizeof v);
  W prev;
  if (op == OpKind::NoOp) {
    prev = a.load(std::memory_order_acquire);
  } else if (op == OpKind::Replace) {
    prev = a.exchange(v, std::memory_order_acq_rel);
  } else if (op == OpKind::Sum && int_class) {
    prev = a.fetch_add(v, std::memory_order_acq_rel);
  } else if (op == OpKind::Band && int_class) {
    prev = a.fetch_and(v, std::memory_order_acq_rel);
  } else if (op == OpKind::Bor && int_class) {
    prev = a.fetch_or(v, std::memory_order_acq_rel);
  } else if (op == OpKind::Bxor && int_class) {
    prev = a.fetch_xor(v, std::memory_order_acq_rel);
  } else {
    // Any other op: the op's own kernel on a copy, published by CAS.
    prev = a.load(std::memory_order_relaxed);
    for (;;) {
      W next = prev;
      coll::apply(op, e, &v, &next, 1, sizeof(W));
      if (a.compare_exchange_weak(prev, next, std::memory_order_acq_rel, std::memory_order_relaxed)) break;
    }
  }
  if (old) std::memcpy(old, &prev, sizeof prev);
}

// One element at p under its stripe's lock (any size; p may be unaligned
// for pairs, which coll::apply allows).
void element_locked(const AccTarget& t, char* p, std::size_t es, const char* in, OpKind op, Builtin e, char* old) {
  uint32_t& s = stripe_of(*t.ctl, static_cast<std::size_t>(p - t.data));
  stripe_lock(s);
  if (old) std::memcpy(old, p, es);
  if (op == OpKind::Replace) {
    std::memcpy(p, in, es);
  } else if (op != OpKind::NoOp) {
    alignas(16) char a[64], b[64];
    std::memcpy(a, in, es);
    std::memcpy(b, p, es);
    coll::apply(op, e, a, b, 1, es);
    std::memcpy(p, b, es);
  }
  stripe_unlock(s);
}

// m elements laid es apart from p.
bool run(const AccTarget& t, char* p, std::size_t m, std::size_t es, const char* in, OpKind op, Builtin e, char* old) {
  if (t.nic && es == 8) {
    // Windows the NIC updates: its elements never take the CPU's atomics.
    bool ok = true;
    for (std::size_t i = 0; i < m; ++i) {
      char* q = p + i * es;
      char* o = old ? old + i * es : nullptr;
      if (reinterpret_cast<uintptr_t>(q) % 8 == 0) {
        ok = nic_element(*t.nic, reinterpret_cast<uintptr_t>(q), in + i * es, op, e, o) && ok;
      } else {
        element_locked(t, q, es, in + i * es, op, e, o);
      }
    }
    return ok;
  }
  if (t.exclusive) {
    // Nobody else may touch the window now: bulk kernels.
    if (old) std::memcpy(old, p, m * es);
    if (op == OpKind::Replace) {
      std::memcpy(p, in, m * es);
    } else if (op != OpKind::NoOp) {
      if (reinterpret_cast<uintptr_t>(p) % es == 0 || coll::type_class(e) == coll::TypeClass::Pair) {
        coll::apply(op, e, in, p, m, es);
      } else {
        for (std::size_t i = 0; i < m; ++i) {
          alignas(16) char b[64];
          std::memcpy(b, p + i * es, es);
          coll::apply(op, e, in + i * es, b, 1, es);
          std::memcpy(p + i * es, b, es);
        }
      }
    }
    return true;
  }
  const bool int_class = coll::type_class(e) == coll::TypeClass::CInteger;
  for (std::size_t i = 0; i < m; ++i) {
    char* q = p + i * es;
    char* o = old ? old + i * es : nullptr;
    const char* x = in + i * es;
    if (t.locks_only) {
      element_locked(t, q, es, x, op, e, o);
    } else if (es == 8 && reinterpret_cast<uintptr_t>(q) % 8 == 0) {
      element_hw<uint64_t>(q, x, op, e, int_class, o);
    } else if (es == 4 && reinterpret_cast<uintptr_t>(q) % 4 == 0) {
      element_hw<uint32_t>(q, x, op, e, int_class, o);
    } else {
      element_locked(t, q, es, x, op, e, o);
    }
  }
  return true;
}

}  // namespace

bool nic_element(NicAtomics& nic, uint64_t at, const void* in, OpKind op, Builtin e, void* old) {
  uint64_t v = 0, prev = 0;
  if (op != OpKind::NoOp) std::memcpy(&v, in, 8);
  const bool int_class = coll::type_class(e) == coll::TypeClass::CInteger;
  bool ok;
  if (op == OpKind::NoOp || (op == OpKind::Sum && int_class)) {
    ok = nic.fetch_add(at, op == OpKind::NoOp ? 0 : v, &prev);
  } else {
    ok = nic.fetch_add(at, 0, &prev);
    while (ok) {
      uint64_t next = prev;
      if (op == OpKind::Replace) {
        next = v;
      } else {
        coll::apply(op, e, &v, &next, 1, 8);
      }
      uint64_t seen = 0;
      ok = nic.compare_swap(at, prev, next, &seen);
      if (!ok || seen == prev) break;
      prev = seen;
    }
  }
  if (ok && old) std::memcpy(old, &prev, 8);
  return ok;
}

bool combine_atomic(const AccTarget& tgt, char* addr, uint64_t count, const Datatype* t, std::size_t first,
                    std::size_t n, const void* in, coll::OpKind op, Builtin e, void* old_out) {
  const Datatype* et = Datatype::builtin(e);
  const std::size_t es = et->size();
  if (es == 0 || n == 0) return true;
  const char* x = static_cast<const char*>(in);
  char* old = static_cast<char*>(old_out);
  if (t->is_contiguous() && es == static_cast<std::size_t>(et->extent())) {
    return run(tgt, addr + t->true_lb() + first, n / es, es, x, op, e, old);
  }
  // Any other layout: the runs of the range, each a whole number of
  // elements (padded pairs are split by their padding: one at a time).
  Segment seg(addr, count, t);
  const bool whole_runs = es == static_cast<std::size_t>(et->extent());
  std::size_t pos = first;
  const std::size_t end = first + n;
  bool ok = true;
  while (pos < end) {
    iovec iov[16];
    std::size_t k = 0;
    const std::size_t step = whole_runs ? end - pos : es;
    const std::size_t got = seg.to_iov(pos, pos + step, iov, 16, &k);
    if (got == 0 || k == 0) return ok;  // cannot happen for a checked range
    if (!whole_runs) {
      // One padded pair: its first piece starts the element.
      alignas(16) char buf[64];
      seg.pack(pos, pos + es, buf);
      char* p = static_cast<char*>(iov[0].iov_base);
      uint32_t& s = stripe_of(*tgt.ctl, static_cast<std::size_t>(p - tgt.data));
      if (!tgt.exclusive) stripe_lock(s);
      if (old) std::memcpy(old + (pos - first), buf, es);
      if (op == OpKind::Replace) {
        seg.unpack(pos, pos + es, x + (pos - first));
      } else if (op != OpKind::NoOp) {
        alignas(16) char a[64];
        std::memcpy(a, x + (pos - first), es);
        coll::apply(op, e, a, buf, 1, es);
        seg.unpack(pos, pos + es, buf);
      }
      if (!tgt.exclusive) stripe_unlock(s);
      pos += es;
      continue;
    }
    for (std::size_t j = 0; j < k; ++j) {
      const std::size_t len = iov[j].iov_len;
      ok = run(tgt, static_cast<char*>(iov[j].iov_base), len / es, es, x + (pos - first), op, e,
               old ? old + (pos - first) : nullptr) &&
           ok;
      pos += len;
    }
  }
  return ok;
}

}  // namespace adi3::rma
