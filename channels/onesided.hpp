// The one-sided part of a channel: memory regions peers reach without the
// owner's help, and nonblocking operations on them.
//
// A rank *exposes* memory as a Region (memory the channel allocates, which
// for shared memory is a segment peers map, or memory the program already
// has, registered). A region yields a *key*: an opaque blob of at most
// kMaxKeyBytes that the ranks exchange themselves (for shm a segment name
// and an offset, or a process id and an address for cross-memory attach;
// for verbs an rkey and a virtual address). A peer turns a key into a
// RemoteRegion with attach() and addresses operations by (region, offset).
//
// Operations are nonblocking: put/get/fetch_add/compare_swap start the
// transfer and return; the source buffer of a put and the result of a get
// or atomic may be used after flush(peer), which completes every operation
// to that peer at the target (remote completion). A channel whose copies
// are synchronous (shm) completes them at once and flush() is a memory
// fence. Each call returns 0, or -1 with `errno` describing the failure;
// an operation the region does not support natively (see `ops`) returns -1
// with ENOTSUP, and the core then takes the emulation for that operation
// alone.
//
// Capabilities are per operation and per region, the way Open MPI's
// transports say PUT versus PUT_AM: `OneSidedCaps::native_ops` says what the
// channel can ever do natively, `RemoteRegion::ops` what this region allows
// (a shm segment: everything with loads and stores; a region reached by
// cross-memory attach: put and get only). The core routes per operation
// (rma/route.*) and records the path it took.
//
// Every key comes from another process: attach() checks it (format, sizes,
// that the memory behind it really has that size) and fails cleanly.
//
// Threading: attach/detach/expose/release are serialized by the caller (they
// are collective in practice); operations may come from any thread.
#pragma once
#include <cstddef>
#include <cstdint>

namespace adi3 {

// The operations of the interface, as bits of capability masks.
enum OneSidedOp : uint32_t {
  kOsPut = 1u << 0,
  kOsGet = 1u << 1,
  kOsFetchAdd = 1u << 2,     // 4 or 8 bytes (see atomic_widths)
  kOsCompareSwap = 1u << 3,  // 4 or 8 bytes
  kOsLoadStore = 1u << 4,    // the region is mapped: RemoteRegion::direct is valid
};

inline constexpr std::size_t kMaxKeyBytes = 96;

struct OneSidedCaps {
  uint32_t native_ops = 0;     // OneSidedOp bits the channel can do natively
  uint32_t atomic_widths = 0;  // bit n: atomics on 2^n bytes (bit 2: 4 bytes, bit 3: 8 bytes)
  // Operations complete without any call by the target (types 2 and 4 can
  // rest on them: no agent thread is needed).
  bool progress_without_target = false;
  // A noncontiguous put whose target runs average fewer bytes than this is
  // cheaper as a packet the target unpacks (the emulation) than as one
  // request per run (0: never); the core takes that choice per operation
  // where the target serves packets (rma/route.cpp).
  uint32_t put_min_run = 0;
  // Puts and gets of at least this many bytes on mapped memory go through
  // put()/get() rather than the core's own copy (the channel shares them
  // with the target: shm's cma_split.cpp). SIZE_MAX: never.
  std::size_t split_min = SIZE_MAX;
  // What one small operation that bypasses the target costs the origin
  // (nanoseconds; shm: a cross-memory-attach system call on memory that is
  // not mapped). The core sends the first put or get of an interval that
  // way, without a look at the target, only when this is well below a
  // packet's round trip (rma/native.cpp, lean_first). 0: as cheap as a load.
  uint32_t call_ns = 0;
};

// Memory this rank exposes.
struct Region {
  void* base = nullptr;
  std::size_t bytes = 0;
  uint8_t key[kMaxKeyBytes] = {};
  std::size_t key_bytes = 0;

 protected:
  ~Region() = default;  // released through OneSided::release
};

// A peer's region, as attached here.
struct RemoteRegion {
  int peer = -1;
  std::size_t bytes = 0;
  uint32_t ops = 0;        // OneSidedOp bits this region supports natively
  void* direct = nullptr;  // with kOsLoadStore: the region mapped here

 protected:
  ~RemoteRegion() = default;  // released through OneSided::detach
};

class OneSided {
 public:
  virtual const OneSidedCaps& caps() const = 0;

  // Memory the channel allocates (zeroed, 64-byte aligned; shm: a segment
  // that peers map, so loads and stores reach it). nullptr and errno on
  // failure. Whoever allocates releases.
  virtual Region* allocate(std::size_t bytes) = 0;
  // Memory the program owns (MPI_Win_create, attach): registered, not
  // copied. nullptr (ENOTSUP) when the channel cannot expose user memory.
  virtual Region* expose(void* base, std::size_t bytes) = 0;
  // r (from expose, or allocate for MPI_Win_allocate[_shared]) is a
  // window's memory: exposed once, reached by many operations. A channel
  // may prepare it for that, at a bounded cost (shm: huge pages for
  // cross-memory attach; peers' split asks may copy into it). Never
  // called for the per-call exposures of point-to-point or collectives.
  virtual void exposed_for_window(Region& r) { (void)r; }
  virtual void release(Region* r) = 0;
  // Once every peer attached: drop whatever made the key findable (a shm
  // segment's name), so a crash leaves nothing behind. Idempotent.
  virtual void seal(Region* r) = 0;

  // A key a peer sent; nullptr and errno (EINVAL for a malformed or lying
  // key, ENOTSUP for a kind this channel cannot reach) on failure.
  virtual RemoteRegion* attach(int peer, const void* key, std::size_t key_bytes) = 0;
  virtual void detach(RemoteRegion* r) = 0;

  // Nonblocking operations at byte `offset` of a region; [offset, +len)
  // must lie inside it (checked: -1 / ERANGE otherwise).
  virtual int put(RemoteRegion& r, uint64_t offset, const void* src, std::size_t len) = 0;
  virtual int get(RemoteRegion& r, uint64_t offset, void* dst, std::size_t len) = 0;
  // The same over n runs of the region (a noncontiguous target), from or
  // into the packed bytes at local, in order. A channel that can chain
  // them in one posting does (verbs); the default issues one per run.
  struct Run {
    uint64_t offset;
    std::size_t len;
  };
  virtual int put_runs(RemoteRegion& r, const Run* runs, std::size_t n, const void* local) {
    for (std::size_t i = 0; i < n; local = static_cast<const char*>(local) + runs[i].len, ++i) {
      if (int rc = put(r, runs[i].offset, local, runs[i].len)) return rc;
    }
    return 0;
  }
  virtual int get_runs(RemoteRegion& r, const Run* runs, std::size_t n, void* local) {
    for (std::size_t i = 0; i < n; local = static_cast<char*>(local) + runs[i].len, ++i) {
      if (int rc = get(r, runs[i].offset, local, runs[i].len)) return rc;
    }
    return 0;
  }
  // *result = old value; width is 4 or 8, offset aligned to it.
  virtual int fetch_add(RemoteRegion& r, uint64_t offset, uint64_t operand, uint64_t* result, std::size_t width) = 0;
  virtual int compare_swap(RemoteRegion& r, uint64_t offset, uint64_t compare, uint64_t swap, uint64_t* result,
                           std::size_t width) = 0;
  // Completes every operation issued to peer at the target.
  virtual int flush(int peer) = 0;

  // A routing hint: whether peer's progress engine is polling right now,
  // so a packet to it would be served at once. The core then sends small
  // operations on regions that are not mapped (cross-memory attach costs a
  // system call or two) as packets instead; when the peer computes or
  // sleeps it takes the one-sided path, which needs nobody. False when the
  // channel cannot tell.
  virtual bool attentive(int /*peer*/) { return false; }

  // Whether this channel reaches peer's memory at all. A channel set (shm
  // on the host, a network channel across: adi3/channel_set.hpp) reaches
  // its own host's ranks only; attach() to any other fails with
  // EHOSTUNREACH, and the core emulates the operations to that peer.
  virtual bool reaches(int /*peer*/) const { return true; }

  // The one-sided part MPI_Win_allocate_shared uses: regions every member
  // maps (loads, stores, CPU atomics), for the peers it reaches(). A
  // channel whose own regions are not mapped (verbs) may keep one for the
  // ranks of its host; nullptr when it has none.
  virtual OneSided* shared_part() { return (caps().native_ops & kOsLoadStore) ? this : nullptr; }

  // Whether peer's process still lives as far as the channel can tell (its
  // dead-peer detection; no progress is made, no packet delivered). A wait
  // on a word only that peer can change (a lock it holds) asks it now and
  // then, so a dead holder ends the wait instead of leaving it spinning.
  virtual bool peer_alive(int /*peer*/) { return true; }

  // Wakes peer if a thread of it sleeps in a blocking wait: a waiter on a
  // word of a region (an active-target counter) sleeps on its doorbell, and
  // a store into the region rings nothing. Call it after the store. A
  // channel whose waiters never sleep does nothing.
  virtual void wake(int /*peer*/) {}

 protected:
  ~OneSided() = default;  // owned by its channel
};

}  // namespace adi3
