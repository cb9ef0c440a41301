// The control block at the head of every rank's part of a native window
// (in shared memory, so every rank of the window reaches it with loads,
// stores and atomics): the passive-target lock word, the locks of
// accumulates that hardware atomics cannot do, and the counters of active
// target (fence and post/start/complete/wait without packets).
//
// The lock is a reader-writer ticket lock: every locker takes a ticket,
// and the tickets are served in order, readers together, so neither kind
// starves (a stream of shared locks never keeps a writer out). Its words
// are written by other processes: a corrupt value can only make a locker
// wait (blocked waits still notice dead peers), never make anyone write
// outside the block.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "adi3/spin_lock.hpp"

namespace adi3::rma {

inline constexpr uint32_t kControlMagic = 0x57494e31;  // "WIN1"
inline constexpr std::size_t kStripes = 512;
// Ranks a window may have for native active target (its per-pair counters
// live in the block); larger windows keep the emulation's packets for it.
inline constexpr std::size_t kActiveRanks = 512;

struct Control {
  uint32_t magic;
  uint32_t pad0[15];
  // reader-writer ticket lock (own cache line)
  uint32_t users;    // next ticket
  uint32_t readers;  // a reader with this ticket may enter
  uint32_t writers;  // a writer with this ticket may enter
  uint32_t pad1[13];
  // accumulate locks: stripe (byte offset / 64) % kStripes, at stripe_word
  uint32_t stripe[kStripes];
  // Active target (rma/native_active.cpp). Every count is cumulative over
  // the window's life (64 bits: they never wrap), so no word is ever reset
  // and no epoch can be mistaken for another.
  uint64_t fences;  // fences the owner entered (written by the owner only; own cache line)
  uint64_t pad2[7];
  uint64_t posts[kActiveRanks];      // [t]: exposure epochs rank t opened to the owner (written by t)
  uint64_t completes[kActiveRanks];  // [o]: access epochs rank o completed at the owner (written by o)
  // [o]: operations rank o sent the owner through the emulation so far
  // (written by o before it counts a fence or a completion: the owner waits
  // until it applied that many).
  uint64_t announced[kActiveRanks];
};
inline constexpr std::size_t kControlBytes = 16384;
static_assert(sizeof(Control) <= kControlBytes);

inline std::atomic_ref<uint32_t> at(uint32_t& w) { return std::atomic_ref<uint32_t>(w); }
inline std::atomic_ref<uint64_t> at(uint64_t& w) { return std::atomic_ref<uint64_t>(w); }

// Takes a ticket; the lock is held once held(c, kind, ticket) is true.
inline uint32_t lock_ticket(Control& c) { return at(c.users).fetch_add(1, std::memory_order_acq_rel); }
inline bool lock_held(Control& c, bool exclusive, uint32_t ticket) {
  return at(exclusive ? c.writers : c.readers).load(std::memory_order_acquire) == ticket;
}
// A reader that entered lets the next ticket (a reader) in at once.
// `readers` has one writer at a time, the holder of ticket `readers` (the
// reader entering, or the writer releasing: every earlier ticket moved it
// on before), so a store does where a locked increment did; `writers`,
// which readers leaving in any order move on, keeps its read-modify-write.
inline void lock_entered(Control& c, bool exclusive, uint32_t ticket) {
  if (!exclusive) at(c.readers).store(ticket + 1, std::memory_order_release);
}
inline void lock_release(Control& c, bool exclusive) {
  if (exclusive) at(c.readers).store(at(c.readers).load(std::memory_order_relaxed) + 1, std::memory_order_release);
  // acq_rel: our stores (and, for a writer, readers) before the release.
  at(c.writers).fetch_add(1, std::memory_order_acq_rel);
}

// Stripe s's word: consecutive stripes lie on different cache lines
// (word (s % 32) * 16 + s / 32: 32 lines of 16 words), so origins working
// on neighbouring 64-byte blocks of a window (a slot per rank) do not pass
// one line of the control block around. Only the words' places change:
// lockers still take stripes in increasing index order.
inline uint32_t& stripe_word(Control& c, std::size_t s) { return c.stripe[(s % 32) * 16 + s / 32]; }
static_assert(kStripes == 32 * 16);

// The accumulate lock of the element at byte offset `off` of the window.
inline uint32_t& stripe_of(Control& c, std::size_t off) { return stripe_word(c, (off / 64) % kStripes); }
inline void stripe_lock(uint32_t& s) {
  for (;;) {
    uint32_t z = 0;
    if (at(s).compare_exchange_weak(z, 1, std::memory_order_acquire)) return;
    // The holder may be preempted (more ranks than cores): yield soon.
    for (int i = 0; at(s).load(std::memory_order_relaxed); ++i) {
      if (i < 64) {
        cpu_relax();
      } else {
        sched_yield();
      }
    }
  }
}
inline void stripe_unlock(uint32_t& s) { at(s).store(0, std::memory_order_release); }

// The stripes covering window bytes [off, off + n) (n > 0): at most two runs
// of indices, [a0, a1) then [b0, b1), locked in increasing index order.
// Every locker of several stripes takes them in that order and a locker of
// one holds no other, so no two lockers deadlock. A range of kStripes
// blocks (32 KiB) or more takes them all.
struct StripeRange {
  Control* c = nullptr;
  std::size_t a0 = 0, a1 = 0, b0 = 0, b1 = 0;
  StripeRange() = default;
  StripeRange(Control& ctl, std::size_t off, std::size_t n) : c(&ctl) {
    const std::size_t first = off / 64, last = (off + (n ? n : 1) - 1) / 64;
    if (last - first + 1 >= kStripes) {
      a1 = kStripes;
      return;
    }
    const std::size_t f = first % kStripes, l = last % kStripes;
    if (f <= l) {
      a0 = f;
      a1 = l + 1;
    } else {
      a1 = l + 1;
      b0 = f;
      b1 = kStripes;
    }
  }
  void lock() const {
    for (std::size_t i = a0; i < a1; ++i) stripe_lock(stripe_word(*c, i));
    for (std::size_t i = b0; i < b1; ++i) stripe_lock(stripe_word(*c, i));
  }
  void unlock() const {
    for (std::size_t i = a0; i < a1; ++i) stripe_unlock(stripe_word(*c, i));
    for (std::size_t i = b0; i < b1; ++i) stripe_unlock(stripe_word(*c, i));
  }
};

}  // namespace adi3::rma
