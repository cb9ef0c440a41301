// Algorithm selection: the ADI3_COLL_* thresholds and overrides (MPICH's
// defaults), read from the environment once per process.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "adi3/config.hpp"

namespace adi3::coll {

enum class BcastAlgo : std::uint8_t { Auto, Binomial, ScatterDoubling, ScatterRing };
enum class ReduceAlgo : std::uint8_t { Auto, Binomial, ReduceScatterGather };
enum class AllreduceAlgo : std::uint8_t { Auto, RecursiveDoubling, Rabenseifner, Ring };
enum class AllgatherAlgo : std::uint8_t { Auto, RecursiveDoubling, Bruck, Ring };
enum class AlltoallAlgo : std::uint8_t { Auto, Bruck, Scattered, Pairwise };
enum class ReduceScatterAlgo : std::uint8_t { Auto, RecursiveHalving, Pairwise, ReduceScatterv };

// Every rank of a communicator must use equal settings: the choice of
// algorithm is made locally and both sides must agree.
struct Tuning {
  std::size_t bcast_short = 12288;      // bytes below which bcast is a binomial tree
  std::size_t bcast_long = 524288;      // below: scatter + recursive doubling (2^k ranks)
  int bcast_min_procs = 8;              // fewer ranks: always binomial
  std::size_t reduce_short = 65536;     // above (commutative): reduce-scatter + gather
  std::size_t allreduce_short = 2048;   // above (commutative): Rabenseifner
  std::size_t allgather_short = 81920;  // total bytes below which Bruck is used (any rank count)
  std::size_t allgather_long = 524288;  // total bytes below which recursive doubling is used (2^k ranks)
  std::size_t alltoall_short = 256;     // per-block bytes up to which Bruck is used (>= alltoall_min_procs)
  int alltoall_min_procs = 8;
  std::size_t alltoall_medium = 32768;       // per-block bytes below which all transfers are posted at once
  int alltoall_throttle = 32;                // transfers in flight per batch (scattered alltoall(v,w))
  std::size_t reduce_scatter_long = 524288;  // total bytes above which pairwise exchange is used
  std::size_t small_max = 1024;              // messages up to this size: small collectives, no schedule
  // Barrier, bcast, reduce and allreduce through a segment the members
  // share, when they all are on this host (coll/shm_coll.hpp).
  bool shm = true;
  // Allgather and alltoall on that segment: per-block bytes from which a
  // rank reads the others' buffers straight (cross-memory attach, one
  // copy) instead of through the segment (two), where every member has a
  // core of its own; 0 never.
  std::size_t shm_direct_min = 16384;
  // Alltoall where the members outnumber the processors, up to
  // shm_direct_shared_crowding members per processor: the same, from this
  // many bytes per block (without the rate verdict); 0 never.
  std::size_t shm_direct_shared_min = 16384;
  int shm_direct_shared_crowding = 4;
  // Bcast on that segment, where every member has a core of its own: bytes
  // from which the others read the root's buffer straight; 0 never.
  std::size_t shm_direct_bcast_min = 16384;
  // Reduce of 2 ranks on that segment: bytes from which the root reads the
  // other's input straight and folds it (commutative op, or root 0); 0 never.
  std::size_t shm_direct_reduce_min = 65536;
  // Reduce of 3 or more ranks that outnumber the processors (up to
  // shm_direct_shared_crowding a processor), beyond a slot: bytes from
  // which each rank reads its slice of every input straight and folds it
  // (shm_reduce.cpp); 0 never.
  std::size_t shm_direct_reduce_shared_min = 65536;
  // The direct reads' rate (MB/s, every rank's moving average) below which
  // the segment's copies are used instead (tested again now and then); 0:
  // always read directly (s23: on this CPU the direct reads won at 2 ranks
  // even from a send buffer rewritten before each call, and a verdict
  // turned slow by a preempted read kept 1 MiB calls on the segment).
  std::size_t shm_direct_mbps = 0;
  // The same for a 2-rank reduce's reads (the root's), against the pipeline.
  std::size_t shm_direct_reduce_mbps = 11000;

  // Forced algorithms (Auto = by size); a forced one that cannot run (e.g.
  // recursive doubling on 6 ranks, Rabenseifner on a user op) falls back
  // to the automatic choice.
  BcastAlgo bcast = BcastAlgo::Auto;
  ReduceAlgo reduce = ReduceAlgo::Auto;
  AllreduceAlgo allreduce = AllreduceAlgo::Auto;
  AllgatherAlgo allgather = AllgatherAlgo::Auto;
  AlltoallAlgo alltoall = AlltoallAlgo::Auto;
  ReduceScatterAlgo reduce_scatter = ReduceScatterAlgo::Auto;

  static Tuning from_env();
};

// The process's settings (from_env on first use, then constant).
const Tuning& default_tuning();

// Every ADI3_COLL_* setting, for adi3_info and docs/collectives.md.
std::span<const Knob> coll_knobs();

}  // namespace adi3::coll
