#include "channels/shm/settings.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

namespace adi3::shm {
namespace {

// Defaults come from bench/pingpong on the 2-core VM (see the knob texts).
constexpr std::size_t kRingBytes = 512 * 1024;
constexpr std::size_t kChunkBytes = 32 * 1024;
constexpr std::size_t kCmaMin = 16 * 1024;
constexpr std::size_t kAdaptMin = 2048;
constexpr int64_t kStreamSlowMbps = 6000;
constexpr int kLivenessMs = 50;
constexpr std::size_t kCmaStreamMin = 64 * 1024;
constexpr std::size_t kCrossingMin = 256 * 1024;
// Splits: quiet A/B of s29 (load < 0.3; memcpy 40-46 GB/s). A stream
// gains from 256 KiB (bw 1-4 MiB 36-44 GB/s split, 15-23 alone) and not at
// 64 KiB (11.3-12.2 against 12.8-13.9); a window's split lost at every size
// (allocate 1 MiB 17-19 GB/s against 43-44 without, create 12-15 against
// 19-34), so windows never split unless asked.
constexpr int64_t kSplitMin = 128 * 1024;
constexpr int64_t kWinSplitMin = -1;
constexpr int64_t kWinSplitMappedMin = -1;

constexpr Knob kShmKnobs[] = {
    {"ADI3_SHM_RING_BYTES", "524288",
     "Bytes of each shared-memory ring (one per ordered pair of ranks, in the receiver's segment; "
     "rounded up to a power of two). Pages are only used when touched."},
    {"ADI3_SHM_CHUNK_BYTES", "32768",
     "Largest packet payload: the unit of the two-copy pipeline that streams large messages when "
     "CMA is not used (at most a quarter of the ring), and the most the eager limit can be."},
    {"ADI3_SHM_STREAM_MIN", "-1",
     "Smallest packet payload always written into a ring with non-temporal (streaming) stores; "
     "-1: none (from ADI3_SHM_STREAM_ADAPT_MIN on the sender chooses by timing its copies). "
     "Streaming skips taking back the ring lines the receiver has read (a read for ownership "
     "across cores, line by line), which in a VM's slow state made the sender's copy several "
     "times slower than the receiver's; where lines move cheaply, ordinary stores keep the ring "
     "in cache and run 2-3x faster (bw at 1 MiB 21 -> 60 GB/s)."},
    {"ADI3_SHM_STREAM_ADAPT_MIN", "2048",
     "From this payload size up (below ADI3_SHM_STREAM_MIN) the sender chooses: it times one "
     "ordinary copy into the ring in 32 and uses streaming stores while those run slower than "
     "ADI3_SHM_STREAM_SLOW_MBPS (taking back ring lines from the receiver's cache is slow in some "
     "states of a VM, cheap in others), trying ordinary stores again every 1024 payloads. "
     "A huge value: never."},
    {"ADI3_SHM_STREAM_SLOW_MBPS", "6000",
     "The rate (MB/s, a moving average of timed copies) below which ordinary copies into the ring "
     "count as slow (see ADI3_SHM_STREAM_ADAPT_MIN). 0: never stream below ADI3_SHM_STREAM_MIN."},
    {"ADI3_SHM_CMA", "1",
     "Cross-memory attach (process_vm_readv/writev, one copy), if a probe at start shows it is "
     "permitted. 0: never. 1: by the traffic's shape, for a message of at least ADI3_SHM_CMA_MIN "
     "bytes: in a stream (the sender published more packets behind the offer), from "
     "ADI3_SHM_CMA_SPLIT_MIN on copied by both ranks at once, below that by the receiver alone "
     "from ADI3_SHM_CMA_STREAM_MIN on; for messages that cross (both ranks send large messages to "
     "each other) from ADI3_SHM_CMA_CROSSING_MIN on; for a lone offer (a ping-pong) from 256 KiB "
     "when the sender is not polling at that moment (it computes); with more ranks than CPUs "
     "always; else the two-copy pipeline through the rings. 2: always from ADI3_SHM_CMA_MIN on, "
     "by the receiver alone."},
    {"ADI3_SHM_CMA_MIN", "16384",
     "Smallest message that may be copied with CMA after the rendezvous (with ADI3_SHM_CMA=1 "
     "only where the traffic's shape takes it); smaller ones are always pipelined through the "
     "rings. A huge value disables CMA for messages."},
    {"ADI3_SHM_CMA_STREAM_MIN", "65536",
     "With ADI3_SHM_CMA=1, the smallest message of a stream (the sender published more packets "
     "behind its offer: it went on) fetched with CMA; smaller ones take the pipeline."},
    {"ADI3_SHM_CMA_CROSSING_MIN", "262144",
     "With ADI3_SHM_CMA=1, the smallest message that crosses (the receiver's own offer to the "
     "sender waits too) fetched with CMA, in both directions alike; smaller ones take the "
     "pipeline, whose copies stay in the caches."},
    {"ADI3_SHM_CMA_SPLIT_MIN", "131072",
     "With ADI3_SHM_CMA=1, from this size a message of a stream that does not cross is copied by "
     "both ranks at once (a lone offer, as in a ping-pong, is not: the pipeline or the receiver's "
     "CMA takes it, as ADI3_SHM_CMA says), one copy per byte: the receiver reads the first half "
     "with CMA while the sender, asked through its inbox, writes the second half "
     "(process_vm_writev); a sender that does not come before the receiver's half is done (it "
     "computes) leaves its half to the receiver. Not with more ranks than CPUs. -1: never (then "
     "the choice above)."},
    {"ADI3_SHM_LIGHT_WAKE", "auto",
     "How a sender orders a published packet against its look at the receiver's sleepers. 1: "
     "with a compiler barrier only, while the receiver, before it sleeps, runs membarrier(2) "
     "(a barrier on every CPU running a rank); 0: with a fence per packet (which waits for the "
     "record's cache line to arrive from the receiver's core). auto: 1 when the kernel offers "
     "membarrier's global expedited barrier and the ranks do not outnumber the CPUs (there ranks "
     "sleep often)."},
    {"ADI3_SHM_WIN_HUGE_MAX", "8388608",
     "Program memory a window exposes (MPI_Win_create, MPI_Win_attach; not the buffers of messages "
     "or collectives), which peers reach by cross-memory attach: once, when the window is made or "
     "the memory attached, huge pages are asked for in its 2 MiB-aligned blocks (MADV_HUGEPAGE: a "
     "block gets one when first touched), and of the blocks already wholly in memory at most this "
     "many bytes are merged into huge pages at once (MADV_COLLAPSE, Linux 6.1; at most 4 ms per "
     "window). A peer's process_vm_writev/readv then pins one page per 2 MiB instead of 512. "
     "0: none of this."},
    {"ADI3_SHM_WIN_SPLIT_MIN", "-1",
     "From this size a put or get on program memory a window exposes (MPI_Win_create, "
     "MPI_Win_attach), reached by cross-memory attach, is copied by both ranks at once when the "
     "target polls: the origin copies the first half while the target, asked through its inbox, "
     "copies the second (for a put it reads the origin's buffer into its window, for a get it "
     "writes its window into the origin's buffer); a target that does not come before the "
     "origin's half is done (it computes) leaves its half to the origin. Not with more ranks than "
     "CPUs. -1: never."},
    {"ADI3_SHM_WIN_SPLIT_MAPPED_MIN", "-1",
     "From this size a put or get on a window in shared memory (MPI_Win_allocate, "
     "MPI_Win_allocate_shared), which the origin maps, is copied by both ranks at once when the "
     "target polls: the origin copies the first half with memcpy while the target, asked through "
     "its inbox, copies the second by cross-memory attach (the origin's buffer is private). A "
     "target that does not come before the origin's half is done leaves its half to the origin. "
     "Not with more ranks than CPUs, nor without cross-memory attach. -1: never."},
    {"ADI3_SHM_CMA_CALL_NS", "auto",
     "What one small cross-memory-attach call costs (nanoseconds), which the shm channel reports "
     "to the core (OneSidedCaps::call_ns). auto: timed at start, the best of 16 reads of 8 bytes. "
     "Below 300, the first put or get of an interval (since a flush, unlock or fence) to a window "
     "from MPI_Win_create takes one call without a look at the target; otherwise, and for the "
     "ones behind it, the origin looks, and sends a packet to a target that polls."},
    {"ADI3_SHM_LIVENESS_MS", "50",
     "How often (milliseconds) a rank checks that its peers' processes still live, while it polls "
     "or before it sleeps."},
};

std::size_t pow2_at_least(std::size_t v, std::size_t floor) {
  std::size_t p = floor;
  while (p < v) p <<= 1;
  return p;
}

}  // namespace

std::span<const Knob> shm_knobs() { return kShmKnobs; }

ShmSettings ShmSettings::from_env() {
  ShmSettings s;
  s.ring_bytes = pow2_at_least(static_cast<std::size_t>(env_int("ADI3_SHM_RING_BYTES", kRingBytes)), 8192);
  int64_t chunk = env_int("ADI3_SHM_CHUNK_BYTES", kChunkBytes);
  s.chunk_bytes = chunk < 1024 ? 1024 : static_cast<std::size_t>(chunk);
  if (s.chunk_bytes > s.ring_bytes / 4) s.chunk_bytes = s.ring_bytes / 4;
  // Unless set, the chooser decides for every payload from adapt_min on.
  int64_t stream = env_int("ADI3_SHM_STREAM_MIN", -1);
  s.stream_min = stream < 0 ? SIZE_MAX : static_cast<std::size_t>(stream);
  int64_t adapt = env_int("ADI3_SHM_STREAM_ADAPT_MIN", static_cast<int64_t>(kAdaptMin));
  s.adapt_min = adapt < 0 ? SIZE_MAX : static_cast<std::size_t>(adapt);
  s.stream_slow_mbps =
      static_cast<uint32_t>(std::clamp<int64_t>(env_int("ADI3_SHM_STREAM_SLOW_MBPS", kStreamSlowMbps), 0, UINT32_MAX));
  if (s.stream_slow_mbps == 0) s.adapt_min = SIZE_MAX;
  int64_t cma = env_int("ADI3_SHM_CMA", 1);
  s.cma = cma == 0 ? Cma::Off : cma >= 2 ? Cma::Always : Cma::Adaptive;
  int64_t cma_min = env_int("ADI3_SHM_CMA_MIN", kCmaMin);
  s.cma_min = cma_min < 0 ? SIZE_MAX : static_cast<std::size_t>(cma_min);
  int64_t stream_cma = env_int("ADI3_SHM_CMA_STREAM_MIN", static_cast<int64_t>(kCmaStreamMin));
  s.cma_stream_min = stream_cma < 0 ? SIZE_MAX : static_cast<std::size_t>(stream_cma);
  int64_t cross = env_int("ADI3_SHM_CMA_CROSSING_MIN", static_cast<int64_t>(kCrossingMin));
  s.crossing_min = cross < 0 ? SIZE_MAX : static_cast<std::size_t>(cross);
  int64_t split = env_int("ADI3_SHM_CMA_SPLIT_MIN", kSplitMin);
  s.split_min = split < 0 ? SIZE_MAX : static_cast<std::size_t>(split);
  int64_t win_split = env_int("ADI3_SHM_WIN_SPLIT_MIN", kWinSplitMin);
  s.win_split_min = win_split < 0 ? SIZE_MAX : static_cast<std::size_t>(win_split);
  int64_t mapped_split = env_int("ADI3_SHM_WIN_SPLIT_MAPPED_MIN", kWinSplitMappedMin);
  s.win_split_mapped_min = mapped_split < 0 ? SIZE_MAX : static_cast<std::size_t>(mapped_split);
  const std::string light = env_string("ADI3_SHM_LIGHT_WAKE", "auto");
  s.light_wake = light == "0" ? LightWake::Off : light == "1" ? LightWake::On : LightWake::Auto;
  int64_t live = env_int("ADI3_SHM_LIVENESS_MS", kLivenessMs);
  s.liveness_ms = live < 1 ? 1 : static_cast<int>(live);
  return s;
}

}  // namespace adi3::shm
