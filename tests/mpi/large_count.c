/* MPI-4 large-count (_c) functions: each family against its int twin, counts
 * beyond INT_MAX where the core carries them (a transfer of 2^31 + 7
 * elements of a 1-byte type with extent 0, statuses, pack sizes), and a clear
 * MPI_ERR_COUNT where a path still takes ints (datatype constructors,
 * v-collective arrays). */
#include <limits.h>

#include "mpitest.h"

static int rank, size;
static const MPI_Count kBig = (MPI_Count)INT_MAX + 7;

static void test_p2p(void) {
  int peer = (rank + 1) % size, from = (rank - 1 + size) % size;
  long out[4], in[4];
  MPI_Status st;
  MPI_Count n = -1;
  MPI_Request r[2];
  for (int i = 0; i < 4; ++i) out[i] = rank * 10 + i;
  CHECK_OK(MPI_Sendrecv_c(out, 4, MPI_LONG, peer, 1, in, 4, MPI_LONG, from, 1, MPI_COMM_WORLD, &st));
  CHECK_OK(MPI_Get_count_c(&st, MPI_LONG, &n));
  CHECK_EQ(n, 4);
  for (int i = 0; i < 4; ++i) CHECK_EQ(in[i], from * 10 + i);
  CHECK_OK(MPI_Irecv_c(in, 4, MPI_LONG, from, 2, MPI_COMM_WORLD, &r[0]));
  CHECK_OK(MPI_Isend_c(out, 3, MPI_LONG, peer, 2, MPI_COMM_WORLD, &r[1]));
  CHECK_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
  CHECK_OK(MPI_Send_init_c(out, 2, MPI_LONG, peer, 3, MPI_COMM_WORLD, &r[1]));
  CHECK_OK(MPI_Recv_init_c(in, 4, MPI_LONG, from, 3, MPI_COMM_WORLD, &r[0]));
  for (int k = 0; k < 2; ++k) {
    CHECK_OK(MPI_Startall(2, r));
    CHECK_OK(MPI_Wait(&r[0], &st));
    CHECK_OK(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Get_elements_c(&st, MPI_LONG, &n));
    CHECK_EQ(n, 2);
  }
  CHECK_OK(MPI_Request_free(&r[0]));
  CHECK_OK(MPI_Request_free(&r[1]));
  if (size > 1) {
    if (rank == 0) CHECK_OK(MPI_Ssend_c(out, 1, MPI_LONG, 1, 4, MPI_COMM_WORLD));
    if (rank == 1) {
      CHECK_OK(MPI_Recv_c(in, 4, MPI_LONG, 0, 4, MPI_COMM_WORLD, &st));
      CHECK_EQ(in[0], 0);
    }
  }
  /* Buffered mode with a buffer attached through the _c call. */
  static char bsend_buf[1024];
  MPI_Count bsize = 0;
  void* b = NULL;
  CHECK_OK(MPI_Buffer_attach_c(bsend_buf, sizeof bsend_buf));
  CHECK_OK(MPI_Bsend_c(out, 4, MPI_LONG, peer, 5, MPI_COMM_WORLD));
  CHECK_OK(MPI_Recv_c(in, 4, MPI_LONG, from, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CHECK_OK(MPI_Buffer_detach_c(&b, &bsize));
  CHECK(b == bsend_buf);
  CHECK_EQ(bsize, sizeof bsend_buf);
}

/* 2^31 + 7 one-byte elements that all sit on one byte (extent 0): the
 * transfer really moves that many elements through the core. */
static void test_beyond_int(void) {
  if (size < 2 || rank > 1) return;
#ifdef ADI3_SANITIZED
  return; /* 2 GiB of element-wise packing takes minutes under the sanitizers */
#endif
  MPI_Datatype flat;
  CHECK_OK(MPI_Type_create_resized(MPI_BYTE, 0, 0, &flat));
  CHECK_OK(MPI_Type_commit(&flat));
  char byte = rank == 0 ? 42 : 0;
  MPI_Status st;
  if (rank == 0) {
    CHECK_OK(MPI_Send_c(&byte, kBig, flat, 1, 9, MPI_COMM_WORLD));
  } else {
    CHECK_OK(MPI_Recv_c(&byte, kBig, flat, 0, 9, MPI_COMM_WORLD, &st));
    MPI_Count n = 0;
    int small = 0;
    CHECK_OK(MPI_Get_count_c(&st, flat, &n));
    CHECK_EQ(n, kBig);
    CHECK_OK(MPI_Get_count(&st, flat, &small));
    CHECK_EQ(small, MPI_UNDEFINED); /* the int form cannot say it */
    CHECK_EQ(byte, 42);
  }
  CHECK_OK(MPI_Type_free(&flat));
}

static void test_status_and_types(void) {
  MPI_Status st;
  MPI_Count n = 0, lb = -1, extent = -1;
  CHECK_OK(MPI_Status_set_elements_c(&st, MPI_INT, kBig));
  CHECK_OK(MPI_Get_elements_c(&st, MPI_INT, &n));
  CHECK_EQ(n, kBig);
  CHECK_OK(MPI_Get_count_c(&st, MPI_INT, &n));
  CHECK_EQ(n, kBig);
  CHECK_OK(MPI_Type_size_c(MPI_DOUBLE, &n));
  CHECK_EQ(n, sizeof(double));
  MPI_Datatype v, h, idx, s, sub, res;
  CHECK_OK(MPI_Type_vector_c(3, 2, 4, MPI_INT, &v));
  CHECK_OK(MPI_Type_get_extent_c(v, &lb, &extent));
  CHECK_EQ(lb, 0);
  CHECK_EQ(extent, (2 * 4 + 2) * sizeof(int));
  CHECK_OK(MPI_Type_get_true_extent_c(v, &lb, &extent));
  CHECK_EQ(extent, (2 * 4 + 2) * sizeof(int));
  CHECK_OK(MPI_Type_create_hvector_c(2, 1, 16, MPI_INT, &h));
  MPI_Count bl[2] = {1, 2}, disp[2] = {0, 3}, bdisp[2] = {0, 16}, sizes[2] = {4, 4}, subs[2] = {2, 2},
            starts[2] = {1, 1};
  MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
  CHECK_OK(MPI_Type_indexed_c(2, bl, disp, MPI_INT, &idx));
  CHECK_OK(MPI_Type_size_c(idx, &n));
  CHECK_EQ(n, 3 * sizeof(int));
  CHECK_OK(MPI_Type_create_struct_c(2, bl, bdisp, types, &s));
  CHECK_OK(MPI_Type_size_c(s, &n));
  CHECK_EQ(n, sizeof(int) + 2 * sizeof(double));
  CHECK_OK(MPI_Type_create_subarray_c(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &sub));
  CHECK_OK(MPI_Type_size_c(sub, &n));
  CHECK_EQ(n, 4 * sizeof(int));
  CHECK_OK(MPI_Type_create_resized_c(MPI_INT, 0, 16, &res));
  CHECK_OK(MPI_Type_get_extent_c(res, &lb, &extent));
  CHECK_EQ(extent, 16);
  MPI_Datatype all[] = {v, h, idx, s, sub, res};
  for (int i = 0; i < 6; ++i) CHECK_OK(MPI_Type_free(&all[i]));
  MPI_Datatype c;
  CHECK_OK(MPI_Type_contiguous_c(5, MPI_INT, &c));
  CHECK_OK(MPI_Type_free(&c));
  /* The constructors still build from int counts: a clear ERR_COUNT. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK_CLASS(MPI_Type_contiguous_c(kBig, MPI_INT, &c), MPI_ERR_COUNT);
  CHECK_CLASS(MPI_Type_contiguous_c(-1, MPI_INT, &c), MPI_ERR_COUNT);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void test_pack(void) {
  int in[6] = {1, 2, 3, 4, 5, 6}, out[6] = {0};
  char buf[64];
  MPI_Count pos = 0, sz = 0;
  CHECK_OK(MPI_Pack_size_c(6, MPI_INT, MPI_COMM_WORLD, &sz));
  CHECK(sz >= (MPI_Count)sizeof in);
  CHECK_OK(MPI_Pack_c(in, 6, MPI_INT, buf, sizeof buf, &pos, MPI_COMM_WORLD));
  CHECK_EQ(pos, sizeof in);
  pos = 0;
  CHECK_OK(MPI_Unpack_c(buf, sizeof buf, &pos, out, 6, MPI_INT, MPI_COMM_WORLD));
  for (int i = 0; i < 6; ++i) CHECK_EQ(out[i], in[i]);
  /* A packed size beyond int: the _c form answers, the int form refuses. */
  int small = 0;
  CHECK_OK(MPI_Pack_size_c(kBig, MPI_BYTE, MPI_COMM_WORLD, &sz));
  CHECK(sz >= kBig);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK_CLASS(MPI_Pack_size(INT_MAX, MPI_DOUBLE, MPI_COMM_WORLD, &small), MPI_ERR_COUNT);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void test_coll(void) {
  long v[4], sum[4], all[4 * 8];
  MPI_Count counts[8];
  MPI_Aint displs[8];
  MPI_Request req;
  for (int i = 0; i < 4; ++i) v[i] = rank + i;
  CHECK_OK(MPI_Allreduce_c(v, sum, 4, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
  for (int i = 0; i < 4; ++i) CHECK_EQ(sum[i], (long)size * (size - 1) / 2 + (long)size * i);
  long b = rank == 0 ? 99 : 0;
  CHECK_OK(MPI_Ibcast_c(&b, 1, MPI_LONG, 0, MPI_COMM_WORLD, &req));
  CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  CHECK_EQ(b, 99);
  for (int r = 0; r < size; ++r) {
    counts[r] = 1 + r % 4;
    displs[r] = 4 * r;
  }
  for (int i = 0; i < 4 * size; ++i) all[i] = -1;
  CHECK_OK(MPI_Allgatherv_c(v, counts[rank], MPI_LONG, all, counts, displs, MPI_LONG, MPI_COMM_WORLD));
  for (int r = 0; r < size; ++r)
    for (int i = 0; i < 4; ++i) CHECK_EQ(all[4 * r + i], i < counts[r] ? r + i : -1);
  CHECK_OK(MPI_Gather_c(v, 2, MPI_LONG, all, 2, MPI_LONG, 0, MPI_COMM_WORLD));
  if (rank == 0)
    for (int r = 0; r < size; ++r) CHECK_EQ(all[2 * r + 1], r + 1);
  CHECK_OK(MPI_Reduce_scatter_block_c(all, sum, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD));
  /* persistent and large-count together */
  CHECK_OK(MPI_Allreduce_init_c(v, sum, 4, MPI_LONG, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
  CHECK_OK(MPI_Start(&req));
  CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  CHECK_EQ(sum[0], size - 1);
  CHECK_OK(MPI_Request_free(&req));
  /* Counts of v-collective arrays still travel as ints in coll/. */
  counts[0] = kBig;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK_CLASS(MPI_Allgatherv_c(v, 1, MPI_LONG, all, counts, displs, MPI_LONG, MPI_COMM_WORLD), MPI_ERR_COUNT);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  /* neighbourhood _c on a ring */
  MPI_Comm ring;
  int dims[1] = {size}, periods[1] = {1};
  CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
  long nb[2] = {-1, -1}, me = rank;
  CHECK_OK(MPI_Neighbor_allgather_c(&me, 1, MPI_LONG, nb, 1, MPI_LONG, ring));
  CHECK_EQ(nb[0], (rank - 1 + size) % size);
  CHECK_EQ(nb[1], (rank + 1) % size);
  CHECK_OK(MPI_Comm_free(&ring));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  test_p2p();
  test_status_and_types();
  test_pack();
  test_coll();
  test_beyond_int();
  return mt_finish();
}
