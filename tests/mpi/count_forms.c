/* The MPI-4.1 large-count (_c) forms added last: MPI_Op_create_c (the user
 * function gets an MPI_Count length), Reduce_local_c, Isendrecv(_replace)_c,
 * external32 packing, darray, the datatype envelope, window creation and
 * the one-sided operations. Each gives what its int form gives; a count
 * beyond INT_MAX where the path takes int is MPI_ERR_COUNT. */
#include "mpitest.h"

static int rank, size;
static MPI_Count last_len = -1;

static void sum_c(void* in, void* inout, MPI_Count* len, MPI_Datatype* dt) {
  last_len = *len;
  CHECK(*dt == MPI_INT);
  for (MPI_Count i = 0; i < *len; ++i) ((int*)inout)[i] += ((int*)in)[i];
}

static void test_ops(void) {
  MPI_Op op;
  int in[3] = {1, 2, 3}, out[3] = {10, 20, 30}, mine[3] = {rank, rank, rank}, all[3];
  CHECK_OK(MPI_Op_create_c(sum_c, 1, &op));
  CHECK_OK(MPI_Reduce_local_c(in, out, 3, MPI_INT, op));
  CHECK_EQ(last_len, 3);
  CHECK_EQ(out[0], 11);
  CHECK_EQ(out[2], 33);
  CHECK_OK(MPI_Allreduce(mine, all, 3, MPI_INT, op, MPI_COMM_WORLD));
  CHECK_EQ(all[1], size * (size - 1) / 2);
  CHECK_CLASS(MPI_Reduce_local_c(in, out, (MPI_Count)1 << 33, MPI_INT, op), MPI_ERR_COUNT);
  CHECK_OK(MPI_Op_free(&op));
}

static void test_sendrecv(void) {
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int send = rank, got = -1, buf = rank;
  MPI_Request r;
  MPI_Status st;
  CHECK_OK(MPI_Isendrecv_c(&send, 1, MPI_INT, right, 3, &got, 1, MPI_INT, left, 3, MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Wait(&r, &st));
  CHECK_EQ(got, left);
  MPI_Count n = -1;
  CHECK_OK(MPI_Get_count_c(&st, MPI_INT, &n));
  CHECK_EQ(n, 1);
  CHECK_OK(MPI_Isendrecv_replace_c(&buf, 1, MPI_INT, right, 4, left, 4, MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  CHECK_EQ(buf, left);
  CHECK_CLASS(MPI_Isendrecv_replace_c(&buf, (MPI_Count)1 << 32, MPI_INT, right, 4, left, 4, MPI_COMM_WORLD, &r),
              MPI_ERR_COUNT);
}

static void test_packing_and_types(void) {
  int v[4] = {1, 2, 3, 4}, back[4] = {0};
  char packed[64];
  MPI_Count n = 0, pos = 0, upos = 0;
  CHECK_OK(MPI_Pack_external_size_c("external32", 4, MPI_INT, &n));
  CHECK_EQ(n, 16);
  CHECK_OK(MPI_Pack_external_c("external32", v, 4, MPI_INT, packed, sizeof packed, &pos));
  CHECK_EQ(pos, 16);
  CHECK_EQ((unsigned char)packed[3], 1); /* big-endian */
  CHECK_OK(MPI_Unpack_external_c("external32", packed, pos, &upos, back, 4, MPI_INT));
  CHECK_EQ(upos, 16);
  CHECK_EQ(back[3], 4);

  MPI_Datatype vec, d1, d2;
  CHECK_OK(MPI_Type_vector(3, 2, 5, MPI_INT, &vec));
  MPI_Count ni = -1, na = -1, nl = -1, nd = -1;
  int comb = -1, ints[8];
  MPI_Aint addrs[1];
  MPI_Count large[1];
  MPI_Datatype types[1];
  CHECK_OK(MPI_Type_get_envelope_c(vec, &ni, &na, &nl, &nd, &comb));
  CHECK_EQ(comb, MPI_COMBINER_VECTOR);
  CHECK_EQ(ni, 3);
  CHECK_EQ(na, 0);
  CHECK_EQ(nl, 0);
  CHECK_EQ(nd, 1);
  CHECK_OK(MPI_Type_get_contents_c(vec, 8, 1, 1, 1, ints, addrs, large, types));
  CHECK_EQ(ints[0], 3);
  CHECK_EQ(ints[1], 2);
  CHECK_EQ(ints[2], 5);
  CHECK(types[0] == MPI_INT);
  MPI_Type_free(&vec);

  int gi[2] = {8, 6}, distrib[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
  int darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, psize[2] = {1, 1};
  MPI_Count gc[2] = {8, 6};
  CHECK_OK(MPI_Type_create_darray(1, 0, 2, gi, distrib, darg, psize, MPI_ORDER_C, MPI_INT, &d1));
  CHECK_OK(MPI_Type_create_darray_c(1, 0, 2, gc, distrib, darg, psize, MPI_ORDER_C, MPI_INT, &d2));
  int s1 = 0, s2 = 0;
  MPI_Type_size(d1, &s1);
  MPI_Type_size(d2, &s2);
  CHECK_EQ(s1, 48 * 4);
  CHECK_EQ(s2, s1);
  MPI_Type_free(&d1);
  MPI_Type_free(&d2);
}

static void test_one_sided(void) {
  int mem[4] = {0}, val = 100 + rank, got[4] = {0};
  MPI_Win win;
  int right = (rank + 1) % size;
  CHECK_OK(MPI_Win_create_c(mem, sizeof mem, (MPI_Aint)sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  CHECK_OK(MPI_Win_fence(0, win));
  CHECK_OK(MPI_Put_c(&val, 1, MPI_INT, right, 1, 1, MPI_INT, win));
  CHECK_OK(MPI_Accumulate_c(&val, 1, MPI_INT, right, 2, 1, MPI_INT, MPI_SUM, win));
  CHECK_OK(MPI_Win_fence(0, win));
  int left = (rank + size - 1) % size;
  CHECK_EQ(mem[1], 100 + left);
  CHECK_EQ(mem[2], 100 + left);
  CHECK_OK(MPI_Get_c(got, 4, MPI_INT, right, 0, 4, MPI_INT, win));
  CHECK_CLASS(MPI_Put_c(&val, (MPI_Count)1 << 31, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_COUNT);
  CHECK_OK(MPI_Win_fence(0, win));
  CHECK_EQ(got[1], 100 + rank);
  MPI_Request r;
  int res = -1;
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
  CHECK_OK(MPI_Rget_c(&res, 1, MPI_INT, right, 1, 1, MPI_INT, win, &r));
  CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  CHECK_OK(MPI_Win_unlock(right, win));
  CHECK_EQ(res, 100 + rank);
  CHECK_OK(MPI_Win_free(&win));
  void* base = NULL;
  CHECK_OK(MPI_Win_allocate_c(64, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
  CHECK(base != NULL);
  int* unit = NULL;
  int flag = 0;
  CHECK_OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unit, &flag));
  CHECK(flag && *unit == 8);
  CHECK_OK(MPI_Win_free(&win));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  test_ops();
  test_sendrecv();
  test_packing_and_types();
  test_one_sided();
  return mt_finish();
}
