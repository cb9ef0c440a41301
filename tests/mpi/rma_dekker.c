/* The Dekker pattern over one-sided operations (2 ranks, inside
 * MPI_Win_lock_all): in round i rank 0 puts i into A, flushes and reads B;
 * rank 1 puts i into B, flushes and reads A. MPI_Win_flush completes the
 * put at the target before the read starts, so in no round may both ranks
 * read an older value. On x86 adi3's native flush leaves its memory fence
 * to the next native load (rma/window_state.hpp, before_load); this checks
 * that the load still waits for it: the read as MPI_Get on the same window,
 * as MPI_Get on a second window (the fence is owed per process, not per
 * window), as MPI_Fetch_and_op with MPI_NO_OP, and under exclusive locks.
 * A lives in rank 1's memory, B in rank 0's, so each rank puts to its peer
 * and reads its own window. */
#include "mpitest.h"

#define ROUNDS 20000

enum mode { SAME, OTHER, FOP, EXCL, MODES };
static const char* mode_name[] = {"get, same window", "get, other window", "fetch_and_op(NO_OP)", "exclusive locks"};

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) printf(" No Errors\n"); /* the pattern needs exactly two ranks */
    MPI_Finalize();
    return 0;
  }
  const int peer = 1 - rank;
  long long *m1, *m2;
  MPI_Win w1, w2;
  MPI_Win_allocate(128, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &m1, &w1);
  MPI_Win_allocate(128, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &m2, &w2);
  long long* seen = malloc(sizeof(long long) * ROUNDS);
  long long* other = malloc(sizeof(long long) * ROUNDS);
  for (int mode = SAME; mode < MODES; ++mode) {
    m1[0] = m2[0] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    /* Rank r writes its flag at the peer (offset 0 of the peer's part of
     * w1) and reads the peer's flag in its own part (of w1, or of w2 where
     * the peer's put went to w2). */
    MPI_Win put_win = w1, read_win = mode == OTHER ? w2 : w1;
    if (mode == OTHER && rank == 1) { /* rank 1 puts into w2, rank 0 reads w2 */
      put_win = w2;
      read_win = w1;
    }
    if (mode != EXCL) {
      MPI_Win_lock_all(0, w1);
      MPI_Win_lock_all(0, w2);
    }
    for (long long i = 1; i <= ROUNDS; ++i) {
      long long v = i, got = -1, none = 0;
      MPI_Barrier(MPI_COMM_WORLD);
      if (mode == EXCL) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer, 0, w1);
        MPI_Put(&v, 1, MPI_LONG_LONG, peer, 0, 1, MPI_LONG_LONG, w1);
        MPI_Win_unlock(peer, w1);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w2); /* another window: its word is not the peer's */
        MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w1);
        MPI_Get(&got, 1, MPI_LONG_LONG, rank, 0, 1, MPI_LONG_LONG, w1);
        MPI_Win_unlock(rank, w1);
        MPI_Win_unlock(rank, w2);
      } else {
        MPI_Put(&v, 1, MPI_LONG_LONG, peer, 0, 1, MPI_LONG_LONG, put_win);
        MPI_Win_flush(peer, put_win);
        if (mode == FOP) {
          MPI_Fetch_and_op(&none, &got, MPI_LONG_LONG, rank, 0, MPI_NO_OP, read_win);
        } else {
          MPI_Get(&got, 1, MPI_LONG_LONG, rank, 0, 1, MPI_LONG_LONG, read_win);
        }
        MPI_Win_flush(rank, read_win);
      }
      seen[i - 1] = got;
    }
    if (mode != EXCL) {
      MPI_Win_unlock_all(w2);
      MPI_Win_unlock_all(w1);
    }
    /* Round i: rank 0 read seen0[i], rank 1 read seen1[i]; old means < i + 1. */
    MPI_Sendrecv(seen, ROUNDS, MPI_LONG_LONG, peer, 0, other, ROUNDS, MPI_LONG_LONG, peer, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    if (rank == 0) {
      long both_old = 0, mine_old = 0, theirs_old = 0;
      for (long long i = 1; i <= ROUNDS; ++i) {
        const int a = seen[i - 1] < i, b = other[i - 1] < i;
        both_old += a && b;
        mine_old += a;
        theirs_old += b;
        CHECK(seen[i - 1] <= i && other[i - 1] <= i); /* nothing from the future */
      }
      if (both_old) {
        fprintf(stderr, "rma_dekker (%s): %ld of %d rounds read both flags old (%ld / %ld one-sided)\n",
                mode_name[mode], both_old, ROUNDS, mine_old, theirs_old);
      }
      CHECK_EQ(both_old, 0);
    }
  }
  free(seen);
  free(other);
  MPI_Win_free(&w2);
  MPI_Win_free(&w1);
  return mt_finish();
}
