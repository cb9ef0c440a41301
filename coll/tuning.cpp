#include "coll/tuning.hpp"

#include <string>

namespace adi3::coll {
namespace {

constexpr Knob kKnobs[] = {
    {"ADI3_COLL_BCAST_SHORT_MSG", "12288", "Bcast: bytes below which a binomial tree is used."},
    {"ADI3_COLL_BCAST_LONG_MSG", "524288",
     "Bcast: bytes below which scatter + recursive-doubling allgather is used (power-of-two rank counts); "
     "larger messages use scatter + ring allgather."},
    {"ADI3_COLL_BCAST_MIN_PROCS", "8", "Bcast: with fewer ranks the binomial tree is always used."},
    {"ADI3_COLL_REDUCE_SHORT_MSG", "65536",
     "Reduce: bytes above which a predefined op uses reduce-scatter + gather (Rabenseifner)."},
    {"ADI3_COLL_ALLREDUCE_SHORT_MSG", "2048",
     "Allreduce: bytes above which a predefined op uses Rabenseifner's reduce-scatter + allgather."},
    {"ADI3_COLL_ALLGATHER_SHORT_MSG", "81920", "Allgather(v): total bytes below which Bruck's algorithm is used."},
    {"ADI3_COLL_ALLGATHER_LONG_MSG", "524288",
     "Allgather(v): total bytes below which recursive doubling is used (power-of-two rank counts); "
     "above both thresholds a ring is used."},
    {"ADI3_COLL_ALLTOALL_SHORT_MSG", "256", "Alltoall: bytes per block up to which Bruck's algorithm is used."},
    {"ADI3_COLL_ALLTOALL_MIN_PROCS", "8", "Alltoall: Bruck's algorithm needs at least this many ranks."},
    {"ADI3_COLL_ALLTOALL_MEDIUM_MSG", "32768",
     "Alltoall: bytes per block below which every transfer is posted at once; larger blocks use pairwise exchange."},
    {"ADI3_COLL_ALLTOALL_THROTTLE", "32", "Alltoall(v,w): transfers posted per batch by the scattered algorithm."},
    {"ADI3_COLL_REDUCE_SCATTER_LONG_MSG", "524288",
     "Reduce_scatter(_block): total bytes above which a commutative op uses pairwise exchange instead of "
     "recursive halving."},
    {"ADI3_COLL_SMALL_MSG", "1024",
     "Barrier, and bcast, reduce (commutative ops), allreduce, allgather and alltoall of predefined types whose "
     "messages are at most this many bytes,"
     " run straight on point-to-point calls without a schedule (unless an algorithm is forced); 0 never."},
    {"ADI3_COLL_SHM", "1",
     "Barrier, bcast, reduce, allreduce, reduce_scatter(_block) (predefined types), allgather and alltoall "
     "through a shared-memory segment of the "
     "communicator when all its members are on this host; 0: over point-to-point messages."},
    {"ADI3_COLL_SHM_DIRECT_MIN", "16384",
     "Allgather and alltoall on the shared segment: bytes per block from which each rank reads the others' "
     "buffers straight with cross-memory attach (one copy instead of two), where every rank has a core of its "
     "own; 0 never."},
    {"ADI3_COLL_SHM_DIRECT_SHARED_MIN", "16384",
     "Alltoall on the shared segment where the ranks outnumber the processors (up to "
     "ADI3_COLL_SHM_DIRECT_SHARED_CROWDING ranks per processor): bytes per block from which each rank reads the "
     "others' buffers straight with cross-memory attach, whatever rate the reads run at; 0 never."},
    {"ADI3_COLL_SHM_DIRECT_SHARED_CROWDING", "4",
     "The most ranks per processor (rounded up) at which ADI3_COLL_SHM_DIRECT_SHARED_MIN applies; beyond, "
     "alltoall keeps the segment's copies."},
    {"ADI3_COLL_SHM_DIRECT_BCAST_MIN", "16384",
     "Bcast on the shared segment where every rank has a core of its own: bytes from which the other ranks read "
     "the root's buffer straight with cross-memory attach (one copy instead of two); 0 never."},
    {"ADI3_COLL_SHM_DIRECT_REDUCE_MIN", "65536",
     "Reduce of 2 ranks on the shared segment up to 256 KiB and beyond 1 MiB (between them it is pipelined): bytes "
     "from which the root reads the other rank's input straight with cross-memory attach and folds it (commutative op, "
     "or root 0; "
     "not in place at the root); 0 never."},
    {"ADI3_COLL_SHM_DIRECT_REDUCE_SHARED_MIN", "65536",
     "Reduce on the shared segment where the ranks outnumber the processors (up to "
     "ADI3_COLL_SHM_DIRECT_SHARED_CROWDING ranks per processor), beyond a slot and up to 512 KiB: bytes from which "
     "each rank reads its slice of every rank's input straight with cross-memory attach and folds it in rank "
     "order, and the root gathers the slices; 0 never."},
    {"ADI3_COLL_SHM_DIRECT_MBPS", "0",
     "Those direct reads are used while every rank's reads ran at least this many MB/s (moving average; "
     "tested again every 64th call when slower); 0: always (no rate verdict)."},
    {"ADI3_COLL_SHM_DIRECT_REDUCE_MBPS", "11000",
     "The same for the root's direct reads of a 2-rank reduce (their own moving average): below it the reduce "
     "takes the pipeline."},
    {"ADI3_COLL_BCAST_ALGO", "auto", "Force bcast: auto, binomial, scatter_doubling, scatter_ring."},
    {"ADI3_COLL_REDUCE_ALGO", "auto", "Force reduce: auto, binomial, reduce_scatter_gather."},
    {"ADI3_COLL_ALLREDUCE_ALGO", "auto", "Force allreduce: auto, recursive_doubling, rabenseifner, ring."},
    {"ADI3_COLL_ALLGATHER_ALGO", "auto", "Force allgather(v): auto, recursive_doubling, bruck, ring."},
    {"ADI3_COLL_ALLTOALL_ALGO", "auto", "Force alltoall: auto, bruck, scattered, pairwise."},
    {"ADI3_COLL_REDUCE_SCATTER_ALGO", "auto",
     "Force reduce_scatter(_block): auto, recursive_halving, pairwise, reduce_scatterv."},
};

// Index of `v` in names (0 = auto, also for unknown names).
template <class E, std::size_t N>
E algo(const char* var, const char* const (&names)[N]) {
  std::string v = env_string(var, "auto");
  for (std::size_t i = 0; i < N; ++i) {
    if (v == names[i]) return static_cast<E>(i);
  }
  return static_cast<E>(0);
}

std::size_t bytes(const char* var, std::size_t fallback) {
  int64_t v = env_int(var, static_cast<int64_t>(fallback));
  return v < 0 ? fallback : static_cast<std::size_t>(v);
}

int count(const char* var, int fallback) {
  int64_t v = env_int(var, fallback);
  return v < 1 ? fallback : static_cast<int>(v);
}

}  // namespace

Tuning Tuning::from_env() {
  Tuning t;
  t.bcast_short = bytes("ADI3_COLL_BCAST_SHORT_MSG", t.bcast_short);
  t.bcast_long = bytes("ADI3_COLL_BCAST_LONG_MSG", t.bcast_long);
  t.bcast_min_procs = count("ADI3_COLL_BCAST_MIN_PROCS", t.bcast_min_procs);
  t.reduce_short = bytes("ADI3_COLL_REDUCE_SHORT_MSG", t.reduce_short);
  t.allreduce_short = bytes("ADI3_COLL_ALLREDUCE_SHORT_MSG", t.allreduce_short);
  t.allgather_short = bytes("ADI3_COLL_ALLGATHER_SHORT_MSG", t.allgather_short);
  t.allgather_long = bytes("ADI3_COLL_ALLGATHER_LONG_MSG", t.allgather_long);
  t.alltoall_short = bytes("ADI3_COLL_ALLTOALL_SHORT_MSG", t.alltoall_short);
  t.alltoall_min_procs = count("ADI3_COLL_ALLTOALL_MIN_PROCS", t.alltoall_min_procs);
  t.alltoall_medium = bytes("ADI3_COLL_ALLTOALL_MEDIUM_MSG", t.alltoall_medium);
  t.alltoall_throttle = count("ADI3_COLL_ALLTOALL_THROTTLE", t.alltoall_throttle);
  t.reduce_scatter_long = bytes("ADI3_COLL_REDUCE_SCATTER_LONG_MSG", t.reduce_scatter_long);
  t.small_max = bytes("ADI3_COLL_SMALL_MSG", t.small_max);
  t.shm = env_int("ADI3_COLL_SHM", 1) != 0;
  t.shm_direct_min = bytes("ADI3_COLL_SHM_DIRECT_MIN", t.shm_direct_min);
  t.shm_direct_shared_min = bytes("ADI3_COLL_SHM_DIRECT_SHARED_MIN", t.shm_direct_shared_min);
  t.shm_direct_shared_crowding = count("ADI3_COLL_SHM_DIRECT_SHARED_CROWDING", t.shm_direct_shared_crowding);
  t.shm_direct_bcast_min = bytes("ADI3_COLL_SHM_DIRECT_BCAST_MIN", t.shm_direct_bcast_min);
  t.shm_direct_reduce_min = bytes("ADI3_COLL_SHM_DIRECT_REDUCE_MIN", t.shm_direct_reduce_min);
  t.shm_direct_reduce_shared_min = bytes("ADI3_COLL_SHM_DIRECT_REDUCE_SHARED_MIN", t.shm_direct_reduce_shared_min);
  t.shm_direct_mbps = bytes("ADI3_COLL_SHM_DIRECT_MBPS", t.shm_direct_mbps);
  t.shm_direct_reduce_mbps = bytes("ADI3_COLL_SHM_DIRECT_REDUCE_MBPS", t.shm_direct_reduce_mbps);
  static const char* const kBcast[] = {"auto", "binomial", "scatter_doubling", "scatter_ring"};
  static const char* const kReduce[] = {"auto", "binomial", "reduce_scatter_gather"};
  static const char* const kAllreduce[] = {"auto", "recursive_doubling", "rabenseifner", "ring"};
  static const char* const kAllgather[] = {"auto", "recursive_doubling", "bruck", "ring"};
  static const char* const kAlltoall[] = {"auto", "bruck", "scattered", "pairwise"};
  static const char* const kReduceScatter[] = {"auto", "recursive_halving", "pairwise", "reduce_scatterv"};
  t.bcast = algo<BcastAlgo>("ADI3_COLL_BCAST_ALGO", kBcast);
  t.reduce = algo<ReduceAlgo>("ADI3_COLL_REDUCE_ALGO", kReduce);
  t.allreduce = algo<AllreduceAlgo>("ADI3_COLL_ALLREDUCE_ALGO", kAllreduce);
  t.allgather = algo<AllgatherAlgo>("ADI3_COLL_ALLGATHER_ALGO", kAllgather);
  t.alltoall = algo<AlltoallAlgo>("ADI3_COLL_ALLTOALL_ALGO", kAlltoall);
  t.reduce_scatter = algo<ReduceScatterAlgo>("ADI3_COLL_REDUCE_SCATTER_ALGO", kReduceScatter);
  return t;
}

const Tuning& default_tuning() {
  // Read once, never written afterwards.
  static const Tuning t = Tuning::from_env();
  return t;
}

std::span<const Knob> coll_knobs() { return kKnobs; }

}  // namespace adi3::coll
