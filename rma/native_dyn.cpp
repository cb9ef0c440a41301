// Native dynamic windows: the table of attached regions (rma/native_dyn.hpp)
// at the owner, lookups and copies at the origins.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "adi3/device.hpp"
#include "rma/native.hpp"
#include "rma/native_copy.hpp"
#include "rma/window_state.hpp"

namespace adi3::rma::native {
namespace {

constexpr uint64_t kLive = 1;

// An entry of target's table holding [addr, addr + n), seen consistently:
// its state before and after the range was read are the same live value.
struct Found {
  std::size_t i = 0;
  uint64_t state = 0, base = 0;
};

bool lookup(DynTable& t, uint64_t addr, std::size_t n, Found* f) {
  const uint32_t used = std::min<uint32_t>(dyn_at(t.used).load(std::memory_order_acquire), kDynSlots);
  for (std::size_t i = 0; i < used; ++i) {
    DynSlot& s = t.slot[i];
    const uint64_t s1 = dyn_at(s.state).load(std::memory_order_acquire);
    if (!(s1 & kLive)) continue;
    // Acquire loads: the re-read of the state stays after them (seqlock).
    const uint64_t b = dyn_at(s.base).load(std::memory_order_acquire);
    const uint64_t len = dyn_at(s.bytes).load(std::memory_order_acquire);
    if (dyn_at(s.state).load(std::memory_order_relaxed) != s1) continue;
    if (addr >= b && addr - b <= len && n <= len - (addr - b)) {
      *f = {i, s1, b};
      return true;
    }
  }
  return false;
}

// The region attached here for entry f of target's table (attached once
// per generation: a detach and a new attach of the entry change it).
RemoteRegion* region_for(OneSided& os, NativePeer& p, const Found& f) {
  NativePeer::DynCache& c = p.dyn_cache[f.i];
  if (c.r && c.state == f.state) return c.r;
  if (c.r) os.detach(c.r);
  c = {};
  DynSlot& s = p.dyn->slot[f.i];
  uint64_t key[kMaxKeyBytes / 8];
  for (std::size_t k = 0; k < kMaxKeyBytes / 8; ++k) key[k] = dyn_at(s.key[k]).load(std::memory_order_acquire);
  const uint32_t kb = dyn_at(s.key_bytes).load(std::memory_order_acquire);
  if (dyn_at(s.state).load(std::memory_order_relaxed) != f.state || kb > kMaxKeyBytes) {
    errno = ESTALE;
    return nullptr;
  }
  RemoteRegion* r = os.attach(p.ctl_r->peer, key, kb);
  if (!r) return nullptr;
  c = {f.state, r};
  return r;
}

}  // namespace

void dyn_attach(WindowState& w, void* base, std::size_t bytes) {
  if (!w.native_usable || !w.native->dyn || bytes == 0) return;
  NativeWin& nw = *w.native;
  DynTable& t = *nw.dyn;
  std::size_t i = 0;
  while (i < kDynSlots && (dyn_at(t.slot[i].state).load(std::memory_order_relaxed) & kLive)) ++i;
  Region* r = i < kDynSlots ? nw.os.expose(base, bytes) : nullptr;
  if (!r || r->key_bytes > kMaxKeyBytes) {
    // No entry (or the channel cannot expose it): origins that miss in the
    // table send their operations as packets, which the emulation's target
    // checks against every attached region.
    if (r) nw.os.release(r);
    dyn_at(t.overflow).fetch_add(1, std::memory_order_seq_cst);
    return;
  }
  nw.os.exposed_for_window(*r);
  DynSlot& s = t.slot[i];
  uint64_t key[kMaxKeyBytes / 8] = {};
  std::memcpy(key, r->key, r->key_bytes);
  dyn_at(s.base).store(reinterpret_cast<uintptr_t>(base), std::memory_order_relaxed);
  dyn_at(s.bytes).store(bytes, std::memory_order_relaxed);
  for (std::size_t k = 0; k < kMaxKeyBytes / 8; ++k) dyn_at(s.key[k]).store(key[k], std::memory_order_relaxed);
  dyn_at(s.key_bytes).store(static_cast<uint32_t>(r->key_bytes), std::memory_order_relaxed);
  // Next generation, live: published after the fields (release).
  const uint64_t st = dyn_at(s.state).load(std::memory_order_relaxed);
  dyn_at(s.state).store(((st >> 1) + 1) << 1 | kLive, std::memory_order_release);
  nw.dyn_exposed[i] = r;
  if (dyn_at(t.used).load(std::memory_order_relaxed) <= i) {
    dyn_at(t.used).store(static_cast<uint32_t>(i + 1), std::memory_order_release);
  }
}

int dyn_detach(WindowState& w, uintptr_t base) {
  std::size_t i = kDynSlots;
  DynTable* t = nullptr;
  {
    std::lock_guard g(w.mu);
    if (!w.native_usable || !w.native->dyn) return 0;
    t = w.native->dyn;
    for (std::size_t k = 0; k < kDynSlots; ++k) {
      const uint64_t st = dyn_at(t->slot[k].state).load(std::memory_order_relaxed);
      if ((st & kLive) && dyn_at(t->slot[k].base).load(std::memory_order_relaxed) == base) {
        i = k;
        // Dead from now on: an origin that counts itself in after this
        // store sees it and leaves the memory alone.
        dyn_at(t->slot[k].state).store(st & ~kLive, std::memory_order_seq_cst);
        break;
      }
    }
    if (i == kDynSlots) {
      // Attached beyond the table: only the emulation reached it.
      if (dyn_at(t->overflow).load(std::memory_order_relaxed)) dyn_at(t->overflow).fetch_sub(1);
      return 0;
    }
  }
  // Wait (without the window's lock: progress may need it) until every
  // origin that counted itself in before the store left its copy.
  uint32_t& users = t->slot[i].users;
  int e = w.dev.block_until([&] { return dyn_at(users).load(std::memory_order_seq_cst) == 0; });
  std::lock_guard g(w.mu);
  if (Region*& r = w.native->dyn_exposed[i]) {
    w.native->os.release(r);
    r = nullptr;
  }
  return e;
}

bool dyn_native(const WindowState& w, const OpArgs& a, const Checked& c) {
  NativePeer& p = w.native->peers[static_cast<std::size_t>(a.target)];
  if (!p.dyn) return false;
  const Datatype* t = c.derived ? a.ttype : Datatype::builtin(c.elem);
  Found f;
  if (!lookup(*p.dyn, c.disp_bytes + static_cast<uint64_t>(t->true_lb()), c.bytes, &f)) {
    // Not listed: refused natively (RMA_RANGE), unless the region may be
    // one attached beyond the table, which only the emulation reaches.
    return !dyn_at(p.dyn->overflow).load(std::memory_order_acquire);
  }
  // The region must take the operation (cross-memory attach may be refused
  // by the kernel: then the emulation carries it).
  const RemoteRegion* r = region_for(w.native->os, p, f);
  if (!r) return false;
  const bool contiguous = !c.derived || a.ttype->is_contiguous();
  if (a.kind == Msg::Put) return (r->ops & kOsPut) && contiguous;
  if (a.kind == Msg::Get) return (r->ops & kOsGet) && contiguous;
  // The accumulate family: mapped memory takes any target layout (element
  // by element under the stripes); memory reached by cross-memory attach a
  // contiguous one (read, combined, written back under the stripes).
  if (r->direct) return true;
  return (r->ops & (kOsGet | kOsPut)) == (kOsGet | kOsPut) && contiguous;
}

int dyn_enter(WindowState& w, const OpArgs& a, const Checked& c, DynAccess* d) {
  *d = DynAccess{};
  NativePeer& p = w.native->peers[static_cast<std::size_t>(a.target)];
  const Datatype* t = c.derived ? a.ttype : Datatype::builtin(c.elem);
  const uint64_t addr = c.disp_bytes + static_cast<uint64_t>(t->true_lb());
  Found f;
  uint32_t* users = nullptr;
  // Count ourselves in, then check the entry is still the one we found
  // (the owner's detach clears it before it waits for users to drain).
  for (int tries = 0; tries < 8; ++tries) {
    if (!lookup(*p.dyn, addr, c.bytes, &f)) break;
    uint32_t& u = p.dyn->slot[f.i].users;
    dyn_at(u).fetch_add(1, std::memory_order_seq_cst);
    if (dyn_at(p.dyn->slot[f.i].state).load(std::memory_order_seq_cst) == f.state) {
      users = &u;
      break;
    }
    dyn_at(u).fetch_sub(1, std::memory_order_seq_cst);
  }
  // As the emulation's target would: refused, reported at the next
  // synchronization, nothing written.
  auto refuse = [&] {
    const int e = w.dev.errors().raise(ErrorClass::RmaRange,
                                       "%s to rank %d: address %#llx (%zu bytes) is in no region rank %d attached to "
                                       "the dynamic window",
                                       a.name, a.target, static_cast<unsigned long long>(addr), c.bytes, a.target);
    if (!w.deferred_error) w.deferred_error = e;
    return 0;
  };
  if (!users) return refuse();
  errno = 0;
  RemoteRegion* r = region_for(w.native->os, p, f);
  if (!r) {
    const int err = errno;
    dyn_at(*users).fetch_sub(1, std::memory_order_seq_cst);
    // The owner's detach marked the entry dead after we counted ourselves
    // in: the region is going away, so this access is refused like one
    // that found no entry.
    if (err == ESTALE) return refuse();
    return w.dev.errors().raise(ErrorClass::Other, "%s to rank %d: the region at address %#llx cannot be reached: %s",
                                a.name, a.target, static_cast<unsigned long long>(addr), std::strerror(err));
  }
  *d = DynAccess{r, addr, addr - f.base, users};
  return 0;
}

void dyn_leave(DynAccess& d) {
  if (d.users) dyn_at(*d.users).fetch_sub(1, std::memory_order_seq_cst);
  d = DynAccess{};
}

int dyn_copy(WindowState& w, const OpArgs& a, const Checked& c, bool put) {
  DynAccess d;
  if (int e = dyn_enter(w, a, c, &d)) return e;
  if (!d.r) return 0;  // refused: the error waits for the synchronization
  OneSided& os = w.native->os;
  int rc = 0;
  errno = 0;
  void* obuf = put ? const_cast<void*>(a.origin) : a.result;
  if (!a.otype->is_contiguous() && a.ocount > 0) {
    // A derived origin type: through a bounded bounce buffer.
    std::vector<char> tmp(std::min<std::size_t>(c.bytes, kBounce));
    Segment seg(obuf, static_cast<std::size_t>(a.ocount), a.otype);
    for (std::size_t at = 0; at < c.bytes && rc == 0; at += tmp.size()) {
      const std::size_t n = std::min(tmp.size(), c.bytes - at);
      if (put) {
        seg.pack(at, at + n, tmp.data());
        rc = os.put(*d.r, d.off + at, tmp.data(), n);
      } else {
        rc = os.get(*d.r, d.off + at, tmp.data(), n);
        if (rc == 0) seg.unpack(at, at + n, tmp.data());
      }
    }
  } else {
    char* o = static_cast<char*>(obuf) + a.otype->true_lb();
    rc = put ? os.put(*d.r, d.off, o, c.bytes) : os.get(*d.r, d.off, o, c.bytes);
  }
  const int err = errno;
  const uint64_t addr = d.addr;
  dyn_leave(d);
  if (rc == 0) return 0;
  return w.dev.errors().raise(ErrorClass::Other, "%s to rank %d: the one-sided %s at address %#llx failed: %s", a.name,
                              a.target, put ? "put" : "get", static_cast<unsigned long long>(addr), std::strerror(err));
}

}  // namespace adi3::rma::native
