// One rendezvous copy split between the two ranks. With CMA alone the
// receiver makes the whole copy (its process_vm_readv pins the sender's
// pages one by one) while the sender waits for the fin; the two-copy
// pipeline keeps both cores busy but copies every byte twice. Here the
// receiver asks the sender (SplitAsk in the sender's inbox, then its
// doorbell) to write the message's second half into the receive buffer
// with process_vm_writev while it reads the first half itself: one copy
// of each byte, both cores at work.
//
// The sender takes the ask when it next polls, by compare-and-swap; the
// receiver, done with its half, takes it back the same way if the sender
// has not come (it computes, or sleeps): then it copies the rest itself,
// as CMA alone would. Either way exactly one of them copies each half.
// The receiver waits for a taken half to be written, and stops waiting
// when the sender's process is gone (the core then falls back to the
// pipeline, whose packets fail with the peer).
//
// Trust: the ask names an address in the sender's memory and one in the
// asker's. The sender only reads its own memory (a bad address fails the
// system call, never faults) and writes only into the asker's process,
// which can read all of the sender's memory with CMA anyway: a bad ask
// hurts the asker alone. The sender's answer is a phase the receiver
// checks: anything but "written" makes it copy the half itself.
#include <cstring>

#include "adi3/spin_lock.hpp"
#include "adi3/steady_clock.hpp"
#include "channels/common/tsan_link.hpp"
#include "channels/shm/cma.hpp"
#include "channels/shm/shm_channel.hpp"

namespace adi3::shm {
namespace {

// SplitAsk::state: sequence << 3 | phase.
constexpr uint64_t kOffered = 1, kTaken = 2, kWritten = 3, kFailed = 4, kReclaimed = 5, kPhase = 7;
// The halves meet on a page boundary of the message.
constexpr std::size_t kSplitAlign = 4096;
// How often a receiver waiting for the sender's half asks whether the
// sender's process still lives.
constexpr int64_t kLookNs = 1'000'000;

}  // namespace

bool ShmChannel::split_fetch(int peer, void* local, uint64_t remote, std::size_t len) {
  const auto idx = static_cast<std::size_t>(peer);
  const std::size_t head = len / 2 / kSplitAlign * kSplitAlign;
  // One ask per peer at a time: another thread of ours splitting a message
  // of the same peer holds it, and this one is copied alone.
  if (head == 0 || split_busy_[idx].exchange(1, std::memory_order_acquire)) return fetch(peer, local, remote, len);
  char* base = segments_[idx].base();
  SplitAsk& ask = *layout_.ask(base, rank_);
  const uint64_t tag = ++split_seq_[idx] << 3;
  ask.src = remote + head;
  ask.dst = reinterpret_cast<uintptr_t>(local) + head;
  ask.len = len - head;
  ask.state.store(tag | kOffered, std::memory_order_release);
  // The count after the ask, the doorbell after the count: a sender about
  // to sleep sees one or the other (ShmChannel::inbox_idle).
  layout_.header(base)->asks.fetch_add(1, std::memory_order_seq_cst);
  out_[idx].bell->ring();

  my_cma_copies_->fetch_add(1, std::memory_order_relaxed);
  const pid_t pid = out_[idx].pid;
  char* tail = static_cast<char*>(local) + head;
  bool ok = cma_read(pid, local, remote, head);
  uint64_t st = tag | kOffered;
  if (ask.state.compare_exchange_strong(st, tag | kReclaimed, std::memory_order_acq_rel)) {
    ok = ok && cma_read(pid, tail, remote + head, len - head);  // the sender did not come
  } else {
    st = wait_for_half(peer, ask, tag);
    if (st == 0) {
      ok = false;  // the sender died: its half may be partly written
    } else if (st != (tag | kWritten)) {
      ok = ok && cma_read(pid, tail, remote + head, len - head);  // it could not write it
    }
  }
  my_cma_copies_->fetch_sub(1, std::memory_order_relaxed);
  bump_activity();
  split_busy_[idx].store(0, std::memory_order_release);
  return ok;
}

// The sender took our ask (tagged tag): its phase once it is no longer
// "taken", or 0 when the sender's process is gone.
uint64_t ShmChannel::wait_for_half(int peer, const SplitAsk& ask, uint64_t tag) {
  int64_t next_look = steady_ns() + kLookNs;
  for (unsigned i = 1;; ++i) {
    const uint64_t st = ask.state.load(std::memory_order_acquire);
    if (st != (tag | kTaken)) return st;
    cpu_relax();
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

// Takes and writes the halves peers asked of us (their asks moved our
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
    const uint64_t src = ask.src, dst = ask.dst, len = ask.len;
    // TSan only: the ask follows the RTS another thread of ours sent p
    // after filling the buffer we now read (tsan_link.hpp).
    link_received(&out_[static_cast<std::size_t>(p)]);
    my_cma_copies_->fetch_add(1, std::memory_order_relaxed);
    const bool ok = src <= UINT64_MAX - len && dst <= UINT64_MAX - len &&
                    cma_write(out_[static_cast<std::size_t>(p)].pid, dst,
                              reinterpret_cast<const void*>(static_cast<uintptr_t>(src)), len);
    my_cma_copies_->fetch_sub(1, std::memory_order_relaxed);
    ask.state.store((st & ~kPhase) | (ok ? kWritten : kFailed), std::memory_order_release);
  }
}

}  // namespace adi3::shm
