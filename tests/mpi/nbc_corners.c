/* Neighbourhood and nonblocking collectives a conformance suite probes:
 * on a non-periodic 1-D Cartesian topology (MPI_PROC_NULL neighbours at
 * the ends leave their blocks untouched) MPI_Neighbor_allgather/alltoall,
 * MPI_Ineighbor_allgatherv with reversed displacements and
 * MPI_(I)neighbor_alltoallw with a different type per neighbour; every
 * predefined op on every integer and floating type (complex for SUM/PROD)
 * through MPI_Iallreduce/Ireduce/Iscan against MPI_Allreduce; MINLOC/MAXLOC
 * on each pair type; MPI_(I)exscan leaving rank 0's buffer alone,
 * MPI_IN_PLACE in exscan, gatherv/scatterv at the root, alltoallv and
 * ialltoall; reduce_scatter with zero counts; zero-count calls with null
 * buffers. */
#include "mpitest.h"

static int rank, size;

/* 1-D non-periodic cart: neighbours left (PROC_NULL at 0) and right */
static void cart_neighbors(void) {
  MPI_Comm c;
  int dims[1] = {size}, per[1] = {0};
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 0, &c);
  int left = rank - 1, right = rank + 1 >= size ? MPI_PROC_NULL : rank + 1;
  if (left < 0) left = MPI_PROC_NULL;
  int sb[2] = {rank * 10, rank * 10 + 1}, rb[2] = {-7, -7};
  /* allgather: rb[0] from left, rb[1] from right */
  CHECK_OK(MPI_Neighbor_allgather(sb, 1, MPI_INT, rb, 1, MPI_INT, c));
  CHECK_EQ(rb[0], left == MPI_PROC_NULL ? -7 : left * 10);
  CHECK_EQ(rb[1], right == MPI_PROC_NULL ? -7 : right * 10);
  rb[0] = rb[1] = -7;
  CHECK_OK(MPI_Neighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, c));
  /* to left I send sb[0]; left's sb[1] goes to me (its right) */
  CHECK_EQ(rb[0], left == MPI_PROC_NULL ? -7 : left * 10 + 1);
  CHECK_EQ(rb[1], right == MPI_PROC_NULL ? -7 : right * 10);
  /* allgatherv with displacements reversed */
  int counts[2] = {1, 1}, displs[2] = {1, 0};
  rb[0] = rb[1] = -7;
  MPI_Request r;
  CHECK_OK(MPI_Ineighbor_allgatherv(sb, 1, MPI_INT, rb, counts, displs, MPI_INT, c, &r));
  CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  CHECK_EQ(rb[1], left == MPI_PROC_NULL ? -7 : left * 10);
  CHECK_EQ(rb[0], right == MPI_PROC_NULL ? -7 : right * 10);
  /* alltoallw with different types per neighbour: to left a short pair, to right a double */
  struct {
    short s[2];
    double d;
  } snd = {{(short)rank, (short)(rank + 100)}, rank + 0.5}, rcv;
  memset(&rcv, 0xff, sizeof rcv);
  int sc[2] = {2, 1}, rc[2] = {1, 2};
  MPI_Aint sd[2] = {0, 8}, rd[2] = {8, 0};
  MPI_Datatype st[2] = {MPI_SHORT, MPI_DOUBLE}, rt[2] = {MPI_DOUBLE, MPI_SHORT};
  CHECK_OK(MPI_Ineighbor_alltoallw(&snd, sc, sd, st, &rcv, rc, rd, rt, c, &r));
  CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  /* from left I get its message to its right: a double (left + .5) at offset 8 */
  if (left != MPI_PROC_NULL) CHECK(rcv.d == left + 0.5);
  if (right != MPI_PROC_NULL) {
    CHECK_EQ(rcv.s[0], right);
    CHECK_EQ(rcv.s[1], right + 100);
  }
  CHECK_OK(MPI_Neighbor_alltoallw(&snd, sc, sd, st, &rcv, rc, rd, rt, c));
  MPI_Comm_free(&c);
}

/* nonblocking collectives vs blocking on every op/type */
static void nbc_ops(void) {
  MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_LAND, MPI_LOR, MPI_LXOR};
  MPI_Datatype types[] = {MPI_INT,     MPI_UNSIGNED, MPI_LONG,      MPI_SHORT,      MPI_UNSIGNED_CHAR,
                          MPI_INT64_T, MPI_UINT16_T, MPI_LONG_LONG, MPI_SIGNED_CHAR};
  for (unsigned o = 0; o < sizeof ops / sizeof ops[0]; ++o)
    for (unsigned t = 0; t < sizeof types / sizeof types[0]; ++t) {
      long long in[8], a[8], b[8], c[8], d[8];
      for (int i = 0; i < 8; ++i) in[i] = (long long)((rank + 1) * 3 + i * 7) * 0x0101010101010101LL;
      memset(a, 0, sizeof a);
      memset(b, 0, sizeof b);
      memset(c, 0, sizeof c);
      memset(d, 0, sizeof d);
      MPI_Request r[3];
      CHECK_OK(MPI_Allreduce(in, a, 5, types[t], ops[o], MPI_COMM_WORLD));
      CHECK_OK(MPI_Iallreduce(in, b, 5, types[t], ops[o], MPI_COMM_WORLD, &r[0]));
      CHECK_OK(MPI_Ireduce(in, c, 5, types[t], ops[o], size - 1, MPI_COMM_WORLD, &r[1]));
      CHECK_OK(MPI_Iscan(in, d, 5, types[t], ops[o], MPI_COMM_WORLD, &r[2]));
      CHECK_OK(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
      CHECK(memcmp(a, b, sizeof a) == 0);
      if (rank == size - 1) {
        CHECK(memcmp(a, c, sizeof a) == 0);
        CHECK(memcmp(a, d, sizeof a) == 0);
      }
    }
  MPI_Datatype ft[] = {MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_C_DOUBLE_COMPLEX, MPI_C_FLOAT_COMPLEX};
  MPI_Op fops[] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN};
  for (unsigned o = 0; o < 4; ++o)
    for (unsigned t = 0; t < 5; ++t) {
      if (o >= 2 && t >= 3) continue;
      long double in[8], a[8], b[8];
      memset(in, 0, sizeof in);
      memset(a, 0, sizeof a);
      memset(b, 0, sizeof b);
      for (int i = 0; i < 8; ++i) {
        if (t == 0) ((float*)in)[i] = rank + i * 0.5f;
        if (t == 1) ((double*)in)[i] = rank + i * 0.5;
        if (t == 2) in[i] = rank + i * 0.5L;
        if (t == 3) ((double*)in)[i] = rank + i * 0.5;
        if (t == 4) ((float*)in)[i] = rank + i * 0.5f;
      }
      MPI_Request r;
      CHECK_OK(MPI_Allreduce(in, a, 3, ft[t], fops[o], MPI_COMM_WORLD));
      CHECK_OK(MPI_Iallreduce(in, b, 3, ft[t], fops[o], MPI_COMM_WORLD, &r));
      CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
      if (t == 2) /* long double: its padding bytes are not data */
        for (int i = 0; i < 3; ++i) CHECK(a[i] == b[i]);
      else
        CHECK(memcmp(a, b, sizeof a) == 0);
    }
  /* loc ops on every pair type */
  struct {
    float v;
    int i;
  } fi = {(float)(rank % 2), rank}, fo;
  CHECK_OK(MPI_Allreduce(&fi, &fo, 1, MPI_FLOAT_INT, MPI_MAXLOC, MPI_COMM_WORLD));
  CHECK_EQ(fo.i, size > 1 ? 1 : 0);
  struct {
    long v;
    int i;
  } li = {-(long)rank, rank}, lo;
  CHECK_OK(MPI_Allreduce(&li, &lo, 1, MPI_LONG_INT, MPI_MINLOC, MPI_COMM_WORLD));
  CHECK_EQ(lo.i, size - 1);
  struct {
    short v;
    int i;
  } si = {5, rank}, so;
  CHECK_OK(MPI_Allreduce(&si, &so, 1, MPI_SHORT_INT, MPI_MAXLOC, MPI_COMM_WORLD));
  CHECK_EQ(so.i, 0);
  struct {
    long double v;
    int i;
  } ldi = {1.0L, size - 1 - rank}, ldo;
  CHECK_OK(MPI_Allreduce(&ldi, &ldo, 1, MPI_LONG_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD));
  CHECK_EQ(ldo.i, 0);
  int ii[2] = {rank, rank}, io[2];
  CHECK_OK(MPI_Allreduce(ii, io, 1, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD));
  CHECK_EQ(io[0], size - 1);
}

static void misc_coll(void) {
  /* exscan rank 0 recv untouched; reduce_scatter zero counts */
  int in = rank + 1, out = -99;
  CHECK_OK(MPI_Exscan(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  if (rank == 0)
    CHECK_EQ(out, -99);
  else
    CHECK_EQ(out, rank * (rank + 1) / 2);
  out = -99;
  MPI_Request r;
  CHECK_OK(MPI_Iexscan(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r));
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  if (rank == 0) CHECK_EQ(out, -99);
  /* exscan in place */
  out = rank + 1;
  CHECK_OK(MPI_Exscan(MPI_IN_PLACE, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  if (rank > 0) CHECK_EQ(out, rank * (rank + 1) / 2);
  int *counts = malloc(sizeof(int) * size), sb[64], rb[8];
  for (int i = 0; i < size; ++i) counts[i] = i % 2;
  for (int i = 0; i < 64; ++i) sb[i] = i + rank;
  rb[0] = -5;
  CHECK_OK(MPI_Reduce_scatter(sb, rb, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  if (rank % 2) {
    int before = 0;
    for (int i = 0; i < rank; ++i) before += counts[i];
    CHECK_EQ(rb[0], size * before + size * (size - 1) / 2);
  } else
    CHECK_EQ(rb[0], -5);
  free(counts);
  /* gatherv in place at root */
  int* all = malloc(sizeof(int) * size * 2);
  int *rc = malloc(sizeof(int) * size), *dp = malloc(sizeof(int) * size);
  for (int i = 0; i < size; ++i) rc[i] = 1, dp[i] = size - 1 - i, all[i] = -1;
  int root = size - 1;
  if (rank == root) all[dp[root]] = 777;
  int mine = rank * 3;
  CHECK_OK(MPI_Gatherv(rank == root ? MPI_IN_PLACE : &mine, 1, MPI_INT, all, rc, dp, MPI_INT, root, MPI_COMM_WORLD));
  if (rank == root)
    for (int i = 0; i < size; ++i) CHECK_EQ(all[dp[i]], i == root ? 777 : i * 3);
  /* scatterv in place at root */
  for (int i = 0; i < size; ++i) all[dp[i]] = i * 5;
  mine = -1;
  CHECK_OK(MPI_Scatterv(all, rc, dp, MPI_INT, rank == root ? MPI_IN_PLACE : &mine, 1, MPI_INT, root, MPI_COMM_WORLD));
  if (rank != root) CHECK_EQ(mine, rank * 5);
  /* alltoallv in place */
  int* a2 = malloc(sizeof(int) * size);
  int *c2 = malloc(sizeof(int) * size), *d2 = malloc(sizeof(int) * size);
  for (int i = 0; i < size; ++i) a2[i] = rank * 100 + i, c2[i] = 1, d2[i] = i;
  CHECK_OK(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, a2, c2, d2, MPI_INT, MPI_COMM_WORLD));
  for (int i = 0; i < size; ++i) CHECK_EQ(a2[i], i * 100 + rank);
  for (int i = 0; i < size; ++i) a2[i] = rank * 100 + i;
  CHECK_OK(MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a2, 1, MPI_INT, MPI_COMM_WORLD, &r));
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  for (int i = 0; i < size; ++i) CHECK_EQ(a2[i], i * 100 + rank);
  free(a2), free(c2), free(d2), free(all), free(rc), free(dp);
  /* bcast of zero count with null buffer */
  CHECK_OK(MPI_Bcast(NULL, 0, MPI_INT, 0, MPI_COMM_WORLD));
  CHECK_OK(MPI_Allreduce(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  /* Reduce with MPI_IN_PLACE at non-root: sendbuf IN_PLACE is erroneous at non-root; skip */
  /* Barrier on COMM_SELF */
  CHECK_OK(MPI_Barrier(MPI_COMM_SELF));
  CHECK_OK(MPI_Ibarrier(MPI_COMM_SELF, &r));
  int flag = 0;
  while (!flag) MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  cart_neighbors();
  nbc_ops();
  misc_coll();
  return mt_finish();
}
