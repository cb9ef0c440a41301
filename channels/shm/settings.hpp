// The shm channel's ADI3_SHM_* settings: the knob table adi3_info prints,
// and the values a channel reads once at start.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "adi3/config.hpp"

namespace adi3::shm {

std::span<const Knob> shm_knobs();

struct ShmSettings {
  std::size_t ring_bytes;     // per ordered pair of ranks, a power of two
  std::size_t chunk_bytes;    // largest packet payload (rendezvous chunk)
  std::size_t stream_min;     // payloads of at least this use streaming stores
  std::size_t adapt_min;      // from this up to stream_min: timed choice
  uint32_t stream_slow_mbps;  // ordinary copies slower than this: stream
  enum class Cma { Off, Adaptive, Always };
  Cma cma;                           // whether and when to use cross-memory attach
  std::size_t cma_min;               // messages of at least this may use CMA
  std::size_t cma_stream_min;        // a stream's messages from this size: CMA
  std::size_t crossing_min;          // crossing messages from this size: CMA
  std::size_t split_min;             // from this size a CMA copy is split with the sender
  std::size_t win_split_min;         // from this size a window's CMA put/get is split with the target
  std::size_t win_split_mapped_min;  // the same for a window in shared memory (memcpy + the target's CMA)
  int liveness_ms;                   // how often to check that peers live
  enum class LightWake { Off, On, Auto };
  LightWake light_wake;  // senders ring without a fence (process_fence.hpp)

  static ShmSettings from_env();
};

}  // namespace adi3::shm
