/* MPI-4 persistent collectives: every _init form, started several times with
 * new data each round (the schedule must read the buffers at each start, not
 * at init), several started together in a rank-dependent order, derived
 * types freed after init, neighbourhood forms on a periodic ring, and the
 * inactive-request rules (wait/test on an inactive request return at once
 * with an empty status; free only when inactive). */
#include "mpitest.h"

static int rank, size;
enum { N = 5, ROUNDS = 3 };

static long val(int r, int i, int round) { return (long)r * 131 + i * 7 + round * 1009; }

static void check_empty(const MPI_Status* st) {
  int count = -1;
  CHECK_EQ(st->MPI_SOURCE, MPI_ANY_SOURCE);
  CHECK_EQ(st->MPI_TAG, MPI_ANY_TAG);
  MPI_Get_count(st, MPI_INT, &count);
  CHECK_EQ(count, 0);
}

static void test_rooted(void) {
  long buf[N], out[N], all[N * 8], mine[N];
  int counts[8], displs[8];
  MPI_Request req[6];
  int root = size - 1;
  for (int r = 0; r < size; ++r) {
    counts[r] = 1 + r % N;
    displs[r] = r * N;
  }
  CHECK_OK(MPI_Bcast_init(buf, N, MPI_LONG, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req[0]));
  CHECK_OK(MPI_Reduce_init(mine, out, N, MPI_LONG, MPI_SUM, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req[1]));
  CHECK_OK(MPI_Gather_init(mine, N, MPI_LONG, all, N, MPI_LONG, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req[2]));
  CHECK_OK(MPI_Gatherv_init(mine, counts[rank], MPI_LONG, all, counts, displs, MPI_LONG, root, MPI_COMM_WORLD,
                            MPI_INFO_NULL, &req[3]));
  CHECK_OK(MPI_Scatter_init(all, N, MPI_LONG, out, N, MPI_LONG, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req[4]));
  CHECK_OK(MPI_Scatterv_init(all, counts, displs, MPI_LONG, out, counts[rank], MPI_LONG, root, MPI_COMM_WORLD,
                             MPI_INFO_NULL, &req[5]));
  for (int round = 0; round < ROUNDS; ++round) {
    /* bcast */
    for (int i = 0; i < N; ++i) buf[i] = rank == root ? val(root, i, round) : -1;
    CHECK_OK(MPI_Start(&req[0]));
    CHECK_OK(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
    for (int i = 0; i < N; ++i) CHECK_EQ(buf[i], val(root, i, round));
    /* reduce */
    for (int i = 0; i < N; ++i) mine[i] = val(rank, i, round);
    CHECK_OK(MPI_Start(&req[1]));
    CHECK_OK(MPI_Wait(&req[1], MPI_STATUS_IGNORE));
    if (rank == root) {
      for (int i = 0; i < N; ++i) {
        long want = 0;
        for (int r = 0; r < size; ++r) want += val(r, i, round);
        CHECK_EQ(out[i], want);
      }
    }
    /* gather, then gatherv */
    CHECK_OK(MPI_Start(&req[2]));
    CHECK_OK(MPI_Wait(&req[2], MPI_STATUS_IGNORE));
    if (rank == root) {
      for (int r = 0; r < size; ++r)
        for (int i = 0; i < N; ++i) CHECK_EQ(all[r * N + i], val(r, i, round));
    }
    for (int i = 0; i < N * size; ++i) all[i] = -7;
    CHECK_OK(MPI_Start(&req[3]));
    CHECK_OK(MPI_Wait(&req[3], MPI_STATUS_IGNORE));
    if (rank == root) {
      for (int r = 0; r < size; ++r)
        for (int i = 0; i < N; ++i) CHECK_EQ(all[r * N + i], i < counts[r] ? val(r, i, round) : -7);
    }
    /* scatter, then scatterv, from the root's buffer of this round */
    for (int i = 0; i < N * size; ++i) all[i] = rank == root ? val(i / N, i % N, round + 10) : -1;
    CHECK_OK(MPI_Start(&req[4]));
    CHECK_OK(MPI_Wait(&req[4], MPI_STATUS_IGNORE));
    for (int i = 0; i < N; ++i) CHECK_EQ(out[i], val(rank, i, round + 10));
    for (int i = 0; i < N; ++i) out[i] = -3;
    CHECK_OK(MPI_Start(&req[5]));
    CHECK_OK(MPI_Wait(&req[5], MPI_STATUS_IGNORE));
    for (int i = 0; i < N; ++i) CHECK_EQ(out[i], i < counts[rank] ? val(rank, i, round + 10) : -3);
  }
  for (int k = 0; k < 6; ++k) {
    CHECK_OK(MPI_Request_free(&req[k]));
    CHECK_EQ(req[k], MPI_REQUEST_NULL);
  }
}

static void test_all(void) {
  long in[N * 8], out[N * 8], sum[N], scan[N], ex[N], rsb[N], rs[N];
  int counts[8], displs[8], rcounts[8], bytes[8], bdispls[8];
  MPI_Datatype types[8];
  MPI_Request req[11];
  for (int r = 0; r < size; ++r) {
    counts[r] = N;
    displs[r] = r * N;
    rcounts[r] = 1 + r % 3;
    bytes[r] = N;
    bdispls[r] = r * N * (int)sizeof(long);
    types[r] = MPI_LONG;
  }
  int rs_total = 0;
  for (int r = 0; r < size; ++r) rs_total += rcounts[r];
  CHECK_OK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &req[0]));
  CHECK_OK(MPI_Allreduce_init(in, sum, N, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req[1]));
  CHECK_OK(MPI_Scan_init(in, scan, N, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req[2]));
  CHECK_OK(MPI_Exscan_init(in, ex, N, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req[3]));
  CHECK_OK(MPI_Reduce_scatter_block_init(in, rsb, N / size > 0 ? N / size : 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD,
                                         MPI_INFO_NULL, &req[4]));
  CHECK_OK(MPI_Reduce_scatter_init(in, rs, rcounts, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req[5]));
  /* These four write `out`: started one at a time below. */
  CHECK_OK(MPI_Allgather_init(in, N, MPI_LONG, out, N, MPI_LONG, MPI_COMM_WORLD, MPI_INFO_NULL, &req[6]));
  CHECK_OK(MPI_Allgatherv_init(in, N, MPI_LONG, out, counts, displs, MPI_LONG, MPI_COMM_WORLD, MPI_INFO_NULL, &req[7]));
  CHECK_OK(MPI_Alltoall_init(in, N, MPI_LONG, out, N, MPI_LONG, MPI_COMM_WORLD, MPI_INFO_NULL, &req[8]));
  CHECK_OK(MPI_Alltoallv_init(in, counts, displs, MPI_LONG, out, counts, displs, MPI_LONG, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &req[9]));
  CHECK_OK(MPI_Alltoallw_init(in, bytes, bdispls, types, out, bytes, bdispls, types, MPI_COMM_WORLD, MPI_INFO_NULL,
                              &req[10]));
  for (int round = 0; round < ROUNDS; ++round) {
    /* Reductions read only `in`: start them together, in a rank-dependent
     * order (MPI-4 lets starts come in any order). */
    for (int i = 0; i < N * size; ++i) in[i] = val(rank, i, round);
    MPI_Request batch[6];
    for (int k = 0; k < 6; ++k) batch[k] = req[(k + rank) % 6];
    if (round == 1) {
      for (int k = 5; k >= 0; --k) CHECK_OK(MPI_Start(&batch[k]));
    } else {
      CHECK_OK(MPI_Startall(6, batch));
    }
    MPI_Status st[6];
    CHECK_OK(MPI_Waitall(6, batch, st));
    for (int k = 0; k < 6; ++k) CHECK(batch[k] != MPI_REQUEST_NULL); /* persistent: handles stay */
    for (int i = 0; i < N; ++i) {
      long s = 0, below = 0;
      for (int r = 0; r < size; ++r) s += val(r, i, round);
      for (int r = 0; r < rank; ++r) below += val(r, i, round);
      CHECK_EQ(sum[i], s);
      CHECK_EQ(scan[i], below + val(rank, i, round));
      if (rank > 0) CHECK_EQ(ex[i], below);
    }
    int blk = N / size > 0 ? N / size : 1;
    for (int i = 0; i < blk; ++i) {
      long s = 0;
      for (int r = 0; r < size; ++r) s += val(r, rank * blk + i, round);
      CHECK_EQ(rsb[i], s);
    }
    int first = 0;
    for (int r = 0; r < rank; ++r) first += rcounts[r];
    for (int i = 0; i < rcounts[rank]; ++i) {
      long s = 0;
      for (int r = 0; r < size; ++r) s += val(r, first + i, round);
      CHECK_EQ(rs[i], s);
    }
    (void)rs_total;
    /* allgather and allgatherv */
    for (int k = 6; k <= 7; ++k) {
      for (int i = 0; i < N * size; ++i) out[i] = -1;
      CHECK_OK(MPI_Start(&req[k]));
      CHECK_OK(MPI_Wait(&req[k], MPI_STATUS_IGNORE));
      for (int r = 0; r < size; ++r)
        for (int i = 0; i < N; ++i) CHECK_EQ(out[r * N + i], val(r, i, round));
    }
    /* alltoall, alltoallv, alltoallw: block r of rank q's input goes to rank r */
    for (int k = 8; k <= 10; ++k) {
      for (int i = 0; i < N * size; ++i) out[i] = -1;
      CHECK_OK(MPI_Start(&req[k]));
      CHECK_OK(MPI_Wait(&req[k], MPI_STATUS_IGNORE));
      for (int q = 0; q < size; ++q)
        for (int i = 0; i < N; ++i) CHECK_EQ(out[q * N + i], val(q, rank * N + i, round));
    }
  }
  for (int k = 0; k < 11; ++k) CHECK_OK(MPI_Request_free(&req[k]));
}

/* A derived type freed right after init; the persistent operation keeps it. */
static void test_derived_type_lifetime(void) {
  int data[12];
  MPI_Datatype every_other;
  MPI_Request req;
  CHECK_OK(MPI_Type_vector(6, 1, 2, MPI_INT, &every_other));
  CHECK_OK(MPI_Type_commit(&every_other));
  CHECK_OK(MPI_Bcast_init(data, 1, every_other, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
  CHECK_OK(MPI_Type_free(&every_other));
  for (int round = 0; round < ROUNDS; ++round) {
    for (int i = 0; i < 12; ++i) data[i] = rank == 0 ? 100 * round + i : -1;
    CHECK_OK(MPI_Start(&req));
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < 12; ++i) CHECK_EQ(data[i], i % 2 == 0 || rank == 0 ? 100 * round + i : -1);
  }
  CHECK_OK(MPI_Request_free(&req));
}

/* Inactive persistent requests: wait/test/get_status return at once with an
 * empty status; free is refused while active. */
static void test_inactive(void) {
  MPI_Request req;
  MPI_Status st;
  int flag = 0, x = rank;
  CHECK_OK(MPI_Allreduce_init(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
  st.MPI_SOURCE = 77;
  st.MPI_TAG = 77;
  CHECK_OK(MPI_Wait(&req, &st)); /* never started */
  check_empty(&st);
  CHECK(req != MPI_REQUEST_NULL);
  st.MPI_SOURCE = 77;
  CHECK_OK(MPI_Test(&req, &flag, &st));
  CHECK_EQ(flag, 1);
  check_empty(&st);
  flag = 0;
  CHECK_OK(MPI_Request_get_status(req, &flag, &st));
  CHECK_EQ(flag, 1);
  check_empty(&st);
  CHECK_OK(MPI_Start(&req));
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK_CLASS(MPI_Start(&req), MPI_ERR_REQUEST);        /* already active */
  CHECK_CLASS(MPI_Request_free(&req), MPI_ERR_REQUEST); /* active */
  CHECK_CLASS(MPI_Cancel(&req), MPI_ERR_REQUEST);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  do {
    CHECK_OK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
  } while (!flag);
  CHECK_EQ(x, size - 1);
  CHECK_OK(MPI_Wait(&req, &st)); /* inactive again */
  check_empty(&st);
  /* Waitany/Testany over inactive requests only: index UNDEFINED. */
  int index = 0;
  CHECK_OK(MPI_Waitany(1, &req, &index, &st));
  CHECK_EQ(index, MPI_UNDEFINED);
  CHECK_OK(MPI_Request_free(&req));
  /* Bad arguments at init name the problem. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK_CLASS(MPI_Bcast_init(&x, -1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &req), MPI_ERR_COUNT);
  CHECK_CLASS(MPI_Bcast_init(&x, 1, MPI_INT, size, MPI_COMM_WORLD, MPI_INFO_NULL, &req), MPI_ERR_ROOT);
  CHECK_CLASS(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, NULL), MPI_ERR_ARG);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* Neighbourhood forms on a periodic ring (with 1 or 2 ranks a neighbour
 * appears twice: use distinct values per direction only from 3 ranks). */
static void test_neighbor(void) {
  MPI_Comm ring;
  int dims[1] = {size}, periods[1] = {1};
  CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
  int left = (rank - 1 + size) % size, right = (rank + 1) % size;
  int sendv[2], recvv[2], one, counts[2] = {1, 1}, displs[2] = {0, 1};
  MPI_Aint bdispls[2] = {0, sizeof(int)};
  MPI_Datatype types[2] = {MPI_INT, MPI_INT};
  MPI_Request req[5];
  CHECK_OK(MPI_Neighbor_allgather_init(&one, 1, MPI_INT, recvv, 1, MPI_INT, ring, MPI_INFO_NULL, &req[0]));
  CHECK_OK(
      MPI_Neighbor_allgatherv_init(&one, 1, MPI_INT, recvv, counts, displs, MPI_INT, ring, MPI_INFO_NULL, &req[1]));
  CHECK_OK(MPI_Neighbor_alltoall_init(sendv, 1, MPI_INT, recvv, 1, MPI_INT, ring, MPI_INFO_NULL, &req[2]));
  CHECK_OK(MPI_Neighbor_alltoallv_init(sendv, counts, displs, MPI_INT, recvv, counts, displs, MPI_INT, ring,
                                       MPI_INFO_NULL, &req[3]));
  CHECK_OK(MPI_Neighbor_alltoallw_init(sendv, counts, bdispls, types, recvv, counts, bdispls, types, ring,
                                       MPI_INFO_NULL, &req[4]));
  for (int round = 0; round < ROUNDS; ++round) {
    for (int k = 0; k < 2; ++k) {
      one = 1000 * round + rank;
      recvv[0] = recvv[1] = -1;
      CHECK_OK(MPI_Start(&req[k]));
      CHECK_OK(MPI_Wait(&req[k], MPI_STATUS_IGNORE));
      CHECK_EQ(recvv[0], 1000 * round + left);
      CHECK_EQ(recvv[1], 1000 * round + right);
    }
    for (int k = 2; k < 5; ++k) {
      /* block 0 goes to the left neighbour, block 1 to the right one */
      sendv[0] = sendv[1] = 1000 * round + rank;
      recvv[0] = recvv[1] = -1;
      CHECK_OK(MPI_Start(&req[k]));
      CHECK_OK(MPI_Wait(&req[k], MPI_STATUS_IGNORE));
      CHECK_EQ(recvv[0], 1000 * round + left);
      CHECK_EQ(recvv[1], 1000 * round + right);
    }
  }
  for (int k = 0; k < 5; ++k) CHECK_OK(MPI_Request_free(&req[k]));
  CHECK_OK(MPI_Comm_free(&ring));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size > 8) {
    if (rank == 0) printf("persistent_coll: at most 8 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  test_rooted();
  test_all();
  test_derived_type_lifetime();
  test_inactive();
  test_neighbor();
  return mt_finish();
}
