/* MPI_Cancel of sends (MPI-4.1 3.8.4): a send that the receiver has not
 * matched is cancelled whatever its mode (standard, buffered, synchronous),
 * size (eager or rendezvous) and form (nonblocking or persistent), even when
 * it has already left and is locally complete, while the receiver waits in
 * MPI_Recv for another message. The cancelled message is never received (a
 * later message with the same tag is), a persistent request restarts after
 * its cancel, and a send the receiver has matched is not cancelled.
 *
 * With the argument "computing" the receiver computes outside MPI meanwhile
 * (run with ADI3_ASYNC_PROGRESS=on: its agent answers) and the cancel must
 * complete before the receiver calls MPI again: an order of events on the
 * host's monotonic clock (a cancel that started at least 0.5 s before the
 * receiver stopped computing must have ended by then), not a time bound, so
 * a loaded machine does not fail it. With "computing_off"
 * (ADI3_ASYNC_PROGRESS=off: no agent) the cancel completes, successfully,
 * once the receiver next enters MPI (mpi/README.md). */
#include <time.h>

#include "mpitest.h"

enum { kDone = 1000, kMatched = 1001, kBig = 1 << 20 };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Starts case c's first send (payload starts with 1). */
static void start_send(int c, char* buf, int n, MPI_Request* r) {
  int mode = c % 3, persistent = (c / 3) % 2;
  int tag = c;
  buf[0] = 1;
  if (persistent) {
    if (mode == 0) CHECK_OK(MPI_Send_init(buf, n, MPI_CHAR, 1, tag, MPI_COMM_WORLD, r));
    if (mode == 1) CHECK_OK(MPI_Bsend_init(buf, n, MPI_CHAR, 1, tag, MPI_COMM_WORLD, r));
    if (mode == 2) CHECK_OK(MPI_Ssend_init(buf, n, MPI_CHAR, 1, tag, MPI_COMM_WORLD, r));
    CHECK_OK(MPI_Start(r));
  } else {
    if (mode == 0) CHECK_OK(MPI_Isend(buf, n, MPI_CHAR, 1, tag, MPI_COMM_WORLD, r));
    if (mode == 1) CHECK_OK(MPI_Ibsend(buf, n, MPI_CHAR, 1, tag, MPI_COMM_WORLD, r));
    if (mode == 2) CHECK_OK(MPI_Issend(buf, n, MPI_CHAR, 1, tag, MPI_COMM_WORLD, r));
  }
}

/* 12 cases: mode (standard, buffered, synchronous) x form x size. */
static int case_bytes(int c) { return c < 6 ? 16 : kBig; }

static void sender(int computing) {
  char* buf = malloc(kBig);
  for (int c = 0; c < 12; ++c) {
    int n = case_bytes(c), persistent = (c / 3) % 2, mode = c % 3;
    MPI_Request r;
    start_send(c, buf, n, &r);
    if (mode != 2 && n == 16) {
      /* Let it leave: the eager standard and buffered sends complete
       * locally (MPI_Request_get_status does not free the request). */
      int flag = 0;
      for (double t0 = now(); !flag && now() - t0 < 5;) CHECK_OK(MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE));
      CHECK(flag);
    }
    double t0 = now();
    MPI_Status st;
    int cancelled = 0;
    CHECK_OK(MPI_Cancel(&r));
    CHECK_OK(MPI_Wait(&r, &st));
    CHECK_OK(MPI_Test_cancelled(&st, &cancelled));
    double took = now() - t0;
    if (!cancelled)
      fprintf(stderr, "case %d (mode %d, %d bytes, persistent %d) not cancelled\n", c, mode, n, persistent);
    CHECK_EQ(cancelled, 1);
    if (computing == 1 && took > 1.0) fprintf(stderr, "case %d: cancel took %.2f s\n", c, took);
    /* outcome, when the cancel started and ended (the receiver compares) */
    double report[3] = {cancelled, t0, t0 + took};
    CHECK_OK(MPI_Send(report, 3, MPI_DOUBLE, 1, kDone, MPI_COMM_WORLD));
    /* The same tag again: the receiver must get this one (payload 2). */
    if (persistent) {
      buf[0] = 2;
      CHECK_OK(MPI_Start(&r));
      CHECK_OK(MPI_Wait(&r, &st));
      CHECK_OK(MPI_Test_cancelled(&st, &cancelled));
      CHECK_EQ(cancelled, 0);
      CHECK_OK(MPI_Request_free(&r));
    } else {
      buf[0] = 2;
      CHECK_OK(MPI_Send(buf, n, MPI_CHAR, 1, c, MPI_COMM_WORLD));
    }
  }
  /* A send the receiver matched stands: cancel leaves it as sent. */
  for (int mode = 0; mode < 2; ++mode) {
    MPI_Request r;
    MPI_Status st;
    int cancelled = 1, ack = 0;
    buf[0] = 3;
    if (mode == 0) CHECK_OK(MPI_Isend(buf, 16, MPI_CHAR, 1, kMatched, MPI_COMM_WORLD, &r));
    if (mode == 1) CHECK_OK(MPI_Ibsend(buf, 16, MPI_CHAR, 1, kMatched, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Recv(&ack, 1, MPI_INT, 1, kMatched, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Cancel(&r));
    CHECK_OK(MPI_Wait(&r, &st));
    CHECK_OK(MPI_Test_cancelled(&st, &cancelled));
    CHECK_EQ(cancelled, 0);
  }
  free(buf);
}

static void receiver(int computing) {
  char* buf = malloc(kBig);
  for (int c = 0; c < 12; ++c) {
    int flag = 1;
    double computed_until = 0, report[3] = {-1, 0, 0};
    if (computing) {
      /* No MPI call for a while: only an agent can answer the cancel now. */
      volatile double x = 0;
      for (double t0 = now(); now() - t0 < (computing == 1 ? 1.5 : 0.2);) x += 1;
      computed_until = now();
    }
    CHECK_OK(MPI_Recv(report, 3, MPI_DOUBLE, 0, kDone, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_EQ(report[0], 1);
    if (computing == 1 && report[1] < computed_until - 0.5) {
      if (report[2] > computed_until)
        fprintf(stderr,
                "case %d: the cancel started %.2f s before the receiver stopped computing, ended %.2f s after\n", c,
                computed_until - report[1], report[2] - computed_until);
      CHECK(report[2] <= computed_until);
    }
    /* The cancelled message is gone; the next one with its tag arrives. */
    MPI_Status st;
    buf[0] = 0;
    CHECK_OK(MPI_Recv(buf, kBig, MPI_CHAR, 0, c, MPI_COMM_WORLD, &st));
    CHECK_EQ(buf[0], 2);
    int count = -1;
    MPI_Get_count(&st, MPI_CHAR, &count);
    CHECK_EQ(count, case_bytes(c));
    CHECK_OK(MPI_Iprobe(0, c, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    CHECK_EQ(flag, 0);
  }
  for (int mode = 0; mode < 2; ++mode) {
    int ack = 1;
    buf[0] = 0;
    CHECK_OK(MPI_Recv(buf, 16, MPI_CHAR, 0, kMatched, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_EQ(buf[0], 3);
    CHECK_OK(MPI_Send(&ack, 1, MPI_INT, 0, kMatched, MPI_COMM_WORLD));
  }
  free(buf);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  /* 1: computing with an agent, 2: computing without one */
  int computing = argc < 2 ? 0 : strcmp(argv[1], "computing") == 0 ? 1 : strcmp(argv[1], "computing_off") == 0 ? 2 : 0;
  int bytes = 2 * (kBig + MPI_BSEND_OVERHEAD);
  void* attached = malloc((size_t)bytes);
  CHECK_OK(MPI_Buffer_attach(attached, bytes));
  if (size >= 2) {
    if (rank == 0) sender(computing);
    if (rank == 1) receiver(computing);
  }
  CHECK_OK(MPI_Buffer_detach(&attached, &bytes));
  free(attached);
  return mt_finish();
}
