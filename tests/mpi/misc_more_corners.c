/* Datatype, info, group, topology and environment corners an outside
 * conformance suite reaches: resized types with a negative lower bound,
 * subarrays in both orders, external32 byte order, info
 * key bounds and truncated values, ranges with negative strides, Cart_shift
 * off the edge, Dims_create with fixed entries, Topo_test of an
 * intercommunicator, and the environment's inquiries. */
#include "mpitest.h"

static void types(void) {
  MPI_Datatype r;
  MPI_Aint lb = 0, ext = 0;
  MPI_Count lbx = 0, extx = 0;
  CHECK_OK(MPI_Type_create_resized(MPI_INT, -4, 12, &r));
  CHECK_OK(MPI_Type_commit(&r));
  MPI_Type_get_extent(r, &lb, &ext);
  CHECK_EQ(lb, -4);
  CHECK_EQ(ext, 12);
  CHECK_OK(MPI_Type_get_true_extent_x(r, &lbx, &extx));
  CHECK_EQ(lbx, 0);
  CHECK_EQ(extx, 4);
  /* Two of them in a contiguous: 0 and 12, extent 24, lb -4. */
  MPI_Datatype two;
  MPI_Type_contiguous(2, r, &two);
  MPI_Type_commit(&two);
  MPI_Type_get_extent(two, &lb, &ext);
  CHECK_EQ(lb, -4);
  CHECK_EQ(ext, 24);
  MPI_Type_get_true_extent(two, &lb, &ext);
  CHECK_EQ(lb, 0);
  CHECK_EQ(ext, 16);
  int src[5] = {1, 2, 3, 4, 5}, packed[2] = {0, 0}, pos = 0;
  MPI_Pack(src, 1, two, packed, sizeof packed, &pos, MPI_COMM_WORLD);
  CHECK_EQ(pos, 8);
  CHECK_EQ(packed[0], 1);
  CHECK_EQ(packed[1], 4);
  MPI_Type_free(&two);
  MPI_Type_free(&r);

  /* A 4x6 array, the 2x3 block at (1, 2), in C and Fortran order. */
  int a[24];
  for (int i = 0; i < 24; ++i) a[i] = i;
  int sizes[2] = {4, 6}, sub[2] = {2, 3}, starts[2] = {1, 2};
  for (int order = 0; order < 2; ++order) {
    MPI_Datatype s;
    CHECK_OK(MPI_Type_create_subarray(2, sizes, sub, starts, order ? MPI_ORDER_FORTRAN : MPI_ORDER_C, MPI_INT, &s));
    MPI_Type_commit(&s);
    int size = 0, out[6];
    MPI_Type_size(s, &size);
    CHECK_EQ(size, 24);
    MPI_Type_get_extent(s, &lb, &ext);
    CHECK_EQ(lb, 0);
    CHECK_EQ(ext, 96);
    pos = 0;
    MPI_Pack(a, 1, s, out, sizeof out, &pos, MPI_COMM_WORLD);
    for (int k = 0; k < 6; ++k) {
      /* C: rows 1-2, columns 2-4 (row length 6); Fortran: the first index
       * runs fastest over 4 (columns 1-2 of rows 2-4). */
      int want = order ? (2 + k / 2) * 4 + 1 + k % 2 : (1 + k / 3) * 6 + 2 + k % 3;
      CHECK_EQ(out[k], want);
    }
    MPI_Type_free(&s);
  }

  /* external32: big-endian, fixed sizes. */
  unsigned char buf[64];
  MPI_Aint p = 0, need = 0;
  int iv = 0x01020304;
  double dv = 1.0;
  short sv = 0x0102;
  CHECK_OK(MPI_Pack_external_size("external32", 2, MPI_INT, &need));
  CHECK_EQ(need, 8);
  CHECK_OK(MPI_Pack_external("external32", &iv, 1, MPI_INT, buf, sizeof buf, &p));
  CHECK_OK(MPI_Pack_external("external32", &dv, 1, MPI_DOUBLE, buf, sizeof buf, &p));
  CHECK_OK(MPI_Pack_external("external32", &sv, 1, MPI_SHORT, buf, sizeof buf, &p));
  CHECK_EQ(p, 14);
  CHECK(buf[0] == 1 && buf[1] == 2 && buf[2] == 3 && buf[3] == 4);
  CHECK(buf[4] == 0x3f && buf[5] == 0xf0 && buf[11] == 0);
  CHECK(buf[12] == 1 && buf[13] == 2);
  int iv2 = 0;
  double dv2 = 0;
  short sv2 = 0;
  p = 0;
  CHECK_OK(MPI_Unpack_external("external32", buf, 14, &p, &iv2, 1, MPI_INT));
  CHECK_OK(MPI_Unpack_external("external32", buf, 14, &p, &dv2, 1, MPI_DOUBLE));
  CHECK_OK(MPI_Unpack_external("external32", buf, 14, &p, &sv2, 1, MPI_SHORT));
  CHECK(iv2 == iv && dv2 == dv && sv2 == sv);
  /* Too small an output buffer and an unknown representation. */
  p = 0;
  CHECK(MPI_Pack_external("external32", &dv, 1, MPI_DOUBLE, buf, 4, &p) != MPI_SUCCESS);
  int psize = 0;
  CHECK_OK(MPI_Pack_size(3, MPI_INT, MPI_COMM_WORLD, &psize));
  CHECK(psize >= 12);
}

static void infos(void) {
  MPI_Info i, d;
  char key[MPI_MAX_INFO_KEY + 2], val[8];
  int n = -1, flag = 0, len = 0;
  MPI_Info_create(&i);
  MPI_Info_set(i, "b_key", "0123456789");
  MPI_Info_set(i, "a_key", "x");
  CHECK_OK(MPI_Info_get_nkeys(i, &n));
  CHECK_EQ(n, 2);
  CHECK_CLASS(MPI_Info_get_nthkey(i, 2, key), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Info_get_nthkey(i, -1, key), MPI_ERR_ARG);
  CHECK_OK(MPI_Info_dup(i, &d));
  CHECK_OK(MPI_Info_get_nthkey(d, 0, key));
  CHECK(!strcmp(key, "b_key"));
  CHECK_OK(MPI_Info_get_nthkey(d, 1, key));
  CHECK(!strcmp(key, "a_key"));
  CHECK_OK(MPI_Info_get_valuelen(d, "b_key", &len, &flag));
  CHECK(flag);
  CHECK_EQ(len, 10);
  memset(val, 'z', sizeof val);
  CHECK_OK(MPI_Info_get(d, "b_key", 4, val, &flag));
  CHECK(flag);
  CHECK(!strcmp(val, "0123"));
  /* A key longer than MPI_MAX_INFO_KEY is refused; so is an empty one. */
  memset(key, 'k', MPI_MAX_INFO_KEY + 1);
  key[MPI_MAX_INFO_KEY + 1] = 0;
  CHECK_CLASS(MPI_Info_set(i, key, "v"), MPI_ERR_INFO_KEY);
  CHECK_CLASS(MPI_Info_set(i, "", "v"), MPI_ERR_INFO_KEY);
  CHECK_CLASS(MPI_Info_delete(i, "none"), MPI_ERR_INFO_NOKEY);
  MPI_Info_free(&d);
  MPI_Info_free(&i);
  CHECK(i == MPI_INFO_NULL);
}

static void groups(int rank, int size) {
  MPI_Group w, rev, ex;
  MPI_Comm_group(MPI_COMM_WORLD, &w);
  int range[1][3] = {{size - 1, 0, -1}};
  CHECK_OK(MPI_Group_range_incl(w, 1, range, &rev));
  int r = -5, cmp = -1;
  MPI_Group_rank(rev, &r);
  CHECK_EQ(r, size - 1 - rank);
  MPI_Group_compare(w, rev, &cmp);
  CHECK_EQ(cmp, size > 1 ? MPI_SIMILAR : MPI_IDENT);
  int from[3] = {MPI_PROC_NULL, 0, size - 1}, to[3] = {0, 0, 0};
  CHECK_OK(MPI_Group_translate_ranks(w, 3, from, rev, to));
  CHECK_EQ(to[0], MPI_PROC_NULL);
  CHECK_EQ(to[1], size - 1);
  CHECK_EQ(to[2], 0);
  /* Exclude every other rank from the top, stride -2. */
  int range2[1][3] = {{size - 1, 0, -2}};
  CHECK_OK(MPI_Group_range_excl(w, 1, range2, &ex));
  int n = -1;
  MPI_Group_size(ex, &n);
  CHECK_EQ(n, size / 2);
  MPI_Group_rank(ex, &r);
  CHECK_EQ(r, (size - 1 - rank) % 2 ? rank / 2 : MPI_UNDEFINED);
  /* A range that leaves the group or a zero stride. */
  int bad[1][3] = {{0, size, 1}};
  int cls = -1, e = MPI_Group_range_incl(w, 1, bad, &rev);
  if (e) MPI_Error_class(e, &cls);
  CHECK(cls == MPI_ERR_RANK || cls == MPI_ERR_ARG);
  int zero[1][3] = {{0, 0, 0}};
  CHECK(MPI_Group_range_incl(w, 1, zero, &rev) != MPI_SUCCESS);
  MPI_Group_free(&w);
}

static void topo(int rank, int size) {
  MPI_Comm cart;
  int dims[1] = {size}, periods[1] = {0}, src = 0, dst = 0;
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
  CHECK_OK(MPI_Cart_shift(cart, 0, size, &src, &dst));
  CHECK_EQ(src, MPI_PROC_NULL);
  CHECK_EQ(dst, MPI_PROC_NULL);
  CHECK_OK(MPI_Cart_shift(cart, 0, -1, &src, &dst));
  CHECK_EQ(src, rank + 1 < size ? rank + 1 : MPI_PROC_NULL);
  CHECK_EQ(dst, rank > 0 ? rank - 1 : MPI_PROC_NULL);
  MPI_Comm_free(&cart);
  int d[3] = {0, 3, 0};
  CHECK_OK(MPI_Dims_create(12, 3, d));
  CHECK(d[0] == 2 && d[1] == 3 && d[2] == 2);
  int e[2] = {0, 5};
  CHECK_CLASS(MPI_Dims_create(12, 2, e), MPI_ERR_DIMS);
  int f[2] = {0, 0};
  CHECK_OK(MPI_Dims_create(1, 2, f));
  CHECK(f[0] == 1 && f[1] == 1);
  int newrank = -5;
  CHECK_OK(MPI_Cart_map(MPI_COMM_WORLD, 1, dims, periods, &newrank));
  CHECK_EQ(newrank, rank);
  int one[1] = {1};
  CHECK_OK(MPI_Cart_map(MPI_COMM_WORLD, 1, one, periods, &newrank));
  CHECK_EQ(newrank, rank == 0 ? 0 : MPI_UNDEFINED);
  if (size >= 2) {
    MPI_Comm half, inter;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 3, &inter);
    int st = -5;
    CHECK_OK(MPI_Topo_test(inter, &st));
    CHECK_EQ(st, MPI_UNDEFINED);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
  }
}

static void environment(void) {
  int level = -1, main_thread = 0, fin = 1, len = 0;
  char name[MPI_MAX_PROCESSOR_NAME], version[MPI_MAX_LIBRARY_VERSION_STRING];
  CHECK_OK(MPI_Query_thread(&level));
  CHECK(level >= MPI_THREAD_SINGLE && level <= MPI_THREAD_MULTIPLE);
  CHECK_OK(MPI_Is_thread_main(&main_thread));
  CHECK(main_thread);
  CHECK_OK(MPI_Finalized(&fin));
  CHECK(!fin);
  CHECK_OK(MPI_Get_processor_name(name, &len));
  CHECK(len > 0 && len < MPI_MAX_PROCESSOR_NAME && (int)strlen(name) == len);
  CHECK_OK(MPI_Get_library_version(version, &len));
  CHECK(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING && (int)strlen(version) == len);
  int v = 0, sv = 0;
  CHECK_OK(MPI_Get_version(&v, &sv));
  CHECK(v >= 3);
}

int main(int argc, char** argv) {
  int rank, size, right, left;
  mt_init_ring(&argc, &argv, &rank, &size, &right, &left);
  types();
  infos();
  groups(rank, size);
  topo(rank, size);
  environment();
  return mt_finish();
}
