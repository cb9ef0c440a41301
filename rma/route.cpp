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

// A put or get of at least this many bytes to memory reached by
// cross-memory attach takes it even while the target polls (bulk_by_cma).
// Measured (bench/rma, 16 per flush, target polling in MPI_Barrier, quiet
// host): as packets through the ring 64 KiB puts ran at 7.9 GB/s and 1 MiB
// at 8.3 (two copies, the target's among them), gets of 64 KiB at 7.7; by
// cross-memory attach (Open MPI's path) 13-15 GB/s, and gets of 1 MiB at
// 19.7. On a loaded host the packets waited for the target's time slice
// (1-16 GB/s across launches at 16 KiB-1 MiB, some under 0.1) where the
// system call needs nobody. Below it the call's fixed cost (about 0.5 us)
// loses to a packet while the target polls (1 KiB: 3.4 GB/s as packets,
// 1.2 by Open MPI's system call).
constexpr uint64_t kCmaBulkMin = 16 * 1024;

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
  // (two for an accumulate): while the target polls inside the library, a
  // small operation is served sooner as a packet. A target that computes
  // or sleeps gets the one-sided path, which needs nobody, and so does a
  // put or get from kCmaBulkMin up whatever the target does (one kernel
  // copy beats two through the ring).
  // Accumulates stay atomic either way (both paths take the target's
  // stripes, cma_acc), and later operations stay behind an emulated one
  // (emul_inflight).
  if (!w.native->nic) {
    const NativePeer& p = w.native->peers[static_cast<std::size_t>(a.target)];
    const RemoteRegion* r = p.mem_r ? p.mem_r : p.dyn ? p.ctl_r : nullptr;
    if (!p.mem && r && (p.mem_r || c.bytes <= kDynamicPacketsUpTo) && !bulk_by_cma(a.kind, c.bytes) &&
        (a.polls >= 0 ? a.polls == 1 : polling(w, a.target, r->peer))) {
      return {Path::Emulated, "the target polls inside the library: a packet beats cross-memory attach"};
    }
  }
  return {Path::Native, "the target's memory is reached one-sidedly"};
}

bool bulk_by_cma(Msg kind, uint64_t bytes) { return (kind == Msg::Put || kind == Msg::Get) && bytes >= kCmaBulkMin; }

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
