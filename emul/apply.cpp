// The target side of the emulations, applying operations: a put,
// accumulate, get, get_accumulate, fetch_and_op or compare_and_swap is
// checked against the window before a byte is written or read (datatype,
// sizes, the byte range against the window or the attached regions,
// element types and op), then applied under the window's mutex, which
// makes accumulates atomic per element with respect to each other. A
// refused operation changes nothing, is logged here and reported to its
// origin, and still counts as applied so that the origin's synchronization
// completes. (Synchronization packets and replies: emul/target.cpp.)
#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include "adi3/device.hpp"
#include "coll/op.hpp"
#include "emul/emul.hpp"
#include "rma/atomic_acc.hpp"
#include "rma/hub.hpp"
#include "rma/native.hpp"

namespace adi3::emul {

using rma::Header;
using rma::Msg;
using rma::Origin;
using rma::Reply;
using rma::WindowState;

namespace {

const char* msg_name(Msg m) {
  switch (m) {
    case Msg::Put:
      return "a put";
    case Msg::Acc:
      return "an accumulate";
    case Msg::Get:
      return "a get";
    case Msg::GetAcc:
      return "a get_accumulate";
    case Msg::Fop:
      return "a fetch_and_op";
    case Msg::Cas:
      return "a compare_and_swap";
    default:
      return "a packet";
  }
}

}  // namespace

// Logs the refusal here and reports it to the origin (with the reply token,
// so a get-like operation waiting for data completes with the error).
void refuse(WindowState& w, int origin, const Header& h, ErrorClass c, const char* fmt, ...) {
  char why[200];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  char text[256];
  int n = std::snprintf(text, sizeof text, "rank %d refused %s from rank %d at byte %llu (count %llu): %s", w.comm.rank,
                        msg_name(h.kind), origin, static_cast<unsigned long long>(h.disp),
                        static_cast<unsigned long long>(h.count), why);
  w.dev.errors().raise(c, "%s", text);
  Header e{};
  e.kind = Msg::Error;
  e.op = static_cast<uint8_t>(c);
  // Only get-like operations wait for an answer by token (a put's or an
  // accumulate's token is the sequence number of the sync it carries).
  e.token = h.kind == Msg::Put || h.kind == Msg::Acc ? 0 : h.token;
  e.len = static_cast<uint64_t>(std::min<int>(n, sizeof text - 1));
  send(w, origin, e, Payload{text, static_cast<std::size_t>(e.len), nullptr, 0});
}

namespace {

// The window memory [lo, hi) bytes that count elements of t at disp cover,
// or false (why) when any of it lies outside the window.
bool locate(WindowState& w, uint64_t disp, uint64_t count, const Datatype* t, char** addr, std::string* why) {
  if (count == 0) {
    *addr = static_cast<char*>(w.base);
    return true;
  }
  using I = __int128;
  const I last = static_cast<I>(count - 1) * t->extent();
  const I lo = std::min<I>(t->true_lb(), last + t->true_lb());
  const I hi = std::max<I>(t->true_ub(), last + t->true_ub());
  if (w.flavor == WinFlavor::Dynamic) {
    const I a = static_cast<I>(disp) + lo, b = static_cast<I>(disp) + hi;
    for (const auto& [base, bytes] : w.regions) {
      if (a >= static_cast<I>(base) && b <= static_cast<I>(base + bytes)) {
        *addr = reinterpret_cast<char*>(static_cast<uintptr_t>(disp));
        return true;
      }
    }
    *why = "bytes [" + std::to_string(static_cast<long long>(a)) + ", " + std::to_string(static_cast<long long>(b)) +
           ") are in no attached region";
    return false;
  }
  const I a = static_cast<I>(disp) + lo, b = static_cast<I>(disp) + hi;
  if (a < 0 || b > w.size) {
    *why = "bytes [" + std::to_string(static_cast<long long>(a)) + ", " + std::to_string(static_cast<long long>(b)) +
           ") are outside the window of " + std::to_string(w.size) + " bytes";
    return false;
  }
  *addr = static_cast<char*>(w.base) + disp;
  return true;
}

// Aligned scratch memory of the window (used under its mutex).
void* scratch(WindowState& w, int i, std::size_t bytes) {
  auto& v = w.scratch[i];
  if (v.size() * 8 < bytes) v.resize((bytes + 7) / 8);
  return v.data();
}

// inout (count elements of t at addr, stream bytes [first, first + n)) =
// in op inout; the old values are copied to old_out first when asked.
void combine(WindowState& w, char* addr, uint64_t count, const Datatype* t, std::size_t first, std::size_t n,
             const void* in, coll::OpKind op, Builtin e, void* old_out) {
  const Datatype* et = Datatype::builtin(e);
  const std::size_t es = et->size();
  // The operand may sit anywhere in the packet: give the kernels aligned data.
  const void* a = in;
  if (op != coll::OpKind::NoOp && reinterpret_cast<uintptr_t>(in) % 16) a = std::memcpy(scratch(w, 1, n), in, n);
  if (w.native_usable) {
    // Origins may accumulate into this memory natively at the same time:
    // the same element-wise atomics as theirs (rma/atomic_acc.hpp).
    const rma::AccTarget tgt{w.native->ctl, static_cast<char*>(w.base), false, w.native->nic_self.get()};
    rma::combine_atomic(tgt, addr, count, t, first, n, a, op, e, old_out);
    return;
  }
  // A plain run of aligned elements: combine in place.
  char* run = addr + t->true_lb() + first;
  if (t->is_contiguous() && es == static_cast<std::size_t>(et->extent()) &&
      reinterpret_cast<uintptr_t>(run) % es == 0) {
    if (old_out) std::memcpy(old_out, run, n);
    if (op == coll::OpKind::NoOp) return;
    if (op == coll::OpKind::Replace) {
      std::memcpy(run, a, n);
    } else {
      coll::apply(op, e, a, run, n / es, es);
    }
    return;
  }
  // Any other layout: pack the range, combine, unpack.
  Segment seg(addr, count, t);
  void* cur = scratch(w, 0, n);
  seg.pack(first, first + n, cur);
  if (old_out) std::memcpy(old_out, cur, n);
  if (op == coll::OpKind::NoOp) return;
  if (op == coll::OpKind::Replace) {
    seg.unpack(first, first + n, a);
    return;
  }
  coll::apply(op, e, a, cur, n / es, es);
  seg.unpack(first, first + n, cur);
}

// One aligned element of T as a single release store (false: misaligned).
template <class T>
bool store_whole(char* dst, const void* src) {
  if (reinterpret_cast<uintptr_t>(dst) % sizeof(T)) return false;
  T v;
  std::memcpy(&v, src, sizeof v);
  std::atomic_ref<T>(*reinterpret_cast<T*>(dst)).store(v, std::memory_order_release);
  return true;
}

}  // namespace

// Stores n bytes of a put at dst. One aligned element of 1, 2, 4 or 8 bytes
// lands as one atomic store (release: what the origin put before it is
// visible to whoever sees it), so a target that polls a flag in its window
// without MPI calls (the unified model) reads the old or the new value,
// never a torn one, and the agent's write is no data race with its load.
void put_bytes(char* dst, const void* src, std::size_t n) {
  switch (n) {
    case 1:
      if (store_whole<uint8_t>(dst, src)) return;
      break;
    case 2:
      if (store_whole<uint16_t>(dst, src)) return;
      break;
    case 4:
      if (store_whole<uint32_t>(dst, src)) return;
      break;
    case 8:
      if (store_whole<uint64_t>(dst, src)) return;
      break;
    default:
      break;
  }
  std::memcpy(dst, src, n);
}

namespace {

// count elements of es bytes make a stream of total bytes (the fast
// checks' form of apply_op's: a multiplication, no division).
inline bool stream_of(uint64_t count, uint64_t es, uint64_t total) {
  uint64_t n;
  return !__builtin_mul_overflow(count, es, &n) && n == total;
}

// A put of a contiguous predefined type (no description) inside a window
// with a fixed base: what apply_op decides for it, in a few tests. False
// leaves it to apply_op (which names any error).
bool plain_put(WindowState& w, const Header& h, const void* payload, std::size_t bytes) {
  if ((h.flags & rma::kUseDesc) || w.flavor == WinFlavor::Dynamic || h.elem >= kNumBuiltins) return false;
  const Datatype* t = Datatype::builtin(static_cast<Builtin>(h.elem));
  const uint64_t ts = t->size();
  const auto size = static_cast<uint64_t>(w.size);
  if (!t->is_contiguous() || t->true_lb() != 0 || ts == 0 || !stream_of(h.count, ts, h.total) || h.first > h.total ||
      h.len > h.total - h.first || bytes != h.len || h.disp > size || h.total > size - h.disp) {
    return false;
  }
  put_bytes(static_cast<char*>(w.base) + h.disp + h.first, payload, h.len);
  return true;
}

// The accumulate locks of window bytes [off, off + n) (n > 0), held while
// it lives, when origins may combine into this memory natively at the same
// time (a CPU window's stripes, taken as combine_atomic takes them for a
// run: rma/atomic_acc.hpp; bytes in one 64-byte block, the common case,
// have one); none otherwise (the window's mutex, held, excludes everyone).
class PlainStripes {
 public:
  PlainStripes(const WindowState& w, uint64_t off, std::size_t n) {
    if (!w.native_usable) return;
    if (off % 64 + n <= 64) {
      one_ = &rma::stripe_of(*w.native->ctl, off);
      rma::stripe_lock(*one_);
    } else {
      many_ = rma::StripeRange(*w.native->ctl, off, n);
      many_.lock();
    }
  }
  PlainStripes(const PlainStripes&) = delete;
  PlainStripes& operator=(const PlainStripes&) = delete;
  ~PlainStripes() {
    if (one_) {
      rma::stripe_unlock(*one_);
    } else if (many_.c) {
      many_.unlock();
    }
  }

 private:
  uint32_t* one_ = nullptr;
  rma::StripeRange many_;
};

// Whether the plain paths may apply packets to this window: any window
// with a fixed base whose memory no NIC updates (a NIC window's elements
// all go through the NIC: combine_atomic).
bool plain_window(const WindowState& w) {
  return w.flavor != WinFlavor::Dynamic && (!w.native_usable || !w.native->nic_self);
}

// An accumulate of a contiguous predefined type (no description) into a
// window with a fixed base (plain_window): what apply_op and combine decide
// for it, in a few tests, under the stripes of its bytes (PlainStripes).
// False leaves it to apply_op (which names any error).
bool plain_acc(WindowState& w, const Header& h, const void* payload, std::size_t bytes) {
  if ((h.flags & rma::kUseDesc) || !plain_window(w) || h.elem >= kNumBuiltins ||
      h.op >= static_cast<uint8_t>(coll::OpKind::NoOp)) {
    return false;
  }
  const auto e = static_cast<Builtin>(h.elem);
  const auto op = static_cast<coll::OpKind>(h.op);
  const Datatype* t = Datatype::builtin(e);
  const uint64_t es = t->size();
  const auto size = static_cast<uint64_t>(w.size);
  if (es == 0 || !t->is_contiguous() || t->true_lb() != 0 || !stream_of(h.count, es, h.total) || h.first > h.total ||
      h.len > h.total - h.first || bytes != h.len || h.first % es || h.len % es || h.disp > size ||
      h.total > size - h.disp || !coll::op_accepts(op, e)) {
    return false;
  }
  char* run = static_cast<char*>(w.base) + h.disp + h.first;
  if (reinterpret_cast<uintptr_t>(run) % es) return false;
  // The kernels want aligned operands.
  alignas(16) char small[256];
  const void* a = payload;
  if (reinterpret_cast<uintptr_t>(payload) % 16) {
    a = std::memcpy(h.len <= sizeof small ? static_cast<void*>(small) : scratch(w, 1, h.len), payload, h.len);
  }
  const PlainStripes held(w, h.disp + h.first, h.len);
  if (op == coll::OpKind::Replace) {
    put_bytes(run, a, h.len);
  } else {
    coll::apply(op, e, a, run, h.len / es, es);
  }
  return true;
}

// A get of a contiguous predefined type (no description) inside a window
// with a fixed base, one packet of reply and nothing owed to the origin
// before it: what apply_op decides for it, in a few tests; the data leaves
// straight from the window. False leaves it to apply_op (which names any
// error).
bool plain_get(WindowState& w, int o, const Header& h) {
  if ((h.flags & rma::kUseDesc) || w.flavor == WinFlavor::Dynamic || h.elem >= kNumBuiltins) return false;
  const Datatype* t = Datatype::builtin(static_cast<Builtin>(h.elem));
  const uint64_t ts = t->size();
  const auto size = static_cast<uint64_t>(w.size);
  Origin& O = w.origins[static_cast<std::size_t>(o)];
  if (!t->is_contiguous() || t->true_lb() != 0 || ts == 0 || !stream_of(h.count, ts, h.total) ||
      h.total > w.dev.max_packet_payload() || h.disp > size || h.total > size - h.disp || !O.out.empty()) {
    return false;
  }
  ++O.applied;
  Header r{};
  r.kind = Msg::GetResp;
  r.token = h.token;
  r.len = h.total;
  send(w, o, r, Payload{static_cast<char*>(w.base) + h.disp, h.total, nullptr, 0});
  return true;
}

// The largest reply plain_fetch builds on the stack.
constexpr std::size_t kPlainFetch = 256;

// A fetch_and_op, compare_and_swap or get_accumulate of a contiguous run
// of one predefined type (no description; the run of up to kPlainFetch
// bytes) inside a window with a fixed base (plain_window): what apply_op
// and combine decide for it, in a few tests, under the stripes of its
// bytes (PlainStripes; one element's include its first byte's, the one
// native::cas_element takes), answered at once from the stack. False
// leaves it to apply_op (which names any error).
bool plain_fetch(WindowState& w, int o, const Header& h, const void* payload, std::size_t bytes) {
  if ((h.flags & rma::kUseDesc) || !plain_window(w) || h.elem >= kNumBuiltins ||
      h.op > static_cast<uint8_t>(coll::OpKind::NoOp)) {
    return false;
  }
  const auto e = static_cast<Builtin>(h.elem);
  const auto op = static_cast<coll::OpKind>(h.op);
  const Datatype* t = Datatype::builtin(e);
  const uint64_t es = t->size();
  const auto size = static_cast<uint64_t>(w.size);
  if (es == 0 || h.count == 0 || h.count > kPlainFetch / es || h.total != h.count * es || h.first != 0 ||
      h.len != h.total || !t->is_contiguous() || t->true_lb() != 0 || static_cast<uint64_t>(t->extent()) != es ||
      h.disp > size || h.total > size - h.disp || !coll::op_accepts(op, e)) {
    return false;
  }
  const bool cas = h.kind == Msg::Cas;
  // Fetch_and_op and compare_and_swap: one element (the latter's compare
  // operand follows it); get_accumulate with NO_OP carries no data.
  const std::size_t want = cas ? 2 * es : (h.kind == Msg::GetAcc && op == coll::OpKind::NoOp) ? 0 : h.len;
  if (bytes != want || (h.kind != Msg::GetAcc && h.count != 1) || (cas && op != coll::OpKind::Replace)) return false;
  char* run = static_cast<char*>(w.base) + h.disp;
  const bool kernel = !cas && op != coll::OpKind::Replace && op != coll::OpKind::NoOp;
  if (kernel && reinterpret_cast<uintptr_t>(run) % es) return false;  // the kernels want aligned elements
  const auto* p = static_cast<const char*>(payload);
  alignas(16) char old[kPlainFetch], in[kPlainFetch];
  const void* a = kernel && reinterpret_cast<uintptr_t>(p) % 16 ? std::memcpy(in, p, h.len) : p;
  {
    const PlainStripes held(w, h.disp, h.len);
    std::memcpy(old, run, h.len);
    if (cas) {
      if (std::memcmp(old, p + es, es) == 0) put_bytes(run, p, es);
    } else if (op == coll::OpKind::Replace) {
      put_bytes(run, p, h.len);
    } else if (kernel) {
      coll::apply(op, e, a, run, h.count, es);
    }
  }
  ++w.origins[static_cast<std::size_t>(o)].applied;
  Header r{};
  r.kind = Msg::GetResp;
  r.token = h.token;
  r.len = h.len;
  send(w, o, r, Payload{old, h.len, nullptr, 0});  // the device copies what it cannot send now
  return true;
}

void apply_op(WindowState& w, int o, const Header& h, const void* payload, std::size_t bytes) {
  Origin& O = w.origins[static_cast<std::size_t>(o)];
  // The common cases first, each in a few tests.
  switch (h.kind) {
    case Msg::Put:
      if (!plain_put(w, h, payload, bytes)) break;
      ++O.applied;
      return;
    case Msg::Acc:
      if (!plain_acc(w, h, payload, bytes)) break;
      ++O.applied;
      return;
    case Msg::Get:
      if (plain_get(w, o, h)) return;
      break;
    case Msg::GetAcc:
    case Msg::Fop:
    case Msg::Cas:
      if (plain_fetch(w, o, h, payload, bytes)) return;
      break;
    default:
      break;
  }
  const bool get = h.kind == Msg::Get;
  if (!get) ++O.applied;  // a get counts when its data has left
  auto done_get = [&] {
    if (get) ++O.applied;
  };
  // The target datatype.
  const Datatype* t = nullptr;
  if (h.flags & rma::kUseDesc) {
    t = O.desc;
    if (!t) {
      done_get();
      return refuse(w, o, h, ErrorClass::Type, "no valid datatype description precedes it");
    }
  } else {
    if (h.elem >= kNumBuiltins) {
      done_get();
      return refuse(w, o, h, ErrorClass::Type, "predefined type id %u does not exist", h.elem);
    }
    t = Datatype::builtin(static_cast<Builtin>(h.elem));
  }
  const std::size_t tsize = t->size();
  if (tsize && h.count > (uint64_t{1} << 60) / tsize) {
    done_get();
    return refuse(w, o, h, ErrorClass::Count, "count too large");
  }
  const uint64_t total = h.count * tsize;
  if (h.total != total) {
    done_get();
    return refuse(w, o, h, ErrorClass::Type, "the stream is %llu bytes but the target type gives %llu",
                  static_cast<unsigned long long>(h.total), static_cast<unsigned long long>(total));
  }
  char* addr = nullptr;
  std::string why;
  if (!locate(w, h.disp, h.count, t, &addr, &why)) {
    done_get();
    return refuse(w, o, h, ErrorClass::RmaRange, "%s", why.c_str());
  }
  if (get) {
    // Nothing owed to it before this and one packet carries it: the data
    // leaves now, straight from the window.
    if (O.out.empty() && total <= w.dev.max_packet_payload() && t->is_contiguous()) {
      Header r{};
      r.kind = Msg::GetResp;
      r.token = h.token;
      r.len = total;
      send(w, o, r, Payload{addr + t->true_lb(), total, nullptr, 0});
      ++O.applied;
      return;
    }
    Reply r;
    r.kind = Msg::GetResp;
    if (t->is_contiguous()) {
      r.direct = addr + t->true_lb();
    } else {
      r.src = Segment(addr, h.count, t);
    }
    r.total = total;
    r.token = h.token;
    O.out.push_back(std::move(r));
    w.add_queued(1);
    pump_replies(w, o);
    if (!O.out.empty()) w.hub->poke();
    return;
  }
  // The chunk (compare_and_swap carries the compare operand after it).
  const bool carries = !(h.kind == Msg::GetAcc && h.op == static_cast<uint8_t>(coll::OpKind::NoOp));
  const std::size_t want = h.kind == Msg::Cas ? 2 * h.len : h.len;
  if (h.first > total || h.len > total - h.first || (carries && bytes != want)) {
    return refuse(w, o, h, ErrorClass::Count, "chunk [%llu, +%llu) with %zu data bytes does not fit a %llu-byte stream",
                  static_cast<unsigned long long>(h.first), static_cast<unsigned long long>(h.len), bytes,
                  static_cast<unsigned long long>(total));
  }
  if (h.kind == Msg::Put) {
    if (t->is_contiguous()) {
      put_bytes(addr + t->true_lb() + h.first, payload, h.len);
    } else {
      Segment(addr, h.count, t).unpack(h.first, h.first + h.len, payload);
    }
    return;
  }
  // Accumulate family: one predefined element type and an op it accepts.
  if (h.elem >= kNumBuiltins || h.op > static_cast<uint8_t>(coll::OpKind::NoOp)) {
    return refuse(w, o, h, ErrorClass::Op, "bad element type %u or op %u", h.elem, h.op);
  }
  const auto e = static_cast<Builtin>(h.elem);
  const auto op = static_cast<coll::OpKind>(h.op);
  Builtin te;
  if (!coll::element_type(t, &te) || te != e || !coll::op_accepts(op, e)) {
    return refuse(w, o, h, ErrorClass::Op, "%s does not apply to the target's elements", coll::Op(op).name());
  }
  const std::size_t es = Datatype::builtin(e)->size();
  if (h.first % es || h.len % es) {
    return refuse(w, o, h, ErrorClass::Count, "chunk [%llu, +%llu) splits a %zu-byte element",
                  static_cast<unsigned long long>(h.first), static_cast<unsigned long long>(h.len), es);
  }
  if (h.kind == Msg::Cas || h.kind == Msg::Fop) {
    if (h.count != 1 || (h.flags & rma::kUseDesc)) {
      return refuse(w, o, h, ErrorClass::Count, "%s takes one element of a predefined type", msg_name(h.kind));
    }
  }
  if (h.kind == Msg::Acc) {
    combine(w, addr, h.count, t, h.first, h.len, payload, op, e, nullptr);
    return;
  }
  // GetAcc, Fop, Cas: the old values go back to the origin.
  void* buf = scratch(w, 2, h.len);
  if (h.kind == Msg::Cas) {
    const auto* p = static_cast<const char*>(payload);
    if (w.native_usable) {
      alignas(16) char sw[64], cmp[64];
      std::memcpy(sw, p, es);
      std::memcpy(cmp, p + es, es);
      rma::native::cas_element(w.native->ctl, static_cast<char*>(w.base), addr + t->true_lb(), e, sw, cmp, buf,
                               w.native->nic_self.get());
    } else if (t->is_contiguous()) {
      char* at = addr + t->true_lb();  // the element's bytes (atomic under the window's lock)
      std::memcpy(buf, at, es);
      if (std::memcmp(buf, p + es, es) == 0) std::memcpy(at, p, es);
    } else {
      Segment seg(addr, 1, t);
      seg.pack(0, es, buf);
      if (std::memcmp(buf, p + es, es) == 0) seg.unpack(0, es, p);
    }
  } else {
    combine(w, addr, h.count, t, h.first, h.len, payload, op, e, buf);
  }
  Header r{};
  r.kind = Msg::GetResp;
  r.token = h.token;
  r.first = h.first;
  r.len = h.len;
  send(w, o, r, Payload{buf, h.len, nullptr, 0});
}

}  // namespace

// apply_op, or, when this rank runs out of memory applying it (scratch
// space, a queued reply), a refusal to its origin that still counts it as
// applied (as any refusal), so the origin's operation fails with
// MPI_ERR_NO_MEM instead of this process ending. A get whose reply was
// already queued counts when that reply leaves.
void apply(WindowState& w, int o, const Header& h, const void* payload, std::size_t bytes) {
  Origin& O = w.origins[static_cast<std::size_t>(o)];
  const uint64_t applied = O.applied;
  const std::size_t queued = O.out.size();
  try {
    apply_op(w, o, h, payload, bytes);
  } catch (const std::bad_alloc&) {
    if (O.applied == applied && O.out.size() == queued) ++O.applied;
    try {
      const int e = w.dev.errors().raise(ErrorClass::NoMem,
                                         "rank %d: out of memory allocating room (scratch space, a reply) to apply "
                                         "a one-sided operation from rank %d (%llu bytes at displacement %llu), "
                                         "so it was refused",
                                         w.comm.rank, o, static_cast<unsigned long long>(h.total),
                                         static_cast<unsigned long long>(h.disp));
      if (!w.deferred_error) w.deferred_error = e;
      refuse(w, o, h, ErrorClass::NoMem, "out of memory applying it");
    } catch (const std::bad_alloc&) {
      // Not even the refusal could be sent: the count above still lets the
      // origin's synchronization end.
    }
  }
}

}  // namespace adi3::emul
