// Ordinary or streaming stores for ring payloads (from 2 KiB on by
// default, whatever their size), chosen by timing the sender's own copies.
//
// Why: a ring line the receiver has read sits in its cache, and an ordinary
// store to it on the next lap must first take it back. How much that costs
// depends on the VM's state, which changes while a job runs. Measured on the
// 2-core EPYC VM (bench/mpi, 2 ranks, chrt -f 1): in its slow state ordinary
// copies into the ring ran at 2.3-3.3 GB/s, and streaming raised bw at
// 512 B/1/2/4 KiB 1.5/2.0/3.1/4.4x and cut ping-pong latency at 1/2/4 KiB
// 0.99/1.50/2.45 -> 0.74/0.89/1.13 us; in its fast state streaming at 4 KiB raised bw 7.4 ->
// 10.7 GB/s but latency 0.68 -> 0.84-0.92 us (the receiver then reads the
// payload from memory instead of the sender's cache). Below 2 KiB the
// timing cannot tell the states apart (in the fast state 512 B and 1 KiB
// copies often measured under the threshold: latency at 512 B 0.23 -> 0.33
// us), so the range starts at 2 KiB by default. So from `adapt_min`
// up to the channel's always-stream size the sender times one ordinary copy
// in kSampleEvery (fenced, so the stores' ownership requests are counted,
// not just their entry into the store buffer) and streams while a moving
// average of those rates (start-up excluded, see kLatencyBytes) is below
// `slow_mbps`; while streaming it tries one
// timed ordinary copy every kProbeEvery payloads, since the state changes
// back too.
//
// The copy's timing alone mistook the fast state for the slow one in 6 of
// 16 fast jobs (2-8 KiB latency 2x; after streaming, an ordinary copy's
// lines come from memory, so the probes kept timing slow). So the sender
// also times one read of the consumer's head, a line only the peer writes,
// when it moved since we last read it: one crossing, 20-40 ns in the fast
// state and 110-250 ns in the slow one (clock reads excluded; 2 ranks,
// chrt -f 1). While 3 of the last 4 crossings are fast, ordinary stores are
// used whatever the copies time. The read rides on a timed copy, or on one
// payload in kLineEvery while streaming: never on the small-message path.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "adi3/steady_clock.hpp"
#include "channels/shm/stream_copy.hpp"

namespace adi3::shm {

// Waits until this thread's earlier stores own their lines. For timing only:
// no order with another thread is meant (so no std::atomic_thread_fence,
// which TSan refuses besides).
inline void drain_stores() {
#if defined(__SSE2__)
  _mm_mfence();
#else
  std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
}

class StoreChooser {
 public:
  StoreChooser() = default;
  // slow_mbps 0: never stream here.
  explicit StoreChooser(uint32_t slow_mbps) : slow_mbps_(slow_mbps) {
    if (slow_mbps_ == 0) return;
    // What the fences and clock reads of a timed copy cost by themselves.
    int64_t least = INT64_MAX;
    for (int i = 0; i < 8; ++i) {
      drain_stores();
      const int64_t t0 = steady_ns();
      drain_stores();
      least = std::min(least, steady_ns() - t0);
    }
    overhead_ns_ = least;
    least = INT64_MAX;
    for (int i = 0; i < 8; ++i) {
      const int64_t t0 = steady_ns();
      least = std::min(least, steady_ns() - t0);
    }
    clock_ns_ = least;
  }

  // Out of line: payloads here are 2 KiB or more, and RingProducer::push
  // stays small enough to be inlined into the channel's send. warm: the
  // ring's first lap is over. Copies before that are neither timed nor
  // streamed: they fault the ring's pages in, and a first sample that
  // timed page faults found every state slow (then a crossing message chose
  // CMA, see ShmChannel::get_crossing, and the rings never learned better).
  // seen: the newest value of the watched line (watch()) the caller has
  // read itself.
  [[gnu::noinline]] void copy(void* dst, const void* src, std::size_t n, bool warm = true, uint64_t seen = 0) {
    if (!warm) {
      std::memcpy(dst, src, n);
      return;
    }
    if (--countdown_ > 0) {
      if (streaming_ && --line_countdown_ == 0) leave_streaming_if_fast(seen);
      if (streaming_) {
        stream_copy(dst, src, n);
      } else {
        std::memcpy(dst, src, n);
      }
      return;
    }
    timed_copy(dst, src, n, seen);
  }
  bool streaming() const { return streaming_; }
  // A line only the peer writes, and only moving forward (the consumer's
  // head): reading it right after the peer wrote it times one crossing.
  void watch(const std::atomic<uint64_t>* line) { line_ = line; }
  // Whether the last crossings timed fast (the VM's fast state).
  bool line_fast() const { return __builtin_popcount(line_fast_bits_) >= 3; }

  static constexpr uint32_t kSampleEvery = 32;
  static constexpr uint32_t kProbeEvery = 1024;
  // While streaming, one crossing is timed every kLineEvery payloads.
  static constexpr uint32_t kLineEvery = 32;
  // A crossing under this (clock reads excluded) is the fast state's.
  static constexpr int64_t kFastLineNs = 70;
  // A timed copy pays about one cross-core round trip before its first
  // stores own their lines, whatever its size: t(n) = L + n / R. Measured
  // in a ping-pong through a 512 KiB ring on the 2-core EPYC VM (fast
  // state), the medians of timed 1/2/4/8 KiB copies were 100/120/221/341
  // ns (10.2/17.1/18.5/24.0 GB/s): L ~ 70 ns, R ~ 30 GB/s, L x R ~ 2 KiB.
  // Judged by its raw rate, a 2 KiB copy sat at the 15 GB/s threshold
  // (p25 12.8-13.7, p75 17-20 GB/s), so the choice flipped between runs:
  // bench/mpi latency at 2 KiB 0.26 us with ordinary stores, 0.85-0.99
  // streaming (the receiver then reads the payload from memory), 4 KiB
  // 0.44 against 1.03-1.33. Counting the copy as kLatencyBytes longer
  // judges it by R; the slow state's copies (2-7 GB/s, line by line) stay
  // far below the threshold at every size.
  static constexpr uint64_t kLatencyBytes = 2048;

 private:
  // Times one read of the watched line if the peer wrote it since we last
  // read it (else it is in our cache and times nothing). Keeps the last
  // four verdicts as bits.
  void time_line(uint64_t seen) {
    if (!line_) return;
    const int64_t t0 = steady_ns();
    const uint64_t v = line_->load(std::memory_order_relaxed);
    const int64_t t1 = steady_ns();
    if (v <= std::max(seen, line_seen_)) return;
    line_seen_ = v;
    const bool fast = t1 - t0 - clock_ns_ < kFastLineNs;
    line_fast_bits_ = ((line_fast_bits_ << 1) | (fast ? 1u : 0u)) & 0xf;
  }

  [[gnu::noinline]] void leave_streaming_if_fast(uint64_t seen) {
    line_countdown_ = kLineEvery;
    time_line(seen);
    if (!line_fast()) return;
    streaming_ = false;
    avg_mbps_ = 0;
    countdown_ = kSampleEvery;
  }

  [[gnu::noinline]] void timed_copy(void* dst, const void* src, std::size_t n, uint64_t seen) {
    time_line(seen);
    // Earlier stores out of the way first, then this copy's stores until
    // they own their lines.
    drain_stores();
    const int64_t t0 = steady_ns();
    std::memcpy(dst, src, n);
    drain_stores();
    const int64_t t1 = steady_ns();
    const int64_t ns = std::max<int64_t>(t1 - t0 - overhead_ns_, 1);
    // The rate the copy would show without its fixed start-up (see
    // kLatencyBytes), so one threshold holds for every size.
    const auto mbps =
        static_cast<uint32_t>(std::min<uint64_t>((n + kLatencyBytes) * 1000 / static_cast<uint64_t>(ns), UINT32_MAX));
    // A probe while streaming starts afresh; otherwise a moving average,
    // so one copy slowed by a preemption does not flip the choice.
    avg_mbps_ = streaming_ || avg_mbps_ == 0 ? mbps : static_cast<uint32_t>((3ull * avg_mbps_ + mbps) / 4);
    // In the fast state ordinary stores win even when the copy times slow
    // (after streaming the ring's lines come from memory).
    streaming_ = avg_mbps_ < slow_mbps_ && !line_fast();
    line_countdown_ = kLineEvery;
    countdown_ = streaming_ ? kProbeEvery : kSampleEvery;
  }

  uint32_t slow_mbps_ = 0;
  int64_t overhead_ns_ = 0;
  uint32_t avg_mbps_ = 0;  // 0: no sample yet
  uint32_t countdown_ = 1;
  bool streaming_ = false;
  const std::atomic<uint64_t>* line_ = nullptr;
  int64_t clock_ns_ = 0;  // two clock reads by themselves
  uint64_t line_seen_ = 0;
  uint32_t line_fast_bits_ = 0;  // the last four crossings, 1: fast
  uint32_t line_countdown_ = kLineEvery;
};

}  // namespace adi3::shm
