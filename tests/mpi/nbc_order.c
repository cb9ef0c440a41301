/* Nonblocking operations that must not wait for their peers before
 * returning (issue 16): nonblocking collectives on intercommunicators,
 * nonblocking neighbourhood collectives, MPI_Comm_idup(_with_info) started
 * in different orders by different ranks, and MPI_Comm_create_group next to
 * a pending idup. Each case makes one side start the operation, then wait
 * for a message the other side sends only before starting it: a call that
 * blocks until every peer joined deadlocks (mpiexec's timeout fails it).
 * Also intercommunicator reduce_scatter_block with groups of different
 * sizes (it crashed at 8-10 ranks). */
#include "mpitest.h"

static int rank, size;

/* ---- intercommunicators: even and odd world ranks ---- */

static void test_inter(void) {
  if (size < 2) return;
  int color = rank % 2;
  MPI_Comm local, inter;
  MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local);
  MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - color, 7, &inter);
  int lrank, lsize, rsize;
  MPI_Comm_rank(inter, &lrank);
  MPI_Comm_size(inter, &lsize);
  MPI_Comm_remote_size(inter, &rsize);

  /* The odd group starts the collective first and then sends to the even
   * group's rank 0, which waits for that before starting its part. */
  int v = color == 0 ? 31 : -1, token = 5;
  int root = color == 0 ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  MPI_Request q;
  if (color == 1) {
    CHECK_OK(MPI_Ibcast(&v, 1, MPI_INT, root, inter, &q));
    if (lrank == 0) CHECK_OK(MPI_Send(&token, 1, MPI_INT, 0, 99, MPI_COMM_WORLD));
    CHECK_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    CHECK_EQ(v, 31);
  } else {
    if (lrank == 0) CHECK_OK(MPI_Recv(&token, 1, MPI_INT, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Ibcast(&v, 1, MPI_INT, root, inter, &q));
    CHECK_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
  }

  /* Iallreduce and Ireduce_scatter_block, the even group first this time. */
  int sum = -1, other = 0;
  for (int i = 1 - color; i < size; i += 2) other += i;
  int out[64], got[64];
  for (int j = 0; j < lsize * rsize; ++j) out[j] = rank + j;
  MPI_Request qs[2];
  if (color == 0) {
    CHECK_OK(MPI_Iallreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, inter, &qs[0]));
    CHECK_OK(MPI_Ireduce_scatter_block(out, got, rsize, MPI_INT, MPI_SUM, inter, &qs[1]));
    if (lrank == 0) CHECK_OK(MPI_Send(&token, 1, MPI_INT, 1, 98, MPI_COMM_WORLD));
  } else {
    if (lrank == 0) CHECK_OK(MPI_Recv(&token, 1, MPI_INT, 0, 98, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Iallreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, inter, &qs[0]));
    CHECK_OK(MPI_Ireduce_scatter_block(out, got, rsize, MPI_INT, MPI_SUM, inter, &qs[1]));
  }
  CHECK_OK(MPI_Waitall(2, qs, MPI_STATUSES_IGNORE));
  CHECK_EQ(sum, other);
  for (int i = 0; i < rsize; ++i) CHECK_EQ(got[i], other + rsize * (lrank * rsize + i));

  /* Blocking reduce_scatter_block with 1024 elements per block (the long
   * vectors of the suite's program) and the groups' sizes differing. */
  int rc = 1024 * rsize, n = rc * lsize;
  long long* big = (long long*)malloc(sizeof(long long) * (size_t)n);
  long long* res = (long long*)malloc(sizeof(long long) * (size_t)rc);
  for (int j = 0; j < n; ++j) big[j] = (long long)lrank * n + j;
  CHECK_OK(MPI_Reduce_scatter_block(big, res, rc, MPI_LONG_LONG, MPI_SUM, inter));
  long long rn = (long long)rc * lsize; /* the remote vectors' length is the same */
  int bad = 0;
  for (int i = 0; i < rc; ++i) {
    long long want = rn * ((long long)rsize * (rsize - 1) / 2) + (long long)(lrank * rc + i) * rsize;
    if (res[i] != want) ++bad;
  }
  CHECK_EQ(bad, 0);
  free(big);
  free(res);

  /* Igather to the odd root while the even group waits first. */
  int all[64];
  root = color == 1 ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  if (color == 1) {
    CHECK_OK(MPI_Igather(NULL, 0, MPI_INT, all, 1, MPI_INT, root, inter, &q));
    if (lrank == 0) CHECK_OK(MPI_Send(&token, 1, MPI_INT, 0, 97, MPI_COMM_WORLD));
  } else {
    if (lrank == 0) CHECK_OK(MPI_Recv(&token, 1, MPI_INT, 1, 97, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Igather(&rank, 1, MPI_INT, NULL, 0, MPI_INT, root, inter, &q));
  }
  CHECK_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
  if (color == 1 && lrank == 0)
    for (int i = 0; i < rsize; ++i) CHECK_EQ(all[i], 2 * i);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
}

/* ---- neighbourhood collectives on a ring ---- */

static void test_neighbors(void) {
  int dims[1] = {size}, periods[1] = {1};
  MPI_Comm ring;
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
  int left = (rank - 1 + size) % size, right = (rank + 1) % size;
  /* Every rank starts its part, then passes a token around the ring: rank
   * r waits for r-1's token before passing it on, so rank size-1 starts
   * ... before rank 0 has finished, and rank 0 waits last. */
  int send[2] = {rank * 10, rank * 10 + 1}, recv[2] = {-1, -1}, token = 0;
  MPI_Request q;
  CHECK_OK(MPI_Ineighbor_alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, ring, &q));
  if (size > 1) {
    if (rank == 0) {
      CHECK_OK(MPI_Send(&token, 1, MPI_INT, right, 3, MPI_COMM_WORLD));
      CHECK_OK(MPI_Recv(&token, 1, MPI_INT, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else {
      CHECK_OK(MPI_Recv(&token, 1, MPI_INT, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      CHECK_OK(MPI_Send(&token, 1, MPI_INT, right, 3, MPI_COMM_WORLD));
    }
  }
  CHECK_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
  CHECK_EQ(recv[0], left * 10 + 1);
  CHECK_EQ(recv[1], right * 10);
  /* A rank that starts late: the last one receives a message from rank 0,
   * sent after rank 0 started its Ineighbor_allgather. */
  int g[2] = {-1, -1};
  if (rank == size - 1 && size > 1) {
    CHECK_OK(MPI_Recv(&token, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Ineighbor_allgather(&rank, 1, MPI_INT, g, 1, MPI_INT, ring, &q));
  } else {
    CHECK_OK(MPI_Ineighbor_allgather(&rank, 1, MPI_INT, g, 1, MPI_INT, ring, &q));
    if (rank == 0 && size > 1) CHECK_OK(MPI_Send(&token, 1, MPI_INT, size - 1, 4, MPI_COMM_WORLD));
  }
  CHECK_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
  CHECK_EQ(g[0], left);
  CHECK_EQ(g[1], right);
  MPI_Comm_free(&ring);
}

/* ---- MPI_Comm_idup in different orders ---- */

static void check_dup(MPI_Comm c, MPI_Comm orig) {
  int r = -1, n = 0, res = -1;
  MPI_Comm_rank(c, &r);
  MPI_Comm_size(c, &n);
  MPI_Comm_compare(c, orig, &res);
  CHECK_EQ(res, MPI_CONGRUENT);
  int sum = 0;
  CHECK_OK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, c));
  CHECK_EQ(sum, n * (n - 1) / 2);
}

static void test_idup(void) {
  /* Two parents: even ranks dup A then B, odd ranks B then A. */
  MPI_Comm a, b, da, db;
  MPI_Comm_dup(MPI_COMM_WORLD, &a);
  MPI_Comm_dup(MPI_COMM_WORLD, &b);
  MPI_Request q[2];
  if (rank % 2 == 0) {
    CHECK_OK(MPI_Comm_idup(a, &da, &q[0]));
    CHECK_OK(MPI_Comm_idup(b, &db, &q[1]));
  } else {
    CHECK_OK(MPI_Comm_idup(b, &db, &q[1]));
    CHECK_OK(MPI_Comm_idup(a, &da, &q[0]));
  }
  CHECK_OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
  check_dup(da, a);
  check_dup(db, b);
  MPI_Comm_free(&da);
  MPI_Comm_free(&db);

  /* Overlapped with point-to-point: rank 0 starts the idup, then sends to
   * the last rank, which waits for that before it starts its own idup. */
  MPI_Comm d;
  MPI_Request r;
  int token = 1;
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
  if (rank == 0) {
    CHECK_OK(MPI_Comm_idup_with_info(a, info, &d, &r));
    if (size > 1) CHECK_OK(MPI_Send(&token, 1, MPI_INT, size - 1, 5, MPI_COMM_WORLD));
  } else {
    if (rank == size - 1) CHECK_OK(MPI_Recv(&token, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Comm_idup_with_info(a, info, &d, &r));
  }
  CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  MPI_Info_free(&info);
  check_dup(d, a);
  MPI_Comm_free(&d);

  /* Several idups of one parent plus a nonblocking collective on it, all
   * pending together, completed in reverse order. */
  MPI_Comm ds[3];
  MPI_Request rs[4];
  int x = rank, y = -1;
  for (int i = 0; i < 3; ++i) CHECK_OK(MPI_Comm_idup(a, &ds[i], &rs[i]));
  CHECK_OK(MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_MAX, a, &rs[3]));
  for (int i = 3; i >= 0; --i) CHECK_OK(MPI_Wait(&rs[i], MPI_STATUS_IGNORE));
  CHECK_EQ(y, size - 1);
  for (int i = 0; i < 3; ++i) {
    check_dup(ds[i], a);
    MPI_Comm_free(&ds[i]);
  }

  /* MPI_Comm_create_group of the even ranks while an idup of the same
   * parent is pending: the odd ranks complete the idup first. */
  MPI_Group wg, evens;
  MPI_Comm_group(a, &wg);
  int ranges[1][3] = {{0, size - 1, 2}};
  MPI_Group_range_incl(wg, 1, ranges, &evens);
  MPI_Comm e = MPI_COMM_NULL;
  CHECK_OK(MPI_Comm_idup(a, &d, &r));
  if (rank % 2 == 0) {
    CHECK_OK(MPI_Comm_create_group(a, evens, 12, &e));
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    int n = 0;
    MPI_Comm_size(e, &n);
    CHECK_EQ(n, (size + 1) / 2);
    MPI_Comm_free(&e);
  } else {
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  }
  check_dup(d, a);
  MPI_Comm_free(&d);
  MPI_Group_free(&evens);
  MPI_Group_free(&wg);
  MPI_Comm_free(&a);
  MPI_Comm_free(&b);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  test_inter();
  test_neighbors();
  test_idup();
  return mt_finish();
}
