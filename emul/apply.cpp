// The target side of the emulations, applying operations: a put,
// accumulate, get, get_accumulate, fetch_and_op or compare_and_swap is
// checked against the window before a byte is written or read (datatype,
// sizes, the byte range against the window or the attached regions,
// element types and op), then applied under the window's mutex, which
// makes accumulates atomic per element with respect to each other. A
// refused operation changes nothing, is logged here and reported to its
// origin, and still counts as applied so that the origin's synchronization
// completes. The common contiguous cases take emul/plain.cpp's few tests
// first. (Synchronization packets and replies: emul/target.cpp.)
#include <algorithm>
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

}  // namespace

bool target_of(WindowState& w, int o, const Header& h, const Datatype** type, char** addr) {
  const Origin& O = w.origins[static_cast<std::size_t>(o)];
  const Datatype* t = nullptr;
  if (h.flags & rma::kUseDesc) {
    t = O.desc;
    if (!t) {
      refuse(w, o, h, ErrorClass::Type, "no valid datatype description precedes it");
      return false;
    }
  } else {
    if (h.elem >= kNumBuiltins) {
      refuse(w, o, h, ErrorClass::Type, "predefined type id %u does not exist", h.elem);
      return false;
    }
    t = Datatype::builtin(static_cast<Builtin>(h.elem));
  }
  const std::size_t tsize = t->size();
  if (tsize && h.count > (uint64_t{1} << 60) / tsize) {
    refuse(w, o, h, ErrorClass::Count, "count too large");
    return false;
  }
  const uint64_t total = h.count * tsize;
  if (h.total != total) {
    refuse(w, o, h, ErrorClass::Type, "the stream is %llu bytes but the target type gives %llu",
           static_cast<unsigned long long>(h.total), static_cast<unsigned long long>(total));
    return false;
  }
  std::string why;
  if (!locate(w, h.disp, h.count, t, addr, &why)) {
    refuse(w, o, h, ErrorClass::RmaRange, "%s", why.c_str());
    return false;
  }
  *type = t;
  return true;
}

namespace {

void apply_op(WindowState& w, int o, const Header& h, const void* payload, std::size_t bytes) {
  Origin& O = w.origins[static_cast<std::size_t>(o)];
  const bool get = h.kind == Msg::Get;
  if (!get) ++O.applied;  // a get counts when its data has left
  const Datatype* t = nullptr;
  char* addr = nullptr;
  if (!target_of(w, o, h, &t, &addr)) {
    if (get) ++O.applied;
    return;
  }
  const uint64_t total = h.total;
  if (get) {
    // Nothing owed to it before this and one packet carries it: the data
    // leaves now, straight from the window.
    if (O.out.empty() && total <= w.dev.port().max_packet_payload() && t->is_contiguous()) {
      Header r{};
      r.kind = Msg::GetResp;
      r.token = h.token;
      r.len = total;
      send_reply(w, o, r, Payload{addr + t->true_lb(), total, nullptr, 0});
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
  send_reply(w, o, r, Payload{buf, h.len, nullptr, 0});
}

}  // namespace

// apply_op, or, when this rank runs out of memory applying it (scratch
// space, a queued reply), a refusal to its origin that still counts it as
// applied (as any refusal), so the origin's operation fails with
// MPI_ERR_NO_MEM instead of this process ending. A get whose reply was
// already queued counts when that reply leaves.
void apply(WindowState& w, int o, const Header& h, const void* payload, std::size_t bytes) {
  if (apply_plain(w, o, h, payload, bytes)) return;  // the common cases, in a few tests (allocates nothing)
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
