// Native windows: the part of a window the channel's one-sided interface
// (channels/onesided.hpp) carries without the emulation.
//
// Every rank of a native window exposes a region holding its control block
// (rma/native_sync.hpp: the passive-target lock word and the accumulate
// locks) followed, for windows from allocate, by the window memory itself,
// in shared memory; a window from create exposes the user's memory as a
// second region (cross-memory attach on shm: put and get only). The keys
// travel in the creation exchange; every rank attaches every other rank's
// regions it reaches (its channel's one-sided part may reach only some: a
// channel set reaches the ranks of this host), and the window is native
// when every rank attached every rank it reaches; it is native for passive
// target only when, moreover, every rank reaches every rank and none forces
// it to the emulation (one agreement, so all ranks take the same lock
// path). Operations are routed one by one (rma/route.*): native to the
// targets reached, emulated to the others, on one window.
//
// A channel whose regions are not mapped (no kOsLoadStore: verbs) makes a
// *NIC window* (native_nic.cpp): every rank's control block and memory are
// reached through the interface only, its own included; locks are NIC
// atomics on the control block, puts and gets RDMA, and accumulates NIC
// atomics or read-combine-write under NIC stripe locks (rma/atomic_acc.hpp
// says why the target's own accumulates take the NIC too).
#pragma once
#include <memory>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "channels/onesided.hpp"
#include "rma/atomic_acc.hpp"
#include "rma/check.hpp"
#include "rma/fast_elem.hpp"
#include "rma/native_dyn.hpp"
#include "rma/native_sync.hpp"

namespace adi3 {
class Datatype;
struct Request;
}  // namespace adi3

namespace adi3::rma {

class WindowState;

// What a rank adds to the creation exchange.
struct NativeCard {
  enum Flags : uint32_t {
    kOffered = 1,        // regions exposed: the keys are valid
    kEmulatesOps = 2,    // this rank forces some operations to the emulation (adi3_emulate_ops)
    kPassiveForced = 4,  // this rank forces passive target to the emulation
    kAttached = 8,       // second round: this rank attached every peer's regions
    kSharedContig = 16,  // allocate_shared: rank 0's one region holds every rank's part
    kActiveForced = 32,  // this rank forces active target to the emulation
    kMappedAll = 64,     // second round: this rank maps every peer's window memory
    kNoMem = 128,        // the window's memory could not be had (too large): creation fails with NO_MEM
  };
  uint32_t flags = 0;
  uint32_t ctl_len = 0, data_len = 0;
  uint32_t pad = 0;
  uint8_t ctl_key[kMaxKeyBytes] = {};
  uint8_t data_key[kMaxKeyBytes] = {};
};

struct NativePeer {
  RemoteRegion* ctl_r = nullptr;  // the region of its control block (detached here)
  RemoteRegion* mem_r = nullptr;  // the region of its window memory (detached here unless it is ctl_r or shared)
  uint64_t mem_off = 0;           // offset of its window memory in mem_r
  bool owns_mem_r = false;
  Control* ctl = nullptr;  // its control block, mapped
  char* mem = nullptr;     // its window memory, mapped (nullptr: not load/store reachable)
  bool reached = false;    // attached: the channel reaches it (else every operation to it is emulated)
  // Dynamic windows: its table of attached regions (mapped), and per entry
  // the region attached here for the generation it was attached at.
  DynTable* dyn = nullptr;
  struct DynCache {
    uint64_t state = 0;
    RemoteRegion* r = nullptr;
  };
  std::vector<DynCache> dyn_cache;
};

class NativeWin {
 public:
  explicit NativeWin(OneSided& o) : os(o) {}
  ~NativeWin();
  NativeWin(const NativeWin&) = delete;
  NativeWin& operator=(const NativeWin&) = delete;

  OneSided& os;
  Region* mine = nullptr;  // control block (+ the memory of an allocate window)
  Region* user = nullptr;  // exposed user memory (create)
  Control* ctl = nullptr;
  std::vector<NativePeer> peers;  // by comm rank
  bool passive = false;           // every rank agreed: locks are the control blocks' words
  bool active = false;            // every rank agreed: fence and PSCW are the control blocks' counters
  // Some rank reaches some window memory by cross-memory attach (its
  // accumulates read, combine and write back under the stripes, which every
  // accumulate takes on every window: rma/atomic_acc.hpp).
  bool cma_acc = false;
  // The channel's call that bypasses the target is cheap enough
  // (OneSidedCaps::call_ns under kLeanCallMaxNs) for the first put, get or
  // read-only atomic of an interval to take it without a look at the
  // target (mpi/win_cma.cpp): else every one looks, and goes as a packet
  // to a target that polls.
  bool lean_first = false;
  bool others_emulate = false;  // some rank forces operations to the emulation
  bool nic = false;             // a NIC window: nothing is mapped, the interface reaches everything
  bool partial = false;         // some members are not reached (other hosts): emulated to them
  // rma/native_fast.hpp may serve this window: mapped memory, no
  // operation forced to the emulation here; fast_fence: nor fence epochs.
  bool fast = false, fast_fence = false;
  // Every member has a core of its own: a fence waiting for the peers'
  // counts looks at them alone first (await_fences).
  bool own_cores = false;
  // A window of two ranks: the counts of emulated operations each rank had
  // announced to us when a fence last found them all applied and answered
  // (rma/fence.cpp pair_fence; only grows).
  uint64_t pair_applied[2] = {};
  // A window of two ranks: the words pair_fence touches, found once (its
  // first fence) instead of through peers and comm at every fence.
  struct PairWords {
    uint64_t* theirs = nullptr;  // the peer's fences
    uint64_t* told = nullptr;    // announced[me] in the peer's block
    int peer = -1;               // its comm rank
    int bell = -1;               // its channel rank (OneSided::wake)
  } pair;
  // rma/native_fast.hpp's view of each target (by comm rank; empty unless
  // `fast`): its mapped memory (null: not served there), window size,
  // displacement unit and control block, in one place, so the fast path
  // reads one entry instead of PeerWin and NativePeer.
  struct FastPeer {
    char* mem = nullptr;
    uint64_t size = 0;
    uint64_t unit = 1;
    Control* ctl = nullptr;
    // Not mapped (mem null): puts, gets and atomics reach the memory by
    // cross-memory attach (the window's part of native_cma's cma_epoch),
    // so a fast lock can set the binding's byte for it (kDirectCma).
    bool cma = false;
    // Puts and gets from this size take the general path, which hands them
    // to the channel (OneSidedCaps::split_min).
    uint64_t split_min = UINT64_MAX;
  };
  std::vector<FastPeer> fastp;
  std::size_t fast_n = 0;  // fastp.size(), kept (the size of a vector divides by the entry's)
  // The last datatype fast_elem classified (rma/native_fast.hpp).
  const Datatype* elem_type = nullptr;
  native::FastElem elem{};
  std::unique_ptr<NicAtomics> nic_self;  // NIC windows: atomics on our own memory (loopback)
  std::vector<int8_t> held;              // per target: native lock held (0 none, 1 shared, 2 exclusive)
  // Dynamic windows: our table (after our control block) and the region
  // exposed for each of its entries.
  DynTable* dyn = nullptr;
  std::vector<Region*> dyn_exposed;
};

namespace native {

// Before the creation exchange. alloc: the window memory is allocated here
// (bytes; *base receives it); else user memory base/bytes is exposed.
// Returns false (and leaves the card empty) when the channel has no
// one-sided part or it failed: the window is then emulated throughout.
// shared_sizes (allocate_shared): every rank's size; without
// alloc_shared_noncontig rank 0 allocates one region for all of them (the
// control blocks, then the parts one after the other, contiguous).
bool prepare(WindowState& w, bool alloc, std::size_t bytes, void* user_base, void** base, NativeCard* card,
             const std::vector<int64_t>* shared_sizes = nullptr);
// After the first exchange: attaches every rank's regions; sets kAttached
// in *second when all worked.
void attach(WindowState& w, const std::vector<NativeCard>& cards, NativeCard* second);
// After the second exchange: agrees on the passive path and seals the
// regions (their names go: nothing is left behind by a crash).
void agree(WindowState& w, const std::vector<NativeCard>& firsts, const std::vector<NativeCard>& seconds);
// Whether operations to target may take the native path at all: the
// window is native and this rank attached the target's regions (false for
// a target on another host). Every origin that reaches a target and the
// target's own application of emulated packets then use the same
// element-wise atomics (rma/atomic_acc.hpp: the target's window is native
// too), so accumulates stay atomic whatever mix of paths the origins take.
bool reaches(const WindowState& w, int target);

// ---- active target (native_active.cpp; with the window's mutex held) ----
// Folds what the control blocks say of comm rank r into the window's
// state: r's fences and posts to us (the origin's gates), r's completions
// at us and the count of emulated operations it announced (the target's
// wait conditions).
void refresh(WindowState& w, int r);
void refresh_all(WindowState& w);
// Tells rank r how many operations we sent it through the emulation so far
// (before a fence or a completion counts: r waits until it applied them).
void announce(WindowState& w, int r);
// The store of announce into slot a: only its rank writes a slot, so the
// store (and its cache miss) is skipped when nothing changed.
inline void announce_at(uint64_t& a, uint64_t sent) {
  if (at(a).load(std::memory_order_relaxed) != sent) at(a).store(sent, std::memory_order_release);
}
// Enters fence number k: announces to every rank, then counts the fence
// (a release store: our stores to the window come before it). The caller
// then rings the peers (ring_fenced), before it returns or waits.
void enter_fence(WindowState& w, uint64_t k);
// Rings every peer's doorbell after enter_fence: one that sleeps in its
// fence sees our count. Its memory fence waits for our count's store to
// leave, which takes the line from the peers that read it: done after our
// first look at their counts, that miss and this one overlap (before it,
// every fence paid the two one after the other).
void ring_fenced(WindowState& w);
// Without the window's mutex, after ring_fenced: looks at the peers' fence
// counts alone, up to kFenceLooks plain and kFenceSpin paused looks, until
// every one reached k (true) (a pass of the device's wait loop, a progress
// pass and the whole state's refresh under the mutex, took ~300
// instructions between two looks, so the last rank's arrival was noticed
// up to that late). The caller's wait then settles the rest (emulated
// operations, gets), at once if nothing else is owed. Only where every
// member has a core (NativeWin::own_cores): a peer sharing ours could not
// arrive while we spin.
// With only: that count alone (a window of two ranks: the peer's).
bool await_fences(const WindowState& w, uint64_t k, uint64_t* only = nullptr);
// One look: every rank's fence count reached k.
bool fences_reached(const WindowState& w, uint64_t k);
// Fence k is complete by the control blocks (every rank's count reached k,
// what each announced to us is applied, we owe no reply): the fast fence's
// fence_done, which also needs the targets' queues empty (its condition).
// With the window's mutex held.
bool fence_settled(WindowState& w, uint64_t k);
// Counts an exposure epoch opened to origin r / an access epoch completed
// at target r.
void post_to(WindowState& w, int r);
void complete_at(WindowState& w, int r);

// ---- operations (native_ops.cpp; with the window's mutex held) ----
// Whether the peer's regions allow kind with this target type natively.
bool can(const WindowState& w, Msg kind, int target, bool contiguous_target);
// Runs one checked operation to completion (copies and atomics are
// synchronous on shared memory); returns 0 or an error code.
int run(WindowState& w, const OpArgs& a, const Checked& c);

// ---- passive target (native_ops.cpp; without the mutex: they may wait) ----
// Takes the target's lock word (waits in the device's blocking wait).
int lock(WindowState& w, int target, bool exclusive);
// Waits until ticket holds the lock word c (the device's blocking wait).
int lock_wait(WindowState& w, Control& c, bool exclusive, uint32_t ticket);
void unlock(WindowState& w, int target, bool exclusive);
// Compare-and-swap of the element at p, atomic with combine_atomic on the
// same element (given the same nic): under its stripe, unless the caller
// holds the target's exclusive lock.
void cas_element(Control* ctl, char* data, char* p, Builtin e, const void* swap, const void* compare, void* old,
                 NicAtomics* nic = nullptr, bool exclusive = false);

// ---- dynamic windows (native_dyn.cpp) ----
// Win_attach / Win_detach of a native dynamic window (w.mu held by the
// caller for attach; detach takes it itself because it waits): lists the
// region in our table / removes it and waits until no origin is inside a
// copy into it. attach of more regions than the table holds leaves the
// rest to the emulation (origins that do not find an address while the
// table overflowed send the operation as a packet).
void dyn_attach(WindowState& w, void* base, std::size_t bytes);
int dyn_detach(WindowState& w, uintptr_t base);
// Whether an operation goes natively: target's table lists a region
// holding the bytes and the channel reaches it (puts and gets: contiguous
// target; the accumulate family: any target layout in mapped memory, a
// contiguous one by cross-memory attach), or lists none and never
// overflowed (the operation then refuses the address). Attaches the
// entry's region on first use (cached per entry and generation).
bool dyn_native(const WindowState& w, const OpArgs& a, const Checked& c);
// Put or get (contiguous target) into target's attached memory; an address
// in no attached region is an RMA_RANGE error, deferred to the next
// synchronization as the emulation's target would report it.
int dyn_copy(WindowState& w, const OpArgs& a, const Checked& c, bool put);
// The attached region of target holding an operation's bytes, entered: we
// count in its users (its owner's detach waits for them) until dyn_leave.
struct DynAccess {
  RemoteRegion* r = nullptr;  // null: refused (RMA_RANGE deferred to the next synchronization)
  uint64_t addr = 0;          // the target address of the first byte (after the type's true_lb)
  uint64_t off = 0;           // its offset in r
  uint32_t* users = nullptr;
};
// 0 (d->r null when refused) or an error code (the region cannot be reached).
int dyn_enter(WindowState& w, const OpArgs& a, const Checked& c, DynAccess* d);
void dyn_leave(DynAccess& d);

// ---- NIC windows (native_nic.cpp) ----
// Whether the operation goes through the NIC: every operation to a target
// whose regions are attached (puts and gets over the target type's runs,
// the accumulate family and compare_and_swap element by element:
// rma/atomic_acc.hpp).
bool nic_can(const WindowState& w, const OpArgs& a, const Checked& c);
// A put whose target runs average fewer bytes than the channel's
// put_min_run (OneSidedCaps), to a target that serves packets anyway
// (serves_packets: active target, or its agent runs): the emulation's one
// packet beats a request per run.
bool nic_fragmented_put(const WindowState& w, const OpArgs& a, const Checked& c, bool serves_packets);
// Runs it to completion (posts, then flushes the target).
int nic_run(WindowState& w, const OpArgs& a, const Checked& c);
int nic_lock(WindowState& w, int target, bool exclusive);
void nic_unlock(WindowState& w, int target, bool exclusive);
// The loopback atomics of this rank's own memory (after attach).
std::unique_ptr<NicAtomics> make_nic_self(WindowState& w);

}  // namespace native
}  // namespace adi3::rma
