// One cross-memory-attach copy split between the two ranks. With CMA
// alone one rank makes the whole copy (its process_vm_readv/writev pins the
// peer's pages one by one) while the other waits or computes; the two-copy
// pipeline keeps both cores busy but copies every byte twice. Here the
// copying rank (the asker) asks the peer (SplitAsk in the peer's inbox,
// then its doorbell) to copy the second part while it copies the first
// itself: one copy of each byte, both cores at work. Two cases use it:
//  - a rendezvous receive (ShmChannel::get): the sender writes the tail of its
//    send buffer into the receive buffer (process_vm_writev);
//  - a large one-sided put or get on memory a peer exposed for a window
//    (split_window): for a get the target writes its window into the origin's
//    buffer, for a put it reads the origin's buffer into its window
//    (process_vm_readv). The window may be program memory (create: the
//    origin's part is CMA too) or a shared segment the origin maps
//    (allocate, shared: the origin's part is a memcpy; the target still
//    needs CMA for its part, the origin's buffer being private).
//
// The peer takes the ask when it next polls, by compare-and-swap; the
// asker, done with its part, takes it back the same way if the peer has
// not come (it computes, or sleeps): then it copies the rest itself, as
// CMA alone would (the peer's calls are never needed). Either way exactly
// one of them copies each part. The asker waits for a taken part to be
// copied, spinning, then yielding its core (which the peer may need), and
// stops waiting when the peer's process is gone (a receive then falls
// back to the pipeline, whose packets fail with the peer).
//
// Trust: the ask is the asker's word, and a rank acts on it only inside
// memory it exposed to the asker: an address to write from must lie in a
// send buffer it offered that peer (OfferTable) or in its windows' memory,
// an address to write into in its windows' memory
// (ShmOneSided::exposes). Anything else is answered "failed", nothing
// copied, and the asker copies alone. The asker's own addresses need no
// check: the system call reaches only the asker's process (a bad one
// fails, never faults), which can reach all of ours with CMA anyway. The
// peer's answer is a phase the asker checks: anything but "copied" makes
// it copy that part itself.
#include <sched.h>

#include <cstring>

#include "adi3/spin_lock.hpp"
#include "adi3/steady_clock.hpp"
#include "channels/common/bulk_copy.hpp"
#include "channels/common/tsan_link.hpp"
#include "channels/shm/cma.hpp"
#include "channels/shm/shm_channel.hpp"

namespace adi3::shm {
namespace {

// SplitAsk::state: sequence << 3 | phase.
constexpr uint64_t kOffered = 1, kTaken = 2, kCopied = 3, kFailed = 4, kReclaimed = 5, kPhase = 7;
// The halves meet on a page boundary of the message.
constexpr std::size_t kSplitAlign = 4096;
// How often an asker waiting for the peer's part asks whether the peer's
// process still lives.
constexpr int64_t kLookNs = 1'000'000;
// Spins before an asker waiting for the peer's part yields its core at
// each look (adi3/block_until.hpp's policy): a 1 MiB half takes ~20-40 us,
// a few thousand pauses; on a loaded host the peer may need our core.
constexpr unsigned kSpins = 4096;

}  // namespace

// put: local into the peer's remote, else the peer's remote into local.
// mapped: our mapping of remote (a shared segment), or null (CMA only).
bool ShmChannel::split_copy(int peer, bool put, void* local, uint64_t remote, std::size_t len, char* mapped) {
  const auto idx = static_cast<std::size_t>(peer);
  const pid_t pid = out_[idx].pid;
  auto copy = [&](std::size_t at, std::size_t n) {
    char* l = static_cast<char*>(local) + at;
    if (mapped) {
      put ? bulk_move(mapped + at, l, n) : bulk_move(l, mapped + at, n);
      return true;
    }
    return put ? cma_write(pid, remote + at, l, n) : cma_read(pid, l, remote + at, n);
  };
  const std::size_t head = len / 2 / kSplitAlign * kSplitAlign;
  // One ask per peer at a time: another thread of ours splitting a copy
  // with the same peer holds it, and this one is copied alone.
  if (head == 0 || split_busy_[idx].exchange(1, std::memory_order_acquire)) {
    return mapped ? copy(0, len) : alone(peer, put, local, remote, len);
  }
  char* base = segments_[idx].base();
  SplitAsk& ask = *layout_.ask(base, rank_);
  const uint64_t tag = ++split_seq_[idx] << 3;
  const uint64_t mine = reinterpret_cast<uintptr_t>(local) + head;
  ask.dir = put ? SplitAsk::kAskToOwner : SplitAsk::kAskToAsker;
  ask.src = put ? mine : remote + head;
  ask.dst = put ? remote + head : mine;
  ask.len = len - head;
  ask.state.store(tag | kOffered, std::memory_order_release);
  // The count after the ask, the doorbell after the count: a peer about
  // to sleep sees one or the other (ShmChannel::inbox_idle).
  layout_.header(base)->asks.fetch_add(1, std::memory_order_seq_cst);
  out_[idx].bell->ring();

  if (!mapped) my_cma_copies_->fetch_add(1, std::memory_order_relaxed);
  bool ok = copy(0, head);
  uint64_t st = tag | kOffered;
  if (ask.state.compare_exchange_strong(st, tag | kReclaimed, std::memory_order_acq_rel)) {
    ok = ok && copy(head, len - head);  // the peer did not come
  } else {
    st = wait_for_half(peer, ask, tag);
    if (st == 0 && !mapped) {
      ok = false;  // the peer died: its part may be partly copied
    } else if (st != (tag | kCopied)) {
      // It could not, or would not (or died: memory we map outlives it).
      ok = ok && copy(head, len - head);
    }
  }
  if (!mapped) my_cma_copies_->fetch_sub(1, std::memory_order_relaxed);
  bump_activity();
  split_busy_[idx].store(0, std::memory_order_release);
  return ok;
}

bool ShmChannel::split_window(int peer, bool put, void* local, uint64_t remote, std::size_t len, char* mapped,
                              bool* ok) {
  const std::size_t min = mapped ? settings_.win_split_mapped_min : settings_.win_split_min;
  if (len < min || crowded_ || peer == rank_ || peer < 0 || peer >= size_) return false;
  *ok = split_copy(peer, put, local, remote, len, mapped);
  return true;
}

// The peer took our ask (tagged tag): its phase once it is no longer
// "taken", or 0 when the peer's process is gone.
uint64_t ShmChannel::wait_for_half(int peer, const SplitAsk& ask, uint64_t tag) {
  int64_t next_look = steady_ns() + kLookNs;
  for (unsigned i = 1;; ++i) {
    const uint64_t st = ask.state.load(std::memory_order_acquire);
    if (st != (tag | kTaken)) return st;
    if (i < kSpins) {
      cpu_relax();
    } else {
      sched_yield();
    }
    if (i % 256 == 0 && steady_ns() >= next_look) {
      if (dead_[static_cast<std::size_t>(peer)].load(std::memory_order_relaxed)) return 0;
      {
        std::lock_guard g(watch_lock_);
        if (watch_.check_one(peer)) return 0;  // reported by the next liveness check
      }
      next_look = steady_ns() + kLookNs;
    }
  }
}

// Whether the ask of peer for len bytes from src into dst (dir) copies
// only what we exposed to it (see Trust above).
bool ShmChannel::ask_allowed(int peer, uint64_t dir, uint64_t src, uint64_t dst, uint64_t len) const {
  if (len == 0 || src > UINT64_MAX - len || dst > UINT64_MAX - len) return false;
  if (dir == SplitAsk::kAskToAsker) return offers_.covers(peer, src, len) || onesided_->exposes(src, len);
  return dir == SplitAsk::kAskToOwner && onesided_->exposes(dst, len);
}

// Takes and copies the parts peers asked of us (their asks moved our
// count since we last looked).
void ShmChannel::serve_asks() {
  asks_seen_.store(my_asks_->load(std::memory_order_acquire), std::memory_order_relaxed);
  char* mine = segments_[static_cast<std::size_t>(rank_)].base();
  for (int p = 0; p < size_; ++p) {
    if (p == rank_) continue;
    SplitAsk& ask = *layout_.ask(mine, p);
    uint64_t st = ask.state.load(std::memory_order_acquire);
    if ((st & kPhase) != kOffered ||
        !ask.state.compare_exchange_strong(st, (st & ~kPhase) | kTaken, std::memory_order_acq_rel)) {
      continue;
    }
    // Read once: the asker leaves them alone while the ask is taken.
    const uint64_t dir = ask.dir, src = ask.src, dst = ask.dst, len = ask.len;
    const pid_t pid = out_[static_cast<std::size_t>(p)].pid;
    // TSan only: the ask follows the RTS another thread of ours sent p
    // after filling the buffer we now read (tsan_link.hpp).
    link_received(&out_[static_cast<std::size_t>(p)]);
    my_cma_copies_->fetch_add(1, std::memory_order_relaxed);
    bool ok = false;
    if (ask_allowed(p, dir, src, dst, len)) {
      ok = dir == SplitAsk::kAskToAsker
               ? cma_write(pid, dst, reinterpret_cast<const void*>(static_cast<uintptr_t>(src)), len)
               : cma_read(pid, reinterpret_cast<void*>(static_cast<uintptr_t>(dst)), src, len);
    }
    my_cma_copies_->fetch_sub(1, std::memory_order_relaxed);
    // TSan only: what we wrote into our window for p comes before our
    // threads' later reads, which follow p's next packet (its fence or
    // unlock).
    link_sent(&out_[static_cast<std::size_t>(p)]);
    ask.state.store((st & ~kPhase) | (ok ? kCopied : kFailed), std::memory_order_release);
  }
}

}  // namespace adi3::shm
