/* pi: each rank integrates 4/(1+x^2) over its share of [0,1] (midpoint
 * rule); MPI_Reduce sums the shares on rank 0. Run: mpiexec -n 4 ./mpi_pi */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long n = argc > 1 ? atol(argv[1]) : 10000000L;
  MPI_Bcast(&n, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  double h = 1.0 / (double)n, sum = 0.0;
  for (long i = rank; i < n; i += size) {
    double x = h * ((double)i + 0.5);
    sum += 4.0 / (1.0 + x * x);
  }
  double mine = h * sum, pi = 0.0;
  MPI_Reduce(&mine, &pi, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    const double ref = 3.141592653589793238462643;
    printf("pi: %.16f, error %.2e, %d ranks, %ld intervals, %.3f s\n", pi, fabs(pi - ref), size, n, MPI_Wtime() - t0);
    if (fabs(pi - ref) > 1e-8) MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return 0;
}
