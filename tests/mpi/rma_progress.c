/* Passive-target progress: the target computes without calling MPI while
 * rank 0 runs lock/put/get/unlock 1,000 times against it and then puts a
 * done mark; under adi3 the target must see the mark while it computes
 * (it gives up after 25 s, so load slows the test but does not fail it).
 * MPICH and Open MPI cannot (their passive target waits for the target to
 * call MPI): there the target computes 2 s and only the data is checked.
 * Windows from MPI_Win_create and MPI_Win_allocate.
 * Then rank 0 runs put + flush 5,000 times in lock_all twice: while the
 * target waits in MPI_Recv (Device::block_until's policy) and while it waits
 * in MPI_Barrier. A rank blocked in the barrier must serve passive-target
 * traffic as promptly as one blocked in a receive (it once did only at the
 * wake-ups of the shared-memory barrier's futex wait, a millisecond per
 * operation: about 100x slower). The two phases run under the same load,
 * so their ratio, not a wall-clock bound, is asserted. */
#include <time.h>

#include "mpitest.h"

#define ROUNDS 1000
#define COMPUTE_S 2.0  /* peers: no progress without the target */
#define GIVE_UP_S 25.0 /* adi3: the mark must land long before this */
#define DONE_MARK 0x600dLL
#define BARRIER_ROUNDS 5000

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Arithmetic that the compiler cannot drop, for up to `seconds` or until
 * *mark holds DONE_MARK (read without MPI: the unified model). 1 if seen. */
static int compute_until(double seconds, const long long* mark) {
  volatile double x = 1.0;
  double end = now() + seconds;
  while (now() < end) {
    if (__atomic_load_n(mark, __ATOMIC_ACQUIRE) == DONE_MARK) return 1;
    for (int i = 0; i < 1000; ++i) x = x * 1.0000001 + 1e-9;
  }
  (void)x;
  return __atomic_load_n(mark, __ATOMIC_ACQUIRE) == DONE_MARK;
}

/* rank 0: `rounds` put + flush to target's element 3 in one lock_all epoch. */
static double put_flush_rounds(MPI_Win win, int target, int rounds) {
  double t0 = now();
  CHECK_OK(MPI_Win_lock_all(0, win));
  for (long long i = 0; i < rounds; ++i) {
    long long v = i;
    CHECK_OK(MPI_Put(&v, 1, MPI_LONG_LONG, target, 3, 1, MPI_LONG_LONG, win));
    CHECK_OK(MPI_Win_flush(target, win));
  }
  CHECK_OK(MPI_Win_unlock_all(win));
  return now() - t0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int target = size - 1;
  for (int flav = 0; flav < 2; ++flav) {
    MPI_Win win;
    long long* mem = NULL;
    if (flav == 0) {
      mem = calloc(16, sizeof(long long));
      MPI_Win_create(mem, 16 * sizeof(long long), sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    } else {
      MPI_Win_allocate(16 * sizeof(long long), sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
      memset(mem, 0, 16 * sizeof(long long));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double elapsed = 0;
    int seen = 0;
    if (rank == target) {
#ifdef ADI3_MPI
      seen = compute_until(size > 1 ? GIVE_UP_S : 0, &mem[0]);
#else
      seen = compute_until(COMPUTE_S, &mem[0]);
#endif
    } else if (rank == 0) {
      double t0 = now();
      for (long long i = 0; i < ROUNDS; ++i) {
        long long v = i, back = -1;
        CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
        CHECK_OK(MPI_Put(&v, 1, MPI_LONG_LONG, target, 1, 1, MPI_LONG_LONG, win));
        CHECK_OK(MPI_Get(&back, 1, MPI_LONG_LONG, target, 2, 1, MPI_LONG_LONG, win));
        CHECK_OK(MPI_Win_unlock(target, win));
        CHECK_EQ(back, 0);
      }
      elapsed = now() - t0;
      long long done = DONE_MARK;
      CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
      CHECK_OK(MPI_Put(&done, 1, MPI_LONG_LONG, target, 0, 1, MPI_LONG_LONG, win));
      CHECK_OK(MPI_Win_unlock(target, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == target) {
      MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
      CHECK_EQ(mem[1], size > 1 ? ROUNDS - 1 : 0);
      MPI_Win_unlock(rank, win);
#ifdef ADI3_MPI
      /* the origin's epochs completed while the target computed */
      if (size > 1) CHECK(seen);
#endif
    }
    (void)seen;
    if (rank == 0 && target != 0) {
      printf("%s window: %d lock/put/get/unlock in %.3f s while the target computed\n", flav ? "allocate" : "create",
             ROUNDS, elapsed);
    }
    /* Rank 0's put + flush rounds, first while the target waits in MPI_Recv,
     * then while it waits in MPI_Barrier. */
    double in_recv = 0, in_barrier = 0;
    if (rank == 0 && target != 0) {
      in_recv = put_flush_rounds(win, target, BARRIER_ROUNDS);
      CHECK_OK(MPI_Send(NULL, 0, MPI_BYTE, target, 7, MPI_COMM_WORLD));
    } else if (rank == target && target != 0) {
      CHECK_OK(MPI_Recv(NULL, 0, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && target != 0) in_barrier = put_flush_rounds(win, target, BARRIER_ROUNDS);
    MPI_Barrier(MPI_COMM_WORLD); /* the target waits here meanwhile */
    if (rank == target) {
      MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
      CHECK_EQ(mem[3], size > 1 ? BARRIER_ROUNDS - 1 : 0);
      MPI_Win_unlock(rank, win);
    }
    if (rank == 0 && target != 0) {
      printf("%s window: %d put + flush in %.3f s while the target waited in MPI_Recv, %.3f s in MPI_Barrier\n",
             flav ? "allocate" : "create", BARRIER_ROUNDS, in_recv, in_barrier);
#ifdef ADI3_MPI
      CHECK(in_barrier < 5.0 * in_recv + 0.1);
#endif
    }
    MPI_Win_free(&win);
    if (flav == 0) free(mem);
  }
  return mt_finish();
}
