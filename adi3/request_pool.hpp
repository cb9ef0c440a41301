// Per-device pool of requests: chunks carved once, a free list after, so
// steady-state messaging does no malloc. A slot holds a constructed Request
// for the pool's whole life: handing it out again resets it in place, and
// giving it back only unlinks it and bumps its generation.
//
// Requests travel on the wire as ids, never as addresses: an id names a
// slot of the pool and the generation of its current occupant (bumped at
// every get and put, odd while live). lookup() answers only for a live
// request of exactly that generation, so a forged, stale or reused id from
// another process finds nothing instead of memory.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "adi3/request.hpp"
#include "adi3/hot_inline.hpp"
#include "adi3/spin_lock.hpp"

namespace adi3 {

class RequestPool {
 public:
  // Slots there can ever be (ADI3_MAX_REQUESTS is capped at it).
  static constexpr std::size_t kMaxSlots = std::size_t{16384} * 64;

  // At most max_requests live (rounded up to a multiple of 64, capped at
  // 1 Mi): ADI3_MAX_REQUESTS.
  explicit RequestPool(bool thread_safe = false, std::size_t max_requests = kMaxSlots);
  // Takes its lock from now on (LayerPort::enable_threads, while no other
  // thread uses it).
  void enable_threads() { thread_safe_.store(true, std::memory_order_relaxed); }
  ~RequestPool();
  RequestPool(const RequestPool&) = delete;
  RequestPool& operator=(const RequestPool&) = delete;

  // A fresh request with refs = 1 and cc = 1, or nullptr when the pool is
  // at its cap or memory for a new chunk cannot be had (callers turn it
  // into ERR_NO_MEM). Never throws. Single-threaded it is a pop and a reset.
  // get<false>: for a caller that sets the envelope and buffer (buf, count,
  // type, context, source, tag, peer) before anything reads them, the reset
  // leaves those alone. Only single-threaded (nobody looks the slot up
  // meanwhile); with threads get_slow resets everything.
  template <bool kEnvelope = true>
  ADI3_HOT_INLINE Request* get(Device* dev, RequestKind kind) noexcept {
    // The flag first: with threads free_ is read only under lock_.
    if (thread_safe_.load(std::memory_order_relaxed) || !free_) [[unlikely]]
      return get_slow(dev, kind);
    Request* r = free_;
    free_ = r->pool_next;
    live_.store(live_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    if constexpr (kEnvelope) {
      start(r, dev, kind);
    } else {
      start_inline<false>(r, dev, kind);
    }
    return r;
  }
  // The most requests that can be live at once.
  std::size_t capacity() const { return max_chunks_ * kChunk; }
  ADI3_HOT_INLINE void put(Request* r) {
    if (thread_safe_.load(std::memory_order_relaxed)) [[unlikely]] {
      put_locked(r);
      return;
    }
    put_unshared(r);
  }
  // put() for a caller that knows the pool takes no lock (its device found
  // threads off, once for a whole set of requests).
  ADI3_HOT_INLINE void put_unshared(Request* r) {
    retire(r);
    r->pool_next = free_;
    free_ = r;
    live_.store(live_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
  }
  // Read from any thread (error messages name it): a relaxed atomic,
  // changed only by the owner or under lock_ (a plain load and store).
  std::size_t live() const { return live_.load(std::memory_order_relaxed); }
  // The live request an id from the wire names, or nullptr.
  Request* lookup(uint64_t id) const;
  // The live request in slot `index` (the low half of its id, minus 1)
  // whose generation agrees with gen in the bits of mask, or nullptr: for
  // names with fewer generation bits than the wire's (the MPI binding's
  // MPI_Request handles). Lock-free, like lookup.
  Request* lookup_slot(std::size_t index, uint32_t gen, uint32_t mask) const { return slots().find(index, gen, mask); }

 private:
  struct Chunk {
    char* slots;  // kChunk requests
  };

 public:
  // The chunk table, for lookup_slot over many names (MPI_Waitall's
  // handles): its address is read once for all of them. Each name's acquire
  // load of its chunk kept the compiler from hoisting that read (s20).
  class Slots {
   public:
    explicit Slots(const std::atomic<Chunk*>* chunks) : chunks_(chunks) {}
    ADI3_HOT_INLINE Request* find(std::size_t index, uint32_t gen, uint32_t mask) const {
      return find_if(index, [&](const Request&, uint32_t g) { return (g & 1) && !((g ^ gen) & mask); });
    }
    // The request in slot index if ok(request, its generation) holds, else
    // nullptr: for a caller that tests the generation its own way.
    template <class Ok>
    ADI3_HOT_INLINE Request* find_if(std::size_t index, Ok&& ok) const {
      if (index >= kMaxSlots) return nullptr;
      Chunk* c = chunks_[index / kChunk].load(std::memory_order_acquire);
      if (!c) [[unlikely]]
        return nullptr;
      auto* r = reinterpret_cast<Request*>(c->slots + (index % kChunk) * kSlot);
      if (!r) __builtin_unreachable();  // a chunk's slots exist: callers need not test r again
      return ok(*r, r->pool_gen.load(std::memory_order_acquire)) ? r : nullptr;
    }

   private:
    const std::atomic<Chunk*>* chunks_;
  };
  Slots slots() const { return Slots(chunks_.get()); }

 private:
  static constexpr std::size_t kChunk = 64;
  static constexpr std::size_t kMaxChunks = kMaxSlots / kChunk;  // 1 Mi live requests
  static constexpr std::size_t kSlot = (sizeof(Request) + 63) / 64 * 64;

  // A taken slot made ready for its next occupant, then live for lookup()
  // under its next (odd) generation: an id from the wire, even a forged
  // one, never finds a request whose reset is under way. Only the taker
  // changes a taken slot's generation until put().
  template <bool kEnvelope = true>
  static void start(Request* r, Device* dev, RequestKind kind) {
    start_inline<kEnvelope>(r, dev, kind);
  }
  // Forced inline for the fast isend/irecv (get<false>): out of line it was
  // a call through libmpi's PLT per request. Not for every get(): forced
  // into the collectives' launch, GCC 12 warned a false stringop-overflow.
  template <bool kEnvelope>
  ADI3_HOT_INLINE static void start_inline(Request* r, Device* dev, RequestKind kind) {
    const uint32_t gen = r->pool_gen.load(std::memory_order_relaxed) + 1;
    r->reset<kEnvelope, false>();
    r->dev = dev;
    r->kind = kind;
    r->wire_id = uint64_t{gen} << 32 | (r->wire_id & 0xffffffffu);
    r->refs.store(1, std::memory_order_relaxed);
    r->cc.store(1, std::memory_order_relaxed);
    r->pool_gen.store(gen, std::memory_order_release);
  }
  // A request given back: out of every list it may still sit in, and no
  // longer found by lookup (even generation). A plain increment: writers of
  // a generation are serialized (one thread, or under lock_).
  ADI3_HOT_INLINE static void retire(Request* r) {
    static_cast<QueueHook*>(r)->unlink();
    // One test for three hooks: the unexpected tables link them together, and the other lists on
    // ByTag/ByCtx (pollables_, bsends_) hold a reference, so no request there comes back here.
    if (static_cast<BySrcHook*>(r)->is_linked()) [[unlikely]] {
      static_cast<BySrcHook*>(r)->unlink();
      static_cast<ByTagHook*>(r)->unlink();
      static_cast<ByCtxHook*>(r)->unlink();
    }
    r->pool_gen.store(r->pool_gen.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }
  Request* get_slow(Device* dev, RequestKind kind) noexcept;
  void put_locked(Request* r);
  bool grow() noexcept;

  std::atomic<bool> thread_safe_{false};
  SpinLock lock_;
  Request* free_ = nullptr;
  // Written once per chunk (under lock_), read by lookup without it.
  std::unique_ptr<std::atomic<Chunk*>[]> chunks_;
  std::size_t nchunks_ = 0;
  std::size_t max_chunks_ = kMaxChunks;
  std::atomic<std::size_t> live_{0};
};

}  // namespace adi3
