/* counter: passive-target windows. Rank 0 holds a shared work counter that
 * every rank advances with MPI_Fetch_and_op (dynamic load balancing, no
 * receive posted anywhere); each work item adds into one slot of a
 * histogram spread over all ranks, updated with get + put under an
 * exclusive lock (a read-modify-write no other rank can interleave).
 * Rank 0 checks both against the closed forms.
 * Run: mpiexec -n 4 ./mpi_counter */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define ITEMS 2000
#define SLOTS 8 /* histogram slots per rank */

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  /* the counter: one long on rank 0 */
  long* counter;
  MPI_Win cwin;
  MPI_Win_allocate(rank == 0 ? sizeof(long) : 0, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &counter, &cwin);
  /* the histogram: SLOTS longs on every rank, in memory the program owns */
  long* hist;
  MPI_Alloc_mem(SLOTS * sizeof(long), MPI_INFO_NULL, &hist);
  MPI_Win hwin;
  MPI_Win_create(hist, SLOTS * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &hwin);
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, cwin);
  if (rank == 0) *counter = 0;
  MPI_Win_unlock(rank, cwin);
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, hwin);
  for (int i = 0; i < SLOTS; ++i) hist[i] = 0;
  MPI_Win_unlock(rank, hwin);
  MPI_Barrier(MPI_COMM_WORLD);

  long one = 1, item, mine = 0;
  MPI_Win_lock_all(0, cwin);
  for (;;) {
    MPI_Fetch_and_op(&one, &item, MPI_LONG, 0, 0, MPI_SUM, cwin);
    MPI_Win_flush(0, cwin);
    if (item >= ITEMS) break;
    ++mine;
    int slot = (int)(item % (SLOTS * size)), owner = slot / SLOTS;
    long v;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, owner, 0, hwin);
    MPI_Get(&v, 1, MPI_LONG, owner, slot % SLOTS, 1, MPI_LONG, hwin);
    MPI_Win_flush(owner, hwin);
    v += item;
    MPI_Put(&v, 1, MPI_LONG, owner, slot % SLOTS, 1, MPI_LONG, hwin);
    MPI_Win_unlock(owner, hwin);
  }
  MPI_Win_unlock_all(cwin);
  MPI_Barrier(MPI_COMM_WORLD);

  long done = 0, *all = rank == 0 ? malloc(sizeof(long) * SLOTS * size) : NULL;
  MPI_Reduce(&mine, &done, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, hwin);
  MPI_Gather(hist, SLOTS, MPI_LONG, all, SLOTS, MPI_LONG, 0, MPI_COMM_WORLD);
  MPI_Win_unlock(rank, hwin);
  int bad = 0;
  if (rank == 0) {
    long total = 0;
    for (int s = 0; s < SLOTS * size; ++s) {
      long want = 0;
      for (long i = s; i < ITEMS; i += SLOTS * size) want += i;
      bad |= all[s] != want;
      total += all[s];
    }
    bad |= done != ITEMS;
    printf(
        "counter: %d ranks took %ld work items from a shared MPI_Fetch_and_op counter; histogram "
        "(get/put under exclusive locks) sums to %ld, expected %ld (%s)\n",
        size, done, total, (long)ITEMS * (ITEMS - 1) / 2, bad ? "WRONG" : "ok");
    free(all);
  }
  MPI_Win_free(&hwin);
  MPI_Win_free(&cwin);
  MPI_Free_mem(hist);
  MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return bad;
}
