// The binding's own collective traffic (on a communicator's internal
// context): a ring allgather, and agreeing on a free context index.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "coll/schedule.hpp"
#include "mpi/runtime.hpp"

namespace adi3::mpi {

// Every rank of `over` contributes `bytes` at mine; all receives them in
// rank order (size * bytes).
int allgather_bytes(Device& dev, const Comm& over, const void* mine, std::size_t bytes, void* all, int tag);

// Agreeing on a context index free at every rank of `over`, as a state
// machine the progress engine can drive (MPI_Comm_idup) or a blocking call
// runs to the end. Rounds: every rank's free mask (AND: the candidates),
// each claims the lowest candidate still free here, every rank's pick; all
// equal ends it, else the picks are released and it starts again.
// Agreements may be pending side by side (idups of several parents started
// in different orders at different ranks), and two of them could claim
// their candidates in opposite orders at two ranks. So the first attempts
// offer only one eighth of the indices, chosen from (context, tag,
// attempt): two agreements rarely compete, and when they do, the next
// attempt separates them with another draw; later attempts offer every
// index. No agreement ever waits for another, so none can deadlock one.
class Agreement {
 public:
  Agreement(Runtime& rt, const Comm& over, int tag);
  ~Agreement();
  Agreement(const Agreement&) = delete;
  Agreement& operator=(const Agreement&) = delete;

  // Moves on without blocking; true once finished.
  bool advance();
  // Runs to the end; 0 or the error.
  int run();
  int error() const { return err_; }
  uint32_t index() const { return index_; }

 private:
  void start_masks();
  void next();  // after a round completed
  std::unique_ptr<coll::Schedule> gather(const void* mine, std::size_t bytes, void* all);

  Runtime& rt_;
  Comm over_;
  int tag_;
  std::uint64_t key_;
  int attempt_ = 0;
  bool picking_ = false, finished_ = false;
  int err_ = 0, pick_ = -1;
  uint32_t index_ = 0;
  std::vector<uint32_t> mine_, masks_;  // mask words + "real" flag per rank
  std::vector<int> picks_;
  std::unique_ptr<coll::Schedule> cur_;
};

// A context index free at every rank of `over`, claimed at this rank.
int agree_context(Runtime& rt, const Comm& over, int tag, uint32_t* index);

}  // namespace adi3::mpi
