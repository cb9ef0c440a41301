/* Collective corners a conformance suite probes (MPI 3.1 chapter 5):
 * MPI_IN_PLACE in every collective that allows it (blocking and
 * nonblocking), zero counts (with NULL buffers), intercommunicator
 * collectives with MPI_ROOT / MPI_PROC_NULL roots, MPI_Alltoallw with
 * derived types, and nonblocking collectives mixed with point-to-point on
 * the same communicator. User operations: userop_corners.c. */
#include "mpitest.h"

static int rank, size;

static int v(int r, int i) { return r * 100 + i; }
static int sum_v(int i) {
  int s = 0;
  for (int r = 0; r < size; ++r) s += v(r, i);
  return s;
}

static void wait_or(int nb, MPI_Request* rq) {
  if (nb) CHECK_OK(MPI_Wait(rq, MPI_STATUS_IGNORE));
}

/* ---- MPI_IN_PLACE ---- */

static void in_place_reductions(int nb) {
  enum { N = 5 };
  int buf[N], all[200];
  MPI_Request rq = MPI_REQUEST_NULL;
  const int root = size - 1;
  /* Allreduce */
  for (int i = 0; i < N; ++i) buf[i] = v(rank, i);
  if (nb)
    CHECK_OK(MPI_Iallreduce(MPI_IN_PLACE, buf, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq));
  else
    CHECK_OK(MPI_Allreduce(MPI_IN_PLACE, buf, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  wait_or(nb, &rq);
  for (int i = 0; i < N; ++i) CHECK_EQ(buf[i], sum_v(i));
  /* Reduce: the root's data is in recvbuf */
  for (int i = 0; i < N; ++i) buf[i] = v(rank, i);
  void* sb = rank == root ? MPI_IN_PLACE : buf;
  void* rb = rank == root ? buf : NULL;
  if (nb)
    CHECK_OK(MPI_Ireduce(sb, rb, N, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, &rq));
  else
    CHECK_OK(MPI_Reduce(sb, rb, N, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
  wait_or(nb, &rq);
  if (rank == root)
    for (int i = 0; i < N; ++i) CHECK_EQ(buf[i], sum_v(i));
  /* Reduce_scatter_block: recvbuf holds the whole input */
  for (int i = 0; i < 2 * size; ++i) all[i] = v(rank, i);
  if (nb)
    CHECK_OK(MPI_Ireduce_scatter_block(MPI_IN_PLACE, all, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq));
  else
    CHECK_OK(MPI_Reduce_scatter_block(MPI_IN_PLACE, all, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  wait_or(nb, &rq);
  CHECK_EQ(all[0], sum_v(2 * rank));
  CHECK_EQ(all[1], sum_v(2 * rank + 1));
  /* Reduce_scatter with counts r + 1 (rank 0 gets 1, ...) */
  int counts[16], total = 0;
  for (int r = 0; r < size; ++r) total += (counts[r] = r + 1);
  for (int i = 0; i < total; ++i) all[i] = v(rank, i);
  if (nb)
    CHECK_OK(MPI_Ireduce_scatter(MPI_IN_PLACE, all, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq));
  else
    CHECK_OK(MPI_Reduce_scatter(MPI_IN_PLACE, all, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  wait_or(nb, &rq);
  int first = rank * (rank + 1) / 2;
  for (int i = 0; i < counts[rank]; ++i) CHECK_EQ(all[i], sum_v(first + i));
  /* Scan and Exscan */
  for (int i = 0; i < N; ++i) buf[i] = v(rank, i);
  if (nb)
    CHECK_OK(MPI_Iscan(MPI_IN_PLACE, buf, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq));
  else
    CHECK_OK(MPI_Scan(MPI_IN_PLACE, buf, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  wait_or(nb, &rq);
  for (int i = 0; i < N; ++i) {
    int want = 0;
    for (int r = 0; r <= rank; ++r) want += v(r, i);
    CHECK_EQ(buf[i], want);
  }
  for (int i = 0; i < N; ++i) buf[i] = v(rank, i);
  if (nb)
    CHECK_OK(MPI_Iexscan(MPI_IN_PLACE, buf, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq));
  else
    CHECK_OK(MPI_Exscan(MPI_IN_PLACE, buf, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  wait_or(nb, &rq);
  if (rank > 0)
    for (int i = 0; i < N; ++i) {
      int want = 0;
      for (int r = 0; r < rank; ++r) want += v(r, i);
      CHECK_EQ(buf[i], want);
    }
}

static void in_place_movement(int nb) {
  enum { K = 3 };
  int all[200], counts[16], displs[16], total = 0;
  MPI_Request rq = MPI_REQUEST_NULL;
  const int root = size / 2;
  /* Allgather: own block already in place */
  for (int i = 0; i < K * size; ++i) all[i] = i / K == rank ? v(rank, i % K) : -1;
  if (nb)
    CHECK_OK(MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, K, MPI_INT, MPI_COMM_WORLD, &rq));
  else
    CHECK_OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, K, MPI_INT, MPI_COMM_WORLD));
  wait_or(nb, &rq);
  for (int i = 0; i < K * size; ++i) CHECK_EQ(all[i], v(i / K, i % K));
  /* Allgatherv: rank r has r + 1 elements, blocks in reverse order */
  for (int r = 0; r < size; ++r) counts[r] = r + 1;
  for (int r = size - 1; r >= 0; --r) {
    displs[r] = total;
    total += counts[r];
  }
  for (int i = 0; i < total; ++i) all[i] = -1;
  for (int i = 0; i < counts[rank]; ++i) all[displs[rank] + i] = v(rank, i);
  if (nb)
    CHECK_OK(MPI_Iallgatherv(MPI_IN_PLACE, -5, MPI_DATATYPE_NULL, all, counts, displs, MPI_INT, MPI_COMM_WORLD, &rq));
  else
    CHECK_OK(MPI_Allgatherv(MPI_IN_PLACE, -5, MPI_DATATYPE_NULL, all, counts, displs, MPI_INT, MPI_COMM_WORLD));
  wait_or(nb, &rq);
  for (int r = 0; r < size; ++r)
    for (int i = 0; i < counts[r]; ++i) CHECK_EQ(all[displs[r] + i], v(r, i));
  /* Gather / Gatherv at the root in place */
  int mine[K];
  for (int i = 0; i < K; ++i) mine[i] = v(rank, i);
  for (int i = 0; i < K * size; ++i) all[i] = i / K == rank ? v(rank, i % K) : -1;
  if (rank == root) {
    if (nb)
      CHECK_OK(MPI_Igather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, K, MPI_INT, root, MPI_COMM_WORLD, &rq));
    else
      CHECK_OK(MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, K, MPI_INT, root, MPI_COMM_WORLD));
  } else {
    if (nb)
      CHECK_OK(MPI_Igather(mine, K, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD, &rq));
    else
      CHECK_OK(MPI_Gather(mine, K, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD));
  }
  wait_or(nb, &rq);
  if (rank == root)
    for (int i = 0; i < K * size; ++i) CHECK_EQ(all[i], v(i / K, i % K));
  for (int i = 0; i < total; ++i) all[i] = -1;
  for (int i = 0; i < counts[rank]; ++i) all[displs[rank] + i] = v(rank, i);
  if (rank == root) {
    if (nb)
      CHECK_OK(MPI_Igatherv(MPI_IN_PLACE, 0, MPI_INT, all, counts, displs, MPI_INT, root, MPI_COMM_WORLD, &rq));
    else
      CHECK_OK(MPI_Gatherv(MPI_IN_PLACE, 0, MPI_INT, all, counts, displs, MPI_INT, root, MPI_COMM_WORLD));
  } else {
    if (nb)
      CHECK_OK(MPI_Igatherv(all + displs[rank], counts[rank], MPI_INT, NULL, NULL, NULL, MPI_INT, root, MPI_COMM_WORLD,
                            &rq));
    else
      CHECK_OK(MPI_Gatherv(all + displs[rank], counts[rank], MPI_INT, NULL, NULL, NULL, MPI_INT, root, MPI_COMM_WORLD));
  }
  wait_or(nb, &rq);
  if (rank == root)
    for (int r = 0; r < size; ++r)
      for (int i = 0; i < counts[r]; ++i) CHECK_EQ(all[displs[r] + i], v(r, i));
  /* Scatter / Scatterv: the root keeps its block where it is */
  for (int i = 0; i < K * size; ++i) all[i] = rank == root ? v(i / K, i % K) : -1;
  for (int i = 0; i < K; ++i) mine[i] = -1;
  if (rank == root) {
    if (nb)
      CHECK_OK(MPI_Iscatter(all, K, MPI_INT, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD, &rq));
    else
      CHECK_OK(MPI_Scatter(all, K, MPI_INT, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD));
  } else {
    if (nb)
      CHECK_OK(MPI_Iscatter(NULL, 0, MPI_DATATYPE_NULL, mine, K, MPI_INT, root, MPI_COMM_WORLD, &rq));
    else
      CHECK_OK(MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, mine, K, MPI_INT, root, MPI_COMM_WORLD));
  }
  wait_or(nb, &rq);
  if (rank == root) {
    for (int i = 0; i < K * size; ++i) CHECK_EQ(all[i], v(i / K, i % K));
  } else {
    for (int i = 0; i < K; ++i) CHECK_EQ(mine[i], v(rank, i));
  }
  int scounts[16], sdispls[16];
  for (int r = 0; r < size; ++r) {
    scounts[r] = r % 3; /* zero for some ranks */
    sdispls[r] = K * (size - 1 - r);
  }
  for (int i = 0; i < K * size; ++i) all[i] = rank == root ? i * 11 : -1;
  for (int i = 0; i < K; ++i) mine[i] = -7;
  if (rank == root) {
    if (nb)
      CHECK_OK(MPI_Iscatterv(all, scounts, sdispls, MPI_INT, MPI_IN_PLACE, 0, MPI_INT, root, MPI_COMM_WORLD, &rq));
    else
      CHECK_OK(MPI_Scatterv(all, scounts, sdispls, MPI_INT, MPI_IN_PLACE, 0, MPI_INT, root, MPI_COMM_WORLD));
  } else {
    if (nb)
      CHECK_OK(MPI_Iscatterv(NULL, NULL, NULL, MPI_INT, mine, scounts[rank], MPI_INT, root, MPI_COMM_WORLD, &rq));
    else
      CHECK_OK(MPI_Scatterv(NULL, NULL, NULL, MPI_INT, mine, scounts[rank], MPI_INT, root, MPI_COMM_WORLD));
  }
  wait_or(nb, &rq);
  if (rank == root) {
    for (int i = 0; i < K * size; ++i) CHECK_EQ(all[i], i * 11);
  } else {
    for (int i = 0; i < scounts[rank]; ++i) CHECK_EQ(mine[i], (sdispls[rank] + i) * 11);
    for (int i = scounts[rank]; i < K; ++i) CHECK_EQ(mine[i], -7);
  }
}

static void in_place_alltoall(int nb) {
  enum { K = 2 };
  int all[K * 16], counts[16], displs[16], total = 0;
  MPI_Request rq = MPI_REQUEST_NULL;
  /* Alltoall: block j of rank r goes to rank j */
  for (int j = 0; j < size; ++j)
    for (int i = 0; i < K; ++i) all[j * K + i] = rank * 1000 + j * 10 + i;
  if (nb)
    CHECK_OK(MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, K, MPI_INT, MPI_COMM_WORLD, &rq));
  else
    CHECK_OK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, K, MPI_INT, MPI_COMM_WORLD));
  wait_or(nb, &rq);
  for (int j = 0; j < size; ++j)
    for (int i = 0; i < K; ++i) CHECK_EQ(all[j * K + i], j * 1000 + rank * 10 + i);
  /* Alltoallv: rank r exchanges (r + j) % 3 elements with rank j (symmetric), blocks reversed */
  for (int j = size - 1; j >= 0; --j) {
    counts[j] = (rank + j) % 3;
    displs[j] = total;
    total += counts[j];
  }
  for (int j = 0; j < size; ++j)
    for (int i = 0; i < counts[j]; ++i) all[displs[j] + i] = rank * 1000 + j * 10 + i;
  if (nb)
    CHECK_OK(
        MPI_Ialltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, all, counts, displs, MPI_INT, MPI_COMM_WORLD, &rq));
  else
    CHECK_OK(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, all, counts, displs, MPI_INT, MPI_COMM_WORLD));
  wait_or(nb, &rq);
  for (int j = 0; j < size; ++j)
    for (int i = 0; i < counts[j]; ++i) CHECK_EQ(all[displs[j] + i], j * 1000 + rank * 10 + i);
  /* Alltoallw: byte displacements, the same exchange */
  MPI_Datatype types[16];
  int bdispls[16];
  for (int j = 0; j < size; ++j) {
    types[j] = MPI_INT;
    bdispls[j] = displs[j] * (int)sizeof(int);
    for (int i = 0; i < counts[j]; ++i) all[displs[j] + i] = rank * 1000 + j * 10 + i;
  }
  if (nb)
    CHECK_OK(MPI_Ialltoallw(MPI_IN_PLACE, NULL, NULL, NULL, all, counts, bdispls, types, MPI_COMM_WORLD, &rq));
  else
    CHECK_OK(MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, all, counts, bdispls, types, MPI_COMM_WORLD));
  wait_or(nb, &rq);
  for (int j = 0; j < size; ++j)
    for (int i = 0; i < counts[j]; ++i) CHECK_EQ(all[displs[j] + i], j * 1000 + rank * 10 + i);
}

/* ---- zero counts ---- */

static void zero_counts(void) {
  int x = 42, counts[16] = {0}, displs[16] = {0};
  MPI_Datatype types[16];
  MPI_Request rq[8];
  for (int r = 0; r < size; ++r) types[r] = MPI_INT;
  CHECK_OK(MPI_Bcast(NULL, 0, MPI_INT, 0, MPI_COMM_WORLD));
  CHECK_OK(MPI_Allreduce(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  CHECK_OK(MPI_Reduce(NULL, NULL, 0, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
  CHECK_OK(MPI_Allgather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, MPI_COMM_WORLD));
  CHECK_OK(MPI_Gather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, 0, MPI_COMM_WORLD));
  CHECK_OK(MPI_Scatter(NULL, 0, MPI_INT, NULL, 0, MPI_INT, 0, MPI_COMM_WORLD));
  CHECK_OK(MPI_Alltoall(NULL, 0, MPI_INT, NULL, 0, MPI_INT, MPI_COMM_WORLD));
  CHECK_OK(MPI_Alltoallv(NULL, counts, displs, MPI_INT, NULL, counts, displs, MPI_INT, MPI_COMM_WORLD));
  CHECK_OK(MPI_Alltoallw(NULL, counts, displs, types, NULL, counts, displs, types, MPI_COMM_WORLD));
  CHECK_OK(MPI_Allgatherv(NULL, 0, MPI_INT, NULL, counts, displs, MPI_INT, MPI_COMM_WORLD));
  CHECK_OK(MPI_Reduce_scatter(NULL, NULL, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  CHECK_OK(MPI_Reduce_scatter_block(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  CHECK_OK(MPI_Scan(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  CHECK_OK(MPI_Exscan(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  CHECK_OK(MPI_Ibcast(NULL, 0, MPI_INT, 0, MPI_COMM_WORLD, &rq[0]));
  CHECK_OK(MPI_Iallreduce(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[1]));
  CHECK_OK(MPI_Ialltoallv(NULL, counts, displs, MPI_INT, NULL, counts, displs, MPI_INT, MPI_COMM_WORLD, &rq[2]));
  CHECK_OK(MPI_Iscan(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[3]));
  CHECK_OK(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
  /* Zero elements: the buffers are not touched. */
  int y = 43;
  CHECK_OK(MPI_Allreduce(&x, &y, 0, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
  CHECK_EQ(x, 42);
  CHECK_EQ(y, 43);
  /* Some ranks contribute nothing to a gatherv. */
  int all[16], one = rank;
  for (int r = 0; r < size; ++r) {
    counts[r] = r % 2;
    displs[r] = r;
    all[r] = -1;
  }
  CHECK_OK(MPI_Allgatherv(&one, counts[rank], MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD));
  for (int r = 0; r < size; ++r) CHECK_EQ(all[r], r % 2 ? r : -1);
}

/* ---- intercommunicators ---- */

static void inter_collectives(void) {
  if (size < 2) return;
  MPI_Comm local, inter;
  const int color = rank % 2;
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local));
  CHECK_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - color, 77, &inter));
  int lrank, lsize, rsize, flag = 0;
  MPI_Comm_rank(inter, &lrank);
  MPI_Comm_size(inter, &lsize);
  MPI_Comm_remote_size(inter, &rsize);
  CHECK_OK(MPI_Comm_test_inter(inter, &flag));
  CHECK(flag);
  /* Bcast from group 0's rank 0 to group 1; group 0's others: MPI_PROC_NULL */
  int buf[4] = {-1, -1, -1, -1};
  if (color == 0) {
    if (lrank == 0) buf[0] = 555, buf[3] = 556;
    CHECK_OK(MPI_Bcast(buf, 4, MPI_INT, lrank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter));
    if (lrank != 0) CHECK_EQ(buf[0], -1);
  } else {
    CHECK_OK(MPI_Bcast(buf, 4, MPI_INT, 0, inter));
    CHECK_EQ(buf[0], 555);
    CHECK_EQ(buf[3], 556);
  }
  /* Reduce into group 1's last rank: the sum of group 0's values */
  int mine = 1000 + rank, out = -1;
  const int root1 = (size / 2) - 1; /* group 1 has size / 2 ranks */
  if (color == 1) {
    CHECK_OK(MPI_Reduce(&mine, &out, 1, MPI_INT, MPI_SUM, lrank == root1 ? MPI_ROOT : MPI_PROC_NULL, inter));
    if (lrank == root1) {
      int want = 0;
      for (int r = 0; r < size; r += 2) want += 1000 + r;
      CHECK_EQ(out, want);
    } else {
      CHECK_EQ(out, -1);
    }
  } else {
    CHECK_OK(MPI_Reduce(&mine, NULL, 1, MPI_INT, MPI_SUM, root1, inter));
  }
  /* Allreduce: each group gets the other's sum */
  CHECK_OK(MPI_Allreduce(&mine, &out, 1, MPI_INT, MPI_SUM, inter));
  {
    int want = 0;
    for (int r = 1 - color; r < size; r += 2) want += 1000 + r;
    CHECK_EQ(out, want);
  }
  /* Allgather: the remote group's values in remote rank order */
  int got[16];
  CHECK_OK(MPI_Allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, inter));
  for (int i = 0; i < rsize; ++i) CHECK_EQ(got[i], 1000 + 2 * i + (1 - color));
  /* Alltoall: to remote rank j the value rank * 100 + j */
  int send[16];
  for (int j = 0; j < rsize; ++j) send[j] = rank * 100 + j;
  CHECK_OK(MPI_Alltoall(send, 1, MPI_INT, got, 1, MPI_INT, inter));
  for (int j = 0; j < rsize; ++j) CHECK_EQ(got[j], (2 * j + (1 - color)) * 100 + lrank);
  /* Gather into group 0's rank 0, scatter back from it */
  if (color == 0) {
    int root = lrank == 0 ? MPI_ROOT : MPI_PROC_NULL;
    for (int j = 0; j < rsize; ++j) got[j] = -1;
    CHECK_OK(MPI_Gather(NULL, 0, MPI_INT, got, 1, MPI_INT, root, inter));
    if (lrank == 0)
      for (int j = 0; j < rsize; ++j) CHECK_EQ(got[j], 1000 + 2 * j + 1);
    for (int j = 0; j < rsize; ++j) send[j] = 7000 + j;
    CHECK_OK(MPI_Scatter(send, 1, MPI_INT, NULL, 0, MPI_INT, root, inter));
  } else {
    CHECK_OK(MPI_Gather(&mine, 1, MPI_INT, NULL, 0, MPI_INT, 0, inter));
    out = -1;
    CHECK_OK(MPI_Scatter(NULL, 0, MPI_INT, &out, 1, MPI_INT, 0, inter));
    CHECK_EQ(out, 7000 + lrank);
  }
  /* Nonblocking: Ibarrier, Ibcast from group 1 with MPI_ROOT */
  MPI_Request rq[2];
  CHECK_OK(MPI_Ibarrier(inter, &rq[0]));
  buf[0] = -1;
  if (color == 1) {
    buf[0] = 99;
    CHECK_OK(MPI_Ibcast(buf, 1, MPI_INT, lrank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter, &rq[1]));
  } else {
    CHECK_OK(MPI_Ibcast(buf, 1, MPI_INT, 0, inter, &rq[1]));
  }
  CHECK_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
  CHECK_EQ(buf[0], 99);
  CHECK_OK(MPI_Barrier(inter));
  /* MPI_IN_PLACE is not allowed on an intercommunicator: an error, never
   * a read of the address it stands for */
  MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
  CHECK_CLASS(MPI_Allreduce(MPI_IN_PLACE, &out, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Alltoall(MPI_IN_PLACE, 1, MPI_INT, got, 1, MPI_INT, inter), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Allgather(MPI_IN_PLACE, 1, MPI_INT, got, 1, MPI_INT, inter), MPI_ERR_BUFFER);
  MPI_Request bad;
  CHECK_CLASS(MPI_Iallgather(MPI_IN_PLACE, 1, MPI_INT, got, 1, MPI_INT, inter, &bad), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Reduce_scatter_block(MPI_IN_PLACE, got, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_BUFFER);
  if (color == 1) { /* senders to group 0's rank 0 */
    CHECK_CLASS(MPI_Gather(MPI_IN_PLACE, 1, MPI_INT, NULL, 0, MPI_INT, 0, inter), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Reduce(MPI_IN_PLACE, NULL, 1, MPI_INT, MPI_SUM, 0, inter), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Scatter(NULL, 0, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, 0, inter), MPI_ERR_BUFFER);
  } else if (lrank == 0) {
    CHECK_CLASS(MPI_Gather(NULL, 0, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, MPI_ROOT, inter), MPI_ERR_BUFFER);
  }
  /* still in step after the refusals */
  CHECK_OK(MPI_Allreduce(&mine, &out, 1, MPI_INT, MPI_SUM, inter));
  CHECK_OK(MPI_Comm_free(&inter));
  CHECK_OK(MPI_Comm_free(&local));
}

/* ---- Alltoallw with derived types ---- */

static void alltoallw_derived(void) {
  /* To rank j: 2 ints picked with stride 3 from block j; received as a
   * contiguous pair at a byte displacement. */
  int src[16 * 6], dst[16 * 2 + 1];
  MPI_Datatype vec, pair;
  CHECK_OK(MPI_Type_vector(2, 1, 3, MPI_INT, &vec));
  CHECK_OK(MPI_Type_commit(&vec));
  CHECK_OK(MPI_Type_contiguous(2, MPI_INT, &pair));
  CHECK_OK(MPI_Type_commit(&pair));
  int sc[16], sd[16], rc[16], rd[16];
  MPI_Datatype st[16], rt[16];
  for (int j = 0; j < size; ++j) {
    for (int i = 0; i < 6; ++i) src[j * 6 + i] = rank * 1000 + j * 10 + i;
    sc[j] = 1;
    sd[j] = j * 6 * (int)sizeof(int);
    st[j] = vec;
    rc[j] = 1;
    rd[j] = (size - 1 - j) * 2 * (int)sizeof(int);
    rt[j] = pair;
  }
  for (int i = 0; i < 2 * size + 1; ++i) dst[i] = -1;
  CHECK_OK(MPI_Alltoallw(src, sc, sd, st, dst, rc, rd, rt, MPI_COMM_WORLD));
  for (int j = 0; j < size; ++j) {
    CHECK_EQ(dst[(size - 1 - j) * 2], j * 1000 + rank * 10 + 0);
    CHECK_EQ(dst[(size - 1 - j) * 2 + 1], j * 1000 + rank * 10 + 3);
  }
  CHECK_EQ(dst[2 * size], -1);
  /* Nonblocking with different types per peer: even peers get a pair,
   * odd peers two MPI_INTs. */
  MPI_Request rq;
  for (int j = 0; j < size; ++j) {
    st[j] = MPI_INT;
    sc[j] = 2;
    sd[j] = (j * 6 + 1) * (int)sizeof(int);
    rt[j] = (rank + j) % 2 ? MPI_INT : pair;
    rc[j] = (rank + j) % 2 ? 2 : 1;
  }
  for (int i = 0; i < 2 * size + 1; ++i) dst[i] = -1;
  CHECK_OK(MPI_Ialltoallw(src, sc, sd, st, dst, rc, rd, rt, MPI_COMM_WORLD, &rq));
  CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  for (int j = 0; j < size; ++j) {
    CHECK_EQ(dst[(size - 1 - j) * 2], j * 1000 + rank * 10 + 1);
    CHECK_EQ(dst[(size - 1 - j) * 2 + 1], j * 1000 + rank * 10 + 2);
  }
  MPI_Type_free(&vec);
  MPI_Type_free(&pair);
}

/* ---- nonblocking collectives beside point-to-point ---- */

static void nbc_with_p2p(void) {
  MPI_Request rq[6];
  int b = rank == 0 ? 31 : -1, s = rank, sum = -1, ring_in = -1, ring_in2 = -1;
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  int out1 = rank * 10 + 1, out2 = rank * 10 + 2;
  /* Posted in different orders on different ranks: collectives match by
   * order of calls per communicator, point-to-point by tag. */
  CHECK_OK(MPI_Irecv(&ring_in2, 1, MPI_INT, prev, 2, MPI_COMM_WORLD, &rq[0]));
  CHECK_OK(MPI_Ibcast(&b, 1, MPI_INT, 0, MPI_COMM_WORLD, &rq[1]));
  CHECK_OK(MPI_Isend(&out1, 1, MPI_INT, next, 1, MPI_COMM_WORLD, &rq[2]));
  CHECK_OK(MPI_Iallreduce(&s, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[3]));
  CHECK_OK(MPI_Isend(&out2, 1, MPI_INT, next, 2, MPI_COMM_WORLD, &rq[4]));
  CHECK_OK(MPI_Recv(&ring_in, 1, MPI_INT, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CHECK_OK(MPI_Ibarrier(MPI_COMM_WORLD, &rq[5]));
  /* complete in reverse */
  for (int i = 5; i >= 0; --i) CHECK_OK(MPI_Wait(&rq[i], MPI_STATUS_IGNORE));
  CHECK_EQ(b, 31);
  CHECK_EQ(sum, size * (size - 1) / 2);
  CHECK_EQ(ring_in, prev * 10 + 1);
  CHECK_EQ(ring_in2, prev * 10 + 2);
  /* Many outstanding, completed with Waitany / Testall */
  enum { M = 8 };
  int vals[M], res[M];
  MPI_Request many[M];
  for (int i = 0; i < M; ++i) {
    vals[i] = rank + i;
    CHECK_OK(MPI_Iallreduce(&vals[i], &res[i], 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &many[i]));
  }
  for (int k = 0; k < M; ++k) {
    int idx = -1;
    CHECK_OK(MPI_Waitany(M, many, &idx, MPI_STATUS_IGNORE));
    CHECK(idx >= 0 && idx < M);
  }
  for (int i = 0; i < M; ++i) CHECK_EQ(res[i], size - 1 + i);
  /* A collective request's status: MPI_Test on a done one is flag 1 */
  int flag = 0;
  MPI_Status st;
  CHECK_OK(MPI_Ibarrier(MPI_COMM_WORLD, &rq[0]));
  while (!flag) CHECK_OK(MPI_Test(&rq[0], &flag, &st));
  CHECK(rq[0] == MPI_REQUEST_NULL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size > 16) {
    if (rank == 0) printf("coll_corners: at most 16 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (int nb = 0; nb < 2; ++nb) {
    in_place_reductions(nb);
    in_place_movement(nb);
    in_place_alltoall(nb);
  }
  zero_counts();
  inter_collectives();
  alltoallw_derived();
  nbc_with_p2p();
  return mt_finish();
}
