// The send buffers this rank offered each peer for a single-copy get
// (Channel::offer_began/offer_ended): a peer's split ask (cma_split.cpp)
// may make us write out of such a buffer, never out of memory we did not
// offer it. Filled by the threads that send, read by the thread serving
// an ask: each slot is a seqlock, so neither side takes a lock.
//
// A few slots per peer: a rank with more offers to one peer in flight
// forgets its oldest; an ask inside a forgotten offer is refused, and the
// asker then copies alone (slower, never wrong).
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

  void began(int peer, uint64_t base, uint64_t len) {
    if (!valid(peer) || len == 0 || base > UINT64_MAX - len) return;
    Slot* s = of(peer);
    // A free slot, else the next in turn (the oldest, roughly).
    for (int tries = 0; tries < 2 * kSlots; ++tries) {
      const bool free_only = tries < kSlots;
      const uint32_t i = free_only ? static_cast<uint32_t>(tries)
                                   : next_[static_cast<std::size_t>(peer)].fetch_add(1, std::memory_order_relaxed);
      Slot& x = s[i % kSlots];
      if (free_only && x.end.load(std::memory_order_relaxed) != 0) continue;
      if (swap(x, free_only ? 0 : kAny, free_only ? 0 : kAny, base, base + len)) return;
    }
  }

  void ended(int peer, uint64_t base, uint64_t len) {
    if (!valid(peer) || len == 0 || base > UINT64_MAX - len) return;
    for (Slot* x = of(peer); x != of(peer) + kSlots; ++x) {
      if (x->base.load(std::memory_order_relaxed) == base && x->end.load(std::memory_order_relaxed) == base + len &&
          swap(*x, base, base + len, 0, 0)) {
        return;
      }
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
  static constexpr int kSlots = 8;
  struct Slot {
    std::atomic<uint64_t> seq{0}, base{0}, end{0};  // seq odd: being written
  };
  bool valid(int peer) const { return peer >= 0 && peer < ranks_; }
  Slot* of(int peer) const { return slots_.get() + static_cast<std::size_t>(peer) * kSlots; }
  static constexpr uint64_t kAny = ~uint64_t{0};
  // Writes [base, end) into x if it holds [was_base, was_end) (kAny: any
  // offer); false when it does not, or another thread writes it now.
  static bool swap(Slot& x, uint64_t was_base, uint64_t was_end, uint64_t base, uint64_t end) {
    uint64_t s = x.seq.load(std::memory_order_relaxed);
    if ((s & 1) || !x.seq.compare_exchange_strong(s, s + 1, std::memory_order_acquire)) return false;
    const bool match = was_base == kAny || (x.base.load(std::memory_order_relaxed) == was_base &&
                                            x.end.load(std::memory_order_relaxed) == was_end);
    if (match) {
      x.base.store(base, std::memory_order_release);  // after seq went odd
      x.end.store(end, std::memory_order_release);
    }
    x.seq.store(s + 2, std::memory_order_release);
    return match;
  }

  int ranks_;
  std::unique_ptr<Slot[]> slots_;
  std::unique_ptr<std::atomic<uint32_t>[]> next_;
};

}  // namespace adi3::shm
