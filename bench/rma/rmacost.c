/* rmacost MODE N: the instruction cost of one 8-byte one-sided operation
 * on a window from MPI_Win_allocate, counted by callgrind
 * (bench/rma/cost.sh), so the figure does not depend on the machine's
 * load. Rank 0 runs MODE N times to rank 1 inside cost_loop() (the only
 * function callgrind collects); rank 1 waits in a barrier. On a native
 * window every mode completes without rank 1, so the count is
 * deterministic.
 *
 *   put   MPI_Put + MPI_Win_flush (inside MPI_Win_lock_all)
 *   get   MPI_Get + MPI_Win_flush
 *   acc   MPI_Accumulate (MPI_SUM, int64) + MPI_Win_flush
 *   accd  MPI_Accumulate (MPI_SUM, double: rmabench's acc) + MPI_Win_flush
 *   fop   MPI_Fetch_and_op (MPI_SUM, int64) + MPI_Win_flush
 *   cas   MPI_Compare_and_swap (int64) + MPI_Win_flush
 *   lock  MPI_Win_lock (exclusive) + MPI_Put + MPI_Win_unlock
 *   lput, lget, lacc, laccd, lfop, lcas: the operation between
 *         MPI_Win_lock (shared) and MPI_Win_unlock, as rmabench's lock rows
 *   bare  MPI_Put alone (flushed once after the loop)
 *   putk  MPI_Put of 1 KiB (MPI_BYTE), 16 per MPI_Win_flush: rmabench's
 *         put_bw_flush at 1 KiB (the count is per put, flush included)
 *   getk  MPI_Get of 1 KiB, 16 per MPI_Win_flush (get_bw_flush at 1 KiB)
 *   fence MPI_Put + MPI_Win_fence (rank 1 calls MPI_Win_fence as often:
 *         its arrival, which rank 0 waits for, is usually there already)
 *   fput, fget, facc, faccd, ffop, fcas: the operation then MPI_Win_fence
 *         (0), as rmabench's fence rows (fput is fence)
 *
 * With RMACOST_CREATE=1 in the environment the window is one from
 * MPI_Win_create over malloc'd memory instead (on shm: reached by
 * cross-memory attach, or as packets while the target polls), whose count
 * then depends on what rank 1 does; for looking at the origin's path only.
 * RMACOST_IDLE=1 as well keeps rank 1 out of the library (it looks once a
 * millisecond) instead of waiting in MPI_Barrier: every operation then
 * takes cross-memory attach, and the count is deterministic again.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static MPI_Win win;
static long long src = 1, res, cmp;
static double dsrc = 1.0;
static char kbuf[1024], kres[1024];

/* "f" + an operation's mode (not fop itself, nor fence). */
static int fence_mode(const char* mode) { return mode[0] == 'f' && strcmp(mode, "fop") && strcmp(mode, "fence"); }

static void __attribute__((noinline)) cost_loop(const char* mode, long n) {
  if (!strcmp(mode, "lock")) {
    for (long i = 0; i < n; ++i) {
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
      MPI_Put(&src, 1, MPI_LONG_LONG, 1, 0, 1, MPI_LONG_LONG, win);
      MPI_Win_unlock(1, win);
    }
    return;
  }
  if (!strcmp(mode, "fence")) {
    for (long i = 0; i < n; ++i) {
      MPI_Put(&src, 1, MPI_LONG_LONG, 1, 0, 1, MPI_LONG_LONG, win);
      MPI_Win_fence(0, win);
    }
    return;
  }
  if (!strcmp(mode, "putk") || !strcmp(mode, "getk")) {
    const int put = mode[0] == 'p';
    for (long i = 0; i < n; ++i) {
      if (put) {
        MPI_Put(kbuf, 1024, MPI_BYTE, 1, 0, 1024, MPI_BYTE, win);
      } else {
        MPI_Get(kres, 1024, MPI_BYTE, 1, 0, 1024, MPI_BYTE, win);
      }
      if (i % 16 == 15) MPI_Win_flush(1, win);
    }
    MPI_Win_flush(1, win);
    return;
  }
  /* "l" + an operation's mode: rmabench's lock rows (MPI_Win_lock shared
   * around each operation instead of a flush inside lock_all); "f" + one:
   * its fence rows (MPI_Win_fence after each operation). */
  const int locked = mode[0] == 'l' && strcmp(mode, "lock") != 0;
  const int fenced = fence_mode(mode);
  if (locked || fenced) ++mode;
  int m = !strcmp(mode, "put")    ? 0
          : !strcmp(mode, "get")  ? 1
          : !strcmp(mode, "acc")  ? 2
          : !strcmp(mode, "fop")  ? 3
          : !strcmp(mode, "cas")  ? 4
          : !strcmp(mode, "accd") ? 6
                                  : 5;
  for (long i = 0; i < n; ++i) {
    if (locked) MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
    switch (m) {
      case 0:
        MPI_Put(&src, 1, MPI_LONG_LONG, 1, 0, 1, MPI_LONG_LONG, win);
        break;
      case 1:
        MPI_Get(&res, 1, MPI_LONG_LONG, 1, 0, 1, MPI_LONG_LONG, win);
        break;
      case 2:
        MPI_Accumulate(&src, 1, MPI_LONG_LONG, 1, 0, 1, MPI_LONG_LONG, MPI_SUM, win);
        break;
      case 3:
        MPI_Fetch_and_op(&src, &res, MPI_LONG_LONG, 1, 0, MPI_SUM, win);
        break;
      case 4:
        MPI_Compare_and_swap(&src, &cmp, &res, MPI_LONG_LONG, 1, 0, win);
        break;
      case 6:
        MPI_Accumulate(&dsrc, 1, MPI_DOUBLE, 1, 0, 1, MPI_DOUBLE, MPI_SUM, win);
        break;
      default:
        MPI_Put(&src, 1, MPI_LONG_LONG, 1, 0, 1, MPI_LONG_LONG, win);
        continue;
    }
    if (locked) {
      MPI_Win_unlock(1, win);
    } else if (fenced) {
      MPI_Win_fence(0, win);
    } else {
      MPI_Win_flush(1, win);
    }
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 3 || size < 2) {
    if (rank == 0)
      fprintf(
          stderr,
          "usage: rmacost [l|f]put|[l|f]get|[l|f]acc|[l|f]accd|[l|f]fop|[l|f]cas|lock|bare|putk|getk|fence N (2 ranks "
          "or more)\n");
    MPI_Finalize();
    return 2;
  }
  const char* mode = argv[1];
  long n = atol(argv[2]);
  void* base;
  const char* create = getenv("RMACOST_CREATE");
  if (create && atoi(create)) {
    base = malloc(1024);
    MPI_Win_create(base, 1024, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  } else {
    MPI_Win_allocate(1024, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  }
  memset(base, 0, 1024);
  MPI_Barrier(MPI_COMM_WORLD);
  const int fence = !strcmp(mode, "fence") || fence_mode(mode);
  if (fence) MPI_Win_fence(0, win);
  if (rank == 0) {
    const int lock_all = mode[0] != 'l' && !fence;
    if (lock_all) MPI_Win_lock_all(0, win);
    cost_loop(mode, 8); /* warm-up: first-touch paths stay out of the loop's count */
    cost_loop(mode, n);
    if (lock_all) MPI_Win_unlock_all(win);
  } else if (fence) {
    for (long i = 0; i < 8 + n; ++i) MPI_Win_fence(0, win);
  }
  if (fence) MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  const char* idle = getenv("RMACOST_IDLE");
  if (!fence && idle && atoi(idle)) {
    /* The target outside the library (one look per millisecond), as one
     * that computes: a create window's operations then all take
     * cross-memory attach, so the count does not depend on the target.
     * (A nonblocking barrier matches only nonblocking ones.) */
    MPI_Request r;
    int done = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &r);
    while (!done) {
      if (rank != 0) usleep(1000);
      MPI_Test(&r, &done, MPI_STATUS_IGNORE);
    }
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Win_free(&win);
  if (create && atoi(create)) free(base);
  MPI_Finalize();
  return 0;
}
