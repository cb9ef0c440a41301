/* Packing and large derived-type transfers a conformance suite probes:
 * MPI_Pack / MPI_Unpack piecewise with one position, MPI_Pack_size as an
 * upper bound, packing into or unpacking from too little space is an error
 * (not an overrun), the _x size and extent queries, a type with a negative
 * lower bound, and collectives and point-to-point of large messages
 * through non-contiguous types (vector, resized interleaving, struct with
 * gaps received as a different type of the same signature) - the segmented
 * and rendezvous paths, not only the eager one. */
#include <stddef.h>

#include "mpitest.h"

static int rank, size;

static void pack_unpack(void) {
  int a[5] = {1, 2, 3, 4, 5};
  double d[2] = {0.5, -2.25};
  char c[3] = {'x', 'y', 'z'};
  MPI_Datatype vec;
  MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  int s1, s2, s3;
  MPI_Pack_size(2, vec, MPI_COMM_WORLD, &s1);
  MPI_Pack_size(2, MPI_DOUBLE, MPI_COMM_WORLD, &s2);
  MPI_Pack_size(3, MPI_CHAR, MPI_COMM_WORLD, &s3);
  CHECK(s1 >= 4 * (int)sizeof(int));
  CHECK(s2 >= 2 * (int)sizeof(double));
  CHECK(s3 >= 3);
  char buf[256];
  int pos = 0;
  /* one vector (ints 0 and 2), two doubles, three chars, one position */
  CHECK_OK(MPI_Pack(a, 1, vec, buf, sizeof buf, &pos, MPI_COMM_WORLD));
  CHECK_OK(MPI_Pack(d, 2, MPI_DOUBLE, buf, sizeof buf, &pos, MPI_COMM_WORLD));
  CHECK_OK(MPI_Pack(c, 3, MPI_CHAR, buf, sizeof buf, &pos, MPI_COMM_WORLD));
  CHECK(pos <= s1 + s2 + s3);
  int used = pos;
  int a2[5] = {0, 0, 0, 0, 0};
  double d2[2] = {0, 0};
  char c2[3] = {0, 0, 0};
  pos = 0;
  CHECK_OK(MPI_Unpack(buf, used, &pos, a2, 1, vec, MPI_COMM_WORLD));
  CHECK_OK(MPI_Unpack(buf, used, &pos, d2, 2, MPI_DOUBLE, MPI_COMM_WORLD));
  CHECK_OK(MPI_Unpack(buf, used, &pos, c2, 3, MPI_CHAR, MPI_COMM_WORLD));
  CHECK_EQ(pos, used);
  CHECK_EQ(a2[0], 1);
  CHECK_EQ(a2[1], 0); /* the gap is not written */
  CHECK_EQ(a2[2], 3);
  CHECK(d2[1] == -2.25);
  CHECK_EQ(c2[2], 'z');
  /* too little room: an error, the position unchanged, nothing beyond */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  char small[8];
  memset(small, 0, sizeof small);
  pos = 4;
  CHECK(MPI_Pack(d, 2, MPI_DOUBLE, small, 8, &pos, MPI_COMM_WORLD) != MPI_SUCCESS);
  pos = 0;
  CHECK(MPI_Unpack(buf, 6, &pos, d2, 2, MPI_DOUBLE, MPI_COMM_WORLD) != MPI_SUCCESS);
  pos = used;
  CHECK(MPI_Unpack(buf, used, &pos, a2, 1, MPI_INT, MPI_COMM_WORLD) != MPI_SUCCESS);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  /* _x queries agree */
  MPI_Count sx = -1, lbx = -1, extx = -1, tlbx = -1, textx = -1;
  MPI_Aint lb, ext, tlb, text;
  int sz;
  CHECK_OK(MPI_Type_size_x(vec, &sx));
  CHECK_OK(MPI_Type_get_extent_x(vec, &lbx, &extx));
  CHECK_OK(MPI_Type_get_true_extent_x(vec, &tlbx, &textx));
  MPI_Type_size(vec, &sz);
  MPI_Type_get_extent(vec, &lb, &ext);
  MPI_Type_get_true_extent(vec, &tlb, &text);
  CHECK_EQ(sx, sz);
  CHECK_EQ(lbx, lb);
  CHECK_EQ(extx, ext);
  CHECK_EQ(tlbx, tlb);
  CHECK_EQ(textx, text);
  CHECK_EQ(ext, 3 * (MPI_Aint)sizeof(int));
  MPI_Type_free(&vec);
}

static void negative_lb(void) {
  /* ints at displacements -2 and 1 (in ints): lb = -2 ints */
  int bl[2] = {1, 1}, dis[2] = {-2, 1};
  MPI_Datatype t;
  MPI_Type_indexed(2, bl, dis, MPI_INT, &t);
  MPI_Type_commit(&t);
  MPI_Aint lb, ext;
  MPI_Type_get_extent(t, &lb, &ext);
  CHECK_EQ(lb, -2 * (MPI_Aint)sizeof(int));
  CHECK_EQ(ext, 4 * (MPI_Aint)sizeof(int));
  int src[8] = {10, 11, 12, 13, 14, 15, 16, 17}, dst[4] = {-1, -1, -1, -1};
  /* two of them from &src[2]: elements 0, 3, then 4, 7 */
  CHECK_OK(MPI_Sendrecv(src + 2, 2, t, 0, 0, dst, 4, MPI_INT, 0, 0, MPI_COMM_SELF, MPI_STATUS_IGNORE));
  CHECK_EQ(dst[0], 10);
  CHECK_EQ(dst[1], 13);
  CHECK_EQ(dst[2], 14);
  CHECK_EQ(dst[3], 17);
  MPI_Type_free(&t);
}

enum { BIG = 150000 };

static void big_collectives(void) {
  const int root = size > 1 ? 1 : 0;
  /* Bcast through a vector (every other int) */
  int* v = malloc(sizeof(int) * 2 * BIG);
  MPI_Datatype every2;
  MPI_Type_vector(BIG, 1, 2, MPI_INT, &every2);
  MPI_Type_commit(&every2);
  for (int i = 0; i < 2 * BIG; ++i) v[i] = rank == root ? i : -1;
  CHECK_OK(MPI_Bcast(v, 1, every2, root, MPI_COMM_WORLD));
  int bad = -1;
  for (int i = 0; i < 2 * BIG && bad < 0; ++i)
    if (v[i] != (i % 2 == 0 || rank == root ? i : -1)) bad = i;
  CHECK_EQ(bad, -1);
  MPI_Type_free(&every2);
  /* Allreduce of many doubles (small integers: exact) */
  double* x = malloc(sizeof(double) * BIG);
  double* y = malloc(sizeof(double) * BIG);
  for (int i = 0; i < BIG; ++i) x[i] = (double)(rank + i % 97);
  CHECK_OK(MPI_Allreduce(x, y, BIG, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
  bad = -1;
  for (int i = 0; i < BIG && bad < 0; ++i)
    if (y[i] != (double)(size * (size - 1) / 2 + size * (i % 97))) bad = i;
  CHECK_EQ(bad, -1);
  /* Allgather interleaved: rank r's k-th int lands at k * size + r
   * (a vector resized to one int) */
  const int per = BIG / 8;
  int* mine = malloc(sizeof(int) * per);
  int* all = malloc(sizeof(int) * per * size);
  for (int k = 0; k < per; ++k) mine[k] = rank * 1000000 + k;
  MPI_Datatype strided, inter;
  MPI_Type_vector(per, 1, size, MPI_INT, &strided);
  MPI_Type_create_resized(strided, 0, sizeof(int), &inter);
  MPI_Type_commit(&inter);
  CHECK_OK(MPI_Allgather(mine, per, MPI_INT, all, 1, inter, MPI_COMM_WORLD));
  bad = -1;
  for (int k = 0; k < per && bad < 0; ++k)
    for (int r = 0; r < size; ++r)
      if (all[k * size + r] != r * 1000000 + k) bad = k;
  CHECK_EQ(bad, -1);
  MPI_Type_free(&strided);
  MPI_Type_free(&inter);
  /* Alltoall of large blocks, nonblocking */
  int* s = malloc(sizeof(int) * per * size);
  int* r = malloc(sizeof(int) * per * size);
  for (int j = 0; j < size; ++j)
    for (int k = 0; k < per; ++k) s[j * per + k] = rank * 100000 + j * 1000 + k % 1000;
  MPI_Request rq;
  CHECK_OK(MPI_Ialltoall(s, per, MPI_INT, r, per, MPI_INT, MPI_COMM_WORLD, &rq));
  CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  bad = -1;
  for (int j = 0; j < size && bad < 0; ++j)
    for (int k = 0; k < per; ++k)
      if (r[j * per + k] != j * 100000 + rank * 1000 + k % 1000) {
        bad = j * per + k;
        break;
      }
  CHECK_EQ(bad, -1);
  free(v), free(x), free(y), free(mine), free(all), free(s), free(r);
}

/* A struct with gaps sent, received as plain (int, double) pairs. */
static void big_struct_p2p(void) {
  struct rec {
    int i;
    char pad[12];
    double d;
  };
  const int n = 40000;
  struct rec* src = malloc(sizeof(struct rec) * (size_t)n);
  MPI_Datatype st, st_r, pair;
  int bl[2] = {1, 1};
  MPI_Aint disp[2] = {offsetof(struct rec, i), offsetof(struct rec, d)};
  MPI_Datatype tys[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Type_create_struct(2, bl, disp, tys, &st);
  MPI_Type_create_resized(st, 0, sizeof(struct rec), &st_r);
  MPI_Type_commit(&st_r);
  /* receiving side: (int, double) packed tightly in a 12-byte stride */
  MPI_Aint pdisp[2] = {0, sizeof(int)};
  MPI_Datatype ptmp;
  MPI_Type_create_struct(2, bl, pdisp, tys, &ptmp);
  MPI_Type_create_resized(ptmp, 0, sizeof(int) + sizeof(double), &pair);
  MPI_Type_commit(&pair);
  char* dst = malloc((sizeof(int) + sizeof(double)) * (size_t)n);
  for (int k = 0; k < n; ++k) {
    src[k].i = rank * 7 + k;
    src[k].d = k + 0.25;
  }
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  MPI_Status stt;
  CHECK_OK(MPI_Sendrecv(src, n, st_r, next, 4, dst, n, pair, prev, 4, MPI_COMM_WORLD, &stt));
  int cnt = -1;
  MPI_Get_count(&stt, pair, &cnt);
  CHECK_EQ(cnt, n);
  MPI_Get_count(&stt, MPI_BYTE, &cnt);
  CHECK_EQ(cnt, n * (int)(sizeof(int) + sizeof(double)));
  int bad = -1;
  for (int k = 0; k < n && bad < 0; ++k) {
    int iv;
    double dv;
    memcpy(&iv, dst + k * 12, sizeof iv);
    memcpy(&dv, dst + k * 12 + 4, sizeof dv);
    if (iv != prev * 7 + k || dv != k + 0.25) bad = k;
  }
  CHECK_EQ(bad, -1);
  MPI_Type_free(&st);
  MPI_Type_free(&st_r);
  MPI_Type_free(&ptmp);
  MPI_Type_free(&pair);
  free(src);
  free(dst);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  pack_unpack();
  negative_lb();
  big_collectives();
  big_struct_p2p();
  return mt_finish();
}
