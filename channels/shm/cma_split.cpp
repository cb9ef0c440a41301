// One cross-memory-attach copy split between the two ranks. With CMA
// alone one rank makes the whole copy (its process_vm_readv/writev pins the
// peer's pages one by one) while the other waits or computes; the two-copy
// pipeline keeps both cores busy but copies every byte twice. Here the
// copying rank (the asker) asks the peer (SplitAsk in the peer's inbox,
// then its doorbell) to copy chunks from the end while it copies chunks
// from the start, until they meet: one copy of each byte, both cores at
// work. Two cases use it:
//  - a rendezvous receive (ShmChannel::get): the sender writes chunks of its
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
// not come (it computes, or sleeps): then it has copied every chunk
// itself, as CMA alone would (the peer's calls are never needed). Either
// way exactly one of them copies each chunk. The asker waits for the
// peer's last chunk to be copied, spinning, then yielding its core (which
// the peer may need), and stops waiting when the peer's process is gone (a
// receive then falls back to the pipeline, whose packets fail with the
// peer; a mapped window's origin copies the peer's chunks itself).
//
// Trust: the ask is the asker's word, and a rank acts on it only inside
// memory it exposed to the asker: an address to write from must lie in a
// send buffer it offered that peer (OfferTable) or in its windows' memory,
// an address to write into in its windows' memory
// (ShmOneSided::exposes). Anything else is answered "failed", nothing
// copied, and the asker copies alone. The asker's own addresses need no
// check: the system call reaches only the asker's process (a bad one
// fails, never faults), which can reach all of ours with CMA anyway. The
// claims word (cut) is checked by each side against the chunk count it
// computed: a chunk is always inside the ask's range. The peer's answer is
// a phase the asker checks: anything but "copied" makes it copy the
// peer's chunks itself.
#include <sched.h>

#include <algorithm>
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
// The copy is cut into chunks of whole pages: the asker claims them from
// the front, the peer from the back (SplitAsk::cut: front << 32 | back), so
// whichever copies faster copies more and neither waits for more than one
// chunk. Halves did not do: a mapped window's origin memcpy's at 2-4x the
// rate of the target's CMA on its private buffer (pinned page by page), so
// the origin waited 90 us of 124 per 1 MiB put (load 5). Each CMA chunk is
// a system call: CMA on both sides keeps halves (2 chunks), as both copy
// at one rate. Quarters cost the rendezvous 10-17% at 128-512 KiB
// (mpibench bw, 5 alternated launches, load 1.6: 512 KiB 26.8 vs 32.3 GB/s).
constexpr std::size_t kSplitAlign = 4096, kMinChunk = 32 * 1024, kMappedChunks = 16, kCmaChunks = 2;
constexpr uint64_t kBack = 0xffffffffu;
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
  const std::size_t chunk =
      std::max((len / (mapped ? kMappedChunks : kCmaChunks) + kSplitAlign - 1) / kSplitAlign * kSplitAlign, kMinChunk);
  // One ask per peer at a time: another thread of ours splitting a copy
  // with the same peer holds it, and this one is copied alone.
  if (len <= chunk || split_busy_[idx].exchange(1, std::memory_order_acquire)) {
    return mapped ? copy(0, len) : alone(peer, put, local, remote, len);
  }
  const uint64_t n = (len + chunk - 1) / chunk;
  char* base = segments_[idx].base();
  SplitAsk& ask = *layout_.ask(base, rank_);
  const uint64_t tag = ++split_seq_[idx] << 3;
  ask.dir = put ? SplitAsk::kAskToOwner : SplitAsk::kAskToAsker;
  ask.src = put ? reinterpret_cast<uintptr_t>(local) : remote;
  ask.dst = put ? remote : reinterpret_cast<uintptr_t>(local);
  ask.len = len;
  ask.chunk = chunk;
  ask.cut.store(n, std::memory_order_relaxed);  // front 0, back n
  ask.state.store(tag | kOffered, std::memory_order_release);
  // The count after the ask, the doorbell after the count: a peer about
  // to sleep sees one or the other (ShmChannel::inbox_idle).
  layout_.header(base)->asks.fetch_add(1, std::memory_order_seq_cst);
  out_[idx].bell->ring();

  if (!mapped) my_cma_copies_->fetch_add(1, std::memory_order_relaxed);
  bool ok = true;
  // Our chunks, from the front, until we meet the peer's.
  for (uint64_t c = ask.cut.load(std::memory_order_acquire); ok;) {
    const uint64_t f = c >> 32, b = c & kBack;
    if (f >= b || b > n) break;  // met (or the word is not ours to trust)
    if (ask.cut.compare_exchange_weak(c, (f + 1) << 32 | b, std::memory_order_acq_rel)) {
      ok = copy(f * chunk, std::min<std::size_t>(chunk, len - f * chunk));
      c = ask.cut.load(std::memory_order_acquire);
    }
  }
  uint64_t st = tag | kOffered;
  // Taken back: the peer claimed nothing (it claims only after taking).
  if (!ask.state.compare_exchange_strong(st, tag | kReclaimed, std::memory_order_acq_rel)) {
    st = wait_for_half(peer, ask, tag);
    if (st == 0 && !mapped) {
      ok = false;  // the peer died: its chunks may be partly copied
    } else if (st != (tag | kCopied)) {
      // It could not, or would not (or died: memory we map outlives it):
      // its chunks, from where the front stopped, are ours again.
      const uint64_t b = std::min(ask.cut.load(std::memory_order_acquire) & kBack, n);
      if (b * chunk < len) ok = ok && copy(b * chunk, len - b * chunk);
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
    const uint64_t dir = ask.dir, src = ask.src, dst = ask.dst, len = ask.len, chunk = ask.chunk;
    const pid_t pid = out_[static_cast<std::size_t>(p)].pid;
    // TSan only: the ask follows the RTS another thread of ours sent p
    // after filling the buffer we now read (tsan_link.hpp).
    link_received(&out_[static_cast<std::size_t>(p)]);
    my_cma_copies_->fetch_add(1, std::memory_order_relaxed);
    bool ok = false;
    if (ask_allowed(p, dir, src, dst, len) && chunk != 0 && chunk <= len && (len - 1) / chunk < kBack) {
      const uint64_t n = (len - 1) / chunk + 1;
      // Our chunks, from the back, until we meet the asker's; each inside
      // [0, len) whatever the word says (ask_allowed checked that range).
      ok = true;
      for (uint64_t c = ask.cut.load(std::memory_order_acquire); ok;) {
        const uint64_t f = c >> 32, b = c & kBack;
        if (f >= b || b > n) break;
        if (!ask.cut.compare_exchange_weak(c, f << 32 | (b - 1), std::memory_order_acq_rel)) continue;
        const uint64_t at = (b - 1) * chunk, m = std::min(chunk, len - at);
        ok = dir == SplitAsk::kAskToAsker
                 ? cma_write(pid, dst + at, reinterpret_cast<const void*>(static_cast<uintptr_t>(src + at)), m)
                 : cma_read(pid, reinterpret_cast<void*>(static_cast<uintptr_t>(dst + at)), src + at, m);
        c = ask.cut.load(std::memory_order_acquire);
      }
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
