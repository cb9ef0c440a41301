// NIC windows (rma/native.hpp): windows over a channel whose regions are
// reached through its one-sided interface only (verbs: RDMA read, write
// and 8-byte atomics), nothing mapped.
//
//  - put/get: RDMA write/read of contiguous target data. From and into a
//    contiguous origin buffer they are posted and left in flight (not for
//    request-based operations, whose request completes at return): the
//    synchronization that completes them (flush, unlock, fence, complete:
//    WindowState::memory_fence) waits for every target they went to. A
//    noncontiguous origin goes through a bounded bounce buffer, flushed
//    per piece. Everything else completes before it returns.
//  - accumulate family: per 8-byte element, the NIC's fetch-add (integer
//    sums, NoOp) or a compare-and-swap loop around the op's kernel; other
//    element sizes take the emulation (rma/atomic_acc.hpp: the rule that
//    keeps NIC and CPU atomics off each other's elements).
//  - locks: the reader-writer ticket lock of native_sync.hpp in 8-byte
//    words over the control block's lock line, taken and released with
//    NIC atomics (no agent thread, no packet to the target).
#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <vector>

#include "adi3/device.hpp"
#include "rma/atomic_acc.hpp"
#include "rma/native.hpp"
#include "rma/window_state.hpp"

namespace adi3::rma::native {
namespace {

constexpr std::size_t kBounce = 64 * 1024;

// The lock's words (users, readers, writers), 8 bytes each: the NIC's
// atomics are 8 bytes wide. They reuse the lock line of the control block,
// whose 32-bit words a NIC window never uses.
constexpr uint64_t kUsers = offsetof(Control, users);
constexpr uint64_t kReaders = kUsers + 8;
constexpr uint64_t kWriters = kUsers + 16;
static_assert(kUsers % 8 == 0 && kWriters + 8 <= offsetof(Control, stripe));

// Atomics on a region through the interface, each flushed (NicAtomics:
// `at` is an offset into the region).
class RegionNic final : public NicAtomics {
 public:
  RegionNic(OneSided& os, RemoteRegion& r) : os_(os), r_(r) {}
  bool fetch_add(uint64_t at, uint64_t add, uint64_t* old) override {
    return os_.fetch_add(r_, at, add, old, 8) == 0 && os_.flush(r_.peer) == 0;
  }
  bool compare_swap(uint64_t at, uint64_t compare, uint64_t swap, uint64_t* old) override {
    return os_.compare_swap(r_, at, compare, swap, old, 8) == 0 && os_.flush(r_.peer) == 0;
  }

 private:
  OneSided& os_;
  RemoteRegion& r_;
};

// This rank's own memory through the loopback (the target's emulation
// applying 8-byte elements): `at` is an address in the window.
class SelfNic final : public NicAtomics {
 public:
  SelfNic(WindowState& w, NativePeer& me) : w_(w), me_(me), nic_(w.native->os, *me.mem_r) {}
  bool fetch_add(uint64_t at, uint64_t add, uint64_t* old) override { return nic_.fetch_add(offset(at), add, old); }
  bool compare_swap(uint64_t at, uint64_t compare, uint64_t swap, uint64_t* old) override {
    return nic_.compare_swap(offset(at), compare, swap, old);
  }

 private:
  uint64_t offset(uint64_t addr) const { return me_.mem_off + (addr - reinterpret_cast<uintptr_t>(w_.base)); }
  WindowState& w_;
  NativePeer& me_;
  RegionNic nic_;
};

char* run_of(const void* buf, std::size_t count, const Datatype* t) {
  if (!t->is_contiguous() && count > 0) return nullptr;
  return const_cast<char*>(static_cast<const char*>(buf)) + t->true_lb();
}

int failed(WindowState& w, const char* what, int target, const char* op) {
  return w.dev.errors().raise(ErrorClass::Other, "%s to rank %d: the NIC's %s failed: %s", what, target, op,
                              std::strerror(errno));
}

// Put or get of contiguous target data at off.
int transfer(WindowState& w, const OpArgs& a, const Checked& c, NativePeer& p, uint64_t off, bool put) {
  OneSided& os = w.native->os;
  void* obuf = put ? const_cast<void*>(a.origin) : a.result;
  const char* op = put ? "RDMA write" : "RDMA read";
  if (char* o = run_of(obuf, static_cast<std::size_t>(a.ocount), a.otype)) {
    const int rc = put ? os.put(*p.mem_r, off, o, c.bytes) : os.get(*p.mem_r, off, o, c.bytes);
    if (rc) return failed(w, a.name, a.target, op);
    if (a.req) return os.flush(p.mem_r->peer) ? failed(w, a.name, a.target, op) : 0;
    // In flight until the epoch's next completion.
    std::lock_guard<std::mutex> g(w.nic_mu);
    if (w.nic_dirty.size() != w.native->peers.size()) w.nic_dirty.assign(w.native->peers.size(), 0);
    w.nic_dirty[static_cast<std::size_t>(a.target)] = 1;
    w.nic_posted.store(true, std::memory_order_release);
    return 0;
  }
  Segment seg(obuf, static_cast<std::size_t>(a.ocount), a.otype);
  std::vector<char> tmp(std::min(c.bytes, kBounce));
  for (std::size_t at = 0; at < c.bytes; at += tmp.size()) {
    const std::size_t n = std::min(tmp.size(), c.bytes - at);
    if (put) seg.pack(at, at + n, tmp.data());
    const int rc = put ? os.put(*p.mem_r, off + at, tmp.data(), n) : os.get(*p.mem_r, off + at, tmp.data(), n);
    if (rc || os.flush(p.mem_r->peer)) return failed(w, a.name, a.target, op);
    if (!put) seg.unpack(at, at + n, tmp.data());
  }
  return 0;
}

// Accumulate, get_accumulate, fetch_and_op on 8-byte elements at off.
int accumulate(WindowState& w, const OpArgs& a, const Checked& c, NativePeer& p, uint64_t off) {
  RegionNic nic(w.native->os, *p.mem_r);
  const coll::OpKind op = a.op ? a.op->kind() : coll::OpKind::Replace;
  const bool fetch = a.kind == Msg::GetAcc || a.kind == Msg::Fop;
  const bool has_in = op != coll::OpKind::NoOp;
  const bool fop = a.kind == Msg::Fop;
  std::vector<uint64_t> in(std::min(c.bytes, kBounce) / 8), old(fetch ? in.size() : 0);
  Segment src, dst;
  if (has_in)
    src = Segment(const_cast<void*>(a.origin), fop ? 1 : static_cast<std::size_t>(a.ocount), fop ? a.ttype : a.otype);
  if (fetch) dst = Segment(a.result, fop ? 1 : static_cast<std::size_t>(a.rcount), fop ? a.ttype : a.rtype);
  for (std::size_t at = 0; at < c.bytes; at += in.size() * 8) {
    const std::size_t n = std::min(in.size() * 8, c.bytes - at);
    if (has_in) src.pack(at, at + n, in.data());
    for (std::size_t i = 0; i < n / 8; ++i) {
      if (!nic_element(nic, off + at + i * 8, &in[i], op, c.elem, fetch ? &old[i] : nullptr))
        return failed(w, a.name, a.target, "atomic");
    }
    if (fetch) dst.unpack(at, at + n, old.data());
  }
  return 0;
}

int compare_swap(WindowState& w, const OpArgs& a, NativePeer& p, uint64_t off) {
  uint64_t sw = 0, cmp = 0, old = 0;
  Segment(const_cast<void*>(a.origin), 1, a.ttype).pack(0, 8, &sw);
  Segment(const_cast<void*>(a.compare), 1, a.ttype).pack(0, 8, &cmp);
  RegionNic nic(w.native->os, *p.mem_r);
  if (!nic.compare_swap(off, cmp, sw, &old)) return failed(w, a.name, a.target, "compare-and-swap");
  Segment(a.result, 1, a.ttype).unpack(0, 8, &old);
  return 0;
}

// One lock word of the target's control block: fetch-add, flushed.
bool lock_word(WindowState& w, int target, uint64_t word, uint64_t add, uint64_t* old) {
  NativePeer& p = w.native->peers[static_cast<std::size_t>(target)];
  return RegionNic(w.native->os, *p.ctl_r).fetch_add(word, add, old);
}

}  // namespace

}  // namespace adi3::rma::native

namespace adi3::rma {

// Waits for every put and get left in flight; a failure (a bad key or
// range at the target, a broken queue pair) is the epoch's error, reported
// by the synchronization call that fenced.
void WindowState::complete_nic() {
  std::lock_guard<std::mutex> g(nic_mu);
  nic_posted.store(false, std::memory_order_relaxed);
  if (!native) return;
  for (std::size_t t = 0; t < nic_dirty.size(); ++t) {
    if (!nic_dirty[t]) continue;
    nic_dirty[t] = 0;
    const NativePeer& p = native->peers[t];
    if (p.mem_r && native->os.flush(p.mem_r->peer) != 0) {
      const int e = dev.errors().raise(ErrorClass::Other, "RMA to rank %zu: the NIC's RDMA write or read failed: %s", t,
                                       std::strerror(errno));
      if (!deferred_error) deferred_error = e;
    }
  }
}

}  // namespace adi3::rma

namespace adi3::rma::native {

bool nic_can(const WindowState& w, const OpArgs& a, const Checked& c) {
  const auto t = static_cast<std::size_t>(a.target);
  if (!w.native->peers[t].mem_r) return false;
  if (c.derived && !a.ttype->is_contiguous()) return false;
  if (a.kind == Msg::Put || a.kind == Msg::Get) return true;
  const Datatype* e = Datatype::builtin(c.elem);
  if (e->size() != 8 || e->extent() != 8) return false;
  // The element's address at the target decides (as at the target itself).
  const uint64_t first = w.peers[t].base + c.disp_bytes + static_cast<uint64_t>(c.derived ? a.ttype->true_lb() : 0);
  return first % 8 == 0;
}

int nic_run(WindowState& w, const OpArgs& a, const Checked& c) {
  NativePeer& p = w.native->peers[static_cast<std::size_t>(a.target)];
  const Datatype* t = c.derived ? a.ttype : Datatype::builtin(c.elem);
  const uint64_t off = p.mem_off + c.disp_bytes + static_cast<uint64_t>(t->true_lb());
  switch (a.kind) {
    case Msg::Put:
      return transfer(w, a, c, p, off, true);
    case Msg::Get:
      return transfer(w, a, c, p, off, false);
    case Msg::Cas:
      return compare_swap(w, a, p, off);
    default:
      return accumulate(w, a, c, p, off);
  }
}

int nic_lock(WindowState& w, int target, bool exclusive) {
  uint64_t ticket = 0;
  if (!lock_word(w, target, kUsers, 1, &ticket)) return failed(w, "Win_lock", target, "fetch-and-add");
  bool broken = false;
  // The holder's release is a NIC atomic at the target: nothing wakes us,
  // so the wait polls the word (the device's blocking wait paces it).
  const int e = w.dev.block_until([&] {
    uint64_t now = 0;
    if (!lock_word(w, target, exclusive ? kWriters : kReaders, 0, &now)) broken = true;
    return broken || now == ticket;
  });
  if (e) return e;
  if (broken) return failed(w, "Win_lock", target, "fetch-and-add");
  // A reader that entered lets the next ticket (a reader) in at once.
  uint64_t ignored = 0;
  if (!exclusive && !lock_word(w, target, kReaders, 1, &ignored)) return failed(w, "Win_lock", target, "fetch-and-add");
  return 0;
}

void nic_unlock(WindowState& w, int target, bool exclusive) {
  // A failure here means the queue pair to the target broke: the channel
  // reports the peer as failed, and waits on it fail.
  uint64_t ignored = 0;
  if (exclusive) lock_word(w, target, kReaders, 1, &ignored);
  lock_word(w, target, kWriters, 1, &ignored);
}

std::unique_ptr<NicAtomics> make_nic_self(WindowState& w) {
  NativePeer& me = w.native->peers[static_cast<std::size_t>(w.comm.rank)];
  if (!me.mem_r) return nullptr;
  return std::make_unique<SelfNic>(w, me);
}

}  // namespace adi3::rma::native
