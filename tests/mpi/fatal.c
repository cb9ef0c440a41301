/* The default error handler: an invalid call prints the rank, the call and
 * what was wrong, and ends the whole job; MPI_Abort ends it with its code.
 * argv[1]: "fatal" (a bad rank on rank 0), "abort" (MPI_Abort with 3 on the
 * last rank) or "before" (a call before MPI_Init). The other ranks block. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "fatal";
  int buf = 0, rank, size;
  if (strcmp(mode, "before") == 0) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return 0;
  }
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (strcmp(mode, "fatal") == 0 && rank == 0) MPI_Send(&buf, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD);
  if (strcmp(mode, "abort") == 0 && rank == size - 1) MPI_Abort(MPI_COMM_WORLD, 3);
  /* Not reached on the failing rank; the others wait for a message that
   * never comes until the job is stopped. */
  MPI_Recv(&buf, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  printf("not reached\n");
  MPI_Finalize();
  return 0;
}
