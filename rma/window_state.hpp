// The state of one window on one rank: what it knows of the peers' windows,
// its epochs as an origin, the per-target queues of operations (emul/), and
// the per-origin state the target side keeps (applied counts, replies, the
// lock queue). Everything here is guarded by `mu`: the user's threads, the
// progress engine's packet handlers and hooks (maybe on the agent thread)
// all take it, and none holds it while it waits.
#pragma once
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "adi3/spin_lock.hpp"
#include "adi3/types.hpp"
#include "emul/lock_queue.hpp"
#include "rma/native.hpp"
#include "rma/protocol.hpp"
#include "rma/window.hpp"
#include "segment/segment.hpp"

namespace adi3::rma {

class Hub;

// What this rank knows of a peer's part of the window (from the creation
// exchange).
struct PeerWin {
  int peer = -1;     // channel rank
  uint8_t pkt = 0;   // its packet id for rma packets
  uint32_t win = 0;  // its window slot and generation
  uint32_t gen = 0;
  uint64_t base = 0;
  int64_t size = 0;
  int disp_unit = 1;
};

// When a queued item may leave: after the target's post, its fence packet,
// or the grant of our lock request, numbered so that epochs never mix.
struct Gate {
  enum Kind : uint8_t { None, Post, Fence, Lock } kind = None;
  uint64_t n = 0;
};

// A get-like operation waiting for its reply data.
struct Pending {
  int target = 0;
  char* direct = nullptr;        // a contiguous result buffer, or
  std::unique_ptr<Segment> dst;  // any other (a Segment is large: only when needed)
  std::size_t total = 0, got = 0;
  Request* req = nullptr;
  int error = 0;
};

// One queued item to a target: an operation (streamed in chunks) or a
// synchronization packet (its count is filled in when it leaves).
struct Item {
  Msg kind = Msg::Put;
  Gate gate;
  uint8_t op = 0, elem = 0, flags = 0;
  uint64_t disp = 0, count = 0;
  const Datatype* ttype = nullptr;  // derived target type (retained): sent as TypeDesc first
  bool desc_sent = false;
  std::vector<uint8_t> desc;     // its description, encoded at issue (empty: the target held the type then)
  const char* data = nullptr;    // contiguous origin data, or any other layout
  std::unique_ptr<Segment> src;  // packed chunk by chunk straight into packets
  std::size_t total = 0, sent = 0;
  std::size_t chunk = 0;  // bytes per packet (element-aligned for accumulates)
  // fetch_and_op / compare_and_swap operands (compare_and_swap: origin
  // element then compare element; a predefined type is at most 32 bytes)
  alignas(16) uint8_t inline_data[64] = {};
  uint8_t inline_len = 0;
  uint64_t token = 0;      // reply token (get-like) or sequence number (unlock/flush)
  Request* req = nullptr;  // request-based put/accumulate: done when emitted
  // A large put or get whose data goes as a point-to-point message
  // (emul/rndv.cpp): the origin's buffer, count and type (retained until
  // the message is started).
  bool rndv = false;
  void* ubuf = nullptr;
  int64_t ucount = 0;
  const Datatype* utype = nullptr;
  bool is_op() const { return kind <= Msg::Cas; }
};

// Origin side, per target.
struct Target {
  std::deque<Item> q;
  uint64_t sent_ops = 0;  // operations emitted to it (cumulative)
  // queued_ops when everything emulated before it was last known applied,
  // or counted by a fence the target has since left (rma/fence.cpp).
  uint64_t settled_ops = 0;
  uint64_t queued_ops = 0;  // operations pushed (cumulative)
  uint64_t flushed_ops = 0;
  uint64_t posts = 0;  // Post packets received from it
  uint64_t posts_claimed = 0;
  uint64_t fences = 0;     // Fence packets received from it
  uint64_t grants = 0;     // LockGrant packets received from it
  uint64_t lock_reqs = 0;  // LockReq packets queued to it
  uint64_t sync_seq = 0, acked = 0;
  int replies = 0;    // get-like operations awaiting data from it
  int rndv_out = 0;   // puts whose message to it has not left yet (emul/rndv.cpp)
  int rndv_owed = 0;  // of those, pieces still owed (no later put's message goes before them)
  // A put went as a message since the last flush: a get's reply no longer
  // says that the target applied everything before it.
  bool rndv_put = false;
  const Datatype* last_desc = nullptr;  // the target type it holds (retained)
  // passive target
  bool locked = false;
  bool lock_nocheck = false;
  bool lock_pending = false;  // lock request not yet sent (lazy: sent with the first item)
  LockKind lock_kind = LockKind::Shared;
  uint64_t lock_epoch = 0;  // grants needed for the current lock
  // active target
  Gate epoch_gate;  // gate of this epoch's items (fence/PSCW)
  // Emulated operations to it may still be in flight (since its last
  // completion): later ones stay emulated too, so none overtakes them.
  bool emul_inflight = false;
  // A window from create (its memory reached by cross-memory attach): the
  // target polled, yet the answer to the one packet operation before a
  // flush or unlock came late (rma/route.cpp answered): until cma_until_ns
  // (steady clock; 0: no such time) operations to it take cross-memory
  // attach, whatever it seems to do. cma_for_ns: the last such span (it
  // doubles while answers stay late). cma_until_ns is read without the
  // mutex (rma::polls_now).
  std::atomic<int64_t> cma_until_ns{0};
  int64_t cma_for_ns = 0;
  // A completion (flush, unlock, complete) found every emulated operation
  // to it applied, or ordered before the target's next epoch.
  void settle() {
    emul_inflight = false;
    settled_ops = queued_ops;
  }
  // A fence every rank entered (native or emulated): the target applied
  // what we queued it before our last settle or fence (it left that fence
  // to enter this one), but maybe not what we queued since, as we may leave
  // first. Later operations stay behind those (a native put could land
  // before the packet of this epoch's put).
  void fenced() {
    emul_inflight = queued_ops != settled_ops;
    settled_ops = queued_ops;
  }
  // emul/origin.cpp: a put or accumulate held back (q is empty then) until
  // the next push or progress pass, so that a flush or unlock right behind
  // it rides on it.
  bool hold = false;
  Item held;
  // The held operation also owes the epoch's lock request (lock_epoch is
  // its number): an unlock right behind it rides on it with the request
  // (rma::kLockReq), anything else queues the request and then it.
  bool hold_lock = false;
  // The last operation pushed fetches: its reply says the target applied
  // everything before it, so a flush needs no packet of its own; acked
  // becomes ack_on_reply when no reply is outstanding.
  bool tail_fetch = false;
  uint64_t ack_on_reply = 0;
  // Flushed after every operation lately (the last flush had one operation
  // before it): a put or accumulate of one packet then leaves at once asking
  // for an Ack with sequence number spec_seq (reserved), instead of being
  // held, so that the flush behind it (queued_ops still spec_ops) sends
  // nothing and its round trip started with the operation (emul/origin.cpp).
  bool flush_each_op = false;
  uint64_t spec_seq = 0, spec_ops = 0;
  // emul/batch.cpp: small contiguous puts and gets of a passive epoch,
  // coalesced into one Batch packet (records, rma::BatchRec) that leaves
  // before any other packet to this target, at the flush or unlock (which
  // rides on it), when it (or the reply its gets ask for) fills, or at the
  // next progress pass.
  std::unique_ptr<char[]> batch;
  std::size_t batch_len = 0;
  std::size_t batch_reply = 0;  // bytes of the BatchResp its gets ask for
  uint32_t batch_ops = 0;
};

// Whether the synchronization an operation waits for has arrived from its
// target (post, fence count, or the grant of an emulated lock).
inline bool gate_open(const Target& t, const Gate& g) {
  switch (g.kind) {
    case Gate::None:
      return true;
    case Gate::Post:
      return t.posts >= g.n;
    case Gate::Fence:
      return t.fences >= g.n;
    case Gate::Lock:
      return t.grants >= g.n;
  }
  return false;
}

// A reply the target owes an origin, in order: data of a get (streamed),
// a lock grant, the acknowledgement of an unlock or flush.
struct Reply {
  Msg kind = Msg::GetResp;
  // Window memory of a get: contiguous bytes (sent from where they lie, so a
  // large chunk takes the channel's streaming copy), or any other layout.
  const char* direct = nullptr;
  Segment src;
  std::size_t first = 0, total = 0;
  uint64_t token = 0;
  uint64_t count = 0;  // Unlock/Flush: operations the origin sent before it
  // Ack: the messages of operations started before it (emul/rndv.cpp) that
  // must be done before it leaves.
  uint64_t rndv = 0;
  bool release = false;  // Unlock: release the lock when it leaves
  bool nocheck = false;
};

// The reply record of a get-like operation of the short path
// (emul/quick.cpp): one packet of reply data for a contiguous buffer.
// WindowState::quick holds a fixed number, so such an operation allocates
// nothing and its reply finds the record by index, not through `pending`.
struct QuickReply {
  uint64_t token = 0;  // 0: the slot is free
  char* dst = nullptr;
  std::size_t len = 0;
  int target = -1;
};
// A token with this bit names slot token % kQuickSlots of WindowState::quick
// (the bits above the slot count the tokens handed out, so a stale or forged
// reply does not match a live record); tokens of `pending` never have it.
inline constexpr uint64_t kQuickToken = uint64_t{1} << 63;
inline constexpr std::size_t kQuickSlots = 64;
inline constexpr uint64_t kQuickAllFree = ~uint64_t{0};

// Target side, per origin.
struct Origin {
  uint64_t applied = 0;            // operations applied (a get counts when its data has left)
  uint64_t announced = 0;          // operations the last sync packet said were sent
  uint64_t fences = 0;             // Fence packets received
  uint64_t completes = 0;          // Complete packets received
  uint64_t expected = 0;           // Complete packets expected (posts made to it)
  const Datatype* desc = nullptr;  // target type of the last TypeDesc (owned)
  std::vector<uint8_t> desc_part;  // a TypeDesc of several packets, so far
  std::deque<Reply> out;
  // Messages of puts received and gets answered (emul/rndv.cpp): started,
  // done. An Ack leaves once those started before it are done.
  uint64_t rndv_started = 0, rndv_done = 0;
  int rndv_owed = 0;  // drains owed for its put pieces (no later put's receive is posted before them)
  // A put or accumulate carrying its lock request and unlock (kLockReq)
  // that waits for the lock: applied and acknowledged when granted.
  bool parked = false;
  Header parked_h{};
  alignas(16) uint8_t parked_data[64] = {};
};

class WindowState {
 public:
  WindowState(Device& dev, const Comm& comm, WinFlavor flavor, const WinInfo& info);
  ~WindowState();

  Device& dev;
  Comm comm;
  WinFlavor flavor;
  WinInfo info;
  Hub* hub = nullptr;
  uint32_t slot = 0, gen = 0;
  void* base = nullptr;
  int64_t size = 0;
  int disp_unit = 1;
  void* owned = nullptr;  // memory of an allocate window
  bool agent = false;     // passive target progresses without the target

  // Held for short sections only, never across a wait: a spin lock that
  // yields (adi3/spin_lock.hpp) costs one atomic per section where a
  // std::mutex costs two and two calls (a flush takes it several times).
  SpinLock mu;
  std::vector<PeerWin> peers;     // by comm rank
  std::vector<int> comm_of_peer;  // channel rank -> comm rank (-1: not a member)
  std::vector<Target> targets;    // by comm rank
  std::vector<Origin> origins;    // by comm rank
  std::unordered_map<uint64_t, std::unique_ptr<Pending>> pending;
  // Records of finished get-like operations (map node and Pending), reused
  // by the next ones so that a get allocates nothing (emul/target.cpp).
  std::vector<decltype(pending)::node_type> spare_pending;
  uint64_t next_token = 1;
  // The short path's reply records (bit i of quick_free: slot i is free).
  std::array<QuickReply, kQuickSlots> quick{};
  uint64_t quick_free = kQuickAllFree;
  uint64_t quick_seq = 0;
  std::atomic<int> queued{0};  // items in all target queues and replies (the hook's fast exit)
  // Changed under mu only (read without it by the hook): no locked
  // instruction per operation.
  void add_queued(int d) { queued.store(queued.load(std::memory_order_relaxed) + d, std::memory_order_relaxed); }

  // Operations whose data travels as point-to-point messages
  // (emul/rndv.cpp), the requests of those messages, and the
  // communicator they go on (the window's ranks, a context of its own).
  struct RndvOp {
    // Owed: a put's piece that could not start for lack of a request or
    // memory, which its peer still waits for (emul/rndv.cpp start_owed).
    enum Role : uint8_t { PutOut, GetIn, PutIn, GetOut, Drain, OwedSend, OwedDrain } role = PutOut;
    int rank = 0;             // the other side (comm rank)
    Request* msg = nullptr;   // the message's request (our reference; none while owed)
    Request* user = nullptr;  // an rput's request (PutOut)
    Header h{};               // the operation (target side: for a refusal)
    // A piece of an operation sent as several messages: the pieces of one
    // share a group number (0: a whole operation), and the one that ends
    // while others of its group are pending hands them its error, bytes
    // and request; the last to end ends the operation.
    uint32_t group = 0;
    int error = 0;
    std::size_t got = 0;
  };
  std::vector<RndvOp> rndv;
  uint32_t rndv_groups = 0;
  Comm rndv_comm;

  // dynamic windows: attached regions (address, bytes)
  std::vector<std::pair<uintptr_t, std::size_t>> regions;

  // origin epochs
  enum class Access : uint8_t { None, Fence, Pscw, Lock, LockAll };
  Access access = Access::None;
  uint64_t fence_no = 0;
  uint64_t fence_ops = 0;   // operations issued since the last fence
  bool fence_lazy = false;  // last fence had NOPRECEDE: ops wait for the peers' fence packets
  std::vector<int> start_group;
  int locks_held = 0;
  // exposure epochs
  bool exposed = false;
  std::vector<int> post_group;
  // target side
  emul::LockQueue lockq;
  std::vector<uint64_t> scratch[3];  // aligned buffers for accumulates (used under mu)
  std::vector<char> batch_out;       // a BatchResp being filled (emul/batch.cpp, under mu)
  // the first error a target reported for this origin's operations
  // (atomic: rma/native_fast.hpp reads it without mu while the agent may
  // set it)
  std::atomic<int> deferred_error{0};

  // The native part (rma/native.hpp): null when the channel has none or
  // the window cannot use it; usable once every rank attached every region.
  std::unique_ptr<NativeWin> native;
  bool native_usable = false;
  // Operations issued per path (the core always knows the path it took).
  uint64_t native_ops = 0, emulated_ops = 0;

  // A full memory fence: a seq_cst read-modify-write (which TSan models;
  // std::atomic_thread_fence it does not). On a NIC window it also waits
  // for the operations posted and not yet completed (every synchronization
  // that completes operations fences: flush, unlock, fence, complete).
  void memory_fence() {
    fence_word.fetch_add(0, std::memory_order_seq_cst);
    unfenced->store(false, std::memory_order_relaxed);
    if (nic_posted.load(std::memory_order_acquire)) complete_nic();
  }
  std::atomic<int> fence_word{0};

  // ---- the fence a flush owes, deferred (x86-TSO) ----
  // Stores leave a CPU in program order, so a store made before a flush is
  // ordered before every later store of ours: whoever learns that we passed
  // the flush (a message, a counter, a lock word) sees it. Only a later
  // *load* of ours may pass it (the store buffer), which breaks the Dekker
  // pattern (put x; flush; get y against put y; flush; get x: both may read
  // the old values). So on x86 the native fast flush fences nothing; every
  // native store raises `unfenced` (per device: the load may be on another
  // window) and the next native load that no locked instruction precedes
  // fences first (before_load). Elsewhere the flush fences as before.
  // Only where the application's calls do not run concurrently
  // (rma/native_fast.hpp's condition): a fence orders its own thread's
  // stores only.
#if defined(__x86_64__) || defined(__i386__)
  static constexpr bool kDeferFence = true;
#else
  static constexpr bool kDeferFence = false;
#endif
  // A native store was made since the last full fence.
  void stored() {
    if constexpr (kDeferFence) unfenced->store(true, std::memory_order_relaxed);
  }
  // Before a native load that may be ordered against other ranks' stores
  // (a get, the read of an atomic without a locked instruction before it).
  void before_load() {
    if constexpr (kDeferFence) {
      if (unfenced->load(std::memory_order_relaxed)) memory_fence();
    }
  }
  // Per device once the hub holds the window (Hub::add), so that a load on
  // one window waits for a store on another.
  std::atomic<bool> own_unfenced{false};
  std::atomic<bool>* unfenced = &own_unfenced;
  // NIC windows (rma/native_nic.cpp): puts and gets are posted and left to
  // complete; nic_dirty (under nic_mu) names the targets that have some.
  std::atomic<bool> nic_posted{false};
  std::mutex nic_mu;
  std::vector<uint8_t> nic_dirty;
  void complete_nic();

  // ---- helpers (rma/*.cpp, emul/*.cpp) ----
  int my_rank() const { return comm.rank; }
  // Fence and PSCW through the control blocks' counters (every rank agreed;
  // never on a NIC window): rma/native_active.cpp.
  bool native_active() const { return native_usable && native->active; }
  // Allocate and shared windows: the peers reach the memory with loads and
  // stores (no operation waits for this rank's answer to a packet).
  bool mapped() const { return flavor == WinFlavor::Allocate || flavor == WinFlavor::Shared; }
  // Reports and clears the first error the targets sent back.
  int take_error();
};

}  // namespace adi3::rma
