/* Datatypes: every constructor (sizes, extents, envelope and contents),
 * names, attributes on types, pack/unpack (native and external32), and
 * communication with derived types. */
#include "mpitest.h"

static int rank, size;

static void extent_is(MPI_Datatype t, MPI_Aint lb, MPI_Aint extent, int sz) {
  MPI_Aint l, e;
  MPI_Count lx, ex, sx;
  int s;
  CHECK_OK(MPI_Type_get_extent(t, &l, &e));
  CHECK_EQ(l, lb);
  CHECK_EQ(e, extent);
  CHECK_OK(MPI_Type_get_extent_x(t, &lx, &ex));
  CHECK_EQ(lx, lb);
  CHECK_EQ(ex, extent);
  CHECK_OK(MPI_Type_size(t, &s));
  CHECK_EQ(s, sz);
  CHECK_OK(MPI_Type_size_x(t, &sx));
  CHECK_EQ(sx, sz);
}

static void envelope_is(MPI_Datatype t, int ni, int na, int nd, int comb) {
  int a, b, c, k;
  CHECK_OK(MPI_Type_get_envelope(t, &a, &b, &c, &k));
  CHECK_EQ(a, ni);
  CHECK_EQ(b, na);
  CHECK_EQ(c, nd);
  CHECK_EQ(k, comb);
}

static void test_constructors(void) {
  MPI_Datatype t;
  envelope_is(MPI_INT, 0, 0, 0, MPI_COMBINER_NAMED);

  CHECK_OK(MPI_Type_contiguous(3, MPI_INT, &t));
  extent_is(t, 0, 12, 12);
  envelope_is(t, 1, 0, 1, MPI_COMBINER_CONTIGUOUS);
  int ints[8];
  MPI_Aint addrs[8];
  MPI_Datatype types[4];
  CHECK_OK(MPI_Type_get_contents(t, 8, 8, 4, ints, addrs, types));
  CHECK_EQ(ints[0], 3);
  CHECK(types[0] == MPI_INT);
  MPI_Type_free(&t);

  CHECK_OK(MPI_Type_vector(3, 2, 4, MPI_DOUBLE, &t));
  extent_is(t, 0, (2 * 4 + 2) * 8, 48);
  envelope_is(t, 3, 0, 1, MPI_COMBINER_VECTOR);
  MPI_Type_free(&t);

  CHECK_OK(MPI_Type_create_hvector(2, 1, 100, MPI_INT, &t));
  extent_is(t, 0, 104, 8);
  envelope_is(t, 2, 1, 1, MPI_COMBINER_HVECTOR);
  MPI_Type_free(&t);

  int bl[3] = {1, 2, 1}, di[3] = {4, 0, 8};
  CHECK_OK(MPI_Type_indexed(3, bl, di, MPI_INT, &t));
  extent_is(t, 0, 36, 16);
  envelope_is(t, 7, 0, 1, MPI_COMBINER_INDEXED);
  MPI_Type_free(&t);

  MPI_Aint hd[3] = {16, 0, 32};
  CHECK_OK(MPI_Type_create_hindexed(3, bl, hd, MPI_INT, &t));
  extent_is(t, 0, 36, 16);
  envelope_is(t, 4, 3, 1, MPI_COMBINER_HINDEXED);
  MPI_Type_free(&t);

  CHECK_OK(MPI_Type_create_indexed_block(3, 2, di, MPI_SHORT, &t));
  extent_is(t, 0, 20, 12);
  envelope_is(t, 5, 0, 1, MPI_COMBINER_INDEXED_BLOCK);
  MPI_Type_free(&t);

  CHECK_OK(MPI_Type_create_hindexed_block(3, 1, hd, MPI_INT, &t));
  extent_is(t, 0, 36, 12);
  envelope_is(t, 2, 3, 1, MPI_COMBINER_HINDEXED_BLOCK);
  MPI_Type_free(&t);

  struct s {
    char c;
    double d;
    int i;
  };
  int sbl[3] = {1, 1, 1};
  MPI_Aint sd[3] = {offsetof(struct s, c), offsetof(struct s, d), offsetof(struct s, i)};
  MPI_Datatype st[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
  CHECK_OK(MPI_Type_create_struct(3, sbl, sd, st, &t));
  extent_is(t, 0, sizeof(struct s), 13);
  envelope_is(t, 4, 3, 3, MPI_COMBINER_STRUCT);
  CHECK_OK(MPI_Type_get_contents(t, 4, 3, 3, ints, addrs, types));
  CHECK(types[0] == MPI_CHAR && types[1] == MPI_DOUBLE && types[2] == MPI_INT);
  CHECK_EQ(addrs[1], offsetof(struct s, d));
  MPI_Type_free(&t);

  int gs[2] = {10, 20}, ss[2] = {3, 4}, starts[2] = {2, 5};
  CHECK_OK(MPI_Type_create_subarray(2, gs, ss, starts, MPI_ORDER_C, MPI_INT, &t));
  extent_is(t, 0, 800, 48);
  envelope_is(t, 8, 0, 1, MPI_COMBINER_SUBARRAY);
  MPI_Aint tl, te;
  CHECK_OK(MPI_Type_get_true_extent(t, &tl, &te));
  CHECK_EQ(tl, (2 * 20 + 5) * 4);
  CHECK_EQ(te, ((4 * 20 + 8) - (2 * 20 + 5)) * 4 + 4);
  MPI_Type_free(&t);

  int g1[1] = {12}, dist[1] = {MPI_DISTRIBUTE_BLOCK}, darg[1] = {MPI_DISTRIBUTE_DFLT_DARG}, ps[1] = {4};
  CHECK_OK(MPI_Type_create_darray(4, 1, 1, g1, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t));
  extent_is(t, 0, 48, 12);
  envelope_is(t, 4 * 1 + 4, 0, 1, MPI_COMBINER_DARRAY);
  MPI_Type_free(&t);

  CHECK_OK(MPI_Type_create_resized(MPI_INT, -4, 16, &t));
  extent_is(t, -4, 16, 4);
  envelope_is(t, 0, 2, 1, MPI_COMBINER_RESIZED);
  MPI_Aint ub;
  CHECK_OK(MPI_Type_ub(t, &ub));
  CHECK_EQ(ub, 12);
  CHECK_OK(MPI_Type_lb(t, &ub));
  CHECK_EQ(ub, -4);
  CHECK_OK(MPI_Type_extent(t, &ub));
  CHECK_EQ(ub, 16);
  MPI_Datatype d;
  CHECK_OK(MPI_Type_dup(t, &d));
  envelope_is(d, 0, 0, 1, MPI_COMBINER_DUP);
  CHECK_OK(MPI_Type_get_contents(d, 0, 0, 1, ints, addrs, types));
  /* a derived type from get_contents is a new handle to free */
  extent_is(types[0], -4, 16, 4);
  CHECK_OK(MPI_Type_free(&types[0]));
  MPI_Type_free(&d);
  MPI_Type_free(&t);

  /* MPI-1 names */
  CHECK_OK(MPI_Type_hvector(2, 1, 8, MPI_INT, &t));
  MPI_Type_free(&t);
  CHECK_OK(MPI_Type_hindexed(3, bl, hd, MPI_INT, &t));
  MPI_Type_free(&t);
  CHECK_OK(MPI_Type_struct(3, sbl, sd, st, &t));
  MPI_Type_free(&t);

  MPI_Aint a1, a2;
  int arr[4];
  CHECK_OK(MPI_Get_address(&arr[0], &a1));
  CHECK_OK(MPI_Get_address(&arr[3], &a2));
  CHECK_EQ(MPI_Aint_diff(a2, a1), 12);
  CHECK_EQ(MPI_Aint_add(a1, 12), a2);
  CHECK_OK(MPI_Address(&arr[3], &a2));
  CHECK_EQ(MPI_Aint_diff(a2, a1), 12);
}

static void test_names(void) {
  char name[MPI_MAX_OBJECT_NAME];
  int len;
  struct {
    MPI_Datatype t;
    const char* n;
  } named[] = {{MPI_INT, "MPI_INT"},       {MPI_DOUBLE, "MPI_DOUBLE"}, {MPI_CHAR, "MPI_CHAR"},
               {MPI_BYTE, "MPI_BYTE"},     {MPI_2INT, "MPI_2INT"},     {MPI_UINT64_T, "MPI_UINT64_T"},
               {MPI_PACKED, "MPI_PACKED"}, {MPI_AINT, "MPI_AINT"}};
  for (unsigned i = 0; i < sizeof named / sizeof named[0]; ++i) {
    CHECK_OK(MPI_Type_get_name(named[i].t, name, &len));
    CHECK(strcmp(name, named[i].n) == 0);
    CHECK_EQ(len, (int)strlen(named[i].n));
  }
  MPI_Datatype t;
  MPI_Type_contiguous(2, MPI_INT, &t);
  CHECK_OK(MPI_Type_get_name(t, name, &len));
  CHECK_EQ(len, 0);
  CHECK_OK(MPI_Type_set_name(t, "pair"));
  CHECK_OK(MPI_Type_get_name(t, name, &len));
  CHECK(strcmp(name, "pair") == 0);
  MPI_Type_free(&t);
}

static int type_copies = 0, type_deletes = 0;
static int tcopy(MPI_Datatype t, int k, void* extra, void* in, void* out, int* flag) {
  (void)t, (void)k, (void)extra;
  ++type_copies;
  *(void**)out = in;
  *flag = 1;
  return MPI_SUCCESS;
}
static int tdelete(MPI_Datatype t, int k, void* v, void* extra) {
  (void)t, (void)k, (void)v, (void)extra;
  ++type_deletes;
  return MPI_SUCCESS;
}

static int tcopy_fails(MPI_Datatype t, int k, void* extra, void* in, void* out, int* flag) {
  (void)t, (void)k, (void)extra, (void)in, (void)out;
  *flag = 0;
  return MPI_ERR_OTHER;
}

/* A copy callback that fails fails MPI_Type_dup: the attribute copied
   before it is deleted with the discarded type (no type is left behind). */
static void test_dup_copy_fails(void) {
  int good, bad;
  CHECK_OK(MPI_Type_create_keyval(tcopy, tdelete, &good, NULL));
  CHECK_OK(MPI_Type_create_keyval(tcopy_fails, MPI_TYPE_NULL_DELETE_FN, &bad, NULL));
  MPI_Datatype t, d = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(3, MPI_INT, &t);
  CHECK_OK(MPI_Type_set_attr(t, good, NULL));
  CHECK_OK(MPI_Type_set_attr(t, bad, NULL));
  type_copies = type_deletes = 0;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK(MPI_Type_dup(t, &d) != MPI_SUCCESS);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  CHECK_EQ(type_copies, 1);
#ifdef ADI3_MPI
  CHECK_EQ(type_deletes, 1); /* the copy on the discarded type */
  CHECK(d == MPI_DATATYPE_NULL);
#endif
  type_deletes = 0;
  MPI_Type_free(&t);
  CHECK_EQ(type_deletes, 1);
  MPI_Type_free_keyval(&good);
  MPI_Type_free_keyval(&bad);
}

static void test_type_attrs(void) {
  int key;
  CHECK_OK(MPI_Type_create_keyval(tcopy, tdelete, &key, NULL));
  MPI_Datatype t, d;
  MPI_Type_contiguous(4, MPI_CHAR, &t);
  int val = 7, *got, flag;
  CHECK_OK(MPI_Type_set_attr(t, key, &val));
  CHECK_OK(MPI_Type_get_attr(t, key, &got, &flag));
  CHECK(flag && got == &val);
  CHECK_OK(MPI_Type_dup(t, &d));
  CHECK_EQ(type_copies, 1);
  CHECK_OK(MPI_Type_get_attr(d, key, &got, &flag));
  CHECK(flag && got == &val);
  CHECK_OK(MPI_Type_delete_attr(d, key));
  CHECK_EQ(type_deletes, 1);
  CHECK_OK(MPI_Type_get_attr(d, key, &got, &flag));
  CHECK_EQ(flag, 0);
  CHECK_OK(MPI_Type_free(&t));
  CHECK_EQ(type_deletes, 2);
  CHECK_OK(MPI_Type_free(&d));
  CHECK_OK(MPI_Type_free_keyval(&key));
}

static void test_pack(void) {
  int a[5] = {1, 2, 3, 4, 5};
  double x = 2.5;
  char buf[256];
  int pos = 0, sz;
  CHECK_OK(MPI_Pack_size(5, MPI_INT, MPI_COMM_WORLD, &sz));
  CHECK(sz >= 20);
  CHECK_OK(MPI_Pack(a, 5, MPI_INT, buf, sizeof buf, &pos, MPI_COMM_WORLD));
  CHECK_OK(MPI_Pack(&x, 1, MPI_DOUBLE, buf, sizeof buf, &pos, MPI_COMM_WORLD));
  CHECK_EQ(pos, 28);
  int b[5] = {0};
  double y = 0;
  pos = 0;
  CHECK_OK(MPI_Unpack(buf, 28, &pos, b, 5, MPI_INT, MPI_COMM_WORLD));
  CHECK_OK(MPI_Unpack(buf, 28, &pos, &y, 1, MPI_DOUBLE, MPI_COMM_WORLD));
  for (int i = 0; i < 5; ++i) CHECK_EQ(b[i], a[i]);
  CHECK(y == 2.5);
  /* too small */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  pos = 0;
  CHECK_CLASS(MPI_Pack(a, 5, MPI_INT, buf, 8, &pos, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  /* external32 is big-endian */
  MPI_Aint ep = 0, esz;
  int v = 0x01020304;
  CHECK_OK(MPI_Pack_external_size("external32", 1, MPI_INT, &esz));
  CHECK_EQ(esz, 4);
  CHECK_OK(MPI_Pack_external("external32", &v, 1, MPI_INT, buf, sizeof buf, &ep));
  CHECK_EQ(ep, 4);
  CHECK(buf[0] == 1 && buf[3] == 4);
  int w = 0;
  ep = 0;
  CHECK_OK(MPI_Unpack_external("external32", buf, 4, &ep, &w, 1, MPI_INT));
  CHECK_EQ(w, v);
  /* packed data travels as MPI_PACKED */
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  pos = 0;
  a[0] = rank;
  MPI_Pack(a, 5, MPI_INT, buf, sizeof buf, &pos, MPI_COMM_WORLD);
  char in[256];
  MPI_Status st;
  CHECK_OK(MPI_Sendrecv(buf, pos, MPI_PACKED, next, 1, in, sizeof in, MPI_PACKED, prev, 1, MPI_COMM_WORLD, &st));
  int cnt;
  MPI_Get_count(&st, MPI_PACKED, &cnt);
  CHECK_EQ(cnt, 20);
  pos = 0;
  MPI_Unpack(in, cnt, &pos, b, 5, MPI_INT, MPI_COMM_WORLD);
  CHECK_EQ(b[0], prev);
  CHECK_EQ(b[4], 5);
}

/* A struct type sent to a neighbour; a subarray received in place. */
static void test_communication(void) {
  struct rec {
    int id;
    double v[3];
    char tag;
  } out[4], in[4];
  int bl[3] = {1, 3, 1};
  MPI_Aint d[3] = {offsetof(struct rec, id), offsetof(struct rec, v), offsetof(struct rec, tag)};
  MPI_Datatype ts[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, t, tr;
  MPI_Type_create_struct(3, bl, d, ts, &t);
  MPI_Type_create_resized(t, 0, sizeof(struct rec), &tr);
  CHECK_OK(MPI_Type_commit(&tr));
  for (int i = 0; i < 4; ++i) {
    out[i].id = rank * 10 + i;
    out[i].v[0] = out[i].v[1] = out[i].v[2] = i * 0.5;
    out[i].tag = (char)('a' + i);
  }
  memset(in, 0, sizeof in);
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  CHECK_OK(MPI_Sendrecv(out, 4, tr, next, 2, in, 4, tr, prev, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  for (int i = 0; i < 4; ++i) {
    CHECK_EQ(in[i].id, prev * 10 + i);
    CHECK(in[i].v[2] == i * 0.5);
    CHECK_EQ(in[i].tag, 'a' + i);
  }
  MPI_Type_free(&t);
  MPI_Type_free(&tr);
  int grid[6][7], gs[2] = {6, 7}, ss[2] = {2, 3}, st2[2] = {1, 2};
  MPI_Datatype sub;
  MPI_Type_create_subarray(2, gs, ss, st2, MPI_ORDER_C, MPI_INT, &sub);
  MPI_Type_commit(&sub);
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 7; ++j) grid[i][j] = -1;
  int vals[6] = {rank, 1, 2, 3, 4, 5};
  CHECK_OK(MPI_Sendrecv(vals, 6, MPI_INT, next, 3, grid, 1, sub, prev, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CHECK_EQ(grid[1][2], prev);
  CHECK_EQ(grid[1][4], 2);
  CHECK_EQ(grid[2][2], 3);
  CHECK_EQ(grid[2][4], 5);
  CHECK_EQ(grid[0][0], -1);
  CHECK_EQ(grid[1][5], -1);
  MPI_Type_free(&sub);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  test_constructors();
  test_names();
  test_type_attrs();
  test_dup_copy_fails();
  test_pack();
  test_communication();
  return mt_finish();
}
