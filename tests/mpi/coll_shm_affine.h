/* The affine op of the shm collective tests (coll_shm.c, coll_shm_direct.c):
 * non-commutative and exact, so a reduction folded in the wrong order or
 * with a lost or doubled contribution shows. */
#pragma once
#include <stdint.h>

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
