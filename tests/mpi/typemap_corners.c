/* Type-map corners (MPI 3.1 4.1): negative strides (bounds and the order
 * elements travel in), zero-length blocks that must not move the bounds,
 * empty constructors, MPI_Aint_add / MPI_Aint_diff, sizes too large for an
 * int (MPI_UNDEFINED from the int queries, the value from the _x ones),
 * MPI_Type_dup of a predefined type, committing twice, and the names of
 * predefined types. */
#include <limits.h>

#include "mpitest.h"

static int rank, size;

static void bounds(MPI_Datatype t, MPI_Aint lb, MPI_Aint ext, int line) {
  MPI_Aint l = -99, e = -99;
  MPI_Type_get_extent(t, &l, &e);
  if (l != lb || e != ext) {
    fprintf(stderr, "[rank %d] bounds at line %d\n", rank, line);
    mt_fail(__FILE__, line, "lb", l, lb);
    mt_fail(__FILE__, line, "extent", e, ext);
  }
}

static void negative_strides(void) {
  const MPI_Aint I = sizeof(int);
  MPI_Datatype v, hv;
  /* ints at 0, -2, -4 (in ints) */
  MPI_Type_vector(3, 1, -2, MPI_INT, &v);
  MPI_Type_commit(&v);
  bounds(v, -4 * I, 5 * I, __LINE__);
  int src[8] = {0, 1, 2, 3, 4, 5, 6, 7}, dst[3] = {-1, -1, -1};
  CHECK_OK(MPI_Sendrecv(src + 4, 1, v, 0, 0, dst, 3, MPI_INT, 0, 0, MPI_COMM_SELF, MPI_STATUS_IGNORE));
  CHECK_EQ(dst[0], 4); /* type-map order, not address order */
  CHECK_EQ(dst[1], 2);
  CHECK_EQ(dst[2], 0);
  /* and back into a negative-stride receive */
  int back[8] = {-1, -1, -1, -1, -1, -1, -1, -1}, seq[3] = {10, 11, 12};
  CHECK_OK(MPI_Sendrecv(seq, 3, MPI_INT, 0, 1, back + 4, 1, v, 0, 1, MPI_COMM_SELF, MPI_STATUS_IGNORE));
  CHECK_EQ(back[4], 10);
  CHECK_EQ(back[2], 11);
  CHECK_EQ(back[0], 12);
  CHECK_EQ(back[1], -1);
  /* hvector of two blocks of 2 ints, stride -12 bytes */
  MPI_Type_create_hvector(2, 2, -3 * I, MPI_INT, &hv);
  MPI_Type_commit(&hv);
  bounds(hv, -3 * I, 5 * I, __LINE__);
  MPI_Type_free(&v);
  MPI_Type_free(&hv);
}

static void zero_blocks(void) {
  const MPI_Aint I = sizeof(int);
  /* a zero-length block far away does not move the bounds */
  int bl[3] = {1, 0, 2}, di[3] = {2, 100, 4};
  MPI_Datatype t;
  MPI_Type_indexed(3, bl, di, MPI_INT, &t);
  MPI_Type_commit(&t);
  bounds(t, 2 * I, 4 * I, __LINE__);
  int sz = -1;
  MPI_Type_size(t, &sz);
  CHECK_EQ(sz, 3 * (int)I);
  MPI_Type_free(&t);
  /* same in a struct: a zero-count member of a wide type */
  int sbl[2] = {1, 0};
  MPI_Aint sd[2] = {0, -64};
  MPI_Datatype st[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Type_create_struct(2, sbl, sd, st, &t);
  MPI_Type_commit(&t);
  MPI_Aint slb = -1, sext;
  MPI_Type_get_extent(t, &slb, &sext);
  CHECK_EQ(slb, 0); /* (the extent's alignment padding is the implementation's) */
  MPI_Type_free(&t);
  /* empty constructors: size 0, extent 0 */
  MPI_Type_create_struct(0, NULL, NULL, NULL, &t);
  MPI_Type_commit(&t);
  MPI_Type_size(t, &sz);
  CHECK_EQ(sz, 0);
  bounds(t, 0, 0, __LINE__);
  MPI_Type_free(&t);
  MPI_Type_create_indexed_block(0, 3, NULL, MPI_INT, &t);
  MPI_Type_commit(&t);
  MPI_Type_size(t, &sz);
  CHECK_EQ(sz, 0);
  MPI_Type_free(&t);
  MPI_Type_vector(0, 5, 7, MPI_INT, &t);
  MPI_Type_commit(&t);
  MPI_Type_size(t, &sz);
  CHECK_EQ(sz, 0);
  bounds(t, 0, 0, __LINE__);
  /* sending zero of anything */
  int x = 5, y = 6;
  CHECK_OK(MPI_Sendrecv(&x, 3, t, 0, 2, &y, 0, MPI_INT, 0, 2, MPI_COMM_SELF, MPI_STATUS_IGNORE));
  CHECK_EQ(y, 6);
  MPI_Type_free(&t);
}

static void aint_math(void) {
  int a[4] = {0, 0, 0, 0};
  MPI_Aint p0, p3;
  MPI_Get_address(&a[0], &p0);
  MPI_Get_address(&a[3], &p3);
  CHECK_EQ(MPI_Aint_diff(p3, p0), 3 * (MPI_Aint)sizeof(int));
  CHECK_EQ(MPI_Aint_add(p0, 3 * (MPI_Aint)sizeof(int)), p3);
  CHECK_EQ(MPI_Aint_diff(p0, p3), -3 * (MPI_Aint)sizeof(int));
}

static void huge_sizes(void) {
  /* 2^20 blocks of 2^12 ints: 2^34 bytes (never touched) */
  MPI_Datatype blk, big;
  MPI_Type_contiguous(1 << 12, MPI_INT, &blk);
  MPI_Type_contiguous(1 << 20, blk, &big);
  MPI_Type_commit(&big);
  int sz = 0;
  CHECK_OK(MPI_Type_size(big, &sz));
  CHECK_EQ(sz, MPI_UNDEFINED);
  MPI_Count sx = 0;
  CHECK_OK(MPI_Type_size_x(big, &sx));
  CHECK_EQ(sx, (MPI_Count)1 << 34);
  MPI_Count lb = -1, ext = -1;
  CHECK_OK(MPI_Type_get_extent_x(big, &lb, &ext));
  CHECK_EQ(ext, (MPI_Count)1 << 34);
  MPI_Aint alb, aext;
  CHECK_OK(MPI_Type_get_extent(big, &alb, &aext));
  CHECK_EQ(aext, (MPI_Aint)1 << 34);
  /* a status saying 2^32 + 3 ints: the int queries cannot */
  MPI_Status st;
  CHECK_OK(MPI_Status_set_elements_x(&st, MPI_INT, ((MPI_Count)1 << 32) + 3));
  int c = 0, e = 0;
  MPI_Count ex = 0;
  CHECK_OK(MPI_Get_count(&st, MPI_INT, &c));
  CHECK_EQ(c, MPI_UNDEFINED);
  CHECK_OK(MPI_Get_elements(&st, MPI_INT, &e));
  CHECK_EQ(e, MPI_UNDEFINED);
  CHECK_OK(MPI_Get_elements_x(&st, MPI_INT, &ex));
  CHECK_EQ(ex, ((MPI_Count)1 << 32) + 3);
  MPI_Type_free(&blk);
  MPI_Type_free(&big);
}

static void dup_and_names(void) {
  MPI_Datatype d;
  CHECK_OK(MPI_Type_dup(MPI_INT, &d));
  int ni, na, nd, comb;
  MPI_Type_get_envelope(d, &ni, &na, &nd, &comb);
  CHECK_EQ(comb, MPI_COMBINER_DUP);
  MPI_Datatype inner = MPI_DATATYPE_NULL;
  CHECK_OK(MPI_Type_get_contents(d, 0, 0, 1, NULL, NULL, &inner));
  CHECK(inner == MPI_INT); /* predefined: the handle itself, not freed */
  CHECK_OK(MPI_Type_commit(&d));
  CHECK_OK(MPI_Type_commit(&d)); /* twice is fine */
  int sz;
  MPI_Type_size(d, &sz);
  CHECK_EQ(sz, (int)sizeof(int));
  MPI_Type_free(&d);
  struct {
    MPI_Datatype t;
    const char* name;
  } names[] = {{MPI_INT, "MPI_INT"},       {MPI_DOUBLE, "MPI_DOUBLE"}, {MPI_2INT, "MPI_2INT"},
               {MPI_BYTE, "MPI_BYTE"},     {MPI_PACKED, "MPI_PACKED"}, {MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT"},
               {MPI_C_BOOL, "MPI_C_BOOL"}, {MPI_AINT, "MPI_AINT"},     {MPI_UINT64_T, "MPI_UINT64_T"}};
  for (unsigned i = 0; i < sizeof names / sizeof names[0]; ++i) {
    char got[MPI_MAX_OBJECT_NAME];
    int len = -1;
    CHECK_OK(MPI_Type_get_name(names[i].t, got, &len));
    if (strcmp(got, names[i].name) != 0 && !(names[i].t == MPI_LONG_LONG_INT && strcmp(got, "MPI_LONG_LONG") == 0)) {
      fprintf(stderr, "[rank %d] name of %s is \"%s\"\n", rank, names[i].name, got);
      mt_fail(__FILE__, __LINE__, "predefined type name", i, 0);
    }
    CHECK_EQ(len, (int)strlen(got));
  }
  /* a derived type starts without a name; a dup does not copy one */
  MPI_Datatype t, u;
  MPI_Type_contiguous(2, MPI_INT, &t);
  char got[MPI_MAX_OBJECT_NAME];
  int len = -1;
  MPI_Type_get_name(t, got, &len);
  CHECK_EQ(len, 0);
  MPI_Type_set_name(t, "pair");
  MPI_Type_dup(t, &u);
  MPI_Type_get_name(t, got, &len);
  CHECK(strcmp(got, "pair") == 0);
  MPI_Type_free(&t);
  MPI_Type_free(&u);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  negative_strides();
  zero_blocks();
  aint_math();
  huge_sizes();
  dup_and_names();
  return mt_finish();
}
