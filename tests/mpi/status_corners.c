/* Status and request corners of point-to-point (MPI 3.1 3.2.5, 3.7.3,
 * 3.8): the empty status of MPI_PROC_NULL, of null and inactive requests
 * and of wait/test over no active request; matched probes
 * (MPI_Mprobe/Improbe/Mrecv/Imrecv) with MPI_PROC_NULL and wildcards;
 * MPI_Get_elements(_x) and MPI_Get_count of partial receives of derived
 * types; cancelled receives; MPI_Sendrecv_replace with derived types; and
 * zero-size messages from MPI_BOTTOM with absolute addresses. */
#include <stddef.h>

#include "mpitest.h"

static int rank, size;

/* The status of no message: from source (MPI_ANY_SOURCE for an empty
 * status, MPI_PROC_NULL for a call with it), tag MPI_ANY_TAG, count 0,
 * not cancelled. */
static void nothing(const MPI_Status* s, int source, int line) {
  int n = -1, c = 1;
  if (s->MPI_SOURCE != source) mt_fail(__FILE__, line, "source", s->MPI_SOURCE, source);
  if (s->MPI_TAG != MPI_ANY_TAG) mt_fail(__FILE__, line, "tag", s->MPI_TAG, MPI_ANY_TAG);
  MPI_Get_count(s, MPI_INT, &n);
  if (n != 0) mt_fail(__FILE__, line, "count", n, 0);
  MPI_Test_cancelled(s, &c);
  if (c) mt_fail(__FILE__, line, "cancelled", c, 0);
}
#define empty(s, line) nothing(s, MPI_ANY_SOURCE, line)
#define proc_null(s, line) nothing(s, MPI_PROC_NULL, line)

static void null_requests(void) {
  MPI_Status s;
  MPI_Request r = MPI_REQUEST_NULL, rs[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  memset(&s, 0x5a, sizeof s);
  CHECK_OK(MPI_Wait(&r, &s));
  empty(&s, __LINE__);
  int flag = 0, idx = 7, out = 7, idxs[3];
  memset(&s, 0x5a, sizeof s);
  CHECK_OK(MPI_Test(&r, &flag, &s));
  CHECK(flag);
  empty(&s, __LINE__);
  memset(&s, 0x5a, sizeof s);
  CHECK_OK(MPI_Waitany(3, rs, &idx, &s));
  CHECK_EQ(idx, MPI_UNDEFINED);
  empty(&s, __LINE__);
  flag = 0, idx = 7;
  CHECK_OK(MPI_Testany(3, rs, &idx, &flag, &s));
  CHECK(flag);
  CHECK_EQ(idx, MPI_UNDEFINED);
  CHECK_OK(MPI_Waitsome(3, rs, &out, idxs, MPI_STATUSES_IGNORE));
  CHECK_EQ(out, MPI_UNDEFINED);
  out = 7;
  CHECK_OK(MPI_Testsome(3, rs, &out, idxs, MPI_STATUSES_IGNORE));
  CHECK_EQ(out, MPI_UNDEFINED);
  flag = 0;
  MPI_Status ss[3];
  CHECK_OK(MPI_Testall(3, rs, &flag, ss));
  CHECK(flag);
  for (int i = 0; i < 3; ++i) empty(&ss[i], __LINE__);
  CHECK_OK(MPI_Waitall(0, NULL, NULL));
  CHECK_OK(MPI_Waitany(0, NULL, &idx, &s));
  CHECK_EQ(idx, MPI_UNDEFINED);
  flag = 0;
  CHECK_OK(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &s));
  CHECK(flag);
  empty(&s, __LINE__);
  /* An inactive persistent request: empty status, still allocated */
  int buf = 0;
  CHECK_OK(MPI_Recv_init(&buf, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, &r));
  memset(&s, 0x5a, sizeof s);
  CHECK_OK(MPI_Wait(&r, &s));
  empty(&s, __LINE__);
  CHECK(r != MPI_REQUEST_NULL);
  CHECK_OK(MPI_Request_free(&r));
  CHECK_EQ(r, MPI_REQUEST_NULL);
}

static void proc_null_ops(void) {
  MPI_Status s;
  int buf[4] = {1, 2, 3, 4};
  memset(&s, 0x5a, sizeof s);
  CHECK_OK(MPI_Recv(buf, 4, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &s));
  proc_null(&s, __LINE__);
  CHECK_EQ(buf[0], 1);
  MPI_Request r;
  CHECK_OK(MPI_Irecv(buf, 4, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &r));
  memset(&s, 0x5a, sizeof s);
  CHECK_OK(MPI_Wait(&r, &s));
  proc_null(&s, __LINE__);
  int flag = 0;
  memset(&s, 0x5a, sizeof s);
  CHECK_OK(MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &s));
  CHECK(flag);
  proc_null(&s, __LINE__);
  CHECK_OK(MPI_Probe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &s));
  proc_null(&s, __LINE__);
  MPI_Message m = MPI_MESSAGE_NULL;
  memset(&s, 0x5a, sizeof s);
  CHECK_OK(MPI_Mprobe(MPI_PROC_NULL, 9, MPI_COMM_WORLD, &m, &s));
  CHECK_EQ(m, MPI_MESSAGE_NO_PROC);
  proc_null(&s, __LINE__);
  memset(&s, 0x5a, sizeof s);
  CHECK_OK(MPI_Mrecv(buf, 4, MPI_INT, &m, &s));
  CHECK_EQ(m, MPI_MESSAGE_NULL);
  proc_null(&s, __LINE__);
  flag = 0;
  CHECK_OK(MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &s));
  CHECK(flag);
  CHECK_EQ(m, MPI_MESSAGE_NO_PROC);
  CHECK_OK(MPI_Imrecv(buf, 4, MPI_INT, &m, &r));
  CHECK_EQ(m, MPI_MESSAGE_NULL);
  memset(&s, 0x5a, sizeof s);
  CHECK_OK(MPI_Wait(&r, &s));
  proc_null(&s, __LINE__);
  CHECK_EQ(buf[0], 1);
  /* Sendrecv with both sides MPI_PROC_NULL */
  memset(&s, 0x5a, sizeof s);
  CHECK_OK(MPI_Sendrecv(buf, 4, MPI_INT, MPI_PROC_NULL, 1, buf + 2, 2, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &s));
  proc_null(&s, __LINE__);
  CHECK_OK(MPI_Sendrecv_replace(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &s));
  proc_null(&s, __LINE__);
  CHECK_EQ(buf[3], 4);
  /* MPI_Mrecv of the null message is erroneous */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  m = MPI_MESSAGE_NULL;
  CHECK_CLASS(MPI_Mrecv(buf, 4, MPI_INT, &m, &s), MPI_ERR_REQUEST);
  CHECK_CLASS(MPI_Imrecv(buf, 4, MPI_INT, &m, &r), MPI_ERR_REQUEST);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* A matched probe takes the message out of matching: a later probe or
 * receive with wildcards cannot see it. */
static void matched_probe(void) {
  int peer = rank ^ 1;
  if (peer >= size) { /* no partner (odd size): nothing to probe */
    MPI_Barrier(MPI_COMM_WORLD);
    return;
  }
  int v[2] = {rank * 10 + 1, rank * 10 + 2}, got = -1;
  MPI_Request sr[2];
  CHECK_OK(MPI_Isend(&v[0], 1, MPI_INT, peer, 11, MPI_COMM_WORLD, &sr[0]));
  CHECK_OK(MPI_Isend(&v[1], 1, MPI_INT, peer, 12, MPI_COMM_WORLD, &sr[1]));
  MPI_Message m1, m2;
  MPI_Status s;
  CHECK_OK(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &m1, &s));
  CHECK_EQ(s.MPI_SOURCE, peer);
  CHECK_EQ(s.MPI_TAG, 11); /* non-overtaking */
  int flag = 0;
  do {
    CHECK_OK(MPI_Improbe(peer, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m2, &s));
  } while (!flag);
  CHECK_EQ(s.MPI_TAG, 12);
  /* both taken: neither is left to probe */
  CHECK_OK(MPI_Iprobe(MPI_ANY_SOURCE, 11, MPI_COMM_WORLD, &flag, &s));
  CHECK(!flag);
  CHECK_OK(MPI_Iprobe(peer, 12, MPI_COMM_WORLD, &flag, &s));
  CHECK(!flag);
  /* receive them in the other order */
  MPI_Request r;
  CHECK_OK(MPI_Imrecv(&got, 1, MPI_INT, &m2, &r));
  CHECK_OK(MPI_Wait(&r, &s));
  CHECK_EQ(got, peer * 10 + 2);
  CHECK_EQ(s.MPI_TAG, 12);
  CHECK_OK(MPI_Mrecv(&got, 1, MPI_INT, &m1, &s));
  CHECK_EQ(got, peer * 10 + 1);
  CHECK_EQ(s.MPI_SOURCE, peer);
  CHECK_OK(MPI_Waitall(2, sr, MPI_STATUSES_IGNORE));
  /* A matched message received with a too small buffer: truncation */
  CHECK_OK(MPI_Isend(v, 2, MPI_INT, peer, 13, MPI_COMM_WORLD, &sr[0]));
  CHECK_OK(MPI_Mprobe(peer, 13, MPI_COMM_WORLD, &m1, &s));
  int cnt = -1;
  MPI_Get_count(&s, MPI_INT, &cnt);
  CHECK_EQ(cnt, 2);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK_CLASS(MPI_Mrecv(&got, 1, MPI_INT, &m1, &s), MPI_ERR_TRUNCATE);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  CHECK_EQ(m1, MPI_MESSAGE_NULL);
  CHECK_OK(MPI_Wait(&sr[0], MPI_STATUS_IGNORE));
  MPI_Barrier(MPI_COMM_WORLD);
}

/* Partial receives: elements of a struct type when the message ends
 * inside one instance. */
static void partial_elements(void) {
  struct pair {
    int i;
    double d;
  };
  int bl[2] = {1, 1};
  MPI_Aint disp[2] = {offsetof(struct pair, i), offsetof(struct pair, d)};
  MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE}, pt;
  CHECK_OK(MPI_Type_create_struct(2, bl, disp, ty, &pt));
  CHECK_OK(MPI_Type_commit(&pt));
  /* the sender sends int, double, int: one pair and a half */
  MPI_Datatype st;
  int sbl[3] = {1, 1, 1};
  MPI_Aint sd[3] = {0, 8, 16};
  MPI_Datatype sty[3] = {MPI_INT, MPI_DOUBLE, MPI_INT};
  CHECK_OK(MPI_Type_create_struct(3, sbl, sd, sty, &st));
  CHECK_OK(MPI_Type_commit(&st));
  char sbuf[24];
  int a = 7, c = 9;
  double b = 2.5;
  memcpy(sbuf, &a, 4);
  memcpy(sbuf + 8, &b, 8);
  memcpy(sbuf + 16, &c, 4);
  struct pair r[2];
  memset(r, 0, sizeof r);
  MPI_Status s;
  CHECK_OK(MPI_Sendrecv(sbuf, 1, st, 0, 3, r, 2, pt, 0, 3, MPI_COMM_SELF, &s));
  int n = -1;
  CHECK_OK(MPI_Get_count(&s, pt, &n));
  CHECK_EQ(n, MPI_UNDEFINED);
  CHECK_OK(MPI_Get_elements(&s, pt, &n));
  CHECK_EQ(n, 3);
  MPI_Count nx = -1;
  CHECK_OK(MPI_Get_elements_x(&s, pt, &nx));
  CHECK_EQ(nx, 3);
  CHECK_OK(MPI_Get_count(&s, MPI_BYTE, &n));
  CHECK_EQ(n, 16);
  CHECK_EQ(r[0].i, 7);
  CHECK(r[0].d == 2.5);
  CHECK_EQ(r[1].i, 9);
  /* A zero-byte message: 0 elements and count 0 of any type */
  CHECK_OK(MPI_Sendrecv(sbuf, 0, st, 0, 4, r, 2, pt, 0, 4, MPI_COMM_SELF, &s));
  CHECK_OK(MPI_Get_count(&s, pt, &n));
  CHECK_EQ(n, 0);
  CHECK_OK(MPI_Get_elements(&s, pt, &n));
  CHECK_EQ(n, 0);
  /* A type of size 0: count 0 for 0 bytes */
  MPI_Datatype z;
  CHECK_OK(MPI_Type_contiguous(0, MPI_INT, &z));
  CHECK_OK(MPI_Type_commit(&z));
  CHECK_OK(MPI_Get_count(&s, z, &n));
  CHECK_EQ(n, 0);
  CHECK_OK(MPI_Get_elements(&s, z, &n));
  CHECK_EQ(n, 0);
  /* Elements of a vector received in part: basic elements, not blocks */
  MPI_Datatype v;
  CHECK_OK(MPI_Type_vector(3, 2, 3, MPI_SHORT, &v));
  CHECK_OK(MPI_Type_commit(&v));
  short sh[5] = {1, 2, 3, 4, 5}, rv[9];
  CHECK_OK(MPI_Sendrecv(sh, 5, MPI_SHORT, 0, 5, rv, 1, v, 0, 5, MPI_COMM_SELF, &s));
  CHECK_OK(MPI_Get_elements(&s, v, &n));
  CHECK_EQ(n, 5);
  CHECK_OK(MPI_Get_count(&s, v, &n));
  CHECK_EQ(n, MPI_UNDEFINED);
  CHECK_EQ(rv[6], 5);
  CHECK_EQ(rv[7], 0);
  /* A message that is not a whole number of basic elements */
  char bytes[5] = {0};
  CHECK_OK(MPI_Sendrecv(bytes, 5, MPI_BYTE, 0, 6, r, 2, pt, 0, 6, MPI_COMM_SELF, &s));
  CHECK_OK(MPI_Get_elements(&s, pt, &n));
  CHECK_EQ(n, MPI_UNDEFINED);
  MPI_Type_free(&v);
  MPI_Type_free(&z);
  MPI_Type_free(&st);
  MPI_Type_free(&pt);
}

/* (p2p.c cancels a plain receive) */
static void cancelled_receive(void) {
  int buf = -1, c = 0;
  MPI_Request r;
  MPI_Status s;
  /* A cancelled persistent receive may start again and complete */
  CHECK_OK(MPI_Recv_init(&buf, 1, MPI_INT, rank, 778, MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Start(&r));
  CHECK_OK(MPI_Cancel(&r));
  CHECK_OK(MPI_Wait(&r, &s));
  MPI_Test_cancelled(&s, &c);
  CHECK(c);
  CHECK_OK(MPI_Start(&r));
  int v = 42;
  CHECK_OK(MPI_Send(&v, 1, MPI_INT, rank, 778, MPI_COMM_WORLD));
  CHECK_OK(MPI_Wait(&r, &s));
  MPI_Test_cancelled(&s, &c);
  CHECK(!c);
  CHECK_EQ(buf, 42);
  CHECK_EQ(s.MPI_SOURCE, rank);
  CHECK_EQ(s.MPI_TAG, 778);
  MPI_Request_free(&r);
  /* Cancelling a completed receive does nothing */
  CHECK_OK(MPI_Irecv(&buf, 1, MPI_INT, rank, 779, MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Send(&v, 1, MPI_INT, rank, 779, MPI_COMM_WORLD));
  int flag = 0;
  while (!flag) MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE);
  CHECK_OK(MPI_Cancel(&r));
  CHECK_OK(MPI_Wait(&r, &s));
  MPI_Test_cancelled(&s, &c);
  CHECK(!c);
  CHECK_EQ(s.MPI_TAG, 779);
}

/* Sendrecv_replace around a ring with a vector type (the buffer is both). */
static void replace_derived(void) {
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  int a[12];
  for (int i = 0; i < 12; ++i) a[i] = (i % 3 == 0) ? rank * 100 + i : -i;
  MPI_Datatype v;
  CHECK_OK(MPI_Type_vector(4, 1, 3, MPI_INT, &v));
  CHECK_OK(MPI_Type_commit(&v));
  MPI_Status s;
  CHECK_OK(MPI_Sendrecv_replace(a, 1, v, next, 21, prev, 21, MPI_COMM_WORLD, &s));
  for (int i = 0; i < 12; ++i) CHECK_EQ(a[i], (i % 3 == 0) ? prev * 100 + i : -i);
  CHECK_EQ(s.MPI_SOURCE, prev);
  int n = -1;
  MPI_Get_count(&s, v, &n);
  CHECK_EQ(n, 1);
  /* receive side any source / any tag */
  CHECK_OK(MPI_Sendrecv_replace(a, 4, MPI_INT, next, 22 + rank, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &s));
  CHECK_EQ(s.MPI_SOURCE, prev);
  CHECK_EQ(s.MPI_TAG, 22 + prev);
  MPI_Type_free(&v);
}

/* Absolute addresses from MPI_BOTTOM, and zero-size messages. */
static void bottom_and_zero(void) {
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  int x = rank + 1, y[2] = {-1, -1};
  MPI_Aint ax, ay;
  MPI_Get_address(&x, &ax);
  MPI_Get_address(&y[1], &ay);
  MPI_Datatype sx, sy;
  int one = 1;
  MPI_Datatype it = MPI_INT;
  CHECK_OK(MPI_Type_create_struct(1, &one, &ax, &it, &sx));
  CHECK_OK(MPI_Type_create_hindexed(1, &one, &ay, MPI_INT, &sy));
  MPI_Type_commit(&sx);
  MPI_Type_commit(&sy);
  MPI_Status s;
  CHECK_OK(MPI_Sendrecv(MPI_BOTTOM, 1, sx, next, 31, MPI_BOTTOM, 1, sy, prev, 31, MPI_COMM_WORLD, &s));
  CHECK_EQ(y[1], prev + 1);
  CHECK_EQ(y[0], -1);
  /* zero count from MPI_BOTTOM and from NULL */
  CHECK_OK(MPI_Sendrecv(MPI_BOTTOM, 0, sx, next, 32, MPI_BOTTOM, 0, sy, prev, 32, MPI_COMM_WORLD, &s));
  int n = -1;
  MPI_Get_count(&s, MPI_INT, &n);
  CHECK_EQ(n, 0);
  CHECK_OK(MPI_Sendrecv(NULL, 0, MPI_INT, next, 33, NULL, 0, MPI_INT, prev, 33, MPI_COMM_WORLD, &s));
  CHECK_EQ(s.MPI_SOURCE, prev);
  CHECK_EQ(s.MPI_TAG, 33);
  /* a nonblocking broadcast of absolute addresses */
  MPI_Request r;
  y[1] = rank == 0 ? 99 : -1;
  CHECK_OK(MPI_Ibcast(MPI_BOTTOM, 1, sy, 0, MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  CHECK_EQ(y[1], 99);
  MPI_Type_free(&sx);
  MPI_Type_free(&sy);
}

/* Synchronous and ready modes, and buffered mode's buffer rules. */
static void send_modes(void) {
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  int v = rank, got = -1;
  MPI_Request r, sr;
  /* Rsend with the receive known to be posted (a barrier orders it) */
  CHECK_OK(MPI_Irecv(&got, 1, MPI_INT, prev, 41, MPI_COMM_WORLD, &r));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Rsend(&v, 1, MPI_INT, next, 41, MPI_COMM_WORLD));
  CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  CHECK_EQ(got, prev);
  /* Issend completes only once matched */
  if (size >= 2) {
    if (rank == 0) {
      CHECK_OK(MPI_Issend(&v, 1, MPI_INT, 1, 42, MPI_COMM_WORLD, &sr));
      int flag = 1;
      CHECK_OK(MPI_Test(&sr, &flag, MPI_STATUS_IGNORE));
      CHECK(!flag); /* rank 1 waits for the barrier before receiving */
      MPI_Barrier(MPI_COMM_WORLD);
      CHECK_OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    } else {
      MPI_Barrier(MPI_COMM_WORLD);
      if (rank == 1) CHECK_OK(MPI_Recv(&got, 1, MPI_INT, 0, 42, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
  }
  /* Ssend to oneself with the receive posted first */
  CHECK_OK(MPI_Irecv(&got, 1, MPI_INT, rank, 43, MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Ssend(&v, 1, MPI_INT, rank, 43, MPI_COMM_WORLD));
  CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  /* Buffered: no buffer, too small a buffer, two buffers, exact fit */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  void* b = NULL;
  int bs = -1;
  CHECK_CLASS(MPI_Bsend(&v, 1, MPI_INT, rank, 44, MPI_COMM_WORLD), MPI_ERR_BUFFER);
  int need = 0;
  MPI_Pack_size(100, MPI_INT, MPI_COMM_WORLD, &need);
  need += MPI_BSEND_OVERHEAD;
  char* mem = malloc((size_t)need);
  CHECK_OK(MPI_Buffer_attach(mem, need));
  CHECK_CLASS(MPI_Buffer_attach(mem, need), MPI_ERR_BUFFER);
  int big[200] = {0};
  CHECK_CLASS(MPI_Bsend(big, 200, MPI_INT, rank, 45, MPI_COMM_WORLD), MPI_ERR_BUFFER);
  big[99] = 5;
  CHECK_OK(MPI_Bsend(big, 100, MPI_INT, rank, 46, MPI_COMM_WORLD));
  int rb[100];
  CHECK_OK(MPI_Recv(rb, 100, MPI_INT, rank, 46, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CHECK_EQ(rb[99], 5);
  CHECK_OK(MPI_Buffer_detach(&b, &bs));
  CHECK(b == mem);
  CHECK_EQ(bs, need);
  CHECK_CLASS(MPI_Buffer_attach(mem, -1), MPI_ERR_ARG);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  /* Detach waits for messages still in the buffer */
  CHECK_OK(MPI_Buffer_attach(mem, need));
  CHECK_OK(MPI_Bsend(big, 100, MPI_INT, next, 47, MPI_COMM_WORLD));
  CHECK_OK(MPI_Buffer_detach(&b, &bs));
  CHECK_OK(MPI_Recv(rb, 100, MPI_INT, prev, 47, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CHECK_EQ(rb[99], 5);
  free(mem);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  null_requests();
  proc_null_ops();
  matched_probe();
  partial_elements();
  cancelled_receive();
  replace_derived();
  bottom_and_zero();
  send_modes();
  return mt_finish();
}
