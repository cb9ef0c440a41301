/* The profiling interface: a tool defines MPI_Send and reaches the library
 * through PMPI_Send. */
#include "mpitest.h"

static int sends = 0;

int MPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  ++sends;
  return PMPI_Send(buf, count, datatype, dest, tag, comm);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, v, w = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  v = rank;
  MPI_Request r;
  MPI_Irecv(&w, 1, MPI_INT, (rank + size - 1) % size, 0, MPI_COMM_WORLD, &r);
  MPI_Send(&v, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD);
  PMPI_Wait(&r, MPI_STATUS_IGNORE);
  CHECK_EQ(sends, 1);
  CHECK_EQ(w, (rank + size - 1) % size);
  return mt_finish();
}
