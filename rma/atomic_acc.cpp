#include "rma/atomic_acc.hpp"

#include <sys/uio.h>

#include <sched.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "rma/native_sync.hpp"
#include "segment/segment.hpp"

namespace adi3::rma {
namespace {

using coll::OpKind;

// inout = in op inout on m elements laid es apart from p, with the op's
// vectorised kernel where the run is aligned (the caller excludes every
// other accumulate on these bytes).
void apply_run(char* p, std::size_t m, std::size_t es, const char* in, OpKind op, Builtin e, char* old) {
  if (old) std::memcpy(old, p, m * es);
  if (op == OpKind::Replace) {
    std::memcpy(p, in, m * es);
  } else if (op != OpKind::NoOp) {
    if (reinterpret_cast<uintptr_t>(p) % es == 0 || coll::type_class(e) == coll::TypeClass::Pair) {
      coll::apply(op, e, in, p, m, es);
    } else {
      for (std::size_t i = 0; i < m; ++i) {
        alignas(16) char b[64];  // the kernels want an aligned element
        std::memcpy(b, p + i * es, es);
        coll::apply(op, e, in + i * es, b, 1, es);
        std::memcpy(p + i * es, b, es);
      }
    }
  }
}

// m elements laid es apart from p: under the stripes of their bytes, taken
// once for the run (none when the caller excludes everyone already).
bool run(const AccTarget& t, char* p, std::size_t m, std::size_t es, const char* in, OpKind op, Builtin e, char* old) {
  if (t.exclusive) {
    apply_run(p, m, es, in, op, e, old);
    return true;
  }
  const StripeRange s(*t.ctl, static_cast<std::size_t>(p - t.data), m * es);
  s.lock();
  apply_run(p, m, es, in, op, e, old);
  s.unlock();
  return true;
}

// ---- NIC windows ----

// A NIC stripe lock: compare-and-swap 0 -> 1 until it is ours. The holder
// is another origin's read-combine-write (three round trips): spin on the
// NIC, yielding the core now and then (more ranks than cores).
// The word holds its holder's rank + 1, so a waiter can ask whether the
// holder still lives: one that died holding it would leave every later
// accumulate to the stripe spinning.
bool nic_lock(NicAtomics& nic, std::size_t s) {
  for (int i = 0;; ++i) {
    uint64_t old = 0;
    if (!nic.lock_word(s, 0, nic.me, &old)) return false;
    if (old == 0) return true;
    if (i % 16 == 15) {
      if (!nic.holder_alive(old)) {
        nic.dead_holder = old;
        nic.dead_stripe = s;
        errno = EOWNERDEAD;
        return false;
      }
      sched_yield();
    }
  }
}

bool nic_unlock(NicAtomics& nic, std::size_t s) {
  uint64_t old = 0;
  return nic.lock_word(s, nic.me, 0, &old);
}

std::size_t nic_stripe(const NicAtomics& nic, uint64_t at) { return ((at - nic.base) / kNicGranule) % kNicStripes; }

// buf = in op buf for m packed elements (old values to old first).
void combine_local(char* buf, std::size_t m, std::size_t es, const char* in, OpKind op, Builtin e, char* old) {
  if (old) std::memcpy(old, buf, m * es);
  if (op == OpKind::Replace) {
    std::memcpy(buf, in, m * es);
  } else if (op != OpKind::NoOp) {
    coll::apply(op, e, in, buf, m, es);
  }
}

// Elements of one stripe (their first bytes in one granule), in rising
// address order, not necessarily adjacent: one lock and one read of their
// span (reading the gaps between them is harmless), combined here, then
// one write per run of adjacent elements (only their own bytes: the gaps
// may be someone else's), posted back to back and completed once.
class NicGroup {
 public:
  NicGroup(NicAtomics& nic, std::size_t es, const char* in, OpKind op, Builtin e, char* old)
      : nic_(nic), es_(es), in_(in), op_(op), e_(e), old_(old) {}
  // The element at target address q, stream offset pos (from the first).
  bool add(uint64_t q, std::size_t pos) {
    const std::size_t s = nic_stripe(nic_, q);
    if (m_ && (s != stripe_ || q < lo_ + span_ || q + es_ - lo_ > sizeof buf_ || m_ == kMax)) {
      if (!flush()) return false;
    }
    if (!m_) {
      stripe_ = s;
      lo_ = q;
      pos_ = pos;
    }
    off_[m_++] = static_cast<uint16_t>(q - lo_);
    span_ = q + es_ - lo_;
    return true;
  }
  bool flush() {
    if (!m_) return true;
    const std::size_t m = m_;
    m_ = 0;
    if (!nic_lock(nic_, stripe_)) return false;
    bool ok = nic_.read(lo_, buf_, span_);
    if (ok && span_ == m * es_ && reinterpret_cast<uintptr_t>(in_ + pos_) % std::min<std::size_t>(es_, 16) == 0) {
      // Back to back (a contiguous target): one kernel call, one write.
      combine_local(buf_, m, es_, in_ + pos_, op_, e_, old_ ? old_ + pos_ : nullptr);
      if (op_ != OpKind::NoOp) ok = nic_.write(lo_, buf_, span_);
    } else if (ok) {
      for (std::size_t i = 0; i < m; ++i) {
        alignas(16) char el[64];  // the kernels want an aligned element
        std::memcpy(el, buf_ + off_[i], es_);
        combine_local(el, 1, es_, in_ + pos_ + i * es_, op_, e_, old_ ? old_ + pos_ + i * es_ : nullptr);
        std::memcpy(buf_ + off_[i], el, es_);
      }
      // The runs of adjacent elements, packed for one chain of writes.
      std::size_t runs = 0, packed = 0;
      for (std::size_t i = 0; i < m && op_ != OpKind::NoOp;) {
        std::size_t j = i + 1;
        while (j < m && off_[j] == off_[j - 1] + es_) ++j;
        const std::size_t len = off_[j - 1] + es_ - off_[i];
        std::memcpy(out_ + packed, buf_ + off_[i], len);
        run_[runs++] = {lo_ + off_[i], len};
        packed += len;
        i = j;
      }
      if (runs) ok = nic_.write_runs(run_, runs, out_);
    }
    return nic_unlock(nic_, stripe_) && ok;
  }

 private:
  static constexpr std::size_t kMax = kNicGranule + 64;
  NicAtomics& nic_;
  std::size_t es_;
  const char* in_;
  OpKind op_;
  Builtin e_;
  char* old_;
  std::size_t stripe_ = 0, pos_ = 0, m_ = 0, span_ = 0;
  uint64_t lo_ = 0;
  uint16_t off_[kMax];
  NicAtomics::Run run_[kMax];
  alignas(16) char buf_[kNicGranule + 64];
  char out_[kNicGranule + 64];
};

// One element whose bytes lie in several pieces (a type that splits it):
// under the lock of its first byte's stripe, gathered and scattered.
bool nic_pieces(NicAtomics& nic, const iovec* iov, std::size_t k, std::size_t es, const char* in, OpKind op, Builtin e,
                char* old) {
  alignas(16) char buf[64];
  const std::size_t s = nic_stripe(nic, reinterpret_cast<uintptr_t>(iov[0].iov_base));
  if (!nic_lock(nic, s)) return false;
  bool ok = true;
  std::size_t at = 0;
  for (std::size_t j = 0; j < k && ok; at += iov[j].iov_len, ++j) {
    ok = nic.read(reinterpret_cast<uintptr_t>(iov[j].iov_base), buf + at, iov[j].iov_len);
  }
  if (ok) {
    combine_local(buf, 1, es, in, op, e, old);
    at = 0;
    for (std::size_t j = 0; j < k && ok && op != OpKind::NoOp; at += iov[j].iov_len, ++j) {
      ok = nic.write(reinterpret_cast<uintptr_t>(iov[j].iov_base), buf + at, iov[j].iov_len);
    }
  }
  return nic_unlock(nic, s) && ok;
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
  if (tgt.nic) return nic_combine(*tgt.nic, reinterpret_cast<uintptr_t>(addr), count, t, first, n, in, op, e, old_out);
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

bool nic_combine(NicAtomics& nic, uint64_t addr, uint64_t count, const Datatype* t, std::size_t first, std::size_t n,
                 const void* in, coll::OpKind op, Builtin e, void* old_out) {
  const Datatype* et = Datatype::builtin(e);
  const std::size_t es = et->size();
  if (es == 0 || n == 0) return true;
  if (es > 64 || first % es || n % es) {
    errno = EINVAL;  // not whole predefined elements: the checks upstream rule it out
    return false;
  }
  const char* x = static_cast<const char*>(in);
  char* old = static_cast<char*>(old_out);
  NicGroup group(nic, es, x, op, e, old);
  // One element lying in one piece at q.
  auto one = [&](uint64_t q, std::size_t pos) {
    if (es == 8 && q % 8 == 0) {
      return group.flush() && nic_element(nic, q, x + pos, op, e, old ? old + pos : nullptr);
    }
    return group.add(q, pos);
  };
  bool ok = true;
  if (t->is_contiguous() && es == static_cast<std::size_t>(et->extent())) {
    const uint64_t q0 = addr + static_cast<uint64_t>(t->true_lb()) + first;
    for (std::size_t at = 0; at < n && ok; at += es) ok = one(q0 + at, at);
    return group.flush() && ok;
  }
  // Any other layout: the type's runs, element by element; an element
  // split over runs (padded pairs, odd types) is gathered by itself.
  Segment seg(reinterpret_cast<void*>(static_cast<uintptr_t>(addr)), count, t);
  std::size_t pos = first;
  const std::size_t end = first + n;
  while (pos < end && ok) {
    iovec iov[16];
    std::size_t k = 0;
    if (seg.to_iov(pos, end, iov, 16, &k) == 0 || k == 0) {
      errno = EINVAL;
      return false;
    }
    bool split = false;
    for (std::size_t j = 0; j < k && ok && !split; ++j) {
      auto q = reinterpret_cast<uintptr_t>(iov[j].iov_base);
      std::size_t left = iov[j].iov_len;
      for (; left >= es && ok; left -= es, q += es, pos += es) ok = one(q, pos - first);
      if (left) split = true;  // the next element starts here and goes on in the next run
    }
    if (split && ok) {
      ok = group.flush();
      iovec parts[8];
      std::size_t m = 0;
      if (ok && (seg.to_iov(pos, pos + es, parts, 8, &m) != es || m == 0)) {
        errno = EINVAL;
        return false;
      }
      ok = ok && nic_pieces(nic, parts, m, es, x + (pos - first), op, e, old ? old + (pos - first) : nullptr);
      pos += es;
    }
  }
  return group.flush() && ok;
}

bool nic_cas(NicAtomics& nic, uint64_t at, std::size_t es, const void* swap, const void* compare, void* old) {
  if (es == 8 && at % 8 == 0) {
    uint64_t c, s, o = 0;
    std::memcpy(&c, compare, 8);
    std::memcpy(&s, swap, 8);
    if (!nic.compare_swap(at, c, s, &o)) return false;
    std::memcpy(old, &o, 8);
    return true;
  }
  if (es > 64) {
    errno = EINVAL;
    return false;
  }
  alignas(16) char cur[64];
  const std::size_t s = nic_stripe(nic, at);
  if (!nic_lock(nic, s)) return false;
  bool ok = nic.read(at, cur, es);
  if (ok && std::memcmp(cur, compare, es) == 0) ok = nic.write(at, swap, es);
  if (ok) std::memcpy(old, cur, es);
  return nic_unlock(nic, s) && ok;
}

}  // namespace adi3::rma
