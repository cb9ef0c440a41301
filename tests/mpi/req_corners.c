/* Request and status corners a conformance suite probes (MPI 3.1 3.7):
 * the empty status (MPI_SOURCE = MPI_ANY_SOURCE, MPI_TAG = MPI_ANY_TAG,
 * count 0) from waits and tests on MPI_REQUEST_NULL and inactive persistent
 * requests, MPI_UNDEFINED from Waitany / Testany / Waitsome / Testsome when
 * every request is null or inactive, persistent requests to MPI_PROC_NULL,
 * MPI_Request_get_status leaving the request alone, MPI_Startall, a cancelled
 * receive, MPI_Sendrecv_replace with MPI_PROC_NULL, and intercommunicator
 * v-collectives with MPI_ROOT and groups of different sizes. */
#include <string.h>

#include "mpitest.h"

static int rank, size;

static void check_empty(const MPI_Status* st) {
  int c = -1;
  CHECK_EQ(st->MPI_SOURCE, MPI_ANY_SOURCE);
  CHECK_EQ(st->MPI_TAG, MPI_ANY_TAG);
  MPI_Get_count(st, MPI_INT, &c);
  CHECK_EQ(c, 0);
  int e = -1;
  MPI_Get_elements(st, MPI_INT, &e);
  CHECK_EQ(e, 0);
  int cancelled = 1;
  MPI_Test_cancelled(st, &cancelled);
  CHECK_EQ(cancelled, 0);
}

static void null_and_inactive(void) {
  MPI_Status st;
  MPI_Request r = MPI_REQUEST_NULL;
  st.MPI_SOURCE = 5, st.MPI_TAG = 5;
  CHECK_OK(MPI_Wait(&r, &st));
  check_empty(&st);
  int flag = 0;
  st.MPI_SOURCE = 5, st.MPI_TAG = 5;
  CHECK_OK(MPI_Test(&r, &flag, &st));
  CHECK(flag);
  check_empty(&st);
  /* inactive persistent: empty status, request stays */
  int buf = 0;
  MPI_Request p;
  CHECK_OK(MPI_Recv_init(&buf, 1, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &p));
  st.MPI_SOURCE = 5, st.MPI_TAG = 5;
  CHECK_OK(MPI_Wait(&p, &st));
  CHECK(p != MPI_REQUEST_NULL);
  check_empty(&st);
  flag = 0;
  CHECK_OK(MPI_Test(&p, &flag, &st));
  CHECK(flag);
  check_empty(&st);
  /* Waitany / Testany / Waitsome / Testsome over null and inactive */
  MPI_Request rs[3] = {MPI_REQUEST_NULL, p, MPI_REQUEST_NULL};
  int idx = -5, outcount = -5, idxs[3];
  MPI_Status sts[3];
  CHECK_OK(MPI_Waitany(3, rs, &idx, &st));
  CHECK_EQ(idx, MPI_UNDEFINED);
  check_empty(&st);
  flag = 0;
  CHECK_OK(MPI_Testany(3, rs, &idx, &flag, &st));
  CHECK(flag);
  CHECK_EQ(idx, MPI_UNDEFINED);
  check_empty(&st);
  CHECK_OK(MPI_Waitsome(3, rs, &outcount, idxs, sts));
  CHECK_EQ(outcount, MPI_UNDEFINED);
  CHECK_OK(MPI_Testsome(3, rs, &outcount, idxs, sts));
  CHECK_EQ(outcount, MPI_UNDEFINED);
  flag = 0;
  CHECK_OK(MPI_Testall(3, rs, &flag, sts));
  CHECK(flag);
  CHECK_OK(MPI_Waitall(3, rs, sts));
  for (int i = 0; i < 3; ++i) check_empty(&sts[i]);
  CHECK(rs[1] == p);
  CHECK_OK(MPI_Waitany(0, NULL, &idx, &st));
  CHECK_EQ(idx, MPI_UNDEFINED);
  CHECK_OK(MPI_Request_free(&p));
  CHECK(p == MPI_REQUEST_NULL);
}

/* A set of plain sends and receives with MPI_REQUEST_NULL between them (the
   core's plain waitall path): the null entries get the empty status, the
   others their message's, and every handle becomes MPI_REQUEST_NULL. Statuses
   are filled with junk first, so a status left unwritten shows. */
static void plain_with_nulls(void) {
  enum { N = 8 };
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  int out[N], in[N];
  MPI_Request rs[2 * N + 2];
  MPI_Status sts[2 * N + 2];
  for (int round = 0; round < 2; ++round) {
    int k = 0;
    rs[k++] = MPI_REQUEST_NULL;
    for (int i = 0; i < N; ++i) {
      in[i] = -1;
      CHECK_OK(MPI_Irecv(&in[i], 1, MPI_INT, prev, 20 + i, MPI_COMM_WORLD, &rs[k++]));
    }
    rs[k++] = MPI_REQUEST_NULL;
    for (int i = 0; i < N; ++i) {
      out[i] = rank * 100 + i;
      CHECK_OK(MPI_Isend(&out[i], 1, MPI_INT, next, 20 + i, MPI_COMM_WORLD, &rs[k++]));
    }
    memset(sts, 0x5a, sizeof sts);
    if (round == 0) {
      CHECK_OK(MPI_Waitall(k, rs, sts));
    } else {
      int flag = 0;
      while (!flag) CHECK_OK(MPI_Testall(k, rs, &flag, sts));
    }
    for (int i = 0; i < k; ++i) CHECK(rs[i] == MPI_REQUEST_NULL);
    check_empty(&sts[0]);
    check_empty(&sts[N + 1]);
    for (int i = 0; i < N; ++i) {
      CHECK_EQ(in[i], prev * 100 + i);
      CHECK_EQ(sts[1 + i].MPI_SOURCE, prev);
      CHECK_EQ(sts[1 + i].MPI_TAG, 20 + i);
      int c = -1;
      MPI_Get_count(&sts[1 + i], MPI_INT, &c);
      CHECK_EQ(c, 1);
    }
  }
}

static void persistent_proc_null(void) {
  int b = 7;
  MPI_Request r[2];
  MPI_Status st[2];
  CHECK_OK(MPI_Send_init(&b, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &r[0]));
  CHECK_OK(MPI_Recv_init(&b, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &r[1]));
  for (int round = 0; round < 3; ++round) {
    CHECK_OK(MPI_Startall(2, r));
    CHECK_OK(MPI_Waitall(2, r, st));
    CHECK_EQ(st[1].MPI_SOURCE, MPI_PROC_NULL);
    CHECK_EQ(st[1].MPI_TAG, MPI_ANY_TAG);
    int c = -1;
    MPI_Get_count(&st[1], MPI_INT, &c);
    CHECK_EQ(c, 0);
  }
  CHECK_EQ(b, 7);
  MPI_Request_free(&r[0]);
  MPI_Request_free(&r[1]);
}

static void get_status_and_cancel(void) {
  int next = (rank + 1) % size, prev = (rank + size - 1) % size, out = rank, in = -1;
  MPI_Request r;
  MPI_Status st;
  int flag = 0;
  CHECK_OK(MPI_Irecv(&in, 1, MPI_INT, prev, 9, MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Send(&out, 1, MPI_INT, next, 9, MPI_COMM_WORLD));
  while (!flag) CHECK_OK(MPI_Request_get_status(r, &flag, &st));
  CHECK(r != MPI_REQUEST_NULL); /* not freed by get_status */
  CHECK_EQ(st.MPI_SOURCE, prev);
  CHECK_EQ(st.MPI_TAG, 9);
  CHECK_OK(MPI_Wait(&r, &st));
  CHECK_EQ(in, prev);
  CHECK_OK(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st));
  CHECK(flag);
  check_empty(&st);
  /* a receive nobody matches, cancelled */
  CHECK_OK(MPI_Irecv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Cancel(&r));
  CHECK_OK(MPI_Wait(&r, &st));
  int cancelled = 0;
  MPI_Test_cancelled(&st, &cancelled);
  CHECK(cancelled);
  /* Sendrecv_replace with MPI_PROC_NULL on both sides leaves the buffer */
  int v = 42;
  CHECK_OK(MPI_Sendrecv_replace(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
  CHECK_EQ(v, 42);
  CHECK_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
}

/* Intercommunicator v-collectives: group A = rank 0 (and 1 of 4), B = the rest. */
static void inter_v(void) {
  if (size < 2) return;
  const int na = size >= 4 ? 2 : 1, in_a = rank < na;
  MPI_Comm local, inter;
  MPI_Comm_split(MPI_COMM_WORLD, in_a, rank, &local);
  CHECK_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, in_a ? na : 0, 11, &inter));
  int lr, ls, rs;
  MPI_Comm_rank(inter, &lr);
  MPI_Comm_size(inter, &ls);
  MPI_Comm_remote_size(inter, &rs);
  int got[64], counts[16], displs[16], send[64];
  /* Allgatherv: remote rank j contributes j + 1 values, placed in reverse */
  for (int i = 0; i <= lr; ++i) send[i] = rank * 100 + i;
  int total = 0;
  for (int j = rs - 1; j >= 0; --j) {
    counts[j] = j + 1;
    displs[j] = total;
    total += counts[j];
  }
  for (int i = 0; i < 64; ++i) got[i] = -1;
  CHECK_OK(MPI_Allgatherv(send, lr + 1, MPI_INT, got, counts, displs, MPI_INT, inter));
  for (int j = 0; j < rs; ++j) {
    int world = in_a ? na + j : j;
    for (int i = 0; i <= j; ++i) CHECK_EQ(got[displs[j] + i], world * 100 + i);
  }
  /* Gatherv into A's rank 0 from every B rank (j + 1 values each) */
  if (in_a) {
    for (int i = 0; i < 64; ++i) got[i] = -1;
    CHECK_OK(MPI_Gatherv(NULL, 0, MPI_INT, got, counts, displs, MPI_INT, lr == 0 ? MPI_ROOT : MPI_PROC_NULL, inter));
    if (lr == 0)
      for (int j = 0; j < rs; ++j)
        for (int i = 0; i <= j; ++i) CHECK_EQ(got[displs[j] + i], (na + j) * 100 + i);
    /* Scatterv back: B rank j gets j + 1 values */
    for (int i = 0; i < total; ++i) send[i] = 5000 + i;
    CHECK_OK(MPI_Scatterv(send, counts, displs, MPI_INT, NULL, 0, MPI_INT, lr == 0 ? MPI_ROOT : MPI_PROC_NULL, inter));
  } else {
    CHECK_OK(MPI_Gatherv(send, lr + 1, MPI_INT, NULL, NULL, NULL, MPI_INT, 0, inter));
    for (int i = 0; i < 64; ++i) got[i] = -1;
    CHECK_OK(MPI_Scatterv(NULL, NULL, NULL, MPI_INT, got, lr + 1, MPI_INT, 0, inter));
    /* B's local rank lr sits at displs[lr] of A's layout (reverse order) */
    int start = 0; /* A laid B's blocks out last rank first */
    for (int j = lr + 1; j < ls; ++j) start += j + 1;
    for (int i = 0; i <= lr; ++i) CHECK_EQ(got[i], 5000 + start + i);
  }
  /* Alltoallv: to remote j, (lr + j) % 2 + 1 values */
  int sc[16], sd[16], rc[16], rd[16], st = 0, rt = 0;
  for (int j = 0; j < rs; ++j) {
    sc[j] = (lr + j) % 2 + 1;
    sd[j] = st;
    st += sc[j];
    rc[j] = (j + lr) % 2 + 1;
    rd[j] = rt;
    rt += rc[j];
  }
  for (int j = 0; j < rs; ++j)
    for (int i = 0; i < sc[j]; ++i) send[sd[j] + i] = rank * 1000 + j * 10 + i;
  for (int i = 0; i < 64; ++i) got[i] = -1;
  CHECK_OK(MPI_Alltoallv(send, sc, sd, MPI_INT, got, rc, rd, MPI_INT, inter));
  for (int j = 0; j < rs; ++j) {
    int world = in_a ? na + j : j;
    for (int i = 0; i < rc[j]; ++i) CHECK_EQ(got[rd[j] + i], world * 1000 + lr * 10 + i);
  }
  /* Iallreduce with groups of different sizes */
  int one = 1, sum = -1;
  MPI_Request r;
  CHECK_OK(MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, inter, &r));
  CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  CHECK_EQ(sum, rs);
  /* Reduce_scatter_block: both groups reduce vectors of ls * rs elements
   * (MPI 3.1 5.10.2: the count must agree), so recvcount is the remote
   * size; the other group's sum arrives in blocks of it. */
  int vec[64], blk[16], sremote = 0;
  for (int i = 0; i < ls * rs; ++i) vec[i] = rank + i;
  for (int j = 0; j < rs; ++j) sremote += in_a ? na + j : j;
  for (int i = 0; i < 16; ++i) blk[i] = -1;
  CHECK_OK(MPI_Reduce_scatter_block(vec, blk, rs, MPI_INT, MPI_SUM, inter));
  for (int k = 0; k < rs; ++k) CHECK_EQ(blk[k], sremote + rs * (lr * rs + k));
  /* Reduce_scatter with the same layout as counts */
  int rcounts[16];
  for (int i = 0; i < ls; ++i) rcounts[i] = rs;
  for (int i = 0; i < 16; ++i) blk[i] = -1;
  CHECK_OK(MPI_Reduce_scatter(vec, blk, rcounts, MPI_INT, MPI_SUM, inter));
  for (int k = 0; k < rs; ++k) CHECK_EQ(blk[k], sremote + rs * (lr * rs + k));
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  null_and_inactive();
  plain_with_nulls();
  persistent_proc_null();
  get_status_and_cancel();
  inter_v();
  return mt_finish();
}
