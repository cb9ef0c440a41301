// Routing of RMA traffic: native where the channel and window allow it,
// else the emulations; every answer says why.
#include "rma/route.hpp"

#include <algorithm>

#include "adi3/device.hpp"
#include "rma/check.hpp"
#include "rma/native.hpp"
#include "rma/window_state.hpp"

namespace adi3::rma {
namespace {

// On a dynamic window the target address may lie in a region mapped here
// (MPI_Alloc_mem memory), which loads and stores reach at memory speed:
// only operations up to this size go as packets there.
constexpr std::size_t kDynamicPacketsUpTo = 8 * 1024;

bool passive_epoch(const WindowState& w) {
  return w.access == WindowState::Access::Lock || w.access == WindowState::Access::LockAll;
}

// Whether an operation to target (its channel rank peer), reached by
// cross-memory attach, goes as a packet: the channel's verdict that it
// polls, unless its answers came late lately (answered). The clock is read
// only after a late answer.
bool polling(const WindowState& w, int target, int peer) {
  const int64_t until = w.targets[static_cast<std::size_t>(target)].cma_until_ns.load(std::memory_order_relaxed);
  if (until != 0 && steady_ns() < until) return false;
  return w.native->os.attentive(peer);
}

}  // namespace

bool queue_lock_native(const WindowState& w, int target) {
  // A NIC window is native for passive target throughout or not at all;
  // ADI3_FORCE_EMULATION=passive keeps this rank's operations in the queue.
  return native::reaches(w, target) && !w.native->passive && !w.native->nic && !w.dev.config().forced(kPassiveRma);
}

Route route_op(const WindowState& w, const OpArgs& a, const Checked& c, const Gate& gate) {
  if (!w.native_usable) return {Path::Emulated, "the window is not in memory the channel reaches one-sidedly"};
  if (!native::reaches(w, a.target))
    return {Path::Emulated, "the target is on another host: the channel does not reach its memory"};
  if (passive_epoch(w)) {
    if (!w.native->passive && !queue_lock_native(w, a.target))
      return {Path::Emulated, "passive target is emulated on this window"};
  } else if (w.dev.config().forced(kActiveRma)) {
    return {Path::Emulated, "active target is forced to the emulation (ADI3_FORCE_EMULATION)"};
  }
  if (w.info.emulate_ops & (1u << static_cast<unsigned>(a.kind))) {
    return {Path::Emulated, "adi3_emulate_ops forces this operation to the emulation"};
  }
  const Target& t = w.targets[static_cast<std::size_t>(a.target)];
  if (t.emul_inflight)
    return {Path::Emulated, "emulated operations to this target are in flight: it stays behind them"};
  // Under an emulated lock the operations follow the grant through the
  // queue; granted (Win_lock waited for it: queue_lock_native) with nothing
  // queued ahead, they move the memory natively. The lock stays the queue's
  // until our Unlock packet, which leaves after them. Accumulates stay
  // atomic with the remote origins' the target applies: both take the same
  // element-wise atomics (emul/apply.cpp combine, rma/atomic_acc.hpp).
  if (gate.kind == Gate::Lock ? t.lock_pending || !gate_open(t, gate) || !t.q.empty() : !gate_open(t, gate))
    return {Path::Emulated, "the target's post, fence or lock grant has not arrived: it waits in the queue"};
  const bool contiguous = !c.derived || a.ttype->is_contiguous();
  if (w.native->nic ? !native::nic_can(w, a, c) : !native::can(w, a.kind, a.target, contiguous)) {
    return {Path::Emulated, "the target's region does not take this operation natively"};
  }
  // A put over many short runs of a NIC window: the target unpacks one
  // packet faster than the NIC takes a request per run, when it serves
  // packets anyway (between its post and wait, or its agent), and when the
  // synchronization that ends the epoch waits until it is applied (wait,
  // or the unlock's acknowledgment). Not under fence: a rank leaves the
  // fence once every rank entered it, so another rank's RDMA get of the
  // next epoch could read the target before it applied the packet.
  if (w.native->nic &&
      native::nic_fragmented_put(
          w, a, c, w.access == WindowState::Access::Pscw || (passive_epoch(w) && passive_needs_agent(w)))) {
    return {Path::Emulated,
            "a put over many short target runs: one packet beats a request per run "
            "(ADI3_VERBS_PUT_MIN_RUN)"};
  }
  if (w.flavor == WinFlavor::Dynamic && !native::dyn_native(w, a, c)) {
    return {Path::Emulated, "the target attached this memory beyond its table, or the channel cannot reach it"};
  }
  // Memory reached by cross-memory attach costs a system call per copy
  // (two for an accumulate), and the kernel copies at 4-6 GB/s here: while
  // the target polls inside the library, an operation of any size is
  // served sooner as a packet (a 64 KiB put or get streams through the
  // ring at 20-60 GB/s, both ranks copying at once). A target that
  // computes or sleeps gets the one-sided path, which needs nobody. A get
  // from the size the channel moves messages by one-sided get
  // (ADI3_SHM_CMA_MIN) takes cross-memory attach even from a polling
  // target: the kernel copies it at a steady 10-12 GB/s, where the reply
  // through the ring ran at 23 or 5.6 GB/s by the host's cache state
  // (get_bw_flush_create 1 MiB flipped between launches).
  // Accumulates stay atomic either way (both paths take the target's
  // stripes, cma_acc), and later operations stay behind an emulated one
  // (emul_inflight).
  if (!w.native->nic) {
    const NativePeer& p = w.native->peers[static_cast<std::size_t>(a.target)];
    const RemoteRegion* r = p.mem_r ? p.mem_r : p.dyn ? p.ctl_r : nullptr;
    if (!p.mem && r && (p.mem_r || c.bytes <= kDynamicPacketsUpTo) &&
        !(a.kind == Msg::Get && c.bytes >= w.dev.caps_of(r->peer).get_min) &&
        (a.polls >= 0 ? a.polls == 1 : polling(w, a.target, r->peer))) {
      return {Path::Emulated, "the target polls inside the library: a packet beats cross-memory attach"};
    }
  }
  return {Path::Native, "the target's memory is reached one-sidedly"};
}

int8_t polls_now(const WindowState& w, int target) {
  if (!w.native_usable || w.native->nic || w.flavor == WinFlavor::Dynamic) return -1;
  const auto t = static_cast<std::size_t>(target);  // kProcNull and negatives: huge
  if (t >= w.native->peers.size()) return -1;
  const NativePeer& p = w.native->peers[t];
  if (p.mem || !p.mem_r) return -1;
  return polling(w, target, p.mem_r->peer) ? 1 : 0;
}

void answered(Target& t, int64_t waited_ns) {
  if (waited_ns < kLateNs) {
    if (t.cma_for_ns != 0) {
      t.cma_for_ns = 0;
      t.cma_until_ns.store(0, std::memory_order_relaxed);
    }
    return;
  }
  t.cma_for_ns = std::min(std::max(2 * t.cma_for_ns, waited_ns), kCmaForMaxNs);
  t.cma_until_ns.store(steady_ns() + t.cma_for_ns, std::memory_order_relaxed);
}

Route route_active(const WindowState& w) {
  if (w.native_active()) return {Path::Native, "the counters of the window's control blocks"};
  if (w.dev.config().forced(kActiveRma)) {
    return {Path::Emulated, "active target is forced to the emulation (ADI3_FORCE_EMULATION)"};
  }
  return {Path::Emulated, "synchronization packets (the window is not in memory every rank reaches one-sidedly)"};
}

Route route_passive(const WindowState& w) {
  if (w.native_usable && w.native->passive) return {Path::Native, "the lock words of the window's control blocks"};
  if (w.native_usable && w.native->partial) {
    return {Path::Emulated, "some ranks of the window are on other hosts: every lock goes through the target's queue"};
  }
  if (!w.dev.native(kPassiveRma)) {
    return {Path::Emulated, "the channel does not do passive target natively (or emulation is forced)"};
  }
  return {Path::Emulated, "the window is not in memory every rank reaches one-sidedly"};
}

bool passive_needs_agent(const WindowState& w) {
  if (route_passive(w).path == Path::Emulated) return true;
  // Operations some rank forces to the emulation are packets, even under a
  // native lock; so are operations to memory some rank does not map (a
  // window from create reached by cross-memory attach) while its owner
  // polls (route_op), in both directions.
  if (w.native->others_emulate) return true;
  // A NIC window takes every operation natively (rma/native_nic.cpp): no
  // packet reaches the target in a passive epoch, so no agent. (It maps
  // nothing, so cma_acc is set, but its accumulates all take the NIC.)
  if (w.native->nic) {
    for (const NativePeer& p : w.native->peers) {
      if (!p.mem_r || !p.ctl_r) return true;
    }
    return false;
  }
  if (w.native->cma_acc) return true;
  for (const NativePeer& p : w.native->peers) {
    if (!p.mem) return true;
  }
  return false;
}

}  // namespace adi3::rma
