/* Concurrency of one-sided operations: accumulates, fetch_and_op and
 * compare_and_swap from every rank to one location give the exact result;
 * an exclusive lock excludes (a read-modify-write under it loses no
 * update); shared locks are held at the same time; post/start/complete/wait
 * with overlapping groups; MPI_Win_test. */
#include "mpitest.h"

#define ITERS 200

static int rank, size;

static void test_concurrent_atomics(MPI_Win win, long long* mem) {
  /* mem[0]: fetch_and_op counter, mem[1]: accumulate sum, mem[2]: CAS counter */
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
  mem[0] = mem[1] = mem[2] = 0;
  MPI_Win_unlock(rank, win);
  MPI_Barrier(MPI_COMM_WORLD);
  long long one = 1, got[ITERS];
  CHECK_OK(MPI_Win_lock_all(0, win));
  for (int i = 0; i < ITERS; ++i) {
    CHECK_OK(MPI_Fetch_and_op(&one, &got[i], MPI_LONG_LONG, 0, 0, MPI_SUM, win));
    long long v = rank + 1;
    CHECK_OK(MPI_Accumulate(&v, 1, MPI_LONG_LONG, 0, 1, 1, MPI_LONG_LONG, MPI_SUM, win));
    CHECK_OK(MPI_Win_flush(0, win));
    /* increment mem[2] with a compare-and-swap loop */
    long long seen = 0, want, prev;
    CHECK_OK(MPI_Fetch_and_op(NULL, &seen, MPI_LONG_LONG, 0, 2, MPI_NO_OP, win));
    CHECK_OK(MPI_Win_flush(0, win));
    for (int tries = 0;; ++tries) {
      want = seen + 1;
      CHECK_OK(MPI_Compare_and_swap(&want, &seen, &prev, MPI_LONG_LONG, 0, 2, win));
      CHECK_OK(MPI_Win_flush(0, win));
      if (prev == seen) break;
      seen = prev;
      if (tries > 1000000) {
        CHECK(!"compare_and_swap never succeeds");
        break;
      }
    }
  }
  CHECK_OK(MPI_Win_unlock_all(win));
  /* the fetched counter values are all different: 0 .. size*ITERS-1 */
  long long* all = rank == 0 ? malloc(sizeof(long long) * ITERS * size) : NULL;
  MPI_Gather(got, ITERS, MPI_LONG_LONG, all, ITERS, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    char* seen = calloc((size_t)(ITERS * size), 1);
    for (int i = 0; i < ITERS * size; ++i) {
      CHECK(all[i] >= 0 && all[i] < ITERS * size);
      if (all[i] >= 0 && all[i] < ITERS * size) {
        CHECK(!seen[all[i]]);
        seen[all[i]] = 1;
      }
    }
    free(seen);
    free(all);
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    CHECK_EQ(mem[0], (long long)ITERS * size);
    CHECK_EQ(mem[1], (long long)ITERS * size * (size + 1) / 2);
    CHECK_EQ(mem[2], (long long)ITERS * size);
    MPI_Win_unlock(0, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* get + put under an exclusive lock: no update is lost. */
static void test_exclusive(MPI_Win win, long long* mem) {
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
  mem[3] = 0;
  MPI_Win_unlock(rank, win);
  MPI_Barrier(MPI_COMM_WORLD);
  int target = size - 1;
  for (int i = 0; i < ITERS / 2; ++i) {
    long long v = -1;
    CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
    CHECK_OK(MPI_Get(&v, 1, MPI_LONG_LONG, target, 3, 1, MPI_LONG_LONG, win));
    CHECK_OK(MPI_Win_flush(target, win));
    ++v;
    CHECK_OK(MPI_Put(&v, 1, MPI_LONG_LONG, target, 3, 1, MPI_LONG_LONG, win));
    CHECK_OK(MPI_Win_unlock(target, win));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == target) {
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    CHECK_EQ(mem[3], (long long)(ITERS / 2) * size);
    MPI_Win_unlock(rank, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* Every rank holds a shared lock on rank 0 at the same time: each one
 * waits, while holding its lock (and having used it), for all others to
 * have theirs. Were shared locks exclusive, this would hang. */
static void test_shared_concurrent(MPI_Win win) {
  long long v = 0;
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
  CHECK_OK(MPI_Get(&v, 1, MPI_LONG_LONG, 0, 3, 1, MPI_LONG_LONG, win));
  CHECK_OK(MPI_Win_flush(0, win));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_unlock(0, win));
  MPI_Barrier(MPI_COMM_WORLD);
}

/* PSCW where every rank is origin and target at once (groups overlap):
 * each puts its rank into slot[rank] of every other rank's window. */
static void test_pscw_all(MPI_Win win, long long* mem) {
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
  for (int i = 0; i < size; ++i) mem[8 + i] = -1;
  mem[7] = 0;
  MPI_Win_unlock(rank, win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Group world, others;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_excl(world, 1, &rank, &others);
  for (int round = 0; round < 3; ++round) {
    CHECK_OK(MPI_Win_post(others, 0, win));
    CHECK_OK(MPI_Win_start(others, 0, win));
    long long v = rank * 10 + round;
    for (int t = 0; t < size; ++t) {
      if (t != rank) CHECK_OK(MPI_Put(&v, 1, MPI_LONG_LONG, t, 8 + rank, 1, MPI_LONG_LONG, win));
    }
    CHECK_OK(MPI_Win_complete(win));
    if (round == 1) {
      int flag = 0;
      for (long spins = 0; !flag; ++spins) {
        CHECK_OK(MPI_Win_test(win, &flag));
        if (spins > 100000000L) {
          CHECK(!"MPI_Win_test never succeeds");
          break;
        }
      }
    } else {
      CHECK_OK(MPI_Win_wait(win));
    }
    /* exposure epoch over: the puts are visible (separate model: lock self) */
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    for (int i = 0; i < size; ++i) CHECK_EQ(mem[8 + i], i == rank ? -1 : i * 10 + round);
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  /* origins and targets in different but overlapping groups: even ranks
   * expose to all, every rank accesses the even ranks only */
  MPI_Group evens;
  int neven = (size + 1) / 2, ev[64];
  for (int i = 0; i < neven; ++i) ev[i] = 2 * i;
  MPI_Group_incl(world, neven, ev, &evens);
  if (rank % 2 == 0) CHECK_OK(MPI_Win_post(world, 0, win));
  CHECK_OK(MPI_Win_start(evens, 0, win));
  long long one = 1;
  for (int i = 0; i < neven; ++i) {
    CHECK_OK(MPI_Accumulate(&one, 1, MPI_LONG_LONG, 2 * i, 7, 1, MPI_LONG_LONG, MPI_SUM, win));
  }
  CHECK_OK(MPI_Win_complete(win));
  if (rank % 2 == 0) CHECK_OK(MPI_Win_wait(win));
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank % 2 == 0) {
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    CHECK_EQ(mem[7], size);
    MPI_Win_unlock(rank, win);
  }
  MPI_Group_free(&evens);
  MPI_Group_free(&others);
  MPI_Group_free(&world);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* Fence epochs back to back with accumulates from everyone and the
 * assertions that say nothing was stored or put. */
static void test_fence_accumulate(MPI_Win win, long long* mem) {
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
  mem[6] = 0;
  MPI_Win_unlock(rank, win);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSTORE, win));
  for (int round = 0; round < 5; ++round) {
    long long v = rank + 1;
    for (int t = 0; t < size; ++t) CHECK_OK(MPI_Accumulate(&v, 1, MPI_LONG_LONG, t, 6, 1, MPI_LONG_LONG, MPI_SUM, win));
    CHECK_OK(MPI_Win_fence(MPI_MODE_NOSTORE, win));
  }
  CHECK_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED | MPI_MODE_NOPUT | MPI_MODE_NOSTORE, win));
  CHECK_EQ(mem[6], 5LL * size * (size + 1) / 2);
  MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int flav = 0; flav < 2; ++flav) {
    MPI_Win win;
    long long* mem = NULL;
    MPI_Aint bytes = (8 + 64) * sizeof(long long);
    if (flav == 0) {
      mem = calloc(8 + 64, sizeof(long long));
      CHECK_OK(MPI_Win_create(mem, bytes, sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    } else {
      CHECK_OK(MPI_Win_allocate(bytes, sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    }
    test_concurrent_atomics(win, mem);
    test_exclusive(win, mem);
    test_shared_concurrent(win);
    test_pscw_all(win, mem);
    test_fence_accumulate(win, mem);
    CHECK_OK(MPI_Win_free(&win));
    if (flav == 0) free(mem);
  }
  return mt_finish();
}
