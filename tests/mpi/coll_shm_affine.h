/* The affine op of the shm collective tests (coll_shm.c, coll_shm_direct.c,
 * coll_shm_reduce.c): non-commutative and exact, so a reduction folded in
 * the wrong order or with a lost or doubled contribution shows; and the
 * long allreduce and bcast those tests run between other calls. */
#pragma once
#include <stdint.h>
#include <stdlib.h>

#include "mpitest.h"

/* x -> a*x + b (mod 2^32) packed as a << 32 | b; u op v is "u, then v". */
static inline uint64_t affine_then(uint64_t u, uint64_t v) {
  uint32_t au = (uint32_t)(u >> 32), bu = (uint32_t)u, av = (uint32_t)(v >> 32), bv = (uint32_t)v;
  return ((uint64_t)(av * au) << 32) | (uint32_t)(av * bu + bv);
}
static inline void affine_op(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  uint64_t* a = (uint64_t*)in;
  uint64_t* b = (uint64_t*)inout;
  for (int i = 0; i < *len; ++i) b[i] = affine_then(a[i], b[i]);
}
static inline uint64_t affine_of(int r, long i) {
  return ((uint64_t)(2u * (uint32_t)(r * 7 + i) + 1u) << 32) | (uint32_t)(r * 131 + i * 3 + 1);
}

/* got[i] is the affine op folded in rank order over affine_of(r, i + shift). */
static inline void check_affine(const uint64_t* got, long n, int p, int shift, const char* what) {
  for (long i = 0; i < n; ++i) {
    uint64_t want = affine_of(0, i + shift);
    for (int r = 1; r < p; ++r) want = affine_then(want, affine_of(r, i + shift));
    if (got[i] != want) {
      mt_fail(__FILE__, __LINE__, what, (long long)got[i], (long long)want);
      return;
    }
  }
}

/* A long allreduce and a long bcast from root it % p (both use the
 * segment's areas) on n doubles, checked exactly. */
static inline void long_between(MPI_Comm comm, int it, long n) {
  double* v = (double*)malloc((size_t)n * sizeof(double));
  double* w = (double*)malloc((size_t)n * sizeof(double));
  int me, p;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &p);
  for (long i = 0; i < n; ++i) v[i] = (double)(me + i);
  CHECK_OK(MPI_Allreduce(v, w, (int)n, MPI_DOUBLE, MPI_SUM, comm));
  for (long i = 0; i < n; ++i) {
    const double want = (double)p * (double)i + (double)p * (p - 1) / 2;
    if (w[i] != want) {
      mt_fail(__FILE__, __LINE__, "allreduce between calls", (long)w[i], (long)want);
      break;
    }
  }
  if (me == it % p) {
    for (long i = 0; i < n; ++i) v[i] = (double)(it * i);
  }
  CHECK_OK(MPI_Bcast(v, (int)n, MPI_DOUBLE, it % p, comm));
  for (long i = 0; i < n; ++i) {
    if (v[i] != (double)(it * i)) {
      mt_fail(__FILE__, __LINE__, "bcast between calls", (long)v[i], (long)(it * i));
      break;
    }
  }
  free(v);
  free(w);
}
