// The binding's own collective traffic (on a communicator's internal
// context): a ring allgather, and agreeing on a free context index.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "coll/schedule.hpp"
#include "mpi/runtime.hpp"

namespace adi3::mpi {

// Tags on a communicator's internal context (each operation there is
// collective, so one tag per purpose keeps them apart; nonblocking dups take
// theirs from the communicator's sequence, 64 and up).
inline constexpr int kTagGather = 1;    // allgather_bytes of comm.cpp, intercomm.cpp
inline constexpr int kTagContext = 2;   // agree_context of a blocking new communicator
inline constexpr int kTagMark = 5;      // create_group's marks (below), on the parent's internal context
inline constexpr int kTagFinalize = 6;  // the meeting of MPI_Finalize (env.cpp)
// Taken elsewhere: 3 (intercomm.cpp), 4 (topology_graph.cpp), 7 and 10-12 (leaders.hpp), 8 and 9 (below).

// Every rank of `over` contributes `bytes` at mine; all receives them in
// rank order (size * bytes).
int allgather_bytes(Device& dev, const Comm& over, const void* mine, std::size_t bytes, void* all, int tag);

// Agreeing on a context index free at every rank of `over`, as a state
// machine the progress engine can drive (MPI_Comm_idup) or a blocking call
// runs to the end: one round in which every rank offers a set of free
// indices; all take the lowest index every rank offered. Agreements may be
// pending side by side (idups of several parents started in different
// orders at different ranks), so each rank reserves what it offers until
// the round ends and never offers one index to two agreements: their
// candidate sets are disjoint and no pick can clash. Offers are one drawn
// eighth of the indices (drawn from context, tag and attempt), so two
// pending agreements rarely get in each other's way; an empty result is
// retried with another draw, later with every unreserved index. No
// agreement waits for another, so none can deadlock one.
// A rank that already failed (`failed`: its error code, e.g. an attribute
// copy callback's) still takes part, offering nothing: every rank then ends
// the round with an error instead of waiting for it.
class Agreement {
 public:
  Agreement(Runtime& rt, const Comm& over, int tag, int failed = 0);
  ~Agreement();
  Agreement(const Agreement&) = delete;
  Agreement& operator=(const Agreement&) = delete;

  // Moves on without blocking; true once finished.
  bool advance();
  // Runs to the end; 0 or the error.
  int run();
  int error() const { return err_; }
  uint32_t index() const { return index_; }
  // The current round's messages have all arrived (advance() moves on).
  bool landed() const { return finished_ || !cur_ || cur_->landed(); }

 private:
  void start_round();
  void next();  // after the round completed

  Runtime& rt_;
  Comm over_;
  int tag_;
  std::uint64_t key_;
  int attempt_ = 0;
  bool finished_ = false, holding_ = false;
  int err_ = 0;
  int failed_ = 0;
  uint32_t index_ = 0;
  std::vector<uint32_t> mine_, masks_;  // offered mask words + "others reserved" flag per rank
  std::unique_ptr<coll::Schedule> cur_;
};

// A context index free at every rank of `over`, claimed at this rank
// (`failed`: as for Agreement; then that error is returned).
int agree_context(Runtime& rt, const Comm& over, int tag, uint32_t* index, int failed = 0);

// A rank whose arguments to a call that agrees on a context over `over`
// (kTagContext: MPI_Comm_dup, the dup of MPI_File_open) are bad still takes
// part in the agreement, so the call fails at every member instead of
// leaving the others waiting for this one. Returns `failed`.
int fail_agreement(Runtime& rt, const Comm& over, int failed);

// MPI_Comm_create_group agrees over its group's members on the parent's
// create_group context, kept apart by the user's tag; a member whose tag is
// bad cannot reach that agreement. So it marks its failure to every other
// member on `marks` (the same members in group order on the parent's
// internal context, tag kTagMark), learns their tag from their answers and
// takes part as a failed member (fail_create_group); the other members
// answer marks while they wait (agree_watching). A member answers every
// mark before its agreement can end (it waits for the marking member's
// offer, sent after the answers), so no mark or answer is left behind.
int agree_watching(Runtime& rt, const Comm& over, int tag, const Comm& marks, const Comm& parent, uint32_t* index,
                   int failed);
int fail_create_group(Runtime& rt, const Comm& over, const Comm& marks, int failed);

// A member whose group handle is bad does not know the members: it marks its
// failure to every rank of the parent (its internal Comm, tag kTagNoGroup,
// with the number of this rank's such calls); a member of a create_group
// call whose group holds it answers (agree_watching, tag kTagGroupAnswer)
// with the number, its tag and its group, and the bad member takes part in
// the agreement of the (tag, group) all of whose other members answered as
// failed. An answer to an earlier call's mark (one a rank took only later)
// carries an older number and is skipped. When no call is complete within
// kNoGroupPatience nobody waits for this rank: it returns. Left open: a
// later call of this rank whose other members are all outside this call
// can complete first (the bad member then joins the wrong call).
inline constexpr int kTagNoGroup = 8, kTagGroupAnswer = 9;
inline constexpr std::chrono::seconds kNoGroupPatience{2};
int fail_no_group(Runtime& rt, const Comm& parent, uint32_t grouped_context, int failed);

// Waits for *r until deadline, polling (and sleeping 1 ms between polls
// after the first thousand); false, with *r cancelled, when it did not
// arrive by then. For the waits that end when nobody answers.
bool arrived_by(Device& dev, Request** r, std::chrono::steady_clock::time_point deadline, Status* st);

}  // namespace adi3::mpi
