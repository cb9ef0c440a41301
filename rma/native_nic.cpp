// NIC windows (rma/native.hpp): windows over a channel whose regions are
// reached through its one-sided interface only (verbs: RDMA read, write
// and 8-byte atomics), nothing mapped.
//
//  - put/get: one RDMA write/read per run of the target data (any target
//    type: its runs, posted back to back). From and into a contiguous
//    origin buffer they are posted and left in flight (not for
//    request-based operations, whose request completes at return): the
//    synchronization that completes them (flush, unlock, fence, complete:
//    WindowState::memory_fence) waits for every target they went to. A
//    noncontiguous origin goes through a bounded bounce buffer, flushed
//    per piece. Everything else completes before it returns.
//  - accumulate family and compare-and-swap, any predefined type and any
//    target layout: per element, the NIC's fetch-add or a compare-and-swap
//    loop on an aligned 8-byte element, else read-combine-write under the
//    target's NIC stripe lock (rma/atomic_acc.hpp: nic_combine, and the
//    rule that keeps NIC and CPU atomics off each other's elements).
//  - locks: the reader-writer ticket lock of native_sync.hpp in 8-byte
//    words over the control block's lock line, taken and released with
//    NIC atomics (no agent thread, no packet to the target).
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <vector>

#include "adi3/device.hpp"
#include "rma/atomic_acc.hpp"
#include "rma/native.hpp"
#include "rma/native_copy.hpp"
#include "rma/window_state.hpp"

namespace adi3::rma::native {
namespace {

// The lock's words (users, readers, writers), 8 bytes each: the NIC's
// atomics are 8 bytes wide. They reuse the lock line of the control block,
// whose 32-bit words a NIC window never uses.
constexpr uint64_t kUsers = offsetof(Control, users);
constexpr uint64_t kReaders = kUsers + 8;
constexpr uint64_t kWriters = kUsers + 16;
static_assert(kUsers % 8 == 0 && kWriters + 8 <= offsetof(Control, stripe));

// The stripe lock words (atomic_acc.hpp): 8-byte words over the control
// block's stripe array.
constexpr uint64_t kStripeWords = offsetof(Control, stripe);
static_assert(kStripeWords % 8 == 0 && kNicStripes * 8 <= sizeof(Control::stripe));

// A peer's window memory through the interface, each call flushed: `at`
// is an address in the peer's window (its base: NicAtomics::base).
class PeerNic final : public NicAtomics {
 public:
  PeerNic(const WindowState& w, NativePeer& p, uint64_t window_base) : w_(w), os_(w.native->os), p_(p) {
    base = window_base;
    me = static_cast<uint64_t>(w.comm.rank) + 1;
  }
  bool fetch_add(uint64_t at, uint64_t add, uint64_t* old) override {
    return done(os_.fetch_add(*p_.mem_r, off(at), add, old, 8));
  }
  bool compare_swap(uint64_t at, uint64_t compare, uint64_t swap, uint64_t* old) override {
    return done(os_.compare_swap(*p_.mem_r, off(at), compare, swap, old, 8));
  }
  bool read(uint64_t at, void* dst, std::size_t n) override { return done(os_.get(*p_.mem_r, off(at), dst, n)); }
  bool write(uint64_t at, const void* src, std::size_t n) override { return done(os_.put(*p_.mem_r, off(at), src, n)); }
  bool write_runs(const Run* runs, std::size_t n, const void* src) override {
    std::vector<OneSided::Run> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = {off(runs[i].at), runs[i].len};
    return done(os_.put_runs(*p_.mem_r, v.data(), n, src));
  }
  bool lock_word(std::size_t s, uint64_t compare, uint64_t swap, uint64_t* old) override {
    return done(os_.compare_swap(*p_.ctl_r, kStripeWords + s * 8, compare, swap, old, 8));
  }
  // The word comes from the target's memory: a value that names no rank
  // of the window is not waited on either.
  bool holder_alive(uint64_t word) override {
    if (word == 0 || word > static_cast<uint64_t>(w_.comm.size)) return false;
    return os_.peer_alive(w_.comm.to_peer(static_cast<int>(word - 1)));
  }

 private:
  uint64_t off(uint64_t at) const { return p_.mem_off + (at - base); }
  bool done(int rc) { return rc == 0 && os_.flush(p_.mem_r->peer) == 0; }
  const WindowState& w_;
  OneSided& os_;
  NativePeer& p_;
};

int failed(WindowState& w, const char* what, int target, const char* op) {
  return w.dev.errors().raise(ErrorClass::Other, "%s to rank %d: the NIC's %s failed: %s", what, target, op,
                              std::strerror(errno));
}

// An accumulate or compare-and-swap whose stripe lock is held by a rank
// that died (nic_lock gave up: EOWNERDEAD), or by a value naming no rank.
int stripe_failed(WindowState& w, const char* what, int target, const NicAtomics& nic) {
  const uint64_t word = nic.dead_holder;
  if (word == 0 || word > static_cast<uint64_t>(w.comm.size)) {
    return w.dev.errors().raise(ErrorClass::Other,
                                "%s to rank %d of window %u: its accumulate lock of stripe %zu holds %llu, which "
                                "names no rank of the window's %d",
                                what, target, w.slot, nic.dead_stripe, static_cast<unsigned long long>(word),
                                w.comm.size);
  }
  return w.dev.errors().raise(ErrorClass::ProcFailed,
                              "%s to rank %d of window %u: its accumulate lock of stripe %zu is held by rank %llu, "
                              "which has failed (it died inside an accumulate; the lock is never released)",
                              what, target, w.slot, nic.dead_stripe, static_cast<unsigned long long>(word - 1));
}

// The target data of an operation: count elements of t at address addr of
// the target (never dereferenced here).
struct TargetData {
  const Datatype* t;
  uint64_t count;
  uint64_t addr;
  uint64_t base;  // the target's window base
};

TargetData target_data(const WindowState& w, const OpArgs& a, const Checked& c) {
  const uint64_t base = w.peers[static_cast<std::size_t>(a.target)].base;
  return {c.derived ? a.ttype : Datatype::builtin(c.elem), c.count, base + c.disp_bytes, base};
}

// Posts the runs of the target's stream bytes [first, first + n), from or
// into the packed bytes at local, as chains of up to kRuns (OneSided::
// put_runs / get_runs); nothing is flushed. false: a post failed (errno).
bool post_runs(OneSided& os, NativePeer& p, const TargetData& td, Segment& tseg, std::size_t first, std::size_t n,
               char* local, bool put) {
  constexpr std::size_t kRuns = 1024;
  std::vector<OneSided::Run> runs;
  runs.reserve(kRuns);
  std::size_t pos = first, from = first;
  auto post = [&] {
    const int rc = put ? os.put_runs(*p.mem_r, runs.data(), runs.size(), local + (from - first))
                       : os.get_runs(*p.mem_r, runs.data(), runs.size(), local + (from - first));
    runs.clear();
    from = pos;
    return rc == 0;
  };
  while (pos < first + n) {
    iovec iov[16];
    std::size_t k = 0;
    if (tseg.to_iov(pos, first + n, iov, 16, &k) == 0 || k == 0) {
      errno = EINVAL;
      return false;
    }
    for (std::size_t j = 0; j < k; ++j) {
      runs.push_back({p.mem_off + (reinterpret_cast<uintptr_t>(iov[j].iov_base) - td.base), iov[j].iov_len});
      pos += iov[j].iov_len;
      if (runs.size() == kRuns && !post()) return false;
    }
  }
  return runs.empty() || post();
}

// Put or get: one RDMA write or read per run of the target data (one for
// a contiguous target), posted back to back on the queue pair.
int transfer(WindowState& w, const OpArgs& a, const Checked& c, NativePeer& p, bool put) {
  OneSided& os = w.native->os;
  const TargetData td = target_data(w, a, c);
  void* obuf = put ? const_cast<void*>(a.origin) : a.result;
  const char* op = put ? "RDMA write" : "RDMA read";
  const bool contig_target = td.t->is_contiguous();
  Segment tseg;
  if (!contig_target) tseg = Segment(reinterpret_cast<void*>(static_cast<uintptr_t>(td.addr)), td.count, td.t);
  const uint64_t off = p.mem_off + (td.addr - td.base) + static_cast<uint64_t>(td.t->true_lb());
  auto post = [&](std::size_t first, std::size_t n, char* local) {
    if (contig_target)
      return (put ? os.put(*p.mem_r, off + first, local, n) : os.get(*p.mem_r, off + first, local, n)) == 0;
    return post_runs(os, p, td, tseg, first, n, local, put);
  };
  if (char* o = run_of(obuf, static_cast<std::size_t>(a.ocount), a.otype)) {
    if (!post(0, c.bytes, o)) return failed(w, a.name, a.target, op);
    if (a.req) return os.flush(p.mem_r->peer) ? failed(w, a.name, a.target, op) : 0;
    // In flight until the epoch's next completion.
    std::lock_guard<std::mutex> g(w.nic_mu);
    if (w.nic_dirty.size() != w.native->peers.size()) w.nic_dirty.assign(w.native->peers.size(), 0);
    w.nic_dirty[static_cast<std::size_t>(a.target)] = 1;
    w.nic_posted.store(true, std::memory_order_release);
    return 0;
  }
  // A noncontiguous origin: packed through a bounded bounce buffer.
  Segment seg(obuf, static_cast<std::size_t>(a.ocount), a.otype);
  std::vector<char> tmp(std::min(c.bytes, kBounce));
  for (std::size_t at = 0; at < c.bytes; at += tmp.size()) {
    const std::size_t n = std::min(tmp.size(), c.bytes - at);
    if (put) seg.pack(at, at + n, tmp.data());
    if (!post(at, n, tmp.data()) || os.flush(p.mem_r->peer)) return failed(w, a.name, a.target, op);
    if (!put) seg.unpack(at, at + n, tmp.data());
  }
  return 0;
}

// Accumulate, get_accumulate, fetch_and_op: element by element through the
// NIC (nic_combine: 8-byte aligned elements by atomics, the others under
// the target's NIC stripe locks), a bounded chunk at a time.
int accumulate(WindowState& w, const OpArgs& a, const Checked& c, NativePeer& p) {
  const TargetData td = target_data(w, a, c);
  PeerNic nic(w, p, td.base);
  const coll::OpKind op = a.op ? a.op->kind() : coll::OpKind::Replace;
  const bool fetch = a.kind == Msg::GetAcc || a.kind == Msg::Fop;
  const bool has_in = op != coll::OpKind::NoOp;
  const bool fop = a.kind == Msg::Fop;
  const std::size_t es = Datatype::builtin(c.elem)->size();
  const std::size_t chunk = std::max<std::size_t>(es, kBounce / es * es);
  std::vector<uint64_t> in((std::min(c.bytes, chunk) + 7) / 8), old(fetch ? in.size() : 0);
  Segment src, dst;
  if (has_in)
    src = Segment(const_cast<void*>(a.origin), fop ? 1 : static_cast<std::size_t>(a.ocount), fop ? a.ttype : a.otype);
  if (fetch) dst = Segment(a.result, fop ? 1 : static_cast<std::size_t>(a.rcount), fop ? a.ttype : a.rtype);
  for (std::size_t at = 0; at < c.bytes; at += chunk) {
    const std::size_t n = std::min(chunk, c.bytes - at);
    if (has_in) src.pack(at, at + n, in.data());
    if (!nic_combine(nic, td.addr, td.count, td.t, at, n, in.data(), op, c.elem, fetch ? old.data() : nullptr))
      return errno == EOWNERDEAD ? stripe_failed(w, a.name, a.target, nic) : failed(w, a.name, a.target, "atomic");
    if (fetch) dst.unpack(at, at + n, old.data());
  }
  return 0;
}

int compare_swap(WindowState& w, const OpArgs& a, const Checked& c, NativePeer& p) {
  const TargetData td = target_data(w, a, c);
  const std::size_t es = Datatype::builtin(c.elem)->size();
  alignas(16) char sw[64], cmp[64], old[64];
  Segment(const_cast<void*>(a.origin), 1, a.ttype).pack(0, es, sw);
  Segment(const_cast<void*>(a.compare), 1, a.ttype).pack(0, es, cmp);
  PeerNic nic(w, p, td.base);
  if (!nic_cas(nic, td.addr + static_cast<uint64_t>(td.t->true_lb()), es, sw, cmp, old))
    return errno == EOWNERDEAD ? stripe_failed(w, a.name, a.target, nic)
                               : failed(w, a.name, a.target, "compare-and-swap");
  Segment(a.result, 1, a.ttype).unpack(0, es, old);
  return 0;
}

// One lock word of the target's control block: fetch-add, flushed.
bool lock_word(WindowState& w, int target, uint64_t word, uint64_t add, uint64_t* old) {
  NativePeer& p = w.native->peers[static_cast<std::size_t>(target)];
  OneSided& os = w.native->os;
  return os.fetch_add(*p.ctl_r, word, add, old, 8) == 0 && os.flush(p.ctl_r->peer) == 0;
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

bool nic_can(const WindowState& w, const OpArgs& a, const Checked&) {
  // Every operation: puts and gets over the target type's runs, the
  // accumulate family and compare-and-swap element by element.
  const NativePeer& p = w.native->peers[static_cast<std::size_t>(a.target)];
  return p.mem_r && p.ctl_r;
}

bool nic_fragmented_put(const WindowState& w, const OpArgs& a, const Checked& c, bool serves_packets) {
  // The mean run length of a prefix of the target data: enough for the
  // regular types that make many runs, and bounded whatever the count.
  constexpr std::size_t kSample = 256, kMinRuns = 64;
  const std::size_t min_run = w.native->os.caps().put_min_run;
  if (a.kind != Msg::Put || !serves_packets || min_run == 0 || !c.derived || a.ttype->is_contiguous()) return false;
  if (c.bytes < kMinRuns) return false;  // fewer runs than that whatever their size
  const TargetData td = target_data(w, a, c);
  Segment tseg(reinterpret_cast<void*>(static_cast<uintptr_t>(td.addr)), td.count, td.t);
  iovec iov[kSample];
  std::size_t k = 0;
  const std::size_t bytes = tseg.to_iov(0, c.bytes, iov, kSample, &k);
  // Few runs cost little as a chain; a sample shorter than the whole
  // operation that still has few runs means long runs.
  if (k < kMinRuns) return false;
  return bytes < k * min_run;
}

int nic_run(WindowState& w, const OpArgs& a, const Checked& c) {
  NativePeer& p = w.native->peers[static_cast<std::size_t>(a.target)];
  switch (a.kind) {
    case Msg::Put:
      return transfer(w, a, c, p, true);
    case Msg::Get:
      return transfer(w, a, c, p, false);
    case Msg::Cas:
      return compare_swap(w, a, c, p);
    default:
      return accumulate(w, a, c, p);
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
  if (!me.mem_r || !me.ctl_r) return nullptr;
  return std::make_unique<PeerNic>(w, me, reinterpret_cast<uintptr_t>(w.base));
}

}  // namespace adi3::rma::native
