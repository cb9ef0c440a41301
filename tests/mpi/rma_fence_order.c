/* Fence epochs on a window from MPI_Win_create (heap memory: on shm the
 * origin reaches it by cross-memory attach, or sends a packet while the
 * target polls): in every epoch each rank puts the epoch's number into the
 * same word of the next rank's window. After the last fence the word must
 * hold the last number: a put of one epoch never lands after one of a
 * later epoch, whichever path each took. Run with waits that sleep at once
 * (CMakeLists: the "sleepy" variant) the target sleeps in many fences, so
 * an origin alternates between the two paths (channels/shm/shm_onesided.cpp
 * wakes a sleeper with a packet). The same with MPI_Accumulate(MPI_REPLACE)
 * on every other window. */
#include "mpitest.h"

#define WINDOWS 100
#define EPOCHS 10

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int next = (rank + 1) % size;
  int bad = 0;
  for (int w = 0; w < WINDOWS; ++w) {
    long long* mem = calloc(2, sizeof *mem);
    MPI_Win win;
    CHECK_OK(MPI_Win_create(mem, 2 * sizeof *mem, sizeof *mem, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    const int acc = w % 2;
    CHECK_OK(MPI_Win_fence(0, win));
    for (long long k = 1; k <= EPOCHS; ++k) {
      if (acc)
        CHECK_OK(MPI_Accumulate(&k, 1, MPI_LONG_LONG, next, 0, 1, MPI_LONG_LONG, MPI_REPLACE, win));
      else
        CHECK_OK(MPI_Put(&k, 1, MPI_LONG_LONG, next, 0, 1, MPI_LONG_LONG, win));
      CHECK_OK(MPI_Win_fence(k == EPOCHS ? MPI_MODE_NOSUCCEED : 0, win));
    }
    if (mem[0] != EPOCHS && bad++ < 5) {
      mt_fail(__FILE__, __LINE__, acc ? "word after the accumulates' last fence" : "word after the puts' last fence",
              mem[0], EPOCHS);
    }
    CHECK_OK(MPI_Win_free(&win));
    free(mem);
  }
  if (bad > 5) printf("[rank %d] %d windows in all held an earlier epoch's value\n", rank, bad);
  return mt_finish();
}
