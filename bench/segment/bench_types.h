/* The four benchmark layouts, shared by pack_bench (adi3) and
 * mpich_pack.c (MPICH) so both pack exactly the same bytes. Plain C. */
#ifndef ADI3_BENCH_SEGMENT_TYPES_H
#define ADI3_BENCH_SEGMENT_TYPES_H

#include <stddef.h>

/* (a) vector of doubles, blocklength 1, stride 2. */
#define BENCH_VEC_COUNT (4 << 20)

/* (b) faces of an N^3 cube of doubles (C order). */
#define BENCH_CUBE_N 256

/* (c) a struct of mixed types, BENCH_STRUCT_COUNT of them. */
struct bench_mixed {
  int a;
  double b;
  char c[3];
  float d[2];
  short e;
};
#define BENCH_STRUCT_COUNT (1 << 20)

/* (d) an indexed type of 1000 irregular blocks of doubles. */
#define BENCH_INDEXED_BLOCKS 1000
#define BENCH_INDEXED_COUNT 16

/* Deterministic irregular blocks: lengths 1..64 doubles, gaps 0..31. */
static inline void bench_indexed_layout(int* blocklens, int* displs, int* extent_elems) {
  unsigned s = 12345u;
  int at = 0;
  for (int i = 0; i < BENCH_INDEXED_BLOCKS; ++i) {
    s = s * 1103515245u + 12345u;
    blocklens[i] = 1 + (int)((s >> 16) % 64u);
    s = s * 1103515245u + 12345u;
    at += (int)((s >> 16) % 32u);
    displs[i] = at;
    at += blocklens[i];
  }
  *extent_elems = at;
}

#endif
