/* Point-to-point: every send mode, blocking and not, receives with
 * wildcards, sendrecv(_replace), probes, matched probes, cancel, persistent
 * requests, the wait/test families, buffered mode and counts. Works for
 * any number of ranks (ring neighbours; a single rank talks to itself). */
#include "mpitest.h"

static int rank, size, next, prev;

static void fill(int* buf, int n, int seed) {
  for (int i = 0; i < n; ++i) buf[i] = seed * 1000003 + i;
}
static int verify(const int* buf, int n, int seed) {
  for (int i = 0; i < n; ++i)
    if (buf[i] != seed * 1000003 + i) return 0;
  return 1;
}

/* Every mode, small (eager) and large (rendezvous) messages, around the ring. */
static void test_modes(void) {
  const int sizes[] = {0, 1, 100, 70000};
  int bsize = 0;
  MPI_Pack_size(70000, MPI_INT, MPI_COMM_WORLD, &bsize);
  bsize += 4 * MPI_BSEND_OVERHEAD;
  void* battach = malloc((size_t)bsize * 2);
  CHECK_OK(MPI_Buffer_attach(battach, bsize * 2));
  for (int s = 0; s < 4; ++s) {
    int n = sizes[s];
    int *out = malloc(sizeof(int) * (size_t)(n + 1)), *in = malloc(sizeof(int) * (size_t)(n + 1));
    for (int mode = 0; mode < 8; ++mode) {
      MPI_Request rr, sr;
      MPI_Status st;
      fill(out, n, rank + mode);
      memset(in, 0, sizeof(int) * (size_t)(n + 1));
      CHECK_OK(MPI_Irecv(in, n, MPI_INT, prev, mode, MPI_COMM_WORLD, &rr));
      /* Rsend needs the receive posted everywhere first. */
      CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
      switch (mode) {
        case 0:
          CHECK_OK(MPI_Send(out, n, MPI_INT, next, mode, MPI_COMM_WORLD));
          break;
        case 1:
          CHECK_OK(MPI_Ssend(out, n, MPI_INT, next, mode, MPI_COMM_WORLD));
          break;
        case 2:
          CHECK_OK(MPI_Rsend(out, n, MPI_INT, next, mode, MPI_COMM_WORLD));
          break;
        case 3:
          CHECK_OK(MPI_Bsend(out, n, MPI_INT, next, mode, MPI_COMM_WORLD));
          break;
        case 4:
          CHECK_OK(MPI_Isend(out, n, MPI_INT, next, mode, MPI_COMM_WORLD, &sr));
          break;
        case 5:
          CHECK_OK(MPI_Issend(out, n, MPI_INT, next, mode, MPI_COMM_WORLD, &sr));
          break;
        case 6:
          CHECK_OK(MPI_Irsend(out, n, MPI_INT, next, mode, MPI_COMM_WORLD, &sr));
          break;
        case 7:
          CHECK_OK(MPI_Ibsend(out, n, MPI_INT, next, mode, MPI_COMM_WORLD, &sr));
          break;
      }
      CHECK_OK(MPI_Wait(&rr, &st));
      CHECK(rr == MPI_REQUEST_NULL);
      if (mode >= 4) {
        CHECK_OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
        CHECK(sr == MPI_REQUEST_NULL);
      }
      CHECK(verify(in, n, prev + mode));
      CHECK_EQ(st.MPI_SOURCE, prev);
      CHECK_EQ(st.MPI_TAG, mode);
      int count = -1;
      MPI_Get_count(&st, MPI_INT, &count);
      CHECK_EQ(count, n);
    }
    free(out);
    free(in);
  }
  void* back;
  int bback;
  CHECK_OK(MPI_Buffer_detach(&back, &bback));
  CHECK(back == battach);
  CHECK_EQ(bback, bsize * 2);
  free(battach);
}

/* ANY_SOURCE / ANY_TAG, status fields, PROC_NULL. */
static void test_wildcards(void) {
  int v = rank, got = -1;
  MPI_Status st;
  MPI_Request r;
  CHECK_OK(MPI_Isend(&v, 1, MPI_INT, next, 7 + rank, MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
  CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  CHECK_EQ(got, prev);
  CHECK_EQ(st.MPI_SOURCE, prev);
  CHECK_EQ(st.MPI_TAG, 7 + prev);
  /* PROC_NULL: immediate, source PROC_NULL, tag ANY_TAG, count 0. */
  CHECK_OK(MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
  got = 99;
  CHECK_OK(MPI_Recv(&got, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
  CHECK_EQ(got, 99);
  CHECK_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
  CHECK_EQ(st.MPI_TAG, MPI_ANY_TAG);
  int count = -1;
  MPI_Get_count(&st, MPI_INT, &count);
  CHECK_EQ(count, 0);
  CHECK_OK(MPI_Irecv(&got, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Wait(&r, &st));
  CHECK_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
}

static void test_sendrecv(void) {
  int out[10], in[10];
  MPI_Status st;
  fill(out, 10, rank);
  CHECK_OK(MPI_Sendrecv(out, 10, MPI_INT, next, 1, in, 10, MPI_INT, prev, 1, MPI_COMM_WORLD, &st));
  CHECK(verify(in, 10, prev));
  CHECK_EQ(st.MPI_SOURCE, prev);
  fill(out, 10, rank);
  CHECK_OK(MPI_Sendrecv_replace(out, 10, MPI_INT, next, 2, prev, 2, MPI_COMM_WORLD, &st));
  CHECK(verify(out, 10, prev));
  int count;
  MPI_Get_count(&st, MPI_INT, &count);
  CHECK_EQ(count, 10);
}

static void test_probe(void) {
  int buf[50];
  fill(buf, 50, rank);
  MPI_Request r;
  MPI_Status st;
  CHECK_OK(MPI_Isend(buf, 50, MPI_INT, next, 3, MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Probe(prev, 3, MPI_COMM_WORLD, &st));
  int count;
  MPI_Get_count(&st, MPI_INT, &count);
  CHECK_EQ(count, 50);
  CHECK_EQ(st.MPI_SOURCE, prev);
  int flag = 0;
  while (!flag) CHECK_OK(MPI_Iprobe(MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &flag, &st));
  int in[50];
  CHECK_OK(MPI_Recv(in, 50, MPI_INT, st.MPI_SOURCE, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CHECK(verify(in, 50, prev));
  CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  /* Nothing left: iprobe says no. */
  CHECK_OK(MPI_Iprobe(MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &flag, &st));
  CHECK_EQ(flag, 0);
  CHECK_OK(MPI_Iprobe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &flag, &st));
  CHECK_EQ(flag, 1);
  CHECK_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
}

static void test_mprobe(void) {
  int buf[20], in[20];
  MPI_Request r, r2;
  MPI_Message m;
  MPI_Status st;
  fill(buf, 20, rank);
  CHECK_OK(MPI_Isend(buf, 20, MPI_INT, next, 4, MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Mprobe(prev, 4, MPI_COMM_WORLD, &m, &st));
  CHECK(m != MPI_MESSAGE_NULL && m != MPI_MESSAGE_NO_PROC);
  CHECK_OK(MPI_Mrecv(in, 20, MPI_INT, &m, &st));
  CHECK(m == MPI_MESSAGE_NULL);
  CHECK(verify(in, 20, prev));
  CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  /* improbe + imrecv */
  CHECK_OK(MPI_Isend(buf, 20, MPI_INT, next, 5, MPI_COMM_WORLD, &r));
  int flag = 0;
  while (!flag) CHECK_OK(MPI_Improbe(prev, 5, MPI_COMM_WORLD, &flag, &m, &st));
  memset(in, 0, sizeof in);
  CHECK_OK(MPI_Imrecv(in, 20, MPI_INT, &m, &r2));
  CHECK(m == MPI_MESSAGE_NULL);
  CHECK_OK(MPI_Wait(&r2, &st));
  CHECK(verify(in, 20, prev));
  CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  /* PROC_NULL gives MPI_MESSAGE_NO_PROC, which receives nothing. */
  CHECK_OK(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &m, &st));
  CHECK(m == MPI_MESSAGE_NO_PROC);
  CHECK_OK(MPI_Mrecv(in, 20, MPI_INT, &m, &st));
  CHECK_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
  CHECK(m == MPI_MESSAGE_NULL);
}

static void test_cancel(void) {
  int in;
  MPI_Request r;
  MPI_Status st;
  CHECK_OK(MPI_Irecv(&in, 1, MPI_INT, prev, 999, MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Cancel(&r));
  CHECK_OK(MPI_Wait(&r, &st));
  int flag = 0;
  CHECK_OK(MPI_Test_cancelled(&st, &flag));
  CHECK_EQ(flag, 1);
  /* a completed receive is not cancelled */
  int v = 1;
  CHECK_OK(MPI_Sendrecv(&v, 1, MPI_INT, next, 6, &in, 1, MPI_INT, prev, 6, MPI_COMM_WORLD, &st));
  CHECK_OK(MPI_Test_cancelled(&st, &flag));
  CHECK_EQ(flag, 0);
}

static void test_persistent(void) {
  int out[8], in[8];
  MPI_Request reqs[2];
  CHECK_OK(MPI_Recv_init(in, 8, MPI_INT, prev, 8, MPI_COMM_WORLD, &reqs[0]));
  CHECK_OK(MPI_Send_init(out, 8, MPI_INT, next, 8, MPI_COMM_WORLD, &reqs[1]));
  for (int it = 0; it < 5; ++it) {
    fill(out, 8, rank + it);
    CHECK_OK(MPI_Startall(2, reqs));
    MPI_Status st[2];
    CHECK_OK(MPI_Waitall(2, reqs, st));
    CHECK(reqs[0] != MPI_REQUEST_NULL && reqs[1] != MPI_REQUEST_NULL);
    CHECK(verify(in, 8, prev + it));
    CHECK_EQ(st[0].MPI_SOURCE, prev);
  }
  /* Waiting on an inactive persistent request returns at once. */
  MPI_Status st;
  CHECK_OK(MPI_Wait(&reqs[0], &st));
  CHECK(reqs[0] != MPI_REQUEST_NULL);
  CHECK_OK(MPI_Request_free(&reqs[0]));
  CHECK_OK(MPI_Request_free(&reqs[1]));
  CHECK(reqs[0] == MPI_REQUEST_NULL);
  /* The other send modes, started one by one. */
  MPI_Request s[3], r[3];
  for (int i = 0; i < 3; ++i) CHECK_OK(MPI_Recv_init(&in[i], 1, MPI_INT, prev, 20 + i, MPI_COMM_WORLD, &r[i]));
  CHECK_OK(MPI_Startall(3, r));
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  out[0] = rank;
  CHECK_OK(MPI_Ssend_init(&out[0], 1, MPI_INT, next, 20, MPI_COMM_WORLD, &s[0]));
  CHECK_OK(MPI_Rsend_init(&out[0], 1, MPI_INT, next, 21, MPI_COMM_WORLD, &s[1]));
  char bbuf[64 + MPI_BSEND_OVERHEAD];
  CHECK_OK(MPI_Buffer_attach(bbuf, sizeof bbuf));
  CHECK_OK(MPI_Bsend_init(&out[0], 1, MPI_INT, next, 22, MPI_COMM_WORLD, &s[2]));
  for (int i = 0; i < 3; ++i) CHECK_OK(MPI_Start(&s[i]));
  CHECK_OK(MPI_Waitall(3, s, MPI_STATUSES_IGNORE));
  CHECK_OK(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
  for (int i = 0; i < 3; ++i) {
    CHECK_EQ(in[i], prev);
    CHECK_OK(MPI_Request_free(&s[i]));
    CHECK_OK(MPI_Request_free(&r[i]));
  }
  void* b;
  int bs;
  CHECK_OK(MPI_Buffer_detach(&b, &bs));
}

/* waitany/testany/waitsome/testsome/testall/request_get_status. */
static void test_completion(void) {
  enum { N = 6 };
  int in[N], out[N];
  MPI_Request r[N + 1];
  MPI_Status st[N + 1];
  for (int i = 0; i < N; ++i) CHECK_OK(MPI_Irecv(&in[i], 1, MPI_INT, prev, 30 + i, MPI_COMM_WORLD, &r[i]));
  r[N] = MPI_REQUEST_NULL;
  int flag = 1, idx = -5, outcount = -5, indices[N + 1];
  /* nothing sent yet (the sends below come after a barrier) */
  CHECK_OK(MPI_Testall(N + 1, r, &flag, st));
  CHECK_EQ(flag, 0);
  CHECK_OK(MPI_Testany(N + 1, r, &idx, &flag, &st[0]));
  CHECK_EQ(flag, 0);
  CHECK_OK(MPI_Testsome(N + 1, r, &outcount, indices, st));
  CHECK_EQ(outcount, 0);
  CHECK_OK(MPI_Request_get_status(r[0], &flag, &st[0]));
  CHECK_EQ(flag, 0);
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  for (int i = 0; i < N; ++i) {
    out[i] = rank * 100 + i;
    CHECK_OK(MPI_Send(&out[i], 1, MPI_INT, next, 30 + i, MPI_COMM_WORLD));
  }
  int done = 0, seen[N] = {0};
  CHECK_OK(MPI_Waitany(N + 1, r, &idx, &st[0]));
  CHECK(idx >= 0 && idx < N);
  seen[idx] = 1;
  ++done;
  CHECK(r[idx] == MPI_REQUEST_NULL);
  CHECK_EQ(st[0].MPI_TAG, 30 + idx);
  while (done < N) {
    CHECK_OK(MPI_Waitsome(N + 1, r, &outcount, indices, st));
    CHECK(outcount >= 1);
    for (int k = 0; k < outcount; ++k) {
      CHECK(!seen[indices[k]]);
      seen[indices[k]] = 1;
      CHECK_EQ(st[k].MPI_TAG, 30 + indices[k]);
      ++done;
    }
  }
  for (int i = 0; i < N; ++i) CHECK_EQ(in[i], prev * 100 + i);
  /* all null now */
  CHECK_OK(MPI_Waitsome(N + 1, r, &outcount, indices, st));
  CHECK_EQ(outcount, MPI_UNDEFINED);
  CHECK_OK(MPI_Waitany(N + 1, r, &idx, &st[0]));
  CHECK_EQ(idx, MPI_UNDEFINED);
  CHECK_OK(MPI_Testany(N + 1, r, &idx, &flag, &st[0]));
  CHECK_EQ(flag, 1);
  CHECK_EQ(idx, MPI_UNDEFINED);
  CHECK_OK(MPI_Testall(N + 1, r, &flag, MPI_STATUSES_IGNORE));
  CHECK_EQ(flag, 1);
  MPI_Request nul = MPI_REQUEST_NULL;
  st[0].MPI_ERROR = 12345;
  CHECK_OK(MPI_Wait(&nul, &st[0]));
  CHECK_EQ(st[0].MPI_SOURCE, MPI_ANY_SOURCE);
  CHECK_EQ(st[0].MPI_TAG, MPI_ANY_TAG);
  CHECK_EQ(st[0].MPI_ERROR, 12345); /* single-completion calls leave MPI_ERROR alone */
  /* request_get_status does not free the request */
  int v = 5, w = 0;
  MPI_Request a;
  CHECK_OK(MPI_Isend(&v, 1, MPI_INT, next, 40, MPI_COMM_WORLD, &a));
  CHECK_OK(MPI_Recv(&w, 1, MPI_INT, prev, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  do {
    CHECK_OK(MPI_Request_get_status(a, &flag, MPI_STATUS_IGNORE));
  } while (!flag);
  CHECK(a != MPI_REQUEST_NULL);
  CHECK_OK(MPI_Test(&a, &flag, MPI_STATUS_IGNORE));
  CHECK_EQ(flag, 1);
  CHECK(a == MPI_REQUEST_NULL);
  /* request_free of an active send: it still completes */
  CHECK_OK(MPI_Isend(&v, 1, MPI_INT, next, 41, MPI_COMM_WORLD, &a));
  CHECK_OK(MPI_Request_free(&a));
  CHECK_OK(MPI_Recv(&w, 1, MPI_INT, prev, 41, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CHECK_EQ(w, 5);
}

/* Counts and elements, with a derived type and a partial message. */
static void test_counts(void) {
  int data[12];
  fill(data, 12, rank);
  MPI_Datatype pair;
  CHECK_OK(MPI_Type_contiguous(2, MPI_INT, &pair));
  CHECK_OK(MPI_Type_commit(&pair));
  int in[12];
  MPI_Status st;
  CHECK_OK(MPI_Sendrecv(data, 5, MPI_INT, next, 50, in, 6, pair, prev, 50, MPI_COMM_WORLD, &st));
  int count = 0, elems = 0;
  MPI_Count ex = 0;
  CHECK_OK(MPI_Get_count(&st, pair, &count));
  CHECK_EQ(count, MPI_UNDEFINED); /* 5 ints are 2.5 pairs */
  CHECK_OK(MPI_Get_elements(&st, pair, &elems));
  CHECK_EQ(elems, 5);
  CHECK_OK(MPI_Get_elements_x(&st, pair, &ex));
  CHECK_EQ(ex, 5);
  CHECK_OK(MPI_Get_count(&st, MPI_INT, &count));
  CHECK_EQ(count, 5);
  CHECK_OK(MPI_Status_set_elements(&st, MPI_INT, 7));
  CHECK_OK(MPI_Get_count(&st, MPI_INT, &count));
  CHECK_EQ(count, 7);
  CHECK_OK(MPI_Status_set_elements_x(&st, MPI_DOUBLE, 3));
  CHECK_OK(MPI_Get_elements(&st, MPI_DOUBLE, &elems));
  CHECK_EQ(elems, 3);
  CHECK_OK(MPI_Status_set_cancelled(&st, 1));
  int flag;
  CHECK_OK(MPI_Test_cancelled(&st, &flag));
  CHECK_EQ(flag, 1);
  CHECK_OK(MPI_Type_free(&pair));
  CHECK(pair == MPI_DATATYPE_NULL);
}

/* Messages of a strided type in both directions. */
static void test_vector(void) {
  enum { N = 40 };
  double mat[N][3], got[N][3];
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < 3; ++j) mat[i][j] = rank * 1000 + i * 3 + j, got[i][j] = -1;
  MPI_Datatype col;
  CHECK_OK(MPI_Type_vector(N, 1, 3, MPI_DOUBLE, &col));
  CHECK_OK(MPI_Type_commit(&col));
  CHECK_OK(MPI_Sendrecv(&mat[0][1], 1, col, next, 60, &got[0][2], 1, col, prev, 60, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  for (int i = 0; i < N; ++i) {
    CHECK_EQ(got[i][2], prev * 1000 + i * 3 + 1);
    CHECK_EQ(got[i][0], -1);
  }
  CHECK_OK(MPI_Type_free(&col));
}

/* MPI-4 Isendrecv / Isendrecv_replace. */
static void test_isendrecv(void) {
  int out[30], in[30];
  MPI_Request r;
  MPI_Status st;
  fill(out, 30, rank);
  CHECK_OK(MPI_Isendrecv(out, 30, MPI_INT, next, 70, in, 30, MPI_INT, prev, 70, MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Wait(&r, &st));
  CHECK(r == MPI_REQUEST_NULL);
  CHECK(verify(in, 30, prev));
  CHECK_EQ(st.MPI_SOURCE, prev);
  CHECK_EQ(st.MPI_TAG, 70);
  int count;
  MPI_Get_count(&st, MPI_INT, &count);
  CHECK_EQ(count, 30);
  fill(out, 30, rank);
  CHECK_OK(MPI_Isendrecv_replace(out, 30, MPI_INT, next, 71, prev, 71, MPI_COMM_WORLD, &r));
  int flag = 0;
  while (!flag) CHECK_OK(MPI_Test(&r, &flag, &st));
  CHECK(verify(out, 30, prev));
}

/* Generalized requests: completed by the program, reported by wait. */
static int greq_freed = 0;
static int gq(void* extra, MPI_Status* s) {
  MPI_Status_set_elements(s, MPI_INT, *(int*)extra);
  MPI_Status_set_cancelled(s, 0);
  s->MPI_SOURCE = MPI_UNDEFINED;
  s->MPI_TAG = MPI_UNDEFINED;
  return MPI_SUCCESS;
}
static int gf(void* extra) {
  (void)extra;
  ++greq_freed;
  return MPI_SUCCESS;
}
static int gc(void* extra, int complete) {
  (void)extra, (void)complete;
  return MPI_SUCCESS;
}
static void test_grequest(void) {
  int n = 17;
  MPI_Request r;
  CHECK_OK(MPI_Grequest_start(gq, gf, gc, &n, &r));
  int flag = 1;
  CHECK_OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
  CHECK_EQ(flag, 0);
  CHECK_OK(MPI_Grequest_complete(r));
  MPI_Status st;
  CHECK_OK(MPI_Wait(&r, &st));
  CHECK(r == MPI_REQUEST_NULL);
  int count;
  MPI_Get_count(&st, MPI_INT, &count);
  CHECK_EQ(count, 17);
  CHECK_EQ(greq_freed, 1);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  next = (rank + 1) % size;
  prev = (rank + size - 1) % size;
  test_modes();
  test_wildcards();
  test_sendrecv();
  test_probe();
  test_mprobe();
  test_cancel();
  test_persistent();
  test_completion();
  test_counts();
  test_vector();
  test_isendrecv();
  test_grequest();
  return mt_finish();
}
