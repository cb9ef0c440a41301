#include "rma/cma_atomic.hpp"

#include <cerrno>
#include <cstring>
#include <mutex>

#include "adi3/device.hpp"
#include "rma/native.hpp"
#include "rma/native_fast.hpp"
#include "rma/window_state.hpp"

namespace adi3::rma::native {

int cma_atomic(WindowState& w, const void* origin, const void* compare, void* result, const Datatype* t, int target,
               std::ptrdiff_t disp, coll::OpKind op) {
  const bool cas = compare != nullptr;
  const FastElem e = fast_elem_of(t);  // a predefined type of 4 or 8 bytes, no padding
  if (!result || !e.size) return -1;
  FastOp f = FastOp::None;
  if (cas) {
    if (!origin || !e.cas) return -1;
  } else {
    f = fast_op(op, e);
    if (f == FastOp::None || (f != FastOp::Read && !origin)) return -1;
  }
  std::lock_guard g(w.mu);
  // What check_op and route_op would find for this case, in their order of
  // cost; anything else (errors included) is theirs to say.
  if (!w.native_usable || w.native->nic || w.flavor == WinFlavor::Dynamic) return -1;
  NativeWin& nw = *w.native;
  const auto r = static_cast<std::size_t>(target);  // kProcNull and negatives: huge
  if (r >= nw.peers.size() || r >= w.targets.size()) return -1;
  NativePeer& p = nw.peers[r];
  const Target& tg = w.targets[r];
  if (p.mem || !p.mem_r || !p.ctl || !nw.cma_acc || tg.emul_inflight) return -1;
  if ((p.mem_r->ops & (kOsGet | kOsPut)) != (kOsGet | kOsPut)) return -1;
  const Msg kind = cas ? Msg::Cas : Msg::Fop;
  if (w.info.emulate_ops & (1u << static_cast<unsigned>(kind))) return -1;
  switch (w.access) {
    case WindowState::Access::Lock:
    case WindowState::Access::LockAll:
      // A native lock (taken as a nocheck one: no grant to wait for).
      if (!nw.passive || !tg.locked || !tg.lock_nocheck) return -1;
      break;
    case WindowState::Access::Fence:
      if (w.fence_lazy || !nw.fast_fence) return -1;
      break;
    default:
      return -1;
  }
  const PeerWin& pw = w.peers[r];
  const std::size_t es = e.size;
  uint64_t off;
  if (disp < 0 || __builtin_mul_overflow(static_cast<uint64_t>(disp), static_cast<uint64_t>(pw.disp_unit), &off) ||
      off > static_cast<uint64_t>(pw.size) || es > static_cast<uint64_t>(pw.size) - off) {
    return -1;
  }
  // From here on it is the native path's operation (native::run's part).
  w.before_load();
  w.stored();
  ++w.native_ops;
  if (w.access == WindowState::Access::Fence) ++w.fence_ops;
  OneSided& os = nw.os;
  const bool excl = nw.held[r] == 2;
  // The stripe of the element's first byte, as cas_element and the fast
  // path take it; every run containing the element holds it too.
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
    }
    if (!excl) stripe_unlock(stripe);
    if (rc == 0) std::memcpy(result, &cur, sizeof cur);
  };
  by_word(es, apply);
  if (rc) {
    return w.dev.errors().raise(ErrorClass::Other, "%s to rank %d: the one-sided read-modify-write failed: %s",
                                cas ? "Compare_and_swap" : "Fetch_and_op", target, std::strerror(errno));
  }
  return 0;
}

}  // namespace adi3::rma::native
