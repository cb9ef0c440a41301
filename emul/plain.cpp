// The target side of the emulations, the short ways to apply an
// operation: a put, accumulate, get or fetching operation (get_accumulate,
// fetch_and_op, compare_and_swap) of a contiguous run of one predefined
// type inside a window with a fixed base, as apply_op (emul/apply.cpp)
// would apply it, decided in a few tests and answered straight from the
// window or the stack. Anything else (and every error, which apply_op
// names) goes the general way. Nothing here allocates.
#include <atomic>
#include <cstring>

#include "adi3/device.hpp"
#include "coll/op.hpp"
#include "emul/emul.hpp"
#include "emul/one_element.hpp"
#include "rma/atomic_acc.hpp"
#include "rma/native.hpp"

namespace adi3::emul {

using rma::Header;
using rma::Msg;
using rma::Origin;
using rma::WindowState;

namespace {

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
  const bool whole = (n == 1 && store_whole<uint8_t>(dst, src)) || (n == 2 && store_whole<uint16_t>(dst, src)) ||
                     (n == 4 && store_whole<uint32_t>(dst, src)) || (n == 8 && store_whole<uint64_t>(dst, src));
  if (!whole) std::memcpy(dst, src, n);
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

// The element type of an accumulate-family packet the plain paths may
// take: no description, a plain window, a predefined contiguous type of
// some bytes and an op that takes it (NO_OP only when fetching); else null.
const Datatype* plain_elem(const WindowState& w, const Header& h, bool fetching) {
  const auto last = static_cast<uint8_t>(fetching ? coll::OpKind::NoOp : coll::OpKind::Replace);
  if ((h.flags & rma::kUseDesc) || !plain_window(w) || h.elem >= kNumBuiltins || h.op > last) return nullptr;
  const auto e = static_cast<Builtin>(h.elem);
  const Datatype* t = Datatype::builtin(e);
  if (t->size() == 0 || !t->is_contiguous() || t->true_lb() != 0) return nullptr;
  const auto op = static_cast<coll::OpKind>(h.op);
  return one_accepts(one_type(e), op) || coll::op_accepts(op, e) ? t : nullptr;
}

// An accumulate of a contiguous predefined type (no description) into a
// window with a fixed base (plain_window): what apply_op and combine decide
// for it, in a few tests, under the stripes of its bytes (PlainStripes).
// False leaves it to apply_op (which names any error).
bool plain_acc(WindowState& w, const Header& h, const void* payload, std::size_t bytes) {
  const Datatype* t = plain_elem(w, h, false);
  if (!t) return false;
  const auto e = static_cast<Builtin>(h.elem);
  const auto op = static_cast<coll::OpKind>(h.op);
  const uint64_t es = t->size();
  const auto size = static_cast<uint64_t>(w.size);
  if (!stream_of(h.count, es, h.total) || h.first > h.total || h.len > h.total - h.first || bytes != h.len ||
      h.first % es || h.len % es || h.disp > size || h.total > size - h.disp) {
    return false;
  }
  char* run = static_cast<char*>(w.base) + h.disp + h.first;
  if (reinterpret_cast<uintptr_t>(run) % es) return false;
  const OneType one = h.len == es && op != coll::OpKind::Replace ? one_type(e) : OneType::None;
  if (one != OneType::None) {
    const PlainStripes held(w, h.disp + h.first, h.len);
    one_apply(one, op, payload, run);
    return true;
  }
  // The kernels want aligned operands.
  alignas(16) char small[256];
  const void* a = payload;
  if (reinterpret_cast<uintptr_t>(payload) % 16) {
    if (h.len > sizeof small) return false;  // (apply_op's copy may allocate: it catches bad_alloc)
    a = std::memcpy(small, payload, h.len);
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
      h.total > w.dev.port().max_packet_payload() || h.disp > size || h.total > size - h.disp || !O.out.empty()) {
    return false;
  }
  ++O.applied;
  Header r{};
  r.kind = Msg::GetResp;
  r.token = h.token;
  r.len = h.total;
  send_reply(w, o, r, Payload{static_cast<char*>(w.base) + h.disp, h.total, nullptr, 0});
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
  const Datatype* t = plain_elem(w, h, true);
  if (!t) return false;
  const uint64_t es = t->size();
  const auto size = static_cast<uint64_t>(w.size);
  if (h.count == 0 || h.count > kPlainFetch / es || h.total != h.count * es || h.first != 0 || h.len != h.total ||
      static_cast<uint64_t>(t->extent()) != es || h.disp > size || h.total > size - h.disp) {
    return false;
  }
  const auto e = static_cast<Builtin>(h.elem);
  const auto op = static_cast<coll::OpKind>(h.op);
  const bool cas = h.kind == Msg::Cas;
  // Fetch_and_op and compare_and_swap: one element (the latter's compare
  // operand follows it); get_accumulate with NO_OP carries no data.
  const std::size_t want = cas ? 2 * es : (h.kind == Msg::GetAcc && op == coll::OpKind::NoOp) ? 0 : h.len;
  if (bytes != want || (h.kind != Msg::GetAcc && h.count != 1) || (cas && op != coll::OpKind::Replace)) return false;
  char* run = static_cast<char*>(w.base) + h.disp;
  const bool kernel = !cas && op != coll::OpKind::Replace && op != coll::OpKind::NoOp;
  if (kernel && reinterpret_cast<uintptr_t>(run) % es) return false;  // the kernels want aligned elements
  const OneType one = kernel && h.count == 1 ? one_type(e) : OneType::None;
  const auto* p = static_cast<const char*>(payload);
  alignas(16) char old[kPlainFetch], in[kPlainFetch];
  const void* a = kernel && one == OneType::None && reinterpret_cast<uintptr_t>(p) % 16 ? std::memcpy(in, p, h.len) : p;
  {
    const PlainStripes held(w, h.disp, h.len);
    std::memcpy(old, run, h.len);
    if (cas) {
      if (std::memcmp(old, p + es, es) == 0) put_bytes(run, p, es);
    } else if (op == coll::OpKind::Replace) {
      put_bytes(run, p, h.len);
    } else if (one != OneType::None) {
      one_apply(one, op, p, run);
    } else if (kernel) {
      coll::apply(op, e, a, run, h.count, es);
    }
  }
  ++w.origins[static_cast<std::size_t>(o)].applied;
  Header r{};
  r.kind = Msg::GetResp;
  r.token = h.token;
  r.len = h.len;
  send_reply(w, o, r, Payload{old, h.len, nullptr, 0});  // the device copies what it cannot send now
  return true;
}

}  // namespace

bool apply_plain(WindowState& w, int o, const Header& h, const void* payload, std::size_t bytes) {
  if (static_cast<std::size_t>(o) >= w.origins.size()) return false;
  switch (h.kind) {
    case Msg::Put:
      if (!plain_put(w, h, payload, bytes)) return false;
      ++w.origins[static_cast<std::size_t>(o)].applied;
      return true;
    case Msg::Acc:
      if (!plain_acc(w, h, payload, bytes)) return false;
      ++w.origins[static_cast<std::size_t>(o)].applied;
      return true;
    case Msg::Get:
      return plain_get(w, o, h);
    case Msg::GetAcc:
    case Msg::Fop:
    case Msg::Cas:
      return plain_fetch(w, o, h, payload, bytes);
    default:
      return false;
  }
}

}  // namespace adi3::emul
