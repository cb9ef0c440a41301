/* The pack_bench layouts built with MPI calls and packed with MPI_Pack,
 * for comparison with adi3. Built against Debian's MPICH by
 * run_vs_mpich.sh (not part of the CMake build). Same output format as
 * pack_bench: case, packed bytes, GB/s, memcpy GB/s. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_types.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* From the fastest call in ~0.3 s, as pack_bench measures. */
typedef void (*work_fn)(void*);
static double gbps(size_t bytes, work_fn f, void* arg) {
  double best = 1e30, total = 0;
  f(arg);
  for (int calls = 0; calls < 5 || total < 0.3; ++calls) {
    double t0 = now();
    f(arg);
    double s = now() - t0;
    if (s < best) best = s;
    total += s;
  }
  return (double)bytes / best / 1e9;
}

/* Writes every page: calloc'd but untouched memory maps the shared zero
 * page, which would make reads look cache-resident. */
static void* filled(size_t bytes) {
  unsigned char* p = malloc(bytes);
  for (size_t i = 0; i < bytes; ++i) p[i] = (unsigned char)(i * 7u + 1u);
  return p;
}

struct job {
  void* buf;
  int count;
  MPI_Datatype type;
  char* out;
  int outsize;
  const char* src;
};

static void do_pack(void* a) {
  struct job* j = a;
  int pos = 0;
  MPI_Pack(j->buf, j->count, j->type, j->out, j->outsize, &pos, MPI_COMM_WORLD);
}

static void do_memcpy(void* a) {
  struct job* j = a;
  memcpy(j->out, j->src, (size_t)j->outsize);
}

static void report(const char* name, void* buf, int count, MPI_Datatype t) {
  int size;
  MPI_Type_commit(&t);
  MPI_Type_size(t, &size);
  size_t bytes = (size_t)size * (size_t)count;
  char* out = malloc(bytes);
  char* src = malloc(bytes);
  memset(src, 1, bytes);
  struct job j = {buf, count, t, out, (int)bytes, src};
  double p = gbps(bytes, do_pack, &j);
  double m = gbps(bytes, do_memcpy, &j);
  printf("%-24s %12zu %8.2f %8.2f\n", name, bytes, p, m);
  free(out);
  free(src);
  MPI_Type_free(&t);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  printf("%-24s %12s %8s %8s\n", "case", "bytes", "GB/s", "memcpy");
  {
    double* a = filled(2 * (size_t)BENCH_VEC_COUNT * sizeof(double));
    MPI_Datatype t;
    MPI_Type_vector(BENCH_VEC_COUNT, 1, 2, MPI_DOUBLE, &t);
    report("a_vector_stride2", a, 1, t);
    free(a);
  }
  {
    const int n = BENCH_CUBE_N;
    double* cube = filled((size_t)n * n * n * sizeof(double));
    const char* names[3] = {"b_face_x_strided", "b_face_y_rows", "b_face_z_contig"};
    for (int f = 0; f < 3; ++f) {
      int sizes[3] = {n, n, n}, sub[3] = {n, n, n}, st[3] = {0, 0, 0};
      sub[2 - f] = 1;
      st[2 - f] = n / 2;
      MPI_Datatype t;
      MPI_Type_create_subarray(3, sizes, sub, st, MPI_ORDER_C, MPI_DOUBLE, &t);
      report(names[f], cube, 1, t);
    }
    free(cube);
  }
  {
    int bl[5] = {1, 1, 3, 2, 1};
    MPI_Aint d[5] = {offsetof(struct bench_mixed, a), offsetof(struct bench_mixed, b), offsetof(struct bench_mixed, c),
                     offsetof(struct bench_mixed, d), offsetof(struct bench_mixed, e)};
    MPI_Datatype ts[5] = {MPI_INT, MPI_DOUBLE, MPI_CHAR, MPI_FLOAT, MPI_SHORT};
    MPI_Datatype t;
    MPI_Type_create_struct(5, bl, d, ts, &t);
    struct bench_mixed* a = filled(BENCH_STRUCT_COUNT * sizeof *a);
    report("c_struct_mixed", a, BENCH_STRUCT_COUNT, t);
    free(a);
  }
  {
    int bl[BENCH_INDEXED_BLOCKS], dis[BENCH_INDEXED_BLOCKS], ext;
    bench_indexed_layout(bl, dis, &ext);
    MPI_Datatype t;
    MPI_Type_indexed(BENCH_INDEXED_BLOCKS, bl, dis, MPI_DOUBLE, &t);
    double* a = filled((size_t)ext * BENCH_INDEXED_COUNT * sizeof(double));
    report("d_indexed_1000", a, BENCH_INDEXED_COUNT, t);
    free(a);
  }
  MPI_Finalize();
  return 0;
}
