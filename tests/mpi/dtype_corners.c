/* Datatype corners a conformance suite probes (MPI 3.1 chapter 4):
 * MPI_Type_create_subarray (C and Fortran order) and
 * MPI_Type_create_darray (block, cyclic, cyclic(k), 2-D) against the
 * elements they must select, MPI_Type_create_resized, the
 * MPI_Type_get_envelope / MPI_Type_get_contents round trip for every
 * combiner (rebuilt types select the same bytes), MPI_Pack_external in
 * "external32" (big-endian, the standard's sizes), MPI_Type_match_size,
 * MPI_Get_elements(_x) on partial receives, and MPI_BOTTOM with absolute
 * addresses in point-to-point and collectives. */
#include <stddef.h>
#include <stdint.h>

#include "mpitest.h"

static int rank, size;

/* The ints a type selects from a[i] = i, in type-map order. */
static int selected(MPI_Datatype t, int count, int* out, int max) {
  int a[512];
  for (int i = 0; i < 512; ++i) a[i] = i;
  int bytes = 0, pos = 0;
  MPI_Pack_size(count, t, MPI_COMM_SELF, &bytes);
  char* buf = malloc((size_t)bytes + 1);
  CHECK_OK(MPI_Pack(a, count, t, buf, bytes, &pos, MPI_COMM_SELF));
  int n = pos / (int)sizeof(int);
  if (n > max) n = max;
  memcpy(out, buf, (size_t)n * sizeof(int));
  free(buf);
  return n;
}

static void subarray(void) {
  /* 4 x 5 array, 2 x 3 starting at (1, 1) */
  int sizes[2] = {4, 5}, sub[2] = {2, 3}, start[2] = {1, 1}, got[64];
  MPI_Datatype t;
  CHECK_OK(MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_INT, &t));
  CHECK_OK(MPI_Type_commit(&t));
  MPI_Aint lb = -1, ext = -1;
  MPI_Type_get_extent(t, &lb, &ext);
  CHECK_EQ(lb, 0);
  CHECK_EQ(ext, 20 * (MPI_Aint)sizeof(int));
  int sz = -1;
  MPI_Type_size(t, &sz);
  CHECK_EQ(sz, 6 * (int)sizeof(int));
  int n = selected(t, 1, got, 64);
  int want_c[6] = {6, 7, 8, 11, 12, 13};
  CHECK_EQ(n, 6);
  for (int i = 0; i < 6 && i < n; ++i) CHECK_EQ(got[i], want_c[i]);
  /* two of them: the second starts one full array later */
  n = selected(t, 2, got, 64);
  CHECK_EQ(n, 12);
  if (n == 12) CHECK_EQ(got[6], 26);
  MPI_Type_free(&t);
  /* Fortran order: the first dimension varies fastest */
  CHECK_OK(MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_FORTRAN, MPI_INT, &t));
  CHECK_OK(MPI_Type_commit(&t));
  n = selected(t, 1, got, 64);
  int want_f[6] = {5, 6, 9, 10, 13, 14}; /* (i,j) at i + 4 j: i in 1..2, j in 1..3 */
  CHECK_EQ(n, 6);
  for (int i = 0; i < 6 && i < n; ++i) CHECK_EQ(got[i], want_f[i]);
  MPI_Type_free(&t);
  /* Errors: a subarray outside the array */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int bad_start[2] = {3, 0};
  CHECK(MPI_Type_create_subarray(2, sizes, sub, bad_start, MPI_ORDER_C, MPI_INT, &t) != MPI_SUCCESS);
  CHECK(MPI_Type_create_subarray(2, sizes, sub, start, 12345, MPI_INT, &t) != MPI_SUCCESS);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void darray_1d(int distrib, int darg, int N) {
  int gs = N, ps = size, got[512];
  MPI_Datatype t;
  CHECK_OK(MPI_Type_create_darray(size, rank, 1, &gs, &distrib, &darg, &ps, MPI_ORDER_C, MPI_INT, &t));
  CHECK_OK(MPI_Type_commit(&t));
  int want[512], nw = 0;
  if (distrib == MPI_DISTRIBUTE_BLOCK) {
    int b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (N + size - 1) / size : darg;
    for (int i = rank * b; i < (rank + 1) * b && i < N; ++i) want[nw++] = i;
  } else {
    int k = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    for (int i = 0; i < N; ++i)
      if ((i / k) % size == rank) want[nw++] = i;
  }
  int sz = -1;
  MPI_Type_size(t, &sz);
  CHECK_EQ(sz, nw * (int)sizeof(int));
  MPI_Aint lb = -1, ext = -1;
  MPI_Type_get_extent(t, &lb, &ext);
  CHECK_EQ(lb, 0);
  CHECK_EQ(ext, N * (MPI_Aint)sizeof(int));
  int n = selected(t, 1, got, 512);
  CHECK_EQ(n, nw);
  for (int i = 0; i < n && i < nw; ++i) CHECK_EQ(got[i], want[i]);
  MPI_Type_free(&t);
}

static void darray(void) {
  darray_1d(MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_DFLT_DARG, 10);
  darray_1d(MPI_DISTRIBUTE_BLOCK, 7, 7 * size - 3);
  darray_1d(MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_DFLT_DARG, 11);
  darray_1d(MPI_DISTRIBUTE_CYCLIC, 2, 13);
  if (size == 1) darray_1d(MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_DFLT_DARG, 9); /* NONE: 1 process */
  /* 2-D, C order: rows by block over 1 process, columns cyclic over all */
  int gs[2] = {4, 6}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
  int darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, 1}, ps[2] = {1, size}, got[64];
  MPI_Datatype t;
  CHECK_OK(MPI_Type_create_darray(size, rank, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t));
  CHECK_OK(MPI_Type_commit(&t));
  int want[64], nw = 0;
  for (int i = 0; i < 4; ++i)
    for (int j = rank; j < 6; j += size) want[nw++] = i * 6 + j;
  int n = selected(t, 1, got, 64);
  CHECK_EQ(n, nw);
  for (int i = 0; i < n && i < nw; ++i) CHECK_EQ(got[i], want[i]);
  MPI_Type_free(&t);
  /* Fortran order: the same grid, elements column-major */
  CHECK_OK(MPI_Type_create_darray(size, rank, 2, gs, dist, darg, ps, MPI_ORDER_FORTRAN, MPI_INT, &t));
  CHECK_OK(MPI_Type_commit(&t));
  nw = 0;
  for (int j = rank; j < 6; j += size)
    for (int i = 0; i < 4; ++i) want[nw++] = i + 4 * j;
  n = selected(t, 1, got, 64);
  CHECK_EQ(n, nw);
  for (int i = 0; i < n && i < nw; ++i) CHECK_EQ(got[i], want[i]);
  MPI_Type_free(&t);
  /* A block too small for the array is an error */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int g1 = 10 * size + 1, d1 = MPI_DISTRIBUTE_BLOCK, a1 = 10, p1 = size;
  CHECK(MPI_Type_create_darray(size, rank, 1, &g1, &d1, &a1, &p1, MPI_ORDER_C, MPI_INT, &t) != MPI_SUCCESS);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void resized(void) {
  MPI_Datatype r, c;
  CHECK_OK(MPI_Type_create_resized(MPI_INT, -4, 12, &r));
  CHECK_OK(MPI_Type_commit(&r));
  MPI_Aint lb, ext, tlb, text;
  MPI_Type_get_extent(r, &lb, &ext);
  MPI_Type_get_true_extent(r, &tlb, &text);
  CHECK_EQ(lb, -4);
  CHECK_EQ(ext, 12);
  CHECK_EQ(tlb, 0);
  CHECK_EQ(text, (MPI_Aint)sizeof(int));
  /* three of them: ints at byte 0, 12, 24 */
  CHECK_OK(MPI_Type_contiguous(3, r, &c));
  CHECK_OK(MPI_Type_commit(&c));
  MPI_Type_get_extent(c, &lb, &ext);
  CHECK_EQ(lb, -4);
  CHECK_EQ(ext, 36);
  int got[8];
  int n = selected(c, 1, got, 8);
  CHECK_EQ(n, 3);
  if (n == 3) {
    CHECK_EQ(got[0], 0);
    CHECK_EQ(got[1], 3);
    CHECK_EQ(got[2], 6);
  }
  /* send 2 with it, receive 6 plain ints */
  int src[16], dst[8];
  for (int i = 0; i < 16; ++i) src[i] = i * 3 + 1;
  MPI_Status st;
  CHECK_OK(MPI_Sendrecv(src, 2, c, 0, 5, dst, 8, MPI_INT, 0, 5, MPI_COMM_SELF, &st));
  int cnt = -1;
  MPI_Get_count(&st, MPI_INT, &cnt);
  CHECK_EQ(cnt, 6);
  for (int i = 0; i < 6; ++i) CHECK_EQ(dst[i], src[i * 3]);
  MPI_Type_free(&c);
  MPI_Type_free(&r);
  /* ub = lb + extent must be an MPI_Aint: MPI_ERR_ARG, no type, else the
   * bounds would wrap. Bounds at the edge of the range still work, as do
   * types built from them whose bounds do not fit (MPI_ERR_ARG too). */
  const MPI_Aint big = (MPI_Aint)1 << 62;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  r = MPI_DATATYPE_NULL;
  CHECK_CLASS(MPI_Type_create_resized(MPI_INT, big, big, &r), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Type_create_resized(MPI_INT, -big, -big - 1, &r), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Type_create_resized(MPI_INT, INTPTR_MAX, 1, &r), MPI_ERR_ARG);
  CHECK(r == MPI_DATATYPE_NULL);
  CHECK_OK(MPI_Type_create_resized(MPI_INT, big, big - 1, &r));
  MPI_Type_get_extent(r, &lb, &ext);
  CHECK_EQ(lb, big);
  CHECK_EQ(ext, big - 1);
  /* two of them side by side reach 2^63 + 2^62 - 2 */
  CHECK_CLASS(MPI_Type_contiguous(2, r, &c), MPI_ERR_ARG);
  MPI_Type_free(&r);
  /* a struct spanning more than an MPI_Aint */
  int bl[2] = {1, 1};
  MPI_Aint disp[2] = {-big - big / 2, big + big / 2};
  MPI_Datatype tys[2] = {MPI_INT, MPI_INT};
  CHECK_CLASS(MPI_Type_create_struct(2, bl, disp, tys, &c), MPI_ERR_ARG);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* ---- envelope / contents round trip ---- */

static MPI_Datatype rebuild(MPI_Datatype t) {
  int ni, na, nd, comb;
  CHECK_OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
  if (comb == MPI_COMBINER_NAMED) return t;
  int* ints = malloc(sizeof(int) * (size_t)(ni + 1));
  MPI_Aint* adds = malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
  MPI_Datatype* types = malloc(sizeof(MPI_Datatype) * (size_t)(nd + 1));
  CHECK_OK(MPI_Type_get_contents(t, ni, na, nd, ints, adds, types));
  /* the constituents, rebuilt themselves */
  MPI_Datatype sub[8];
  for (int i = 0; i < nd && i < 8; ++i) sub[i] = rebuild(types[i]);
  MPI_Datatype out = MPI_DATATYPE_NULL;
  switch (comb) {
    case MPI_COMBINER_DUP:
      CHECK_OK(MPI_Type_dup(sub[0], &out));
      break;
    case MPI_COMBINER_CONTIGUOUS:
      CHECK_OK(MPI_Type_contiguous(ints[0], sub[0], &out));
      break;
    case MPI_COMBINER_VECTOR:
      CHECK_OK(MPI_Type_vector(ints[0], ints[1], ints[2], sub[0], &out));
      break;
    case MPI_COMBINER_HVECTOR:
      CHECK_OK(MPI_Type_create_hvector(ints[0], ints[1], adds[0], sub[0], &out));
      break;
    case MPI_COMBINER_INDEXED:
      CHECK_OK(MPI_Type_indexed(ints[0], ints + 1, ints + 1 + ints[0], sub[0], &out));
      break;
    case MPI_COMBINER_HINDEXED:
      CHECK_OK(MPI_Type_create_hindexed(ints[0], ints + 1, adds, sub[0], &out));
      break;
    case MPI_COMBINER_INDEXED_BLOCK:
      CHECK_OK(MPI_Type_create_indexed_block(ints[0], ints[1], ints + 2, sub[0], &out));
      break;
    case MPI_COMBINER_HINDEXED_BLOCK:
      CHECK_OK(MPI_Type_create_hindexed_block(ints[0], ints[1], adds, sub[0], &out));
      break;
    case MPI_COMBINER_STRUCT:
      CHECK_OK(MPI_Type_create_struct(ints[0], ints + 1, adds, sub, &out));
      break;
    case MPI_COMBINER_SUBARRAY: {
      int d = ints[0];
      CHECK_OK(MPI_Type_create_subarray(d, ints + 1, ints + 1 + d, ints + 1 + 2 * d, ints[1 + 3 * d], sub[0], &out));
      break;
    }
    case MPI_COMBINER_DARRAY: {
      int d = ints[2];
      CHECK_OK(MPI_Type_create_darray(ints[0], ints[1], d, ints + 3, ints + 3 + d, ints + 3 + 2 * d, ints + 3 + 3 * d,
                                      ints[3 + 4 * d], sub[0], &out));
      break;
    }
    case MPI_COMBINER_RESIZED:
      CHECK_OK(MPI_Type_create_resized(sub[0], adds[0], adds[1], &out));
      break;
    default:
      mt_fail(__FILE__, __LINE__, "unexpected combiner", comb, 0);
  }
  for (int i = 0; i < nd && i < 8; ++i) {
    int a, b, c, k;
    MPI_Type_get_envelope(types[i], &a, &b, &c, &k);
    if (k != MPI_COMBINER_NAMED) {
      MPI_Type_free(&types[i]);
      MPI_Type_free(&sub[i]);
    }
  }
  free(ints);
  free(adds);
  free(types);
  return out;
}

static void same_bytes(MPI_Datatype a, MPI_Datatype b) {
  MPI_Aint la, ea, lb, eb;
  MPI_Type_get_extent(a, &la, &ea);
  MPI_Type_get_extent(b, &lb, &eb);
  CHECK_EQ(la, lb);
  CHECK_EQ(ea, eb);
  int sa = -1, sb = -2;
  MPI_Type_size(a, &sa);
  MPI_Type_size(b, &sb);
  CHECK_EQ(sa, sb);
  MPI_Type_commit(&b);
  int ga[512], gb[512];
  int na = selected(a, 2, ga, 512), nb = selected(b, 2, gb, 512);
  CHECK_EQ(na, nb);
  for (int i = 0; i < na && i < nb; ++i) CHECK_EQ(ga[i], gb[i]);
}

static void envelope(MPI_Datatype t, int ni, int na, int nd, int comb) {
  int a = -1, b = -1, c = -1, k = -1;
  CHECK_OK(MPI_Type_get_envelope(t, &a, &b, &c, &k));
  CHECK_EQ(k, comb);
  CHECK_EQ(a, ni);
  CHECK_EQ(b, na);
  CHECK_EQ(c, nd);
  CHECK_OK(MPI_Type_commit(&t));
  MPI_Datatype r = rebuild(t);
  same_bytes(t, r);
  MPI_Type_free(&r);
  MPI_Type_free(&t);
}

static void contents_round_trip(void) {
  MPI_Datatype t, v, pair;
  int bl[3] = {1, 2, 1}, di[3] = {0, 3, 8};
  MPI_Aint ad[3] = {0, 12, 32};
  MPI_Type_vector(2, 1, 2, MPI_INT, &v);
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_dup(v, &t);
  envelope(t, 0, 0, 1, MPI_COMBINER_DUP);
  MPI_Type_contiguous(3, v, &t);
  envelope(t, 1, 0, 1, MPI_COMBINER_CONTIGUOUS);
  MPI_Type_vector(3, 2, 4, MPI_INT, &t);
  envelope(t, 3, 0, 1, MPI_COMBINER_VECTOR);
  MPI_Type_create_hvector(3, 1, 20, v, &t);
  envelope(t, 2, 1, 1, MPI_COMBINER_HVECTOR);
  MPI_Type_indexed(3, bl, di, MPI_INT, &t);
  envelope(t, 7, 0, 1, MPI_COMBINER_INDEXED);
  MPI_Type_create_hindexed(3, bl, ad, pair, &t);
  envelope(t, 4, 3, 1, MPI_COMBINER_HINDEXED);
  MPI_Type_create_indexed_block(3, 2, di, MPI_INT, &t);
  envelope(t, 5, 0, 1, MPI_COMBINER_INDEXED_BLOCK);
  MPI_Type_create_hindexed_block(3, 1, ad, pair, &t);
  envelope(t, 2, 3, 1, MPI_COMBINER_HINDEXED_BLOCK);
  MPI_Datatype tys[3] = {MPI_INT, v, pair};
  MPI_Type_create_struct(3, bl, ad, tys, &t);
  envelope(t, 4, 3, 3, MPI_COMBINER_STRUCT);
  int sizes[2] = {4, 5}, sub[2] = {2, 3}, start[2] = {1, 2};
  MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_FORTRAN, MPI_INT, &t);
  envelope(t, 8, 0, 1, MPI_COMBINER_SUBARRAY);
  int gs[2] = {4, 6}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
  int darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, ps[2] = {1, size};
  MPI_Type_create_darray(size, rank, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t);
  envelope(t, 12, 0, 1, MPI_COMBINER_DARRAY);
  MPI_Type_create_resized(v, -8, 40, &t);
  envelope(t, 0, 2, 1, MPI_COMBINER_RESIZED);
  /* a type built from a resized one, nested three deep */
  MPI_Datatype r;
  MPI_Type_create_resized(pair, 4, 16, &r);
  MPI_Type_create_hvector(2, 2, 40, r, &t);
  envelope(t, 2, 1, 1, MPI_COMBINER_HVECTOR);
  MPI_Type_free(&r);
  int ni, na, nd, comb;
  CHECK_OK(MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &comb));
  CHECK_EQ(comb, MPI_COMBINER_NAMED);
  CHECK_OK(MPI_Type_get_envelope(MPI_FLOAT_INT, &ni, &na, &nd, &comb));
  CHECK_EQ(comb, MPI_COMBINER_NAMED);
  /* contents of a named type: an error */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int ints[4];
  MPI_Aint adds[4];
  MPI_Datatype types[4];
  CHECK(MPI_Type_get_contents(MPI_INT, 0, 0, 0, ints, adds, types) != MPI_SUCCESS);
  /* arrays too small: an error, not an overrun */
  MPI_Type_vector(3, 2, 4, MPI_INT, &t);
  CHECK(MPI_Type_get_contents(t, 1, 0, 1, ints, adds, types) != MPI_SUCCESS);
  MPI_Type_free(&t);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Type_free(&v);
  MPI_Type_free(&pair);
}

/* ---- external32 ---- */

static void external32(void) {
  MPI_Aint sz = -1;
  struct {
    MPI_Datatype t;
    MPI_Aint bytes;
  } sizes[] = {{MPI_CHAR, 1},      {MPI_SHORT, 2},       {MPI_INT, 4},    {MPI_LONG, 4},
               {MPI_LONG_LONG, 8}, {MPI_FLOAT, 4},       {MPI_DOUBLE, 8}, {MPI_UNSIGNED, 4},
               {MPI_INT64_T, 8},   {MPI_C_BOOL, 1},      {MPI_BYTE, 1},   {MPI_UINT16_T, 2},
               {MPI_AINT, 8},      {MPI_DOUBLE_INT, 12}, {MPI_2INT, 8},   {MPI_LONG_DOUBLE, 16}};
  for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
    sz = -1;
    CHECK_OK(MPI_Pack_external_size("external32", 1, sizes[i].t, &sz));
    if (sz != sizes[i].bytes) {
      char name[MPI_MAX_OBJECT_NAME];
      int len = 0;
      MPI_Type_get_name(sizes[i].t, name, &len);
      fprintf(stderr, "[rank %d] external32 size of %s\n", rank, name);
    }
    CHECK_EQ(sz, sizes[i].bytes);
  }
  /* big-endian bytes, and back */
  int iv[2] = {0x01020304, -2};
  double dv = 1.5;
  long lv = -3;
  unsigned char buf[64];
  MPI_Aint pos = 0;
  CHECK_OK(MPI_Pack_external("external32", iv, 2, MPI_INT, buf, sizeof buf, &pos));
  CHECK_OK(MPI_Pack_external("external32", &dv, 1, MPI_DOUBLE, buf, sizeof buf, &pos));
  CHECK_OK(MPI_Pack_external("external32", &lv, 1, MPI_LONG, buf, sizeof buf, &pos));
  CHECK_EQ(pos, 8 + 8 + 4);
  CHECK_EQ(buf[0], 1);
  CHECK_EQ(buf[3], 4);
  CHECK_EQ(buf[4], 0xff);
  CHECK_EQ(buf[7], 0xfe);
  CHECK_EQ(buf[8], 0x3f); /* 1.5 = 0x3FF8000000000000 */
  CHECK_EQ(buf[9], 0xf8);
  CHECK_EQ(buf[15], 0);
  CHECK_EQ(buf[16], 0xff);
  CHECK_EQ(buf[19], 0xfd);
  int iv2[2] = {0, 0};
  double dv2 = 0;
  long lv2 = 0;
  pos = 0;
  CHECK_OK(MPI_Unpack_external("external32", buf, 20, &pos, iv2, 2, MPI_INT));
  CHECK_OK(MPI_Unpack_external("external32", buf, 20, &pos, &dv2, 1, MPI_DOUBLE));
  CHECK_OK(MPI_Unpack_external("external32", buf, 20, &pos, &lv2, 1, MPI_LONG));
  CHECK_EQ(iv2[0], iv[0]);
  CHECK_EQ(iv2[1], -2);
  CHECK(dv2 == 1.5);
  CHECK_EQ(lv2, -3);
  /* a strided type: only the selected elements, packed densely */
  MPI_Datatype vec;
  MPI_Type_vector(3, 1, 2, MPI_SHORT, &vec);
  MPI_Type_commit(&vec);
  short sv[6] = {1, 99, 2, 99, 3, 99};
  CHECK_OK(MPI_Pack_external_size("external32", 1, vec, &sz));
  CHECK_EQ(sz, 6);
  pos = 0;
  CHECK_OK(MPI_Pack_external("external32", sv, 1, vec, buf, sizeof buf, &pos));
  CHECK_EQ(pos, 6);
  CHECK_EQ(buf[1], 1);
  CHECK_EQ(buf[3], 2);
  CHECK_EQ(buf[5], 3);
  MPI_Type_free(&vec);
  /* errors: unknown representation, buffer too small */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  pos = 0;
  CHECK(MPI_Pack_external("native-ish", iv, 2, MPI_INT, buf, sizeof buf, &pos) != MPI_SUCCESS);
  pos = 0;
  CHECK(MPI_Pack_external("external32", iv, 2, MPI_INT, buf, 7, &pos) != MPI_SUCCESS);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void match_size(void) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  int sz = -1;
  CHECK_OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &t));
  MPI_Type_size(t, &sz);
  CHECK_EQ(sz, 4);
  CHECK_OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 8, &t));
  MPI_Type_size(t, &sz);
  CHECK_EQ(sz, 8);
  CHECK_OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &t));
  MPI_Type_size(t, &sz);
  CHECK_EQ(sz, 8);
  CHECK_OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 4, &t));
  MPI_Type_size(t, &sz);
  CHECK_EQ(sz, 4);
  CHECK_OK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &t));
  MPI_Type_size(t, &sz);
  CHECK_EQ(sz, 16);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 3, &t) != MPI_SUCCESS);
  CHECK(MPI_Type_match_size(12345, 4, &t) != MPI_SUCCESS);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void elements(void) {
  /* 5 ints into pairs: count undefined, 5 elements */
  int src[8] = {1, 2, 3, 4, 5, 6, 7, 8}, dst[8];
  MPI_Datatype pair;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  MPI_Status st;
  CHECK_OK(MPI_Sendrecv(src, 5, MPI_INT, 0, 1, dst, 4, pair, 0, 1, MPI_COMM_SELF, &st));
  int c = -1, e = -1;
  MPI_Count ex = -1;
  MPI_Get_count(&st, pair, &c);
  CHECK_EQ(c, MPI_UNDEFINED);
  MPI_Get_elements(&st, pair, &e);
  CHECK_EQ(e, 5);
  CHECK_OK(MPI_Get_elements_x(&st, pair, &ex));
  CHECK_EQ(ex, 5);
  /* a struct {int, double}: 1 int + 1 double + 1 int = 3 elements */
  struct id {
    int i;
    double d;
  } s[2] = {{1, 2.0}, {3, 4.0}}, r[2];
  MPI_Datatype st_t;
  int bl[2] = {1, 1};
  MPI_Aint disp[2] = {(MPI_Aint)offsetof(struct id, i), (MPI_Aint)offsetof(struct id, d)};
  MPI_Datatype tys[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Type_create_struct(2, bl, disp, tys, &st_t);
  MPI_Type_commit(&st_t);
  char pk[64];
  int pos = 0;
  MPI_Pack(s, 1, st_t, pk, sizeof pk, &pos, MPI_COMM_SELF);
  MPI_Pack(&s[1].i, 1, MPI_INT, pk, sizeof pk, &pos, MPI_COMM_SELF);
  CHECK_OK(MPI_Sendrecv(pk, pos, MPI_PACKED, 0, 2, r, 2, st_t, 0, 2, MPI_COMM_SELF, &st));
  MPI_Get_elements(&st, st_t, &e);
  CHECK_EQ(e, 3);
  MPI_Get_elements_x(&st, st_t, &ex);
  CHECK_EQ(ex, 3);
  MPI_Get_count(&st, st_t, &c);
  CHECK_EQ(c, MPI_UNDEFINED);
  CHECK_EQ(r[1].i, 3);
  /* MPI_Status_set_elements(_x) with a derived type */
  MPI_Status fake;
  CHECK_OK(MPI_Status_set_elements(&fake, pair, 7));
  MPI_Get_elements(&fake, pair, &e);
  CHECK_EQ(e, 7);
  MPI_Get_count(&fake, pair, &c);
  CHECK_EQ(c, MPI_UNDEFINED);
  CHECK_OK(MPI_Status_set_elements_x(&fake, pair, 6));
  MPI_Get_count(&fake, pair, &c);
  CHECK_EQ(c, 3);
  MPI_Get_elements_x(&fake, pair, &ex);
  CHECK_EQ(ex, 6);
  CHECK_OK(MPI_Status_set_elements(&fake, MPI_INT, 0));
  MPI_Get_count(&fake, MPI_INT, &c);
  CHECK_EQ(c, 0);
  int flag = 1;
  CHECK_OK(MPI_Status_set_cancelled(&fake, 0));
  MPI_Test_cancelled(&fake, &flag);
  CHECK_EQ(flag, 0);
  CHECK_OK(MPI_Status_set_cancelled(&fake, 1));
  MPI_Test_cancelled(&fake, &flag);
  CHECK(flag);
  /* zero-size type: count of a zero-byte receive is 0 */
  MPI_Datatype empty;
  MPI_Type_contiguous(0, MPI_INT, &empty);
  MPI_Type_commit(&empty);
  CHECK_OK(MPI_Sendrecv(src, 0, MPI_INT, 0, 3, dst, 1, empty, 0, 3, MPI_COMM_SELF, &st));
  MPI_Get_count(&st, empty, &c);
  CHECK_EQ(c, 0);
  MPI_Type_free(&empty);
  MPI_Type_free(&st_t);
  MPI_Type_free(&pair);
}

static void bottom(void) {
  /* Two separate variables sent as one message from MPI_BOTTOM. */
  int a = rank * 10 + 1;
  double b = rank + 0.5;
  int ra = -1;
  double rb = -1;
  MPI_Aint addr[2];
  MPI_Get_address(&a, &addr[0]);
  MPI_Get_address(&b, &addr[1]);
  int bl[2] = {1, 1};
  MPI_Datatype tys[2] = {MPI_INT, MPI_DOUBLE}, snd, rcv;
  MPI_Type_create_struct(2, bl, addr, tys, &snd);
  MPI_Type_commit(&snd);
  MPI_Get_address(&ra, &addr[0]);
  MPI_Get_address(&rb, &addr[1]);
  MPI_Type_create_struct(2, bl, addr, tys, &rcv);
  MPI_Type_commit(&rcv);
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  CHECK_OK(MPI_Sendrecv(MPI_BOTTOM, 1, snd, next, 0, MPI_BOTTOM, 1, rcv, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CHECK_EQ(ra, prev * 10 + 1);
  CHECK(rb == prev + 0.5);
  /* Nonblocking and a collective from MPI_BOTTOM */
  MPI_Request rq[2];
  ra = -1;
  CHECK_OK(MPI_Irecv(MPI_BOTTOM, 1, rcv, prev, 1, MPI_COMM_WORLD, &rq[0]));
  CHECK_OK(MPI_Isend(MPI_BOTTOM, 1, snd, next, 1, MPI_COMM_WORLD, &rq[1]));
  CHECK_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
  CHECK_EQ(ra, prev * 10 + 1);
  if (rank == 0) {
    a = 4242;
    b = 8.25;
  }
  CHECK_OK(MPI_Bcast(MPI_BOTTOM, 1, snd, 0, MPI_COMM_WORLD));
  CHECK_EQ(a, 4242);
  CHECK(b == 8.25);
  /* An hindexed type of absolute addresses */
  int x = rank, y = 2 * rank;
  MPI_Aint xa[2];
  MPI_Get_address(&x, &xa[0]);
  MPI_Get_address(&y, &xa[1]);
  MPI_Datatype hx;
  MPI_Type_create_hindexed(2, bl, xa, MPI_INT, &hx);
  MPI_Type_commit(&hx);
  int packed[2] = {-1, -1};
  CHECK_OK(MPI_Sendrecv(MPI_BOTTOM, 1, hx, 0, 7, packed, 2, MPI_INT, 0, 7, MPI_COMM_SELF, MPI_STATUS_IGNORE));
  CHECK_EQ(packed[0], rank);
  CHECK_EQ(packed[1], 2 * rank);
  MPI_Type_free(&hx);
  MPI_Type_free(&snd);
  MPI_Type_free(&rcv);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  subarray();
  darray();
  resized();
  contents_round_trip();
  external32();
  match_size();
  elements();
  bottom();
  return mt_finish();
}
