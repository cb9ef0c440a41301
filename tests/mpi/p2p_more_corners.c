/* Point-to-point corners an outside conformance suite reaches (MPI 3.1
 * 3.7-3.9): cancelled persistent receives started again, cancel after
 * completion, Request_get_status and the completion calls on null and
 * inactive requests, MPI_ERR_IN_STATUS with one truncated receive, Startall
 * of every persistent kind, Sendrecv_replace of a strided type, MPI_PROC_NULL
 * with Mprobe/Improbe/Mrecv/Imrecv, Get_count of a partial element, and the
 * Issend that completes only once matched. */
#include <unistd.h>

#include "mpitest.h"

/* An empty status (MPI 3.1 3.7.3); MPI_ERROR is left alone by calls that
 * return one status and by those that return MPI_SUCCESS (3.2.5). */
static int is_empty(const MPI_Status* s) {
  int n = -1;
  MPI_Get_count(s, MPI_INT, &n);
  return s->MPI_SOURCE == MPI_ANY_SOURCE && s->MPI_TAG == MPI_ANY_TAG && n == 0;
}

static void null_requests(void) {
  MPI_Request r[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  MPI_Status st[3];
  int flag = 0, idx = 5;
  CHECK_OK(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st[0]));
  CHECK(flag && is_empty(&st[0]));
  CHECK_OK(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
  CHECK_OK(MPI_Testall(3, r, &flag, st));
  CHECK(flag && is_empty(&st[1]));
  CHECK_OK(MPI_Waitany(3, r, &idx, &st[0]));
  CHECK_EQ(idx, MPI_UNDEFINED);
  CHECK(is_empty(&st[0]));
  CHECK_OK(MPI_Waitall(0, NULL, MPI_STATUSES_IGNORE));
  /* An inactive persistent request: complete at once, empty status, kept. */
  int x = 0;
  MPI_Request p;
  CHECK_OK(MPI_Recv_init(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &p));
  flag = 0;
  CHECK_OK(MPI_Request_get_status(p, &flag, &st[0]));
  CHECK(flag && is_empty(&st[0]));
  CHECK_OK(MPI_Wait(&p, &st[0]));
  CHECK(p != MPI_REQUEST_NULL && is_empty(&st[0]));
  CHECK_OK(MPI_Start(&p));
  CHECK_OK(MPI_Wait(&p, &st[0]));
  CHECK_EQ(st[0].MPI_SOURCE, MPI_PROC_NULL);
  CHECK_EQ(st[0].MPI_TAG, MPI_ANY_TAG);
  CHECK_OK(MPI_Request_free(&p));
  CHECK(p == MPI_REQUEST_NULL);
}

static void proc_null_matched(void) {
  MPI_Message msg = MPI_MESSAGE_NULL;
  MPI_Status st;
  int flag = 0, n = -1, x = 7;
  CHECK_OK(MPI_Mprobe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &msg, &st));
  CHECK(msg == MPI_MESSAGE_NO_PROC);
  CHECK_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
  CHECK_EQ(st.MPI_TAG, MPI_ANY_TAG);
  MPI_Get_count(&st, MPI_INT, &n);
  CHECK_EQ(n, 0);
  CHECK_OK(MPI_Mrecv(&x, 1, MPI_INT, &msg, &st));
  CHECK(msg == MPI_MESSAGE_NULL);
  CHECK_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
  CHECK_EQ(x, 7);
  msg = MPI_MESSAGE_NULL;
  CHECK_OK(MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, MPI_STATUS_IGNORE));
  CHECK(flag && msg == MPI_MESSAGE_NO_PROC);
  MPI_Request r;
  CHECK_OK(MPI_Imrecv(&x, 1, MPI_INT, &msg, &r));
  CHECK(msg == MPI_MESSAGE_NULL);
  CHECK_OK(MPI_Wait(&r, &st));
  CHECK_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
  /* Probe and Iprobe of MPI_PROC_NULL return at once. */
  CHECK_OK(MPI_Probe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
  CHECK_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
  flag = 0;
  CHECK_OK(MPI_Iprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &flag, &st));
  CHECK(flag);
  /* A zero-size receive from MPI_PROC_NULL with MPI_ANY_TAG. */
  CHECK_OK(
      MPI_Sendrecv(&x, 1, MPI_INT, MPI_PROC_NULL, 1, &x, 1, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
  CHECK_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
}

/* Two ranks: 0 and peer. */
static void pair(int rank, int peer) {
  MPI_Status st;
  int flag = 0;
  /* A persistent receive cancelled, then started again and matched. */
  if (rank == 1) {
    int v = -1;
    MPI_Request p;
    CHECK_OK(MPI_Recv_init(&v, 1, MPI_INT, peer, 11, MPI_COMM_WORLD, &p));
    CHECK_OK(MPI_Start(&p));
    CHECK_OK(MPI_Cancel(&p));
    CHECK_OK(MPI_Wait(&p, &st));
    CHECK_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag);
    CHECK(p != MPI_REQUEST_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(MPI_Start(&p));
    CHECK_OK(MPI_Wait(&p, &st));
    CHECK_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(!flag);
    CHECK_EQ(v, 42);
    CHECK_EQ(st.MPI_SOURCE, peer);
    MPI_Request_free(&p);
  } else if (rank == 0) {
    int v = 42;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(MPI_Send(&v, 1, MPI_INT, peer, 11, MPI_COMM_WORLD));
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
  }
  /* Cancel after completion: no effect, the data is there. */
  if (rank == 0) {
    int v = 5;
    CHECK_OK(MPI_Send(&v, 1, MPI_INT, peer, 12, MPI_COMM_WORLD));
  } else if (rank == 1) {
    int v = 0;
    MPI_Request r;
    CHECK_OK(MPI_Irecv(&v, 1, MPI_INT, peer, 12, MPI_COMM_WORLD, &r));
    do {
      MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE);
    } while (!flag);
    CHECK_OK(MPI_Cancel(&r));
    CHECK_OK(MPI_Wait(&r, &st));
    CHECK_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(!flag);
    CHECK_EQ(v, 5);
  }
  /* MPI_ERR_IN_STATUS: one of three receives truncated. */
  if (rank == 0) {
    int a[4] = {1, 2, 3, 4};
    for (int t = 20; t < 23; ++t) MPI_Send(a, t == 21 ? 4 : 1, MPI_INT, peer, t, MPI_COMM_WORLD);
  } else if (rank == 1) {
    int b[3][2];
    MPI_Request r[3];
    MPI_Status s3[3];
    for (int t = 0; t < 3; ++t) MPI_Irecv(b[t], 2, MPI_INT, peer, 20 + t, MPI_COMM_WORLD, &r[t]);
    CHECK_CLASS(MPI_Waitall(3, r, s3), MPI_ERR_IN_STATUS);
    int c = -1;
    MPI_Error_class(s3[1].MPI_ERROR, &c);
    CHECK_EQ(c, MPI_ERR_TRUNCATE);
    CHECK_EQ(s3[0].MPI_ERROR, MPI_SUCCESS);
    CHECK(r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL);
    /* The third completed (MPI_SUCCESS, freed) or was left pending. */
    if (s3[2].MPI_ERROR == MPI_SUCCESS) {
      CHECK(r[2] == MPI_REQUEST_NULL);
    } else {
      MPI_Error_class(s3[2].MPI_ERROR, &c);
      CHECK_EQ(c, MPI_ERR_PENDING);
      CHECK_OK(MPI_Wait(&r[2], MPI_STATUS_IGNORE));
    }
    CHECK_EQ(b[2][0], 1);
  }
  /* Startall of every persistent send kind and a receive for each. */
  {
    static char bsend_buf[4096 + MPI_BSEND_OVERHEAD * 4];
    int out[4] = {10, 11, 12, 13}, in[4] = {0, 0, 0, 0};
    MPI_Request r[8];
    int n = 0;
    if (rank == 1) {
      for (int k = 0; k < 4; ++k) MPI_Recv_init(&in[k], 1, MPI_INT, peer, 30 + k, MPI_COMM_WORLD, &r[n++]);
      CHECK_OK(MPI_Startall(n, r));
      MPI_Barrier(MPI_COMM_WORLD); /* every receive posted: the ready send may go */
      CHECK_OK(MPI_Waitall(n, r, MPI_STATUSES_IGNORE));
      for (int k = 0; k < 4; ++k) CHECK_EQ(in[k], 10 + k);
    } else if (rank == 0) {
      MPI_Buffer_attach(bsend_buf, sizeof bsend_buf);
      MPI_Send_init(&out[0], 1, MPI_INT, peer, 30, MPI_COMM_WORLD, &r[n++]);
      MPI_Bsend_init(&out[1], 1, MPI_INT, peer, 31, MPI_COMM_WORLD, &r[n++]);
      MPI_Ssend_init(&out[2], 1, MPI_INT, peer, 32, MPI_COMM_WORLD, &r[n++]);
      MPI_Rsend_init(&out[3], 1, MPI_INT, peer, 33, MPI_COMM_WORLD, &r[n++]);
      MPI_Barrier(MPI_COMM_WORLD);
      CHECK_OK(MPI_Startall(n, r));
      CHECK_OK(MPI_Waitall(n, r, MPI_STATUSES_IGNORE));
      void* b;
      int sz;
      MPI_Buffer_detach(&b, &sz);
      CHECK(b == bsend_buf);
      CHECK_EQ(sz, (int)sizeof bsend_buf);
    } else {
      MPI_Barrier(MPI_COMM_WORLD);
    }
    for (int k = 0; k < n; ++k) MPI_Request_free(&r[k]);
  }
  /* Sendrecv_replace with a strided type, both ways at once. */
  if (rank < 2) {
    int buf[12];
    for (int i = 0; i < 12; ++i) buf[i] = rank * 100 + i;
    MPI_Datatype v;
    MPI_Type_vector(3, 1, 2, MPI_INT, &v);
    MPI_Type_commit(&v);
    CHECK_OK(MPI_Sendrecv_replace(buf, 2, v, peer, 40, peer, 40, MPI_COMM_WORLD, &st));
    /* vector extent 5 ints: elements 0,2,4 and 5,7,9 replaced */
    int want[12];
    for (int i = 0; i < 12; ++i) want[i] = rank * 100 + i;
    int at[6] = {0, 2, 4, 5, 7, 9};
    for (int k = 0; k < 6; ++k) want[at[k]] = peer * 100 + at[k];
    for (int i = 0; i < 12; ++i) CHECK_EQ(buf[i], want[i]);
    int n = -1;
    MPI_Get_count(&st, v, &n);
    CHECK_EQ(n, 2);
    MPI_Get_elements(&st, MPI_INT, &n);
    CHECK_EQ(n, 6);
    MPI_Type_free(&v);
  }
  /* Get_count of a partial element: MPI_UNDEFINED; Get_elements counts ints. */
  if (rank == 0) {
    char c[6] = {0};
    MPI_Send(c, 6, MPI_CHAR, peer, 50, MPI_COMM_WORLD);
  } else if (rank == 1) {
    int x[2];
    MPI_Datatype two;
    MPI_Type_contiguous(2, MPI_SHORT, &two);
    MPI_Type_commit(&two);
    CHECK_OK(MPI_Recv(x, 2, two, peer, 50, MPI_COMM_WORLD, &st));
    int n = 0;
    MPI_Get_count(&st, two, &n);
    CHECK_EQ(n, MPI_UNDEFINED);
    MPI_Get_elements(&st, two, &n);
    CHECK_EQ(n, 3);
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK_EQ(n, MPI_UNDEFINED);
    MPI_Type_free(&two);
  }
  /* Issend completes only once matched: the receiver posts late. */
  if (rank == 0) {
    int v = 9;
    MPI_Request r;
    CHECK_OK(MPI_Issend(&v, 1, MPI_INT, peer, 60, MPI_COMM_WORLD, &r));
    usleep(100000);
    CHECK_OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  } else if (rank == 1) {
    int v = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(MPI_Recv(&v, 1, MPI_INT, peer, 60, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_EQ(v, 9);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

int main(int argc, char** argv) {
  int rank, size, right, left;
  mt_init_ring(&argc, &argv, &rank, &size, &right, &left);
  null_requests();
  proc_null_matched();
  if (size >= 2) pair(rank, rank == 0 ? 1 : 0);
  return mt_finish();
}
