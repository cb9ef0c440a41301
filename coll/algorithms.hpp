// Internal: the schedule builders behind every collective (api.cpp wraps
// them as blocking and nonblocking calls). A builder validates what only
// it can (op/type), appends rounds to the schedule and returns 0 or an
// error code; it must choose its algorithm from values every rank agrees
// on (message sizes, rank counts, settings), never from local state.
#pragma once
#include <cstddef>
#include <vector>

#include "coll/op.hpp"
#include "coll/reducer.hpp"
#include "coll/schedule.hpp"
#include "coll/tuning.hpp"

namespace adi3::coll::detail {

inline int pof2_floor(int p) {
  int k = 1;
  while (k * 2 <= p) k *= 2;
  return k;
}
inline bool is_pof2(int p) { return p > 0 && (p & (p - 1)) == 0; }
inline int lowbit(int x) { return x & -x; }

int build_barrier(Schedule& s);
int build_bcast(Schedule& s, void* buf, std::size_t count, const Datatype* type, int root, const Tuning& t);
int build_reduce(Schedule& s, const void* sbuf, void* rbuf, std::size_t count, const Datatype* type, const Op& op,
                 int root, const Tuning& t);
int build_allreduce(Schedule& s, const void* sbuf, void* rbuf, std::size_t count, const Datatype* type, const Op& op,
                    const Tuning& t);
int build_gather(Schedule& s, const void* sbuf, std::size_t scount, const Datatype* stype, void* rbuf,
                 std::size_t rcount, const Datatype* rtype, int root);
int build_gatherv(Schedule& s, const void* sbuf, std::size_t scount, const Datatype* stype, void* rbuf,
                  const int* rcounts, const int* displs, const Datatype* rtype, int root);
int build_scatter(Schedule& s, const void* sbuf, std::size_t scount, const Datatype* stype, void* rbuf,
                  std::size_t rcount, const Datatype* rtype, int root);
int build_scatterv(Schedule& s, const void* sbuf, const int* scounts, const int* displs, const Datatype* stype,
                   void* rbuf, std::size_t rcount, const Datatype* rtype, int root);
// Allgather is allgatherv with equal blocks: counts/displs in rtype elements.
int build_allgatherv(Schedule& s, const void* sbuf, std::size_t scount, const Datatype* stype, void* rbuf,
                     const std::vector<std::size_t>& counts, const std::vector<std::ptrdiff_t>& displs,
                     const Datatype* rtype, const Tuning& t);
int build_alltoall(Schedule& s, const void* sbuf, std::size_t scount, const Datatype* stype, void* rbuf,
                   std::size_t rcount, const Datatype* rtype, const Tuning& t);
// Alltoallv and alltoallw: one block (address, count, type) per peer.
struct Block {
  void* buf;
  std::size_t count;
  const Datatype* type;
  std::size_t bytes() const { return count * type->size(); }
};
int build_alltoallw(Schedule& s, const std::vector<Block>& sends, const std::vector<Block>& recvs, bool in_place,
                    const Tuning& t);
// Reduce_scatter_block is reduce_scatter with equal counts.
int build_reduce_scatter(Schedule& s, const void* sbuf, void* rbuf, const std::vector<std::size_t>& counts,
                         const Datatype* type, const Op& op, const Tuning& t);
int build_scan(Schedule& s, const void* sbuf, void* rbuf, std::size_t count, const Datatype* type, const Op& op,
               bool exclusive);

// ---- pieces shared by the reduction algorithms ----

// Binomial-tree reduction of the work vector `input` to root, keeping rank
// order (non-commutative ops reduce towards rank 0, which then forwards to
// root). `input` may be modified if `writable`. Returns the work buffer
// holding the result at root, nullptr elsewhere.
std::byte* reduce_tree(Schedule& s, const Reducer& r, std::byte* input, bool writable, int root);

// The largest power of two pof2 <= p, and the fold of the first 2*rem
// ranks onto it: even ranks below 2*rem hand their vector to the odd
// neighbour and sit out (newrank -1).
struct Fold {
  int pof2 = 1, rem = 0, newrank = -1;
  Fold(int rank, int p);
  int real(int nr) const { return nr < rem ? 2 * nr + 1 : nr + rem; }
};
void fold_in(Schedule& s, const Reducer& r, const Fold& f, std::byte* acc, std::byte* tmp, std::size_t n);
void fold_out(Schedule& s, const Reducer& r, const Fold& f, std::byte* acc, std::size_t n);

// Rabenseifner's recursive-halving reduce-scatter over pof2 near-equal
// blocks of n elements; the returned steps let the allgather or gather
// phase walk back up. With `src` (a rank that did not fold, src != acc),
// acc holds nothing yet and src is the rank's read-only input: the first
// step sends its half from src, receives the partner's half straight into
// acc and combines src into it, which saves copying the whole input into
// acc first (the op is commutative here). tmp is used only from the second
// step on (or for every step without src).
struct HalvingStep {
  int peer, mask;
  std::size_t keep_first, keep_n, give_first, give_n;
};
std::vector<HalvingStep> halve(Schedule& s, const Reducer& r, const Fold& f, std::byte* acc, std::byte* tmp,
                               std::size_t n, const std::byte* src = nullptr);
void unhalve_allgather(Schedule& s, const Reducer& r, const std::vector<HalvingStep>& steps, std::byte* acc);
void unhalve_gather(Schedule& s, const Reducer& r, const Fold& f, const std::vector<HalvingStep>& steps, std::byte* acc,
                    int newroot);

}  // namespace adi3::coll::detail
