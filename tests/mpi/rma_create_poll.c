/* The binding's short ways to a window from MPI_Win_create (on shm: memory
 * reached by cross-memory attach, or packets while the target polls), as
 * rmabench's create rows use them: rank 0 waits in MPI_Barrier (polling)
 * while every other rank runs fetch_and_op, compare_and_swap, get and put
 * with a flush inside lock_all, and lock / operation / unlock epochs, into
 * the same elements. Even origins force theirs to the emulation
 * (adi3_emulate_ops), so packets, copies and forced packets mix on one
 * element; the sums and counters must be exact. Between them, reads alone
 * (fetch_and_op MPI_NO_OP, a compare_and_swap that never matches), which
 * take cross-memory attach as the first of their interval. */
#include "mpitest.h"

#define ITERS 300

enum { FOP, CAS, SLOT }; /* fetch_and_op sum, compare_and_swap counter, slot r: rank r's puts */

static int rank, size;

/* Rank 0 zeroes its window memory, under its exclusive lock. */
static void zero_window(MPI_Win win, long long* mem) {
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
  if (rank == 0)
    for (int i = 0; i < SLOT + size; ++i) mem[i] = 0;
  MPI_Win_unlock(0, win);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* One compare_and_swap increment of mem[CAS] at rank 0 (a loop: others race). */
static void cas_increment(MPI_Win win, int locked) {
  long long seen = 0, want, prev;
  if (locked) CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
  CHECK_OK(MPI_Get(&seen, 1, MPI_LONG_LONG, 0, CAS, 1, MPI_LONG_LONG, win));
  CHECK_OK(locked ? MPI_Win_unlock(0, win) : MPI_Win_flush(0, win));
  for (long tries = 0;; ++tries) {
    want = seen + 1;
    if (locked) CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    CHECK_OK(MPI_Compare_and_swap(&want, &seen, &prev, MPI_LONG_LONG, 0, CAS, win));
    CHECK_OK(locked ? MPI_Win_unlock(0, win) : MPI_Win_flush(0, win));
    if (prev == seen) return;
    seen = prev;
    if (tries > 10000000L) {
      CHECK(!"compare_and_swap never succeeds");
      return;
    }
  }
}

static void origin(MPI_Win win, int locked, long long* fetched) {
  long long one = 1;
  if (!locked) CHECK_OK(MPI_Win_lock_all(0, win));
  for (int i = 0; i < ITERS; ++i) {
    if (locked) CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    CHECK_OK(MPI_Fetch_and_op(&one, &fetched[i], MPI_LONG_LONG, 0, FOP, MPI_SUM, win));
    CHECK_OK(locked ? MPI_Win_unlock(0, win) : MPI_Win_flush(0, win));
    /* reads alone, first of their interval or behind another (a
     * cross-memory-attach read even while rank 0 polls, or a packet): a
     * fetch_and_op MPI_NO_OP sees our sum landed, a compare_and_swap whose
     * compare never matches writes nothing (the counts below stay exact) */
    long long now = -1, never = -5, nomatch = -1, seen = -1;
    if (locked) CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    if (i % 2) CHECK_OK(MPI_Fetch_and_op(NULL, &now, MPI_LONG_LONG, 0, FOP, MPI_NO_OP, win));
    CHECK_OK(MPI_Compare_and_swap(&never, &nomatch, &seen, MPI_LONG_LONG, 0, CAS, win));
    if (!(i % 2)) CHECK_OK(MPI_Fetch_and_op(NULL, &now, MPI_LONG_LONG, 0, FOP, MPI_NO_OP, win));
    CHECK_OK(locked ? MPI_Win_unlock(0, win) : MPI_Win_flush(0, win));
    CHECK(now > fetched[i]);
    CHECK(seen >= 0);
    cas_increment(win, locked);
    /* put then read back our own slot: nobody else writes it */
    long long v = (long long)rank * 1000000 + i, back = -1;
    if (locked) CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    CHECK_OK(MPI_Put(&v, 1, MPI_LONG_LONG, 0, SLOT + rank, 1, MPI_LONG_LONG, win));
    CHECK_OK(MPI_Win_flush(0, win));
    CHECK_OK(MPI_Get(&back, 1, MPI_LONG_LONG, 0, SLOT + rank, 1, MPI_LONG_LONG, win));
    CHECK_OK(locked ? MPI_Win_unlock(0, win) : MPI_Win_flush(0, win));
    CHECK_EQ(back, v);
  }
  if (!locked) CHECK_OK(MPI_Win_unlock_all(win));
}

/* What the binding caches per target once a put or get took cross-memory
 * attach (mpi/win_cma.cpp kDirectCma) must not outlive its epoch or let a
 * later call skip a check: a get in a fence epoch, then lock / put / get /
 * unlock, a put past the window (MPI_ERR_RMA_RANGE, nothing written), an
 * accumulate as a packet between the copies, and lock_all / flush rounds
 * after it, with fetch_and_op and compare_and_swap (one past the window
 * each) behind the copies. Rank 0 polls in the fences and in MPI_Barrier. */
static void cached_epochs(MPI_Win win, long long* mem) {
  const int slot = SLOT + rank;
  long long v = 0, back = -1;
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  CHECK_OK(MPI_Win_fence(0, win));
  if (rank != 0) CHECK_OK(MPI_Get(&back, 1, MPI_LONG_LONG, 0, slot, 1, MPI_LONG_LONG, win));
  CHECK_OK(MPI_Win_fence(0, win));
  if (rank != 0) CHECK_EQ(back, 0);
  CHECK_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  if (rank != 0) {
    for (int i = 1; i <= 50; ++i) {
      v = (long long)rank * 1000 + i;
      CHECK_OK(MPI_Win_lock(i % 2 ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE, 0, 0, win));
      CHECK_OK(MPI_Put(&v, 1, MPI_LONG_LONG, 0, slot, 1, MPI_LONG_LONG, win));
      CHECK_CLASS(MPI_Put(&v, 1, MPI_LONG_LONG, 0, SLOT + size, 1, MPI_LONG_LONG, win), MPI_ERR_RMA_RANGE);
      CHECK_OK(MPI_Win_flush(0, win));
      CHECK_OK(MPI_Accumulate(&v, 1, MPI_LONG_LONG, 0, slot, 1, MPI_LONG_LONG, MPI_SUM, win));
      CHECK_OK(MPI_Win_flush(0, win));
      CHECK_OK(MPI_Get(&back, 1, MPI_LONG_LONG, 0, slot, 1, MPI_LONG_LONG, win));
      CHECK_OK(MPI_Win_unlock(0, win));
      CHECK_EQ(back, 2 * v);
    }
    CHECK_OK(MPI_Win_lock_all(0, win));
    for (int i = 0; i < 50; ++i) {
      v = -(long long)rank * 1000 - i;
      CHECK_OK(MPI_Put(&v, 1, MPI_LONG_LONG, 0, slot, 1, MPI_LONG_LONG, win));
      CHECK_OK(MPI_Win_flush(0, win));
      CHECK_OK(MPI_Get(&back, 1, MPI_LONG_LONG, 0, slot, 1, MPI_LONG_LONG, win));
      CHECK_OK(MPI_Win_flush(0, win));
      CHECK_EQ(back, v);
      /* fetch_and_op and compare_and_swap keep the byte (a lean
       * read-modify-write) or forget it (a packet): neither may skip the
       * range check or the flush's wait */
      long long one = 1, got = -1, prev = -1, next = v + 2, cmp = v + 1;
      CHECK_OK(MPI_Fetch_and_op(&one, &got, MPI_LONG_LONG, 0, slot, MPI_SUM, win));
      CHECK_CLASS(MPI_Fetch_and_op(&one, &prev, MPI_LONG_LONG, 0, SLOT + size, MPI_SUM, win), MPI_ERR_RMA_RANGE);
      CHECK_OK(MPI_Win_flush(0, win));
      CHECK_EQ(got, v);
      CHECK_OK(MPI_Compare_and_swap(&next, &cmp, &prev, MPI_LONG_LONG, 0, slot, win));
      CHECK_CLASS(MPI_Compare_and_swap(&next, &cmp, &back, MPI_LONG_LONG, 0, SLOT + size, win), MPI_ERR_RMA_RANGE);
      CHECK_OK(MPI_Win_flush(0, win));
      CHECK_EQ(prev, v + 1);
    }
    CHECK_OK(MPI_Win_unlock_all(win));
  }
  MPI_Barrier(MPI_COMM_WORLD); /* rank 0 polls here */
  if (rank == 0) {
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    for (int r = 1; r < size; ++r) CHECK_EQ(mem[SLOT + r], -(long long)r * 1000 - 49 + 2);
    MPI_Win_unlock(0, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* Runs of three fetch_and_op on one element between flushes, then a put:
 * the first goes as a packet while rank 0 polls and the binding keeps its
 * per-target bytes (mpi/win_cma.cpp), so the ones behind it must see the
 * emulated one in flight and stay behind it (MPI orders accumulates to one
 * location: each origin's fetched values increase); the flush keeps the
 * bytes too, and the get behind it must see the put. */
static void fetch_runs(MPI_Win win, long long* mem) {
  enum { RUNS = 100 };
  if (rank != 0) {
    long long one = 1, got[3], v, back;
    CHECK_OK(MPI_Win_lock_all(0, win));
    for (int i = 0; i < RUNS; ++i) {
      for (int k = 0; k < 3; ++k) CHECK_OK(MPI_Fetch_and_op(&one, &got[k], MPI_LONG_LONG, 0, FOP, MPI_SUM, win));
      v = (long long)rank * 1000 + i;
      back = -1;
      CHECK_OK(MPI_Put(&v, 1, MPI_LONG_LONG, 0, SLOT + rank, 1, MPI_LONG_LONG, win));
      CHECK_OK(MPI_Win_flush(0, win));
      CHECK(got[0] >= 0 && got[0] < got[1] && got[1] < got[2]);
      CHECK_OK(MPI_Get(&back, 1, MPI_LONG_LONG, 0, SLOT + rank, 1, MPI_LONG_LONG, win));
      CHECK_OK(MPI_Win_flush(0, win));
      CHECK_EQ(back, v);
    }
    CHECK_OK(MPI_Win_unlock_all(win));
  }
  MPI_Barrier(MPI_COMM_WORLD); /* rank 0 polls here */
  if (rank == 0) {
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    CHECK_EQ(mem[FOP], 3LL * RUNS * (size - 1));
    MPI_Win_unlock(0, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long long* mem = calloc((size_t)(SLOT + size), sizeof(long long));
  long long* fetched = malloc(sizeof(long long) * ITERS);
  long long* all = rank == 0 ? malloc(sizeof(long long) * ITERS * size) : NULL;
  MPI_Info info;
  MPI_Info_create(&info);
  if (rank != 0 && rank % 2 == 0) MPI_Info_set(info, "adi3_emulate_ops", "get,put,fetch_and_op,compare_and_swap");
  MPI_Win win;
  CHECK_OK(MPI_Win_create(mem, (MPI_Aint)((SLOT + size) * sizeof(long long)), sizeof(long long), info, MPI_COMM_WORLD,
                          &win));
  MPI_Info_free(&info);
  for (int locked = 0; locked < 2; ++locked) {
    zero_window(win, mem);
    for (int i = 0; i < ITERS; ++i) fetched[i] = -1;
    if (rank != 0) origin(win, locked, fetched);
    MPI_Barrier(MPI_COMM_WORLD); /* rank 0 polls here */
    /* every fetched counter value is distinct: 0 .. (size-1)*ITERS-1 */
    MPI_Gather(fetched, ITERS, MPI_LONG_LONG, all, ITERS, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      const long long n = (long long)ITERS * (size - 1);
      char* seen = calloc((size_t)n + 1, 1);
      for (int i = ITERS; i < ITERS * size; ++i) {
        CHECK(all[i] >= 0 && all[i] < n);
        if (all[i] >= 0 && all[i] < n) {
          CHECK(!seen[all[i]]);
          seen[all[i]] = 1;
        }
      }
      free(seen);
      MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
      CHECK_EQ(mem[FOP], n);
      CHECK_EQ(mem[CAS], n);
      for (int r = 1; r < size; ++r) CHECK_EQ(mem[SLOT + r], (long long)r * 1000000 + ITERS - 1);
      MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  zero_window(win, mem);
  cached_epochs(win, mem);
  zero_window(win, mem);
  fetch_runs(win, mem);
  CHECK_OK(MPI_Win_free(&win));
  free(mem);
  free(fetched);
  free(all);
  return mt_finish();
}
