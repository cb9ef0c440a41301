/* Passive-target progress: the target computes for 2 s without calling
 * MPI while rank 0 runs lock/put/get/unlock 1,000 times against it; the
 * origin must finish long before the target's computation ends (windows
 * from MPI_Win_create and MPI_Win_allocate). MPICH and Open MPI fail the
 * timing (their passive target waits for the target to call MPI): the
 * timing is asserted under adi3 only, the data everywhere.
 * Then the target waits in MPI_Barrier while rank 0 runs put + flush
 * 5,000 times in lock_all: a rank blocked in MPI serves passive-target
 * traffic at once (it once did only at the wake-ups of the shared-memory
 * barrier's futex wait, a millisecond per operation: 5 s). */
#include <time.h>

#include "mpitest.h"

#define ROUNDS 1000
#define COMPUTE_S 2.0
#define BARRIER_ROUNDS 5000

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Arithmetic that the compiler cannot drop, for `seconds`. */
static double compute(double seconds) {
  volatile double x = 1.0;
  double end = now() + seconds;
  while (now() < end) {
    for (int i = 0; i < 1000; ++i) x = x * 1.0000001 + 1e-9;
  }
  return x;
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
    double elapsed = 0, target_time = 0;
    if (rank == target) {
      double t0 = now();
      compute(COMPUTE_S);
      target_time = now() - t0;
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
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == target) {
      MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
      CHECK_EQ(mem[1], size > 1 ? ROUNDS - 1 : 0);
      MPI_Win_unlock(rank, win);
    }
    if (rank == 0 && target != 0) {
      printf("%s window: %d lock/put/get/unlock in %.3f s while the target computed\n", flav ? "allocate" : "create",
             ROUNDS, elapsed);
#ifdef ADI3_MPI
      /* "long before": well inside the target's 2 s */
      CHECK(elapsed < 0.6 * COMPUTE_S);
#endif
    }
    (void)target_time;
    elapsed = 0;
    if (rank == 0 && target != 0) {
      double t0 = now();
      CHECK_OK(MPI_Win_lock_all(0, win));
      for (long long i = 0; i < BARRIER_ROUNDS; ++i) {
        long long v = i;
        CHECK_OK(MPI_Put(&v, 1, MPI_LONG_LONG, target, 3, 1, MPI_LONG_LONG, win));
        CHECK_OK(MPI_Win_flush(target, win));
      }
      CHECK_OK(MPI_Win_unlock_all(win));
      elapsed = now() - t0;
    }
    MPI_Barrier(MPI_COMM_WORLD); /* the target waits here meanwhile */
    if (rank == target) {
      MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
      CHECK_EQ(mem[3], size > 1 ? BARRIER_ROUNDS - 1 : 0);
      MPI_Win_unlock(rank, win);
    }
    if (rank == 0 && target != 0) {
      printf("%s window: %d put + flush in %.3f s while the target waited in MPI_Barrier\n",
             flav ? "allocate" : "create", BARRIER_ROUNDS, elapsed);
#ifdef ADI3_MPI
      CHECK(elapsed < 2.0);
#endif
    }
    MPI_Win_free(&win);
    if (flav == 0) free(mem);
  }
  return mt_finish();
}
