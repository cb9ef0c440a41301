/* mpibench: MPI micro-benchmarks written against the standard interface
 * only, so one source builds with adi3's mpicc, mpicc.mpich and
 * mpicc.openmpi and the three are compared line by line (run.sh).
 *
 * Every figure is printed as one line "name size value unit"; lines that
 * start with '#' are comments. Units: "us" (lower is better), "MB/s" and
 * "Mmsg/s" (higher is better).
 */
#ifndef MB_H
#define MB_H

#include <mpi.h>
#include <stddef.h>

struct mb_options {
  double target;   /* seconds one timed batch should last */
  size_t min, max; /* message size range (bytes) */
  int quick;       /* fewer sizes */
  int pin;         /* pin rank r to core r % ncpu */
  int threads;     /* threads for the THREAD_MULTIPLE rate (0: 1, 2 and 4) */
};

extern struct mb_options mb_opt;
extern int mb_rank, mb_size;

/* Calls body(ctx, n) with growing n until one call lasts at least
 * mb_opt.target seconds on the slowest rank of comm (every rank of comm
 * calls it and gets the same answer); returns that call's seconds per
 * iteration. The smaller calls before it are the warm-up. */
double mb_time(MPI_Comm comm, void (*body)(void* ctx, long n), void* ctx);

/* Prints one figure from rank 0 of MPI_COMM_WORLD. */
void mb_report(const char* name, size_t size, double value, const char* unit);

/* Next size in a sweep: 0, 1, 2, 4, ... (step 2) or 1, 4, 16, ... */
size_t mb_next(size_t bytes, int step);

/* A page-aligned buffer of n bytes (at least 1), filled. */
void* mb_alloc(size_t n);

/* Benchmark groups (each a separate command, see mb_main.c). */
void mb_latency(void);
void mb_bandwidth(void);
void mb_bibandwidth(void);
void mb_msgrate(void);
void mb_busy(void);
void mb_collectives(void);
void mb_match(void);
void mb_pack(void);
void mb_threads(void);

#endif
