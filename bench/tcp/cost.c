/* tcpcost MODE BYTES N: the cost of one message over the TCP channel
 * between rank 0 and rank 1, counted by callgrind on rank 0 inside
 * cost_loop() only (bench/tcp/cost.sh), so the figure does not depend on
 * the machine's load; cost.sh also counts rank 0's system calls.
 *
 *   stream  rank 0 posts a window of 64 receives of BYTES, then tells
 *           rank 1 to send them (cost per message received)
 *   lat     ping-pong of BYTES (cost per round trip: a send and a receive)
 *
 * Under callgrind rank 0 runs far slower than rank 1, so in "stream" the
 * messages are already waiting when rank 0 polls: what is counted is the
 * receive path, not idle polling. In "lat" rank 0 also polls while its
 * peer answers (a few empty passes per round trip).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64

static void __attribute__((noinline)) cost_loop(const char* mode, int rank, char* buf, int bytes, long n) {
  MPI_Request reqs[WINDOW];
  const int peer = rank ^ 1;
  char go = 0;
  if (!strcmp(mode, "stream")) {
    for (long i = 0; i < n; i += WINDOW) {
      if (rank == 0) {
        for (int k = 0; k < WINDOW; ++k) MPI_Irecv(buf, bytes, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &reqs[k]);
        MPI_Send(&go, 1, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
      } else {
        MPI_Recv(&go, 1, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int k = 0; k < WINDOW; ++k) MPI_Isend(buf, bytes, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &reqs[k]);
      }
      MPI_Waitall(WINDOW, reqs, MPI_STATUSES_IGNORE);
    }
  } else if (!strcmp(mode, "lat")) {
    for (long i = 0; i < n; ++i) {
      if (rank == 0) {
        MPI_Send(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        MPI_Recv(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
      }
    }
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* mode = argc > 1 ? argv[1] : "stream";
  int bytes = argc > 2 ? atoi(argv[2]) : 65536;
  long n = argc > 3 ? atol(argv[3]) : 1024;
  if (size != 2 || bytes < 1 || n < 1 || (strcmp(mode, "stream") && strcmp(mode, "lat"))) {
    if (rank == 0) fprintf(stderr, "usage: mpiexec -n 2 tcpcost stream|lat BYTES N\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  char* buf = malloc((size_t)bytes);
  memset(buf, rank, (size_t)bytes);
  cost_loop(mode, rank, buf, bytes, WINDOW); /* warm-up: connection, pools, pages */
  MPI_Barrier(MPI_COMM_WORLD);
  cost_loop(mode, rank, buf, bytes, n);
  MPI_Barrier(MPI_COMM_WORLD);
  free(buf);
  MPI_Finalize();
  return 0;
}
