/* User operations in collectives a conformance suite probes (MPI 3.1
 * 5.9.5): the order a non-commutative user operation is applied in
 * (ascending rank) for every reduction, also over 80 KB (the large-message
 * algorithms) and on a communicator whose ranks run in reverse, and
 * Scan/Exscan with a commutative user operation. */
#include "mpitest.h"

static int rank, size;

/* ---- user operations ---- */

/* 2x2 matrices mod 10007: associative, not commutative. */
static void matmul(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  int* a = in;
  int* b = inout;
  for (int k = 0; k < *len; ++k, a += 4, b += 4) {
    int c[4];
    c[0] = (a[0] * b[0] + a[1] * b[2]) % 10007;
    c[1] = (a[0] * b[1] + a[1] * b[3]) % 10007;
    c[2] = (a[2] * b[0] + a[3] * b[2]) % 10007;
    c[3] = (a[2] * b[1] + a[3] * b[3]) % 10007;
    memcpy(b, c, sizeof c);
  }
}
static void mat_of(int r, int k, int* m) {
  m[0] = r + 2 + k;
  m[1] = 1;
  m[2] = r + k;
  m[3] = 3;
}
/* product M(lo) * ... * M(hi - 1), element k */
static void prefix(int lo, int hi, int k, int* out) {
  out[0] = 1, out[1] = 0, out[2] = 0, out[3] = 1;
  for (int r = hi - 1; r >= lo; --r) {
    int m[4], len = 1;
    mat_of(r, k, m);
    matmul(m, out, &len, NULL);
  }
}

static void check_mat(const int* got, const int* want) {
  for (int i = 0; i < 4; ++i) CHECK_EQ(got[i], want[i]);
}

static void noncommutative_order(void) {
  enum { C = 3 };
  MPI_Op op;
  MPI_Datatype mat;
  CHECK_OK(MPI_Type_contiguous(4, MPI_INT, &mat));
  CHECK_OK(MPI_Type_commit(&mat));
  CHECK_OK(MPI_Op_create(matmul, 0, &op));
  int commute = 1;
  CHECK_OK(MPI_Op_commutative(op, &commute));
  CHECK_EQ(commute, 0);
  int mine[C * 4], out[C * 4], want[4];
  for (int k = 0; k < C; ++k) mat_of(rank, k, mine + 4 * k);
  for (int root = 0; root<size; root += size> 2 ? size - 1 : 1) {
    for (int i = 0; i < C * 4; ++i) out[i] = -1;
    CHECK_OK(MPI_Reduce(mine, out, C, mat, op, root, MPI_COMM_WORLD));
    if (rank == root)
      for (int k = 0; k < C; ++k) {
        prefix(0, size, k, want);
        check_mat(out + 4 * k, want);
      }
  }
  CHECK_OK(MPI_Allreduce(mine, out, C, mat, op, MPI_COMM_WORLD));
  for (int k = 0; k < C; ++k) {
    prefix(0, size, k, want);
    check_mat(out + 4 * k, want);
  }
  MPI_Request rq;
  memcpy(out, mine, sizeof mine);
  CHECK_OK(MPI_Iallreduce(MPI_IN_PLACE, out, C, mat, op, MPI_COMM_WORLD, &rq));
  CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  for (int k = 0; k < C; ++k) {
    prefix(0, size, k, want);
    check_mat(out + 4 * k, want);
  }
  /* Scan and Exscan: prefixes in rank order */
  CHECK_OK(MPI_Scan(mine, out, C, mat, op, MPI_COMM_WORLD));
  for (int k = 0; k < C; ++k) {
    prefix(0, rank + 1, k, want);
    check_mat(out + 4 * k, want);
  }
  CHECK_OK(MPI_Iscan(mine, out, C, mat, op, MPI_COMM_WORLD, &rq));
  CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  for (int k = 0; k < C; ++k) {
    prefix(0, rank + 1, k, want);
    check_mat(out + 4 * k, want);
  }
  CHECK_OK(MPI_Exscan(mine, out, C, mat, op, MPI_COMM_WORLD));
  if (rank > 0)
    for (int k = 0; k < C; ++k) {
      prefix(0, rank, k, want);
      check_mat(out + 4 * k, want);
    }
  CHECK_OK(MPI_Iexscan(mine, out, C, mat, op, MPI_COMM_WORLD, &rq));
  CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  if (rank > 0)
    for (int k = 0; k < C; ++k) {
      prefix(0, rank, k, want);
      check_mat(out + 4 * k, want);
    }
  /* Reduce_scatter_block: block b of the product goes to rank b */
  int* big = malloc(sizeof(int) * 4 * (size_t)size);
  for (int b = 0; b < size; ++b) mat_of(rank, b, big + 4 * b);
  CHECK_OK(MPI_Reduce_scatter_block(big, out, 1, mat, op, MPI_COMM_WORLD));
  prefix(0, size, rank, want);
  check_mat(out, want);
  free(big);
  /* On a communicator in another rank order: the order is of that
   * communicator's ranks. */
  MPI_Comm rev;
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev));
  CHECK_OK(MPI_Allreduce(mine, out, 1, mat, op, rev));
  {
    int w[4] = {1, 0, 0, 1};
    for (int r = 0; r < size; ++r) { /* rev rank 0 is world rank size - 1 */
      int m[4], len = 1;
      mat_of(r, 0, m);
      matmul(m, w, &len, NULL);
    }
    check_mat(out, w);
  }
  CHECK_OK(MPI_Comm_free(&rev));
  CHECK_OK(MPI_Op_free(&op));
  CHECK(op == MPI_OP_NULL);
  MPI_Type_free(&mat);
}

/* The same order with many elements (80 KB): the large-message and
 * segmented algorithms must keep it too. */
static void noncommutative_large(void) {
  enum { C = 5000 };
  MPI_Op op;
  MPI_Datatype mat;
  MPI_Type_contiguous(4, MPI_INT, &mat);
  MPI_Type_commit(&mat);
  MPI_Op_create(matmul, 0, &op);
  int* mine = malloc(sizeof(int) * 4 * C);
  int* out = malloc(sizeof(int) * 4 * C);
  for (int k = 0; k < C; ++k) mat_of(rank, k, mine + 4 * k);
  for (int variant = 0; variant < 4; ++variant) {
    const int root = size - 1;
    memset(out, 0, sizeof(int) * 4 * C);
    MPI_Request rq;
    if (variant == 0) CHECK_OK(MPI_Allreduce(mine, out, C, mat, op, MPI_COMM_WORLD));
    if (variant == 1) CHECK_OK(MPI_Reduce(mine, out, C, mat, op, root, MPI_COMM_WORLD));
    if (variant == 2) {
      CHECK_OK(MPI_Iallreduce(mine, out, C, mat, op, MPI_COMM_WORLD, &rq));
      CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    }
    if (variant == 3) CHECK_OK(MPI_Scan(mine, out, C, mat, op, MPI_COMM_WORLD));
    if (variant == 1 && rank != root) continue;
    for (int k = 0; k < C; ++k) {
      int want[4];
      prefix(0, variant == 3 ? rank + 1 : size, k, want);
      if (memcmp(out + 4 * k, want, sizeof want) != 0) {
        mt_fail(__FILE__, __LINE__, "large non-commutative reduction (variant, element)", variant, k);
        break;
      }
    }
  }
  free(mine);
  free(out);
  MPI_Op_free(&op);
  MPI_Type_free(&mat);
}

/* A commutative user op in Scan / Exscan: max of absolute values, with the
 * element count the function is given summed over calls. */
static void absmax(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  const int* a = in;
  int* b = inout;
  for (int i = 0; i < *len; ++i) {
    int x = a[i] < 0 ? -a[i] : a[i], y = b[i] < 0 ? -b[i] : b[i];
    b[i] = x > y ? x : y;
  }
}

static void user_scans(void) {
  MPI_Op op;
  CHECK_OK(MPI_Op_create(absmax, 1, &op));
  int commute = 0;
  CHECK_OK(MPI_Op_commutative(op, &commute));
  CHECK_EQ(commute, 1);
  int mine[3] = {rank % 2 ? -rank * 3 : rank, -7, rank}, out[3] = {-1, -1, -1};
  CHECK_OK(MPI_Scan(mine, out, 3, MPI_INT, op, MPI_COMM_WORLD));
  {
    int w = 0;
    for (int r = 0; r <= rank; ++r) {
      int a = r % 2 ? r * 3 : r;
      w = a > w ? a : w;
    }
    CHECK_EQ(out[0], w);
  }
  CHECK_EQ(out[1], rank == 0 ? -7 : 7); /* rank 0's result is its input: the op never ran */
  CHECK_EQ(out[2], rank);
  CHECK_OK(MPI_Exscan(mine, out, 3, MPI_INT, op, MPI_COMM_WORLD));
  if (rank > 0) {
    int w = 0;
    for (int r = 0; r < rank; ++r) {
      int a = r % 2 ? r * 3 : r;
      w = a > w ? a : w;
    }
    CHECK_EQ(out[0], w);
    CHECK_EQ(out[1], rank == 1 ? -7 : 7);
    CHECK_EQ(out[2], rank - 1);
  }
  CHECK_OK(MPI_Op_free(&op));
  /* Predefined ops on MPI_Exscan with MPI_PROD / MPI_BAND */
  long p = rank + 1, pout = 0;
  CHECK_OK(MPI_Exscan(&p, &pout, 1, MPI_LONG, MPI_PROD, MPI_COMM_WORLD));
  if (rank > 0) {
    long w = 1;
    for (int r = 1; r <= rank; ++r) w *= r;
    CHECK_EQ(pout, w);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  noncommutative_order();
  noncommutative_large();
  user_scans();
  return mt_finish();
}
