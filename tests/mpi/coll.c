/* Collectives against a serial reference: each rank's data is a function of
 * (rank, index, round), so every rank computes the expected result alone.
 * Random counts and roots (the same on all ranks), blocking and
 * nonblocking, in place, user-defined operations, MINLOC. */
#include "mpitest.h"

static int rank, size;

static long val(int r, int i, int round) { return (long)r * 131 + i * 7 + round * 1009; }

static void test_bcast_reduce(int round, int n, int root, int nonblocking) {
  long *buf = malloc(sizeof(long) * (size_t)(n + 1)), *out = malloc(sizeof(long) * (size_t)(n + 1));
  MPI_Request req;
  for (int i = 0; i < n; ++i) buf[i] = rank == root ? val(root, i, round) : -1;
  if (nonblocking) {
    CHECK_OK(MPI_Ibcast(buf, n, MPI_LONG, root, MPI_COMM_WORLD, &req));
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  } else {
    CHECK_OK(MPI_Bcast(buf, n, MPI_LONG, root, MPI_COMM_WORLD));
  }
  for (int i = 0; i < n; ++i) CHECK_EQ(buf[i], val(root, i, round));
  for (int i = 0; i < n; ++i) buf[i] = val(rank, i, round);
  if (nonblocking) {
    CHECK_OK(MPI_Ireduce(buf, out, n, MPI_LONG, MPI_SUM, root, MPI_COMM_WORLD, &req));
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  } else {
    CHECK_OK(MPI_Reduce(buf, out, n, MPI_LONG, MPI_SUM, root, MPI_COMM_WORLD));
  }
  if (rank == root) {
    for (int i = 0; i < n; ++i) {
      long want = 0;
      for (int r = 0; r < size; ++r) want += val(r, i, round);
      CHECK_EQ(out[i], want);
    }
  }
  /* allreduce MAX, in place */
  for (int i = 0; i < n; ++i) out[i] = val(rank, i, round) % 1000;
  if (nonblocking) {
    CHECK_OK(MPI_Iallreduce(MPI_IN_PLACE, out, n, MPI_LONG, MPI_MAX, MPI_COMM_WORLD, &req));
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  } else {
    CHECK_OK(MPI_Allreduce(MPI_IN_PLACE, out, n, MPI_LONG, MPI_MAX, MPI_COMM_WORLD));
  }
  for (int i = 0; i < n; ++i) {
    long want = 0;
    for (int r = 0; r < size; ++r) want = val(r, i, round) % 1000 > want ? val(r, i, round) % 1000 : want;
    CHECK_EQ(out[i], want);
  }
  /* reduce in place at the root */
  for (int i = 0; i < n; ++i) buf[i] = val(rank, i, round);
  CHECK_OK(MPI_Reduce(rank == root ? MPI_IN_PLACE : buf, rank == root ? buf : NULL, n, MPI_LONG, MPI_SUM, root,
                      MPI_COMM_WORLD));
  if (rank == root)
    for (int i = 0; i < n; ++i) {
      long want = 0;
      for (int r = 0; r < size; ++r) want += val(r, i, round);
      CHECK_EQ(buf[i], want);
    }
  free(buf);
  free(out);
}

static void test_gather_scatter(int round, int n, int root, int nonblocking) {
  int total = n * size;
  long *mine = malloc(sizeof(long) * (size_t)(n + 1)), *all = malloc(sizeof(long) * (size_t)(total + 1));
  MPI_Request req;
  for (int i = 0; i < n; ++i) mine[i] = val(rank, i, round);
  if (nonblocking) {
    CHECK_OK(MPI_Igather(mine, n, MPI_LONG, all, n, MPI_LONG, root, MPI_COMM_WORLD, &req));
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  } else {
    CHECK_OK(MPI_Gather(mine, n, MPI_LONG, all, n, MPI_LONG, root, MPI_COMM_WORLD));
  }
  if (rank == root)
    for (int r = 0; r < size; ++r)
      for (int i = 0; i < n; ++i) CHECK_EQ(all[r * n + i], val(r, i, round));
  for (int i = 0; i < total; ++i) all[i] = -1;
  if (nonblocking) {
    CHECK_OK(MPI_Iallgather(mine, n, MPI_LONG, all, n, MPI_LONG, MPI_COMM_WORLD, &req));
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  } else {
    CHECK_OK(MPI_Allgather(mine, n, MPI_LONG, all, n, MPI_LONG, MPI_COMM_WORLD));
  }
  for (int r = 0; r < size; ++r)
    for (int i = 0; i < n; ++i) CHECK_EQ(all[r * n + i], val(r, i, round));
  /* scatter: rank r gets block r of the root's data */
  for (int i = 0; i < total; ++i) all[i] = rank == root ? val(i / (n ? n : 1), i % (n ? n : 1), round) : -1;
  for (int i = 0; i < n; ++i) mine[i] = -1;
  if (nonblocking) {
    CHECK_OK(MPI_Iscatter(all, n, MPI_LONG, mine, n, MPI_LONG, root, MPI_COMM_WORLD, &req));
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  } else {
    CHECK_OK(MPI_Scatter(all, n, MPI_LONG, mine, n, MPI_LONG, root, MPI_COMM_WORLD));
  }
  for (int i = 0; i < n; ++i) CHECK_EQ(mine[i], val(rank, i, round));
  /* alltoall: block j of rank r holds val(r, j*n+i) */
  long* send = malloc(sizeof(long) * (size_t)(total + 1));
  for (int i = 0; i < total; ++i) send[i] = val(rank, i, round);
  if (nonblocking) {
    CHECK_OK(MPI_Ialltoall(send, n, MPI_LONG, all, n, MPI_LONG, MPI_COMM_WORLD, &req));
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  } else {
    CHECK_OK(MPI_Alltoall(send, n, MPI_LONG, all, n, MPI_LONG, MPI_COMM_WORLD));
  }
  for (int r = 0; r < size; ++r)
    for (int i = 0; i < n; ++i) CHECK_EQ(all[r * n + i], val(r, rank * n + i, round));
  free(send);
  free(mine);
  free(all);
}

/* v-variants: rank r contributes (r + round) % 4 elements. */
static void test_v(int round, int root) {
  int counts[64] = {0}, displs[64] = {0}, total = 0;
  for (int r = 0; r < size; ++r) {
    counts[r] = (r + round) % 4;
    displs[r] = total + r; /* a gap of r elements before each block */
    total += counts[r] + r;
  }
  int mycount = counts[rank];
  long mine[4], *all = malloc(sizeof(long) * (size_t)(total + 1));
  for (int i = 0; i < mycount; ++i) mine[i] = val(rank, i, round);
  for (int i = 0; i < total; ++i) all[i] = -1;
  CHECK_OK(MPI_Gatherv(mine, mycount, MPI_LONG, all, counts, displs, MPI_LONG, root, MPI_COMM_WORLD));
  if (rank == root)
    for (int r = 0; r < size; ++r)
      for (int i = 0; i < counts[r]; ++i) CHECK_EQ(all[displs[r] + i], val(r, i, round));
  for (int i = 0; i < total; ++i) all[i] = -1;
  MPI_Request req;
  CHECK_OK(MPI_Iallgatherv(mine, mycount, MPI_LONG, all, counts, displs, MPI_LONG, MPI_COMM_WORLD, &req));
  CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  for (int r = 0; r < size; ++r)
    for (int i = 0; i < counts[r]; ++i) CHECK_EQ(all[displs[r] + i], val(r, i, round));
  CHECK_OK(MPI_Allgatherv(mine, mycount, MPI_LONG, all, counts, displs, MPI_LONG, MPI_COMM_WORLD));
  for (int r = 0; r < size; ++r)
    for (int i = 0; i < counts[r]; ++i) CHECK_EQ(all[displs[r] + i], val(r, i, round));
  /* scatterv back */
  for (int i = 0; i < 4; ++i) mine[i] = -1;
  CHECK_OK(MPI_Scatterv(all, counts, displs, MPI_LONG, mine, mycount, MPI_LONG, root, MPI_COMM_WORLD));
  for (int i = 0; i < mycount; ++i) CHECK_EQ(mine[i], val(rank, i, round));
  /* alltoallv: rank r sends (r + p) % 3 elements to p */
  int sc[64] = {0}, sd[64] = {0}, rc[64] = {0}, rd[64] = {0}, st = 0, rtot = 0;
  for (int p = 0; p < size; ++p) {
    sc[p] = (rank + p) % 3;
    sd[p] = st;
    st += sc[p];
    rc[p] = (p + rank) % 3;
    rd[p] = rtot;
    rtot += rc[p];
  }
  long *sb = malloc(sizeof(long) * (size_t)(st + 1)), *rb = malloc(sizeof(long) * (size_t)(rtot + 1));
  for (int p = 0; p < size; ++p)
    for (int i = 0; i < sc[p]; ++i) sb[sd[p] + i] = val(rank, p * 10 + i, round);
  CHECK_OK(MPI_Alltoallv(sb, sc, sd, MPI_LONG, rb, rc, rd, MPI_LONG, MPI_COMM_WORLD));
  for (int p = 0; p < size; ++p)
    for (int i = 0; i < rc[p]; ++i) CHECK_EQ(rb[rd[p] + i], val(p, rank * 10 + i, round));
  /* alltoallw with byte displacements and the same layout */
  int sdb[64] = {0}, rdb[64] = {0};
  MPI_Datatype types[64];
  for (int p = 0; p < size; ++p)
    sdb[p] = sd[p] * (int)sizeof(long), rdb[p] = rd[p] * (int)sizeof(long), types[p] = MPI_LONG;
  for (int i = 0; i < rtot; ++i) rb[i] = -1;
  CHECK_OK(MPI_Alltoallw(sb, sc, sdb, types, rb, rc, rdb, types, MPI_COMM_WORLD));
  for (int p = 0; p < size; ++p)
    for (int i = 0; i < rc[p]; ++i) CHECK_EQ(rb[rd[p] + i], val(p, rank * 10 + i, round));
  free(sb);
  free(rb);
  free(all);
}

static void test_scans(int round, int n) {
  long *in = calloc((size_t)(n * size + 4), sizeof(long)), *out = calloc((size_t)(n * size + 4), sizeof(long));
  for (int i = 0; i < n; ++i) in[i] = val(rank, i, round);
  CHECK_OK(MPI_Scan(in, out, n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
  for (int i = 0; i < n; ++i) {
    long want = 0;
    for (int r = 0; r <= rank; ++r) want += val(r, i, round);
    CHECK_EQ(out[i], want);
  }
  CHECK_OK(MPI_Exscan(in, out, n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
  if (rank > 0)
    for (int i = 0; i < n; ++i) {
      long want = 0;
      for (int r = 0; r < rank; ++r) want += val(r, i, round);
      CHECK_EQ(out[i], want);
    }
  /* reduce_scatter_block: block r of the sum goes to rank r */
  for (int i = 0; i < n * size; ++i) in[i] = val(rank, i, round);
  CHECK_OK(MPI_Reduce_scatter_block(in, out, n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
  for (int i = 0; i < n; ++i) {
    long want = 0;
    for (int r = 0; r < size; ++r) want += val(r, rank * n + i, round);
    CHECK_EQ(out[i], want);
  }
  int counts[64] = {0}, total = 0, before = 0;
  for (int r = 0; r < size; ++r) {
    counts[r] = (r + round) % 3;
    if (r < rank) before += counts[r];
    total += counts[r];
  }
  long* big = malloc(sizeof(long) * (size_t)(total + 1));
  for (int i = 0; i < total; ++i) big[i] = val(rank, i, round);
  CHECK_OK(MPI_Reduce_scatter(big, out, counts, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
  for (int i = 0; i < counts[rank]; ++i) {
    long want = 0;
    for (int r = 0; r < size; ++r) want += val(r, before + i, round);
    CHECK_EQ(out[i], want);
  }
  free(big);
  free(in);
  free(out);
}

/* A non-commutative user op: 2x2 matrix product, order must be by rank. */
static void matmul(void* invec, void* inoutvec, int* len, MPI_Datatype* dt) {
  long *a = invec, *b = inoutvec;
  int sz;
  MPI_Type_size(*dt, &sz);
  CHECK_EQ(sz, 4 * (int)sizeof(long));
  for (int k = 0; k < *len; ++k, a += 4, b += 4) {
    long c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
                 a[2] * b[1] + a[3] * b[3]};
    memcpy(b, c, sizeof c);
  }
}

static void test_user_op(void) {
  MPI_Op op;
  MPI_Datatype mat;
  CHECK_OK(MPI_Type_contiguous(4, MPI_LONG, &mat));
  CHECK_OK(MPI_Type_commit(&mat));
  CHECK_OK(MPI_Op_create(matmul, 0, &op));
  int commute = 1;
  CHECK_OK(MPI_Op_commutative(op, &commute));
  CHECK_EQ(commute, 0);
  long m[4] = {1, rank + 1, 0, 1}, out[4] = {0};
  CHECK_OK(MPI_Allreduce(m, out, 1, mat, op, MPI_COMM_WORLD));
  /* product of [[1, r+1],[0,1]] over r in order: [[1, sum(r+1)],[0,1]] */
  CHECK_EQ(out[0], 1);
  CHECK_EQ(out[1], (long)size * (size + 1) / 2);
  CHECK_EQ(out[3], 1);
  /* reduce_local: inout = in op inout */
  long a[4] = {1, 2, 0, 1}, b[4] = {1, 3, 0, 1};
  CHECK_OK(MPI_Reduce_local(a, b, 1, mat, op));
  CHECK_EQ(b[1], 5);
  CHECK_OK(MPI_Op_free(&op));
  CHECK(op == MPI_OP_NULL);
  MPI_Type_free(&mat);
  CHECK_OK(MPI_Op_commutative(MPI_SUM, &commute));
  CHECK_EQ(commute, 1);
}

/* A non-commutative op on a predefined pair type: (a, b) is the map
 * x -> a x + b, and in op inout composes them, so the result depends on
 * the rank order (the short allreduce runs it without a schedule). */
static void compose(void* invec, void* inoutvec, int* len, MPI_Datatype* dt) {
  (void)dt;
  int *f = invec, *g = inoutvec;
  for (int k = 0; k < *len; ++k, f += 2, g += 2) {
    g[1] = f[0] * g[1] + f[1];
    g[0] = f[0] * g[0];
  }
}

static void test_ordered_op_on_pairs(void) {
  MPI_Op op;
  CHECK_OK(MPI_Op_create(compose, 0, &op));
  int mine[4] = {2, rank, 3, 1}, out[4] = {0}, in_place[4];
  CHECK_OK(MPI_Allreduce(mine, out, 2, MPI_2INT, op, MPI_COMM_WORLD));
  memcpy(in_place, mine, sizeof mine);
  CHECK_OK(MPI_Allreduce(MPI_IN_PLACE, in_place, 2, MPI_2INT, op, MPI_COMM_WORLD));
  /* f_0 o f_1 o ... o f_{p-1}: b = sum over r of 2^r * r (ranks in order) */
  int a = 1, b = 0, a2 = 1, b2 = 0;
  for (int r = size - 1; r >= 0; --r) {
    b = 2 * b + r;
    a = 2 * a;
    b2 = 3 * b2 + 1;
    a2 = 3 * a2;
  }
  CHECK_EQ(out[0], a);
  CHECK_EQ(out[1], b);
  CHECK_EQ(out[2], a2);
  CHECK_EQ(out[3], b2);
  CHECK_EQ(in_place[1], b);
  CHECK_OK(MPI_Op_free(&op));
}

static void test_minloc(void) {
  struct {
    double v;
    int i;
  } in, out;
  in.v = (rank % 3) + 0.5;
  in.i = rank;
  CHECK_OK(MPI_Allreduce(&in, &out, 1, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD));
  CHECK(out.v == 0.5);
  CHECK_EQ(out.i, 0);
  CHECK_OK(MPI_Allreduce(&in, &out, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD));
  CHECK(out.v == (size >= 3 ? 2.5 : (size - 1) + 0.5));
  CHECK_EQ(out.i, size >= 3 ? 2 : size - 1);
  int x = rank % 2, y = 0;
  CHECK_OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD));
  CHECK_EQ(y, size > 1);
  unsigned bits = 1u << rank, all = 0;
  CHECK_OK(MPI_Allreduce(&bits, &all, 1, MPI_UNSIGNED, MPI_BOR, MPI_COMM_WORLD));
  CHECK_EQ(all, (1u << size) - 1);
  double p = 2, prod = 0;
  CHECK_OK(MPI_Allreduce(&p, &prod, 1, MPI_DOUBLE, MPI_PROD, MPI_COMM_WORLD));
  CHECK(prod == (double)(1u << size));
}

/* Collectives on a split communicator and several outstanding nonblocking
 * collectives at once. */
static void test_sub_and_overlap(void) {
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  int hs, hr;
  MPI_Comm_size(half, &hs);
  MPI_Comm_rank(half, &hr);
  int one = 1, sum = 0, s2 = 0, s3 = 0;
  MPI_Request r[3];
  CHECK_OK(MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, half, &r[0]));
  CHECK_OK(MPI_Ibarrier(MPI_COMM_WORLD, &r[1]));
  CHECK_OK(MPI_Iallreduce(&one, &s2, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[2]));
  CHECK_OK(MPI_Allreduce(&one, &s3, 1, MPI_INT, MPI_SUM, half));
  CHECK_OK(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
  CHECK_EQ(sum, hs);
  CHECK_EQ(s2, size);
  CHECK_EQ(s3, hs);
  CHECK_OK(MPI_Barrier(half));
  MPI_Comm_free(&half);
}

/* The nonblocking forms not used above, each against its blocking twin. */
static void test_nonblocking_rest(int root) {
  enum { N = 5 };
  long in[N * 64], a[N * 64], b[N * 64];
  int counts[64], displs[64];
  MPI_Datatype types[64];
  for (int i = 0; i < N * size; ++i) in[i] = val(rank, i, 77);
  for (int r = 0; r < size; ++r) counts[r] = N, displs[r] = r * N, types[r] = MPI_LONG;
  MPI_Request q;
#define SAME(blocking, nonblocking, n)                       \
  do {                                                       \
    memset(a, 0, sizeof a);                                  \
    memset(b, 0, sizeof b);                                  \
    CHECK_OK(blocking);                                      \
    CHECK_OK(nonblocking);                                   \
    CHECK_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));               \
    for (int i_ = 0; i_ < (n); ++i_) CHECK_EQ(a[i_], b[i_]); \
  } while (0)
  SAME(MPI_Gatherv(in, N, MPI_LONG, a, counts, displs, MPI_LONG, root, MPI_COMM_WORLD),
       MPI_Igatherv(in, N, MPI_LONG, b, counts, displs, MPI_LONG, root, MPI_COMM_WORLD, &q),
       rank == root ? N * size : 0);
  SAME(MPI_Scatterv(in, counts, displs, MPI_LONG, a, N, MPI_LONG, root, MPI_COMM_WORLD),
       MPI_Iscatterv(in, counts, displs, MPI_LONG, b, N, MPI_LONG, root, MPI_COMM_WORLD, &q), N);
  SAME(MPI_Alltoallv(in, counts, displs, MPI_LONG, a, counts, displs, MPI_LONG, MPI_COMM_WORLD),
       MPI_Ialltoallv(in, counts, displs, MPI_LONG, b, counts, displs, MPI_LONG, MPI_COMM_WORLD, &q), N * size);
  int bdispls[64];
  for (int r = 0; r < size; ++r) bdispls[r] = displs[r] * (int)sizeof(long);
  SAME(MPI_Alltoallw(in, counts, bdispls, types, a, counts, bdispls, types, MPI_COMM_WORLD),
       MPI_Ialltoallw(in, counts, bdispls, types, b, counts, bdispls, types, MPI_COMM_WORLD, &q), N * size);
  SAME(MPI_Reduce_scatter(in, a, counts, MPI_LONG, MPI_SUM, MPI_COMM_WORLD),
       MPI_Ireduce_scatter(in, b, counts, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &q), N);
  SAME(MPI_Reduce_scatter_block(in, a, N, MPI_LONG, MPI_SUM, MPI_COMM_WORLD),
       MPI_Ireduce_scatter_block(in, b, N, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &q), N);
  SAME(MPI_Scan(in, a, N, MPI_LONG, MPI_SUM, MPI_COMM_WORLD),
       MPI_Iscan(in, b, N, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &q), N);
  SAME(MPI_Exscan(in, a, N, MPI_LONG, MPI_SUM, MPI_COMM_WORLD),
       MPI_Iexscan(in, b, N, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &q), rank > 0 ? N : 0);
#undef SAME
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  unsigned seed = 12345;
  const int rounds = 12;
  for (int round = 0; round < rounds; ++round) {
    /* mostly small counts, sometimes large (rendezvous) ones */
    int n = (int)(mt_rand(&seed) % 40);
    if (round % 4 == 3) n = 3000 + (int)(mt_rand(&seed) % 5000);
    if (round == 0) n = 0;
    int root = (int)(mt_rand(&seed) % (unsigned)size);
    int nb = round % 2;
    test_bcast_reduce(round, n, root, nb);
    test_gather_scatter(round, n, root, nb);
    test_v(round, root);
    test_scans(round, n);
  }
  test_user_op();
  test_ordered_op_on_pairs();
  test_minloc();
  test_sub_and_overlap();
  test_nonblocking_rest(size - 1);
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  return mt_finish();
}
