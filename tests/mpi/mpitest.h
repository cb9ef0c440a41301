/* Checks for the MPI test programs: failures are printed with the rank and
 * line and counted; mt_finish() sums them over all ranks, prints
 * "No Errors" (as MPICH's suite does) and gives the exit status. */
#ifndef ADI3_MPITEST_H
#define ADI3_MPITEST_H
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int mt_errors = 0;

static inline int mt_rank(void) {
  int init = 0, fin = 0, r = -1;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (init && !fin) MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

static inline void mt_fail(const char* file, int line, const char* what, long long a, long long b) {
  fprintf(stderr, "[rank %d] %s:%d: check failed: %s (%lld vs %lld)\n", mt_rank(), file, line, what, a, b);
  fflush(stderr);
  ++mt_errors;
}

#define CHECK(cond)                                        \
  do {                                                     \
    if (!(cond)) mt_fail(__FILE__, __LINE__, #cond, 0, 0); \
  } while (0)
#define CHECK_EQ(a, b)                                               \
  do {                                                               \
    long long a_ = (long long)(a), b_ = (long long)(b);              \
    if (a_ != b_) mt_fail(__FILE__, __LINE__, #a " == " #b, a_, b_); \
  } while (0)
/* The call must succeed. */
#define CHECK_OK(call) CHECK_EQ((call), MPI_SUCCESS)
/* The call must fail with error class cls (needs MPI_ERRORS_RETURN). */
#define CHECK_CLASS(call, cls)                                                     \
  do {                                                                             \
    int rc_ = (call), c_ = -1;                                                     \
    if (rc_ == MPI_SUCCESS) {                                                      \
      mt_fail(__FILE__, __LINE__, #call " should fail with " #cls, rc_, cls);      \
    } else {                                                                       \
      MPI_Error_class(rc_, &c_);                                                   \
      if (c_ != (cls)) mt_fail(__FILE__, __LINE__, #call " error class", c_, cls); \
    }                                                                              \
  } while (0)

static inline int mt_finish(void) {
  int total = 0, rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Allreduce(&mt_errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    if (total == 0)
      printf(" No Errors\n");
    else
      printf(" Found %d errors\n", total);
    fflush(stdout);
  }
  MPI_Finalize();
  return total != 0;
}

/* MPI_Init with errors returned on MPI_COMM_WORLD, this rank, the size and
   the ring neighbours (right = rank + 1, left = rank - 1, modulo size). */
static inline void mt_init_ring(int* argc, char*** argv, int* rank, int* size, int* right, int* left) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  *right = (*rank + 1) % *size;
  *left = (*rank + *size - 1) % *size;
}

/* A deterministic pseudo-random sequence (same on every rank for a seed). */
static inline unsigned mt_rand(unsigned* state) {
  *state = *state * 1103515245u + 12345u;
  return (*state >> 8) & 0xffffff;
}
#endif
