// The short origin path of the emulation: a put, get, accumulate,
// get_accumulate, fetch_and_op or compare_and_swap of contiguous data of
// one predefined type (the same on every side) that fits one packet, to a
// target that takes packets now (its gate open, nothing queued or held for
// it), goes straight from the caller to one packet, without the OpArgs,
// check_op, route_op, queue item and emit layers (about 600 instructions
// of a 1 KiB put); a fetching one takes a reply record from the window's
// fixed table (rma::QuickReply), which its reply finds by index. The
// checks are the general path's in the cheap form this case allows; any
// case it does not take, every error included, goes the general way
// (rma/ops.cpp issue), which raises the error with its message.
#include <cstring>
#include <new>

#include "adi3/device.hpp"
#include "emul/emul.hpp"

namespace adi3::emul {

using rma::Gate;
using rma::Msg;
using rma::Target;
using rma::WindowState;

namespace {

// The operation's element type, bytes and byte displacement in target's
// window, when it is one the short path takes and lies inside the window
// (quick_types passed: one type on both sides, a positive count of at
// most 2^40).
// Whether bytes (> 0) at disp lie inside target's window (a rank of it);
// *off: their byte displacement.
[[gnu::always_inline]] inline bool in_window(const WindowState& w, int target, std::ptrdiff_t disp, std::size_t bytes,
                                             uint64_t* off) {
  const rma::PeerWin& pw = w.peers[static_cast<std::size_t>(target)];
  if (disp < 0 || disp > pw.size) return false;
  const auto at = static_cast<__int128>(disp) * pw.disp_unit;
  if (at + static_cast<__int128>(bytes) > pw.size) return false;
  *off = static_cast<uint64_t>(at);
  return true;
}

[[gnu::always_inline]] inline bool short_args(const WindowState& w, const void* buf, int64_t count,
                                              const Datatype* type, int target, std::ptrdiff_t disp, Builtin* b,
                                              std::size_t* bytes, uint64_t* off) {
  if (!buf || !type->builtin_id(b) || type->true_lb() != 0 || !type->is_contiguous()) return false;
  if (w.flavor == WinFlavor::Dynamic) return false;
  const auto ti = static_cast<std::size_t>(target);  // kProcNull and negatives: huge
  if (ti >= w.peers.size()) return false;
  // One packet (a predefined type is a few bytes: no overflow).
  *bytes = static_cast<std::size_t>(count) * type->size();
  if (*bytes > w.dev.port().max_packet_payload() || *bytes == 0) return false;
  return in_window(w, target, disp, *bytes, off);
}

// Under w.mu: whether an operation to t leaves now in the current epoch
// (passive with the lock granted or NOCHECK, or a fence epoch whose fence
// arrived), with nothing queued or held ahead of it.
[[gnu::always_inline]] inline bool leaves_now(const WindowState& w, const Target& t) {
  Gate gate;
  switch (w.access) {
    case WindowState::Access::Lock:
    case WindowState::Access::LockAll:
      if (!t.locked || t.lock_pending) return false;
      if (!t.lock_nocheck) gate = Gate{Gate::Lock, t.lock_epoch};
      break;
    case WindowState::Access::Fence:
      if (w.fence_lazy) gate = Gate{Gate::Fence, w.fence_no};
      break;
    default:
      return false;
  }
  return t.q.empty() && !t.hold && rma::gate_open(t, gate);
}

// Sends the packet of the operation, as emit_op fills it for one chunk
// (and emul::send addresses it); records a failure as the window's error.
// len: the chunk's bytes (the payload's unless it carries none or, for
// compare_and_swap, a compare operand too).
[[gnu::always_inline]] inline int send_op(WindowState& w, int target, Msg kind, Builtin b, uint64_t off, int64_t count,
                                          std::size_t bytes, uint64_t token, const Payload& p, uint8_t flags = 0,
                                          coll::OpKind op = coll::OpKind::Replace, std::size_t len = ~std::size_t{0}) {
  if (w.targets[static_cast<std::size_t>(target)].batch_len) send_batch(w, target);  // it goes first
  const rma::PeerWin& pw = w.peers[static_cast<std::size_t>(target)];
  rma::Header h{};
  h.id = pw.pkt;
  h.win = pw.win;
  h.gen = pw.gen;
  h.kind = kind;
  h.op = static_cast<uint8_t>(op);
  h.elem = static_cast<uint8_t>(b);
  h.disp = off;
  h.count = static_cast<uint64_t>(count);
  h.total = bytes;
  h.token = token;
  h.flags = flags;
  h.len = len == ~std::size_t{0} ? p.bytes : len;
  // A short header the receiver rebuilds this one from (rma/protocol.hpp):
  // the chunk is the whole stream of count elements of b. Its data is that
  // stream (put, accumulate, fetch_and_op), or it carries none and says the
  // stream is count elements (get, get_accumulate NO_OP), or it is one
  // element with two operands (compare_and_swap: 32 bytes of header, so 8
  // bytes of each fit one cache line with the ring's record head).
  std::size_t hb = sizeof h;
  if (h.len == bytes) {
    if (p.bytes == bytes) {
      hb = rma::kShortHeader;
    } else if (p.bytes == 0) {
      hb = rma::kShortHeader;
      h.flags |= rma::kCounted;
    } else if (count == 1) {
      hb = rma::kOneHeader;
    }
  }
  return w.dev.port().send_packet(pw.peer, &h, hb, p);
}

// Under w.mu: a free reply record for len bytes landing at dst, from
// target; its token, or 0 when every record is taken (the general path
// then makes one).
[[gnu::always_inline]] inline uint64_t take_quick(WindowState& w, int target, char* dst, std::size_t len) {
  static_assert(rma::kQuickSlots == 64, "quick_free is one 64-bit word");
  if (!w.quick_free) return 0;
  const auto i = static_cast<unsigned>(__builtin_ctzll(w.quick_free));
  w.quick_free &= w.quick_free - 1;
  rma::QuickReply& q = w.quick[i];
  q.token = rma::kQuickToken | (++w.quick_seq * rma::kQuickSlots) | i;
  q.dst = dst;
  q.len = len;
  q.target = target;
  return q.token;
}

// Under w.mu: the reply record of an operation that fetches into dst,
// when it may leave now (its token), else 0 (the general path runs). Its
// reply also says the target applied what came before it.
[[gnu::always_inline]] inline uint64_t open_reply(WindowState& w, Target& t, int target, void* dst, std::size_t len) {
  if (!leaves_now(w, t)) return 0;
  const uint64_t token = take_quick(w, target, static_cast<char*>(dst), len);
  if (!token) return 0;
  ++t.replies;
  t.tail_fetch = !t.rndv_put;  // (a put's message may land after this reply)
  return token;
}

// The operation left: counted as push, emit and emulate count it.
[[gnu::always_inline]] inline void count_sent(WindowState& w, Target& t, int code) {
  if (code && !w.deferred_error) w.deferred_error = code;
  if (w.access == WindowState::Access::Fence) ++w.fence_ops;
  ++t.queued_ops;
  ++t.sent_ops;
  ++w.emulated_ops;
  t.emul_inflight = true;
}

// The packet of a get_accumulate, fetch_and_op or compare_and_swap whose
// arguments passed (count elements of b, es bytes each, bytes in all at
// byte displacement off; op Replace for compare_and_swap), with its reply
// record, when it may leave now.
[[gnu::always_inline]] inline bool fetch_send(WindowState& w, Msg kind, Builtin b, std::size_t es, uint64_t off,
                                              int64_t count, std::size_t bytes, const void* origin, const void* compare,
                                              void* result, int target, coll::OpKind op) {
  // The packet's data: the origin operand (fetch_and_op: one element, also
  // with NO_OP), compare_and_swap's compare operand after it; a
  // get_accumulate with NO_OP carries none.
  const bool no_op = op == coll::OpKind::NoOp;
  alignas(16) char pair[64];
  Payload p{origin, bytes, nullptr, 0};
  if (kind == Msg::Cas) {
    std::memcpy(pair, origin, es);
    std::memcpy(pair + es, compare, es);
    p = Payload{pair, 2 * es, nullptr, 0};
  } else if (no_op) {
    p = kind == Msg::Fop ? Payload{std::memset(pair, 0, es), es, nullptr, 0} : Payload{};
  }
  std::lock_guard g(w.mu);
  Target& t = w.targets[static_cast<std::size_t>(target)];
  const uint64_t token = open_reply(w, t, target, result, bytes);
  if (!token) return false;
  const int e = send_op(w, target, kind, b, off, count, bytes, token, p, 0, op, bytes);
  count_sent(w, t, e);
  return true;
}

}  // namespace

bool quick_put_now(WindowState& w, const void* origin, int64_t count, const Datatype* type, int target,
                   std::ptrdiff_t disp) {
  Builtin b;
  std::size_t bytes = 0;
  uint64_t off = 0;
  if (!short_args(w, origin, count, type, target, disp, &b, &bytes, &off)) return false;
  std::lock_guard g(w.mu);
  Target& t = w.targets[static_cast<std::size_t>(target)];
  if (!leaves_now(w, t)) return false;
  const bool passive = w.access == WindowState::Access::Lock || w.access == WindowState::Access::LockAll;
  if (t.flush_each_op && passive) {
    // Flushed after each operation lately: the put leaves now asking for
    // the Ack of the flush behind it, which then sends nothing (as
    // emul/origin.cpp push and ask_ack do it).
    t.tail_fetch = false;
    count_sent(w, t, 0);
    t.spec_seq = ++t.sync_seq;
    t.spec_ops = t.queued_ops;
    const int e = send_op(w, target, Msg::Put, b, off, count, bytes, t.spec_seq, Payload{origin, bytes, nullptr, 0},
                          rma::kAckAfter);
    if (e && !w.deferred_error) w.deferred_error = e;
    return true;
  }
  // A small put otherwise waits for the flush or unlock behind it (held,
  // emul/origin.cpp): the general path.
  if (t.flush_each_op || bytes <= sizeof(rma::Item::inline_data)) return false;
  t.tail_fetch = false;
  // In a passive epoch a flush or unlock ends it: coalesced with the puts
  // around it (emul/batch.cpp).
  if (passive && batch_put(w, target, b, off, origin, bytes)) {
    count_sent(w, t, 0);
    return true;
  }
  const int e = send_op(w, target, Msg::Put, b, off, count, bytes, 0, Payload{origin, bytes, nullptr, 0});
  count_sent(w, t, e);
  return true;
}

bool quick_acc_now(WindowState& w, const void* origin, int64_t count, const Datatype* type, int target,
                   std::ptrdiff_t disp, coll::OpKind op) {
  Builtin b;
  std::size_t bytes = 0;
  uint64_t off = 0;
  if (!short_args(w, origin, count, type, target, disp, &b, &bytes, &off) || !coll::op_accepts(op, b)) return false;
  std::lock_guard g(w.mu);
  Target& t = w.targets[static_cast<std::size_t>(target)];
  if (!leaves_now(w, t)) return false;
  const bool passive = w.access == WindowState::Access::Lock || w.access == WindowState::Access::LockAll;
  uint8_t flags = 0;
  uint64_t token = 0;
  if (passive && !t.flush_each_op) {
    // Coalesced with the puts, gets and accumulates around it until the
    // flush or unlock that ends them (emul/batch.cpp).
    if (!batch_acc(w, target, b, op, off, origin, bytes)) return false;
    t.tail_fetch = false;
    count_sent(w, t, 0);
    return true;
  }
  t.tail_fetch = false;
  count_sent(w, t, 0);
  if (passive) {
    // Leaves now asking for the Ack of the flush behind it (as quick_put).
    t.spec_seq = ++t.sync_seq;
    t.spec_ops = t.queued_ops;
    flags = rma::kAckAfter;
    token = t.spec_seq;
  }
  const int e =
      send_op(w, target, Msg::Acc, b, off, count, bytes, token, Payload{origin, bytes, nullptr, 0}, flags, op);
  if (e && !w.deferred_error) w.deferred_error = e;
  return true;
}

bool quick_get_now(WindowState& w, void* result, int64_t count, const Datatype* type, int target, std::ptrdiff_t disp) {
  Builtin b;
  std::size_t bytes = 0;
  uint64_t off = 0;
  if (!short_args(w, result, count, type, target, disp, &b, &bytes, &off)) return false;
  std::lock_guard g(w.mu);
  Target& t = w.targets[static_cast<std::size_t>(target)];
  // A reply record from the window's table (the general path makes one).
  const uint64_t token = open_reply(w, t, target, result, bytes);
  if (!token) return false;
  // The first get since the target's last flush or unlock leaves now (its
  // round trip starts at once: lock/get/unlock and get/flush stay as fast
  // as unbatched); the ones behind it are batched.
  const bool passive = w.access == WindowState::Access::Lock || w.access == WindowState::Access::LockAll;
  if (passive && t.queued_ops != t.flushed_ops && batch_get(w, target, b, off, bytes, token)) {
    count_sent(w, t, 0);
    return true;
  }
  const int e = send_op(w, target, Msg::Get, b, off, count, bytes, token, Payload{}, 0, coll::OpKind::Replace, bytes);
  count_sent(w, t, e);
  return true;
}

bool quick_fetch_now(WindowState& w, Msg kind, const void* origin, const void* compare, void* result, int64_t count,
                     const Datatype* type, int target, std::ptrdiff_t disp, coll::OpKind op) {
  Builtin b;
  std::size_t bytes = 0;
  uint64_t off = 0;
  if (!short_args(w, result, count, type, target, disp, &b, &bytes, &off)) return false;
  const std::size_t es = type->size();
  if (static_cast<std::size_t>(type->extent()) != es) return false;  // padded pairs: the general path
  // What check_op requires of each (it names what is wrong otherwise).
  const bool no_op = op == coll::OpKind::NoOp;
  if (kind == Msg::Cas) {
    const coll::TypeClass c = coll::type_class(b);
    if (c != coll::TypeClass::CInteger && c != coll::TypeClass::Logical && c != coll::TypeClass::Byte &&
        c != coll::TypeClass::MultiLanguage) {
      return false;
    }
    if (!origin || !compare) return false;
    op = coll::OpKind::Replace;
  } else if (op > coll::OpKind::NoOp || !coll::op_accepts(op, b) || (!origin && !no_op)) {
    return false;
  }
  return fetch_send(w, kind, b, es, off, count, bytes, origin, compare, result, target, op);
}

bool quick_fetch_known(WindowState& w, Msg kind, const void* origin, const void* compare, void* result, Builtin b,
                       std::size_t es, int target, std::ptrdiff_t disp, coll::OpKind op) {
  uint64_t off = 0;
  if (!in_window(w, target, disp, es, &off)) return false;
  return fetch_send(w, kind, b, es, off, 1, es, origin, compare, result, target,
                    kind == Msg::Cas ? coll::OpKind::Replace : op);
}

}  // namespace adi3::emul
