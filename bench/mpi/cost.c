/* mpicost MODE N: the instruction cost of one hot-path operation, counted
 * by valgrind's callgrind (bench/mpi/cost.sh), so the figure does not
 * depend on the load of the machine. Rank 0 runs MODE N times inside
 * cost_loop() (the only function callgrind collects); the other ranks
 * wait in a barrier. Every mode talks to rank 0 itself, so the count is
 * deterministic (no waiting on a peer), yet the channel is the real one
 * with as many peers as ranks.
 *
 *   send     MPI_Irecv, MPI_Send (8 B, matched at once), MPI_Wait
 *   unexp    MPI_Send (8 B, arrives unexpected), MPI_Recv
 *   rate     a window of 64 MPI_Irecv and 64 MPI_Isend (8 B), MPI_Waitall
 *            (cost per message)
 *   empty    MPI_Test of a receive nobody sends to (an empty progress pass)
 *   iprobe   MPI_Iprobe finding nothing
 *   allreduce, reduce, bcast, barrier: one blocking collective of 8 B
 *            (one MPI_LONG, MPI_SUM; root 0) on MPI_COMM_WORLD. These need
 *            every rank, so the others run the same loop natively; rank 0
 *            under callgrind is the slowest, so its waits find the others
 *            already there and the count is still its own work.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64

static char sbuf[8], rbuf[WINDOW][8];

static int is_coll(const char* mode) {
  return !strcmp(mode, "allreduce") || !strcmp(mode, "reduce") || !strcmp(mode, "bcast") || !strcmp(mode, "barrier");
}

static void coll_loop(const char* mode, long n) {
  long in = 1, out = 0;
  if (!strcmp(mode, "allreduce")) {
    for (long i = 0; i < n; ++i) MPI_Allreduce(&in, &out, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  } else if (!strcmp(mode, "reduce")) {
    for (long i = 0; i < n; ++i) MPI_Reduce(&in, &out, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  } else if (!strcmp(mode, "bcast")) {
    for (long i = 0; i < n; ++i) MPI_Bcast(&in, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  } else if (!strcmp(mode, "barrier")) {
    for (long i = 0; i < n; ++i) MPI_Barrier(MPI_COMM_WORLD);
  }
}

static void __attribute__((noinline)) cost_loop(const char* mode, long n) {
  MPI_Request reqs[2 * WINDOW];
  if (!strcmp(mode, "send")) {
    for (long i = 0; i < n; ++i) {
      MPI_Irecv(rbuf[0], 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &reqs[0]);
      MPI_Send(sbuf, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
      MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    }
  } else if (!strcmp(mode, "unexp")) {
    for (long i = 0; i < n; ++i) {
      MPI_Send(sbuf, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
      MPI_Recv(rbuf[0], 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  } else if (!strcmp(mode, "rate")) {
    for (long i = 0; i < n; i += WINDOW) {
      for (int k = 0; k < WINDOW; ++k) MPI_Irecv(rbuf[k], 8, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &reqs[k]);
      for (int k = 0; k < WINDOW; ++k) MPI_Isend(sbuf, 8, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &reqs[WINDOW + k]);
      MPI_Waitall(2 * WINDOW, reqs, MPI_STATUSES_IGNORE);
    }
  } else if (!strcmp(mode, "empty")) {
    int flag = 0;
    MPI_Irecv(rbuf[0], 8, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &reqs[0]);
    for (long i = 0; i < n; ++i) MPI_Test(&reqs[0], &flag, MPI_STATUS_IGNORE);
    MPI_Send(sbuf, 8, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
    MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
  } else if (!strcmp(mode, "iprobe")) {
    int flag = 0;
    for (long i = 0; i < n; ++i) MPI_Iprobe(0, 4, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  } else {
    coll_loop(mode, n);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* mode = argc > 1 ? argv[1] : "send";
  long n = argc > 2 ? atol(argv[2]) : 10000;
  if (rank == 0) {
    cost_loop(mode, 64); /* warm-up: pools, rings and pages */
    cost_loop(mode, n);
  } else if (is_coll(mode)) {
    coll_loop(mode, 64);
    coll_loop(mode, n);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
