/* halo: a 1-D heat equation split across ranks; each step exchanges the
 * edge cells with the neighbours through MPI_Put into their ghost cells,
 * between two MPI_Win_fence calls (active target). Rank 0 checks the
 * result against the same computation done serially.
 * Run: mpiexec -n 4 ./mpi_halo */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define CELLS 64 /* per rank */
#define STEPS 500

static double initial(int global) { return global % 17 == 0 ? 100.0 : 0.0; }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int left = rank > 0 ? rank - 1 : MPI_PROC_NULL, right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;

  /* u[0] and u[CELLS + 1] are ghost cells the neighbours write into */
  double* u;
  MPI_Win win;
  MPI_Win_allocate((CELLS + 2) * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &u, &win);
  double next[CELLS + 2];
  for (int i = 0; i < CELLS + 2; ++i) u[i] = 0.0;
  for (int i = 1; i <= CELLS; ++i) u[i] = initial(rank * CELLS + i - 1);

  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  for (int step = 0; step < STEPS; ++step) {
    /* my first cell is my left neighbour's right ghost, and vice versa */
    MPI_Put(&u[1], 1, MPI_DOUBLE, left, CELLS + 1, 1, MPI_DOUBLE, win);
    MPI_Put(&u[CELLS], 1, MPI_DOUBLE, right, 0, 1, MPI_DOUBLE, win);
    MPI_Win_fence(MPI_MODE_NOSTORE, win); /* ghosts arrived; nobody reads my cells now */
    for (int i = 1; i <= CELLS; ++i) next[i] = u[i] + 0.25 * (u[i - 1] - 2.0 * u[i] + u[i + 1]);
    for (int i = 1; i <= CELLS; ++i) u[i] = next[i];
    MPI_Win_fence(MPI_MODE_NOPUT, win); /* everyone updated before the next puts */
  }
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);

  double* all = rank == 0 ? malloc(sizeof(double) * CELLS * size) : NULL;
  MPI_Gather(&u[1], CELLS, MPI_DOUBLE, all, CELLS, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  int bad = 0;
  if (rank == 0) {
    int n = CELLS * size;
    double* s = calloc((size_t)n + 2, sizeof(double));
    double* t = calloc((size_t)n + 2, sizeof(double));
    for (int i = 1; i <= n; ++i) s[i] = initial(i - 1);
    for (int step = 0; step < STEPS; ++step) {
      for (int i = 1; i <= n; ++i) t[i] = s[i] + 0.25 * (s[i - 1] - 2.0 * s[i] + s[i + 1]);
      for (int i = 1; i <= n; ++i) s[i] = t[i];
    }
    double heat = 0, maxdiff = 0;
    for (int i = 0; i < n; ++i) {
      heat += all[i];
      maxdiff = fmax(maxdiff, fabs(all[i] - s[i + 1]));
    }
    bad = maxdiff > 1e-12;
    printf(
        "halo: %d ranks x %d cells, %d steps with MPI_Put between fences: total heat %.6f, "
        "max difference from the serial run %.1e (%s)\n",
        size, CELLS, STEPS, heat, maxdiff, bad ? "WRONG" : "ok");
    free(s);
    free(t);
    free(all);
  }
  MPI_Win_free(&win);
  MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return bad;
}
