// Native windows: creation (regions, keys, attach, agreement) and teardown.
#include "rma/native.hpp"

#include <cstring>
#include <unistd.h>

#include "adi3/device.hpp"
#include "rma/atomic_acc.hpp"
#include "rma/window_state.hpp"

namespace adi3::rma {

namespace {
void detach_all(NativeWin& nw) {
  for (NativePeer& p : nw.peers) {
    if (p.mem_r && p.owns_mem_r) nw.os.detach(p.mem_r);
    if (p.ctl_r) nw.os.detach(p.ctl_r);
    for (NativePeer::DynCache& d : p.dyn_cache) {
      if (d.r) nw.os.detach(d.r);
    }
    p = NativePeer{};
  }
}
}  // namespace

NativeWin::~NativeWin() {
  nic_self.reset();  // it uses our own entry of peers
  detach_all(*this);
  for (Region* r : dyn_exposed) {
    if (r) os.release(r);
  }
  if (user) os.release(user);
  if (mine) os.release(mine);
}

namespace native {
namespace {

void put_key(const Region* r, uint8_t* key, uint32_t* len) {
  std::memcpy(key, r->key, r->key_bytes);
  *len = static_cast<uint32_t>(r->key_bytes);
}

// The control block at p, if it is one (its magic is set by its owner
// before the key leaves).
Control* control_at(char* p) {
  auto* c = reinterpret_cast<Control*>(p);
  return std::atomic_ref<uint32_t>(c->magic).load(std::memory_order_acquire) == kControlMagic ? c : nullptr;
}

std::size_t round_page(std::size_t n) { return (n + 4095) / 4096 * 4096; }

}  // namespace

bool prepare(WindowState& w, bool alloc, std::size_t bytes, void* user_base, void** base, NativeCard* card,
             const std::vector<int64_t>* shared_sizes) {
  *card = NativeCard{};
  if (w.dev.config().force_emulation) return false;
  // Per peer: the one-sided part may reach only some members (a channel
  // set reaches this host's ranks). The others are left out of the native
  // part of the window: operations to them are emulated (route.cpp).
  OneSided* chan_os = w.dev.channel_of(w.comm.to_peer(w.comm.rank)).onesided();
  // A shared window takes the channel's mapped part (verbs: segments of
  // this host's ranks, not its NIC regions).
  OneSided* os = chan_os && shared_sizes ? chan_os->shared_part() : chan_os;
  if (!os) return false;
  bool all_reached = true, all_passive = true;
  for (int r = 0; r < w.comm.size; ++r) {
    const int peer = w.comm.to_peer(r);
    if (w.dev.channel_of(peer).onesided() != chan_os || !os->reaches(peer)) {
      all_reached = false;
    } else if (!w.dev.native_to(peer, kPassiveRma)) {
      all_passive = false;
    }
  }
  // A shared window is memory every member loads and stores.
  if (shared_sizes && !all_reached) return false;
  if (bytes > SIZE_MAX / 4) {
    card->flags = NativeCard::kNoMem;
    return false;
  }
  // Regions that are not mapped (verbs) make a NIC window; it cannot be
  // shared memory.
  const bool nic = !(os->caps().native_ops & kOsLoadStore);
  if (nic && (shared_sizes || !(os->caps().atomic_widths & 8u))) return false;
  // Dynamic windows list their regions in a table in mapped memory.
  const bool dyn = w.flavor == WinFlavor::Dynamic;
  if (dyn && nic) return false;
  auto nw = std::make_unique<NativeWin>(*os);
  nw->nic = nic;
  const auto n = static_cast<std::size_t>(w.comm.size);
  const bool contig = shared_sizes && !w.info.alloc_shared_noncontig;
  if (contig) {
    card->flags = NativeCard::kSharedContig;
    if (w.comm.rank == 0) {
      // Every rank's control block, then every rank's part, back to back.
      std::size_t total = n * kControlBytes;
      for (int64_t s : *shared_sizes) {
        if (s < 0 || static_cast<uint64_t>(s) > SIZE_MAX / 4 - total) {
          card->flags = NativeCard::kNoMem;
          return false;
        }
        total += static_cast<std::size_t>(s);
      }
      nw->mine = os->allocate(total);
      if (!nw->mine) {
        card->flags = NativeCard::kNoMem;  // (the others learn it from this card)
        return false;
      }
      for (std::size_t r = 0; r < n; ++r) {
        reinterpret_cast<Control*>(static_cast<char*>(nw->mine->base) + r * kControlBytes)->magic = kControlMagic;
      }
      put_key(nw->mine, card->ctl_key, &card->ctl_len);
    }
  } else if (dyn) {
    // Control block, then the table of attached regions (empty).
    nw->mine = os->allocate(kControlBytes + kDynBytes);
    if (!nw->mine) return false;
    nw->ctl = static_cast<Control*>(nw->mine->base);
    nw->ctl->magic = kControlMagic;
    nw->dyn = reinterpret_cast<DynTable*>(static_cast<char*>(nw->mine->base) + kControlBytes);
    nw->dyn->magic = kDynMagic;
    nw->dyn_exposed.assign(kDynSlots, nullptr);
    put_key(nw->mine, card->ctl_key, &card->ctl_len);
  } else {
    // Control block first, then (allocate) the memory, page aligned.
    nw->mine = os->allocate(alloc ? kControlBytes + round_page(bytes) : kControlBytes);
    if (!nw->mine) {
      card->flags = NativeCard::kNoMem;  // an allocate window then tries the heap
      return false;
    }
    nw->ctl = static_cast<Control*>(nw->mine->base);
    nw->ctl->magic = kControlMagic;
    if (alloc) {
      *base = static_cast<char*>(nw->mine->base) + kControlBytes;
    } else {
      nw->user = os->expose(user_base, bytes);
      if (!nw->user) return false;
      os->exposed_for_window(*nw->user);
      put_key(nw->user, card->data_key, &card->data_len);
    }
    put_key(nw->mine, card->ctl_key, &card->ctl_len);
  }
  // Window memory in our segment: peers may ask us to copy part of their
  // large puts and gets on it (channels/shm/cma_split.cpp).
  if (nw->mine && !dyn && (alloc || contig)) os->exposed_for_window(*nw->mine);
  card->flags |= NativeCard::kOffered;
  if (w.info.emulate_ops) card->flags |= NativeCard::kEmulatesOps;
  // Passive target is native only when every origin reaches every target's
  // lock word: one lock path per window (a member on another host cannot
  // take a word in this host's memory, so then every lock goes through the
  // emulation's queue at the target). Each rank sees the same reachability
  // (hosts are one partition), so each sets this flag alike.
  if (w.dev.config().forced(kPassiveRma) || !all_reached || !all_passive) card->flags |= NativeCard::kPassiveForced;
  // So are fence and PSCW through the control blocks' counters: every rank
  // must reach every control block.
  if (w.dev.config().forced(kActiveRma) || !all_reached) card->flags |= NativeCard::kActiveForced;
  nw->peers.resize(n);
  nw->held.assign(n, 0);
  w.native = std::move(nw);
  return true;
}

namespace {

// allocate_shared, contiguous: one region of rank 0 holds everything.
bool attach_contig(WindowState& w, const std::vector<NativeCard>& cards) {
  NativeWin& nw = *w.native;
  const NativeCard& c0 = cards[0];
  if (!(c0.flags & NativeCard::kSharedContig) || c0.ctl_len > kMaxKeyBytes) return false;
  RemoteRegion* r = nw.os.attach(w.comm.to_peer(0), c0.ctl_key, c0.ctl_len);
  if (!r) return false;
  const auto n = static_cast<std::size_t>(w.comm.size);
  nw.peers[0].ctl_r = r;  // detached once, through rank 0's entry
  // The parts follow the control blocks; the region must hold them all.
  std::size_t at = n * kControlBytes;
  if (!r->direct || r->bytes < at) return false;
  for (std::size_t i = 0; i < n; ++i) {
    NativePeer& p = nw.peers[i];
    const auto size = static_cast<std::size_t>(w.peers[i].size);
    if (size > r->bytes - at) return false;
    p.ctl = control_at(static_cast<char*>(r->direct) + i * kControlBytes);
    if (!p.ctl) return false;
    p.mem_r = r;
    p.mem_off = at;
    p.mem = static_cast<char*>(r->direct) + at;
    p.reached = true;
    at += size;
  }
  return true;
}

bool attach_one(WindowState& w, int rank, const NativeCard& c) {
  NativeWin& nw = *w.native;
  NativePeer& p = nw.peers[static_cast<std::size_t>(rank)];
  if (!(c.flags & NativeCard::kOffered) || (c.flags & NativeCard::kSharedContig) || c.ctl_len > kMaxKeyBytes ||
      c.data_len > kMaxKeyBytes) {
    return false;
  }
  const int peer = w.comm.to_peer(rank);
  if (!nw.os.reaches(peer)) return true;  // another host: emulated, not a failure
  p.ctl_r = nw.os.attach(peer, c.ctl_key, c.ctl_len);
  if (nw.nic) {
    // Nothing is mapped: the regions must take every operation the NIC
    // window uses, and be as large as the exchange says.
    constexpr uint32_t kNeed = kOsPut | kOsGet | kOsFetchAdd | kOsCompareSwap;
    if (!p.ctl_r || (p.ctl_r->ops & kNeed) != kNeed || p.ctl_r->bytes < kControlBytes) return false;
    const auto size = static_cast<std::size_t>(w.peers[static_cast<std::size_t>(rank)].size);
    if (c.data_len) {
      p.mem_r = nw.os.attach(peer, c.data_key, c.data_len);
      if (!p.mem_r || (p.mem_r->ops & kNeed) != kNeed || p.mem_r->bytes < size) return false;
      p.owns_mem_r = true;
    } else {
      if (p.ctl_r->bytes - kControlBytes < size) return false;
      p.mem_r = p.ctl_r;
      p.mem_off = kControlBytes;
    }
    p.reached = true;
    return true;
  }
  // The control block must be there, whole, and one (a key pointing at
  // anything else is refused).
  if (!p.ctl_r || !p.ctl_r->direct || p.ctl_r->bytes < kControlBytes) return false;
  p.ctl = control_at(static_cast<char*>(p.ctl_r->direct));
  if (!p.ctl) return false;
  // Our own block at the address we made it at, not the second mapping:
  // the agent takes its stripes there, and the same word at two addresses
  // orders the CPU but not TSan (which reported our fast path's
  // fetch_and_op to ourselves racing the agent's accumulate).
  if (rank == w.comm.rank && nw.ctl) p.ctl = nw.ctl;
  const auto size = static_cast<std::size_t>(w.peers[static_cast<std::size_t>(rank)].size);
  if (w.flavor == WinFlavor::Dynamic) {
    // The table follows the control block; nothing is mapped for data.
    if (c.data_len || p.ctl_r->bytes - kControlBytes < kDynBytes) return false;
    p.dyn = reinterpret_cast<DynTable*>(static_cast<char*>(p.ctl_r->direct) + kControlBytes);
    if (dyn_at(p.dyn->magic).load(std::memory_order_acquire) != kDynMagic) return false;
    p.dyn_cache.resize(kDynSlots);
    p.reached = true;
    return true;
  }
  if (c.data_len) {
    p.mem_r = nw.os.attach(peer, c.data_key, c.data_len);
    if (!p.mem_r || p.mem_r->bytes < size) return false;
    p.owns_mem_r = true;
    p.mem = static_cast<char*>(p.mem_r->direct);
  } else {
    // Memory after the control block: the region's size must cover it.
    if (p.ctl_r->bytes - kControlBytes < size) return false;
    p.mem_r = p.ctl_r;
    p.mem_off = kControlBytes;
    p.mem = reinterpret_cast<char*>(p.ctl) + kControlBytes;
  }
  p.reached = true;
  return true;
}

}  // namespace

void attach(WindowState& w, const std::vector<NativeCard>& cards, NativeCard* second) {
  *second = NativeCard{};
  if (!w.native) return;
  NativeWin& nw = *w.native;
  bool all = true;
  if (cards[static_cast<std::size_t>(w.comm.rank)].flags & NativeCard::kSharedContig) {
    all = attach_contig(w, cards);
    if (all) {
      nw.ctl = nw.peers[static_cast<std::size_t>(w.comm.rank)].ctl;
      w.base = nw.peers[static_cast<std::size_t>(w.comm.rank)].mem;
    }
  } else {
    for (int r = 0; r < w.comm.size && all; ++r) all = attach_one(w, r, cards[static_cast<std::size_t>(r)]);
    if (all && nw.nic) nw.nic_self = make_nic_self(w);
  }
  if (all) {
    second->flags = NativeCard::kAttached;
    bool mapped = true;
    for (const NativePeer& p : nw.peers) mapped = mapped && p.mem;
    if (mapped) second->flags |= NativeCard::kMappedAll;
  }
}

void agree(WindowState& w, const std::vector<NativeCard>& firsts, const std::vector<NativeCard>& seconds) {
  if (!w.native) return;
  NativeWin& nw = *w.native;
  bool all = true, passive = true, active = static_cast<std::size_t>(w.comm.size) <= kActiveRanks;
  for (int r = 0; r < w.comm.size; ++r) {
    const NativeCard& f = firsts[static_cast<std::size_t>(r)];
    if (!(seconds[static_cast<std::size_t>(r)].flags & NativeCard::kAttached)) all = false;
    if (!(seconds[static_cast<std::size_t>(r)].flags & NativeCard::kMappedAll)) nw.cma_acc = true;
    if (f.flags & NativeCard::kPassiveForced) passive = false;
    if (f.flags & NativeCard::kActiveForced) active = false;
    if (f.flags & NativeCard::kEmulatesOps) nw.others_emulate = true;
  }
  if (nw.mine) nw.os.seal(nw.mine);
  if (nw.user) nw.os.seal(nw.user);
  if (!all) {
    // Someone could not reach everyone: the window is emulated throughout
    // (the memory of an allocate window stays where it is).
    detach_all(nw);
    nw.passive = false;
    nw.active = false;
    w.native_usable = false;
    return;
  }
  w.native_usable = true;
  nw.passive = passive && !w.info.no_locks;
  nw.active = active && !nw.nic;  // the counters are loads and stores: NIC windows keep the packets
  for (const NativePeer& p : nw.peers) {
    if (!p.reached) nw.partial = true;
  }
  // Dynamic windows: origins combine into heap regions by cross-memory
  // attach and into MPI_Alloc_mem regions by loads and stores, both under
  // the stripes (rma/native_ops.cpp, dyn_acc), so every accumulate takes
  // them, the target's application of packets included (no window memory
  // is mapped, so cma_acc is already set: kept, whatever a region is).
  if (w.flavor == WinFlavor::Dynamic) nw.cma_acc = true;
  // A packet's round trip to a polling target takes 0.5-1 us on the
  // 2-core VM; one call must cost well under it to be worth taking blind
  // (s29: calls of 2.0-2.4 us made put/get/compare_and_swap with flush on
  // create windows 2.6-3.9 us, the packet 0.9-1.0).
  constexpr uint32_t kLeanCallMaxNs = 300;
  nw.lean_first = nw.os.caps().call_ns < kLeanCallMaxNs;
  nw.fast = !nw.nic && w.flavor != WinFlavor::Dynamic && !w.info.emulate_ops;
  nw.fast_fence = !w.dev.config().forced(kActiveRma);
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  nw.own_cores = cpus > 0 && w.comm.size <= cpus;
  if (nw.fast) {
    nw.fastp.resize(nw.peers.size());
    for (std::size_t r = 0; r < nw.peers.size(); ++r) {
      const NativePeer& p = nw.peers[r];
      if (!p.mem && p.mem_r && p.ctl) nw.fastp[r].cma = (p.mem_r->ops & (kOsPut | kOsGet)) == (kOsPut | kOsGet);
      if (!p.mem || !p.ctl) continue;
      const PeerWin& pw = w.peers[r];
      nw.fastp[r] = {p.mem, static_cast<uint64_t>(pw.size), static_cast<uint64_t>(pw.disp_unit), p.ctl};
      nw.fastp[r].split_min = nw.os.caps().split_min;
    }
    nw.fast_n = nw.fastp.size();
  }
}

bool reaches(const WindowState& w, int target) {
  return w.native_usable && target >= 0 && static_cast<std::size_t>(target) < w.native->peers.size() &&
         w.native->peers[static_cast<std::size_t>(target)].reached;
}

}  // namespace native
}  // namespace adi3::rma
