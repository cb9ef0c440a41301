/* Locks on several targets at once, shared and exclusive, from every rank
 * at the same time: programs that take their locks in one global order
 * (ascending ranks here) must never deadlock, whatever order their
 * operations, flushes and unlocks come in. A lazily acquired lock (its
 * request leaving with the first operation) must not let a rank hold a
 * later lock while an earlier one waits behind another rank's exclusive
 * lock. Exclusion is checked by a read-modify-write (get, flush, put) under
 * exclusive locks, which loses increments if two ranks ever hold it at
 * once; shared epochs add with accumulates. lock_all epochs (shared locks
 * of every rank) touching the targets in descending order meet exclusive
 * locks taken in ascending order. No barrier between the phases.
 * Run natively and with ADI3_FORCE_EMULATION=1, allocate and create
 * windows. */
#include "mpitest.h"

static int rank, size, right, left;

enum { SUM = 0, RMW = 1, SLOTS = 2 };

static void make(int flav, long long** mem, MPI_Win* w) {
  const MPI_Aint bytes = SLOTS * sizeof(long long);
  if (flav == 0) {
    CHECK_OK(MPI_Win_allocate(bytes, sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, mem, w));
  } else {
    *mem = malloc(bytes);
    CHECK_OK(MPI_Win_create(*mem, bytes, sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, w));
  }
  MPI_Win_set_errhandler(*w, MPI_ERRORS_RETURN);
  for (int i = 0; i < SLOTS; ++i) (*mem)[i] = 0;
  MPI_Barrier(MPI_COMM_WORLD);
}

/* Counts at every target against what all ranks say they did to it. */
static void verify(long long* mem, MPI_Win w, const long long* sums, const long long* rmws) {
  long long* all_sums = calloc(size, sizeof(long long));
  long long* all_rmws = calloc(size, sizeof(long long));
  MPI_Allreduce(sums, all_sums, size, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(rmws, all_rmws, size, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w));
  CHECK_EQ(mem[SUM], all_sums[rank]);
  CHECK_EQ(mem[RMW], all_rmws[rank]);
  CHECK_OK(MPI_Win_unlock(rank, w));
  free(all_sums);
  free(all_rmws);
}

/* Under an exclusive lock of t: its RMW slot + 1 by get, flush and put
   (two ranks at once would lose increments). */
static void increment(MPI_Win w, int t, long long* rmws) {
  long long v = -1;
  CHECK_OK(MPI_Get(&v, 1, MPI_LONG_LONG, t, RMW, 1, MPI_LONG_LONG, w));
  CHECK_OK(MPI_Win_flush(t, w));
  ++v;
  CHECK_OK(MPI_Put(&v, 1, MPI_LONG_LONG, t, RMW, 1, MPI_LONG_LONG, w));
  ++rmws[t];
}

/* MPICH-style nested locks: shared on every rank in turn, accumulate,
   unlock backwards, then at once exclusive on ranks 0 and 1 (some ranks
   are still in the shared phase). */
static void nested_then_exclusive(MPI_Win w, long long* sums, long long* rmws) {
  for (int round = 0; round < 20; ++round) {
    for (int t = 0; t < size; ++t) CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, w));
    long long one = 1;
    for (int t = 0; t < size; ++t) {
      CHECK_OK(MPI_Accumulate(&one, 1, MPI_LONG_LONG, t, SUM, 1, MPI_LONG_LONG, MPI_SUM, w));
      ++sums[t];
    }
    for (int t = size - 1; t >= 0; --t) CHECK_OK(MPI_Win_unlock(t, w));
    const int hi = size > 1 ? 1 : 0;
    CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w));
    if (hi) CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, hi, 0, w));
    for (int t = hi; t >= 0; --t) increment(w, t, rmws);
    CHECK_OK(MPI_Win_unlock(0, w));
    if (hi) CHECK_OK(MPI_Win_unlock(hi, w));
  }
}

/* Random subsets of targets locked in ascending order, each shared or
   exclusive at random; operations, flushes and unlocks in random order. */
static void random_epochs(MPI_Win w, long long* sums, long long* rmws, unsigned seed) {
  int* kind = malloc(size * sizeof(int)); /* -1 not locked, else MPI_LOCK_* */
  int* order = malloc(size * sizeof(int));
  for (int round = 0; round < 150; ++round) {
    int n = 0;
    for (int t = 0; t < size; ++t) {
      kind[t] = -1;
      const unsigned r = mt_rand(&seed);
      if (r % 3 == 0) continue;
      kind[t] = r % 2 ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED;
      CHECK_OK(MPI_Win_lock(kind[t], t, 0, w));
      order[n++] = t;
    }
    for (int i = n - 1; i > 0; --i) { /* shuffle the order of the operations */
      const int j = (int)(mt_rand(&seed) % (unsigned)(i + 1)), k = order[i];
      order[i] = order[j];
      order[j] = k;
    }
    long long one = 1;
    for (int i = 0; i < n; ++i) {
      const int t = order[i];
      CHECK_OK(MPI_Accumulate(&one, 1, MPI_LONG_LONG, t, SUM, 1, MPI_LONG_LONG, MPI_SUM, w));
      ++sums[t];
      if (mt_rand(&seed) % 4 == 0) CHECK_OK(MPI_Win_flush(t, w));
    }
    for (int i = 0; i < n; ++i) {
      const int t = order[(i + 1) % n];
      if (kind[t] == MPI_LOCK_EXCLUSIVE) increment(w, t, rmws);
    }
    for (int i = n - 1; i > 0; --i) { /* unlocks in yet another order */
      const int j = (int)(mt_rand(&seed) % (unsigned)(i + 1)), k = order[i];
      order[i] = order[j];
      order[j] = k;
    }
    for (int i = 0; i < n; ++i) CHECK_OK(MPI_Win_unlock(order[i], w));
  }
  free(kind);
  free(order);
}

/* Even ranks in lock_all epochs touch the targets from the last rank down,
   flushing each; odd ranks hold exclusive locks on every rank (ascending).
   lock_all is a shared lock of every rank, so nobody may hold one target
   while waiting for another. */
static void lockall_vs_exclusive(MPI_Win w, long long* sums, long long* rmws) {
  long long one = 1;
  for (int round = 0; round < 60; ++round) {
    if (rank % 2 == 0) {
      CHECK_OK(MPI_Win_lock_all(0, w));
      for (int t = size - 1; t >= 0; --t) {
        CHECK_OK(MPI_Accumulate(&one, 1, MPI_LONG_LONG, t, SUM, 1, MPI_LONG_LONG, MPI_SUM, w));
        ++sums[t];
        CHECK_OK(MPI_Win_flush(t, w));
      }
      CHECK_OK(MPI_Win_unlock_all(w));
    } else {
      for (int t = 0; t < size; ++t) CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, w));
      for (int t = size - 1; t >= 0; --t) {
        increment(w, t, rmws);
      }
      for (int t = 0; t < size; ++t) CHECK_OK(MPI_Win_unlock(t, w));
    }
  }
}

int main(int argc, char** argv) {
  mt_init_ring(&argc, &argv, &rank, &size, &right, &left);
  for (int flav = 0; flav < 2; ++flav) {
    long long* mem;
    MPI_Win w;
    make(flav, &mem, &w);
    long long* sums = calloc(size, sizeof(long long));
    long long* rmws = calloc(size, sizeof(long long));
    nested_then_exclusive(w, sums, rmws);
    random_epochs(w, sums, rmws, 77u + 1000u * (unsigned)rank + 7u * (unsigned)flav);
    nested_then_exclusive(w, sums, rmws);
    lockall_vs_exclusive(w, sums, rmws);
    MPI_Barrier(MPI_COMM_WORLD);
    verify(mem, w, sums, rmws);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(MPI_Win_free(&w));
    if (flav == 1) free(mem);
    free(sums);
    free(rmws);
  }
  return mt_finish();
}
