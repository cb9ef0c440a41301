/* Timing, reporting and buffers shared by every benchmark group. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mb.h"

double mb_time(MPI_Comm comm, void (*body)(void* ctx, long n), void* ctx) {
  long n = 1;
  for (;;) {
    MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    body(ctx, n);
    double t = MPI_Wtime() - t0, slowest = 0;
    /* Every rank must run the same count: the slowest rank decides. */
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
    if (slowest >= mb_opt.target || n >= (1L << 30)) return slowest / (double)n;
    /* Aim a little past the target; grow at most 16x per step so a slow
     * first call (page faults, connection set-up) does not mislead. */
    double want = slowest > 0 ? 1.25 * mb_opt.target / slowest * (double)n : 16.0 * (double)n;
    long next = want > 16.0 * (double)n ? 16 * n : (long)want;
    n = next > n ? next : n + 1;
  }
}

void mb_report(const char* name, size_t size, double value, const char* unit) {
  if (mb_rank != 0) return;
  printf("%s %zu %.6g %s\n", name, size, value, unit);
  fflush(stdout);
}

size_t mb_next(size_t bytes, int step) {
  if (bytes == 0) return 1;
  return bytes * (size_t)step;
}

void* mb_alloc(size_t n) {
  void* p = NULL;
  if (n == 0) n = 1;
  if (posix_memalign(&p, 4096, n) != 0) {
    fprintf(stderr, "mpibench: out of memory (%zu bytes)\n", n);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  memset(p, 'x', n);
  return p;
}
