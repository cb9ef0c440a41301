/* MPI_THREAD_MULTIPLE: several threads per rank, each on its own
 * communicator, doing point-to-point, collectives and communicator
 * creation at the same time (context ids agreed while other threads
 * create communicators too). With argument "self" (mpi.threads.self, tiny
 * rings): every thread sends to its own rank, messages of varied sizes, so
 * the rank's ring to itself laps while one thread drains it and others
 * wait (the TSan preset runs it: the shm ring's empty() against its
 * producer in one process). */
#include <pthread.h>

#include "mpitest.h"

enum { THREADS = 3, ITERS = 200 };
static int rank, size;
static MPI_Comm comms[THREADS];

static void* work(void* arg) {
  int t = (int)(long)arg;
  MPI_Comm c = comms[t];
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  int flag = 1;
  MPI_Is_thread_main(&flag);
  CHECK_EQ(flag, 0);
  for (int i = 0; i < ITERS; ++i) {
    int out[4] = {rank, t, i, 7}, in[4] = {0};
    MPI_Request r[2];
    CHECK_OK(MPI_Irecv(in, 4, MPI_INT, prev, i % 5, c, &r[0]));
    CHECK_OK(MPI_Isend(out, 4, MPI_INT, next, i % 5, c, &r[1]));
    CHECK_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    CHECK_EQ(in[0], prev);
    CHECK_EQ(in[1], t);
    CHECK_EQ(in[2], i);
    if (i % 20 == 0) {
      int one = 1, sum = 0;
      CHECK_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c));
      CHECK_EQ(sum, size);
    }
    if (i % 50 == 0) {
      MPI_Comm d;
      CHECK_OK(MPI_Comm_dup(c, &d));
      int v = rank, w = -1;
      CHECK_OK(MPI_Sendrecv(&v, 1, MPI_INT, next, 0, &w, 1, MPI_INT, prev, 0, d, MPI_STATUS_IGNORE));
      CHECK_EQ(w, prev);
      CHECK_OK(MPI_Comm_free(&d));
    }
  }
  return NULL;
}

/* Sends to oneself, 1 to 2000 ints, each checked. */
static void* self_work(void* arg) {
  int t = (int)(long)arg;
  MPI_Comm c = comms[t];
  enum { MAX = 2000 };
  int* out = malloc(MAX * sizeof(int));
  int* in = malloc(MAX * sizeof(int));
  for (int i = 0; i < ITERS; ++i) {
    int n = 1 + (i * 397 + t * 131) % MAX;
    for (int k = 0; k < n; ++k) out[k] = rank * 1000003 + t * 10007 + i + k;
    MPI_Request r[2];
    MPI_Status st;
    CHECK_OK(MPI_Irecv(in, MAX, MPI_INT, rank, i, c, &r[0]));
    CHECK_OK(MPI_Isend(out, n, MPI_INT, rank, i, c, &r[1]));
    CHECK_OK(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Wait(&r[0], &st));
    int got = -1;
    MPI_Get_count(&st, MPI_INT, &got);
    CHECK_EQ(got, n);
    CHECK_EQ(in[0], out[0]);
    CHECK_EQ(in[n - 1], out[n - 1]);
  }
  free(out);
  free(in);
  return NULL;
}

int main(int argc, char** argv) {
  int provided = -1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  CHECK_EQ(provided, MPI_THREAD_MULTIPLE);
  int q = -1;
  MPI_Query_thread(&q);
  CHECK_EQ(q, MPI_THREAD_MULTIPLE);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int t = 0; t < THREADS; ++t) MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
  pthread_t th[THREADS];
  const int self = argc > 1 && strcmp(argv[1], "self") == 0;
  for (int t = 0; t < THREADS; ++t) pthread_create(&th[t], NULL, self ? self_work : work, (void*)(long)t);
  for (int t = 0; t < THREADS; ++t) pthread_join(th[t], NULL);
  for (int t = 0; t < THREADS; ++t) MPI_Comm_free(&comms[t]);
  return mt_finish();
}
