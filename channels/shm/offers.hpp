// The send buffers this rank offered each peer for a single-copy get
// (Channel::offer_began/offer_ended): a peer's split ask (cma_split.cpp)
// may make us write out of such a buffer, never out of memory we did not
// offer it. Filled by the threads that send, read by the thread serving
// an ask: each slot is a seqlock, so neither side takes a lock.
//
// A few slots per peer, each counting the offers of one range (a window of
// sends from one buffer takes one slot): a rank with more distinct
// buffers offered to one peer forgets its oldest; an ask inside a
// forgotten offer is refused, and the asker then copies alone (slower,
// never wrong).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace adi3::shm {

class OfferTable {
 public:
  explicit OfferTable(int ranks)
      : ranks_(ranks),
        slots_(std::make_unique<Slot[]>(static_cast<std::size_t>(ranks) * kSlots)),
        next_(std::make_unique<std::atomic<uint32_t>[]>(static_cast<std::size_t>(ranks))) {}

  // The same buffer offered again (a window of sends from one buffer, as
  // bandwidth loops do) counts in its slot: each answer takes one back.
  void began(int peer, uint64_t base, uint64_t len) {
    if (!valid(peer) || len == 0 || base > UINT64_MAX - len) return;
    Slot* s = of(peer);
    for (Slot* x = s; x != s + kSlots; ++x) {
      if (holds(*x, base, base + len) && count(*x, base, base + len, +1)) return;
    }
    // A free slot, else the next in turn (the oldest, roughly).
    for (int tries = 0; tries < 2 * kSlots; ++tries) {
      const bool free_only = tries < kSlots;
      const uint32_t i = free_only ? static_cast<uint32_t>(tries)
                                   : next_[static_cast<std::size_t>(peer)].fetch_add(1, std::memory_order_relaxed);
      Slot& x = s[i % kSlots];
      if (free_only && x.end.load(std::memory_order_relaxed) != 0) continue;
      if (take(x, free_only ? 0 : kAny, 0, base, base + len)) return;
    }
  }

  void ended(int peer, uint64_t base, uint64_t len) {
    if (!valid(peer) || len == 0 || base > UINT64_MAX - len) return;
    for (Slot* x = of(peer); x != of(peer) + kSlots; ++x) {
      if (holds(*x, base, base + len) && count(*x, base, base + len, -1)) return;
    }
  }

  // Whether [addr, +len) lies inside one offer to peer (len > 0, no wrap).
  bool covers(int peer, uint64_t addr, uint64_t len) const {
    if (!valid(peer) || len == 0 || addr > UINT64_MAX - len) return false;
    for (const Slot* x = of(peer); x != of(peer) + kSlots; ++x) {
      // Acquire loads, no fences (TSan models none): a base or end some
      // writer stored after making seq odd shows that seq to the last load.
      const uint64_t s1 = x->seq.load(std::memory_order_acquire);
      if (s1 & 1) continue;
      const uint64_t b = x->base.load(std::memory_order_acquire), e = x->end.load(std::memory_order_acquire);
      if (x->seq.load(std::memory_order_relaxed) == s1 && b <= addr && addr + len <= e) return true;
    }
    return false;
  }

 private:
  static constexpr int kSlots = 16;
  struct Slot {
    std::atomic<uint64_t> seq{0}, base{0}, end{0};  // seq odd: being written
    uint64_t count = 0;                             // offers of [base, end): written under odd seq only
  };
  bool valid(int peer) const { return peer >= 0 && peer < ranks_; }
  Slot* of(int peer) const { return slots_.get() + static_cast<std::size_t>(peer) * kSlots; }
  static bool holds(const Slot& x, uint64_t base, uint64_t end) {
    return x.base.load(std::memory_order_relaxed) == base && x.end.load(std::memory_order_relaxed) == end;
  }
  static constexpr uint64_t kAny = ~uint64_t{0};
  // Adds delta to the count of x if it holds [base, end), freeing it at 0.
  static bool count(Slot& x, uint64_t base, uint64_t end, int delta) {
    return update(x, [&](uint64_t b, uint64_t e, uint64_t& n, uint64_t* nb, uint64_t* ne) {
      if (b != base || e != end) return false;
      n += static_cast<uint64_t>(static_cast<int64_t>(delta));
      *nb = n ? b : 0;
      *ne = n ? e : 0;
      return true;
    });
  }
  // Puts [base, end) (count 1) into x if it holds [was_base, was_end)
  // (kAny: whatever it holds).
  static bool take(Slot& x, uint64_t was_base, uint64_t was_end, uint64_t base, uint64_t end) {
    return update(x, [&](uint64_t b, uint64_t e, uint64_t& n, uint64_t* nb, uint64_t* ne) {
      if (was_base != kAny && (b != was_base || e != was_end)) return false;
      n = 1;
      *nb = base;
      *ne = end;
      return true;
    });
  }
  // Claims x (seq odd), lets f change it, publishes; false when another
  // thread writes it now or f declined.
  template <class F>
  static bool update(Slot& x, F&& f) {
    uint64_t s = x.seq.load(std::memory_order_relaxed);
    if ((s & 1) || !x.seq.compare_exchange_strong(s, s + 1, std::memory_order_acquire)) return false;
    const uint64_t b = x.base.load(std::memory_order_relaxed), e = x.end.load(std::memory_order_relaxed);
    uint64_t nb = b, ne = e;
    const bool done = f(b, e, x.count, &nb, &ne);
    if (nb != b) x.base.store(nb, std::memory_order_release);  // after seq went odd
    if (ne != e) x.end.store(ne, std::memory_order_release);
    x.seq.store(s + 2, std::memory_order_release);
    return done;
  }

  int ranks_;
  std::unique_ptr<Slot[]> slots_;
  std::unique_ptr<std::atomic<uint32_t>[]> next_;
};

}  // namespace adi3::shm
