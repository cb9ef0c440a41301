/* Out of requests is MPI_ERR_NO_MEM, never a crash, on every path that
 * starts a request: run with ADI3_MAX_REQUESTS=64 (one chunk of the pool).
 * Each rank fills its pool with receives that nothing matches, then every
 * call below must fail with MPI_ERR_NO_MEM saying what it was starting,
 * having started nothing: nonblocking and persistent collectives, Comm_idup,
 * generalized requests, Isendrecv, partitioned requests, and the
 * request-based RMA calls on an allocated and a created window. Then the
 * receives are withdrawn and the same calls succeed with every value
 * checked, and the pool holds as many requests as before (the failures
 * leaked none). */
#include <stdint.h>

#include "mpitest.h"
#include "greq_stub.h"

enum { kMaxFill = 256, kInts = 64 };

static int rank, size;
static MPI_Request fills[kMaxFill];
static char sink[kMaxFill];

/* A rank at the cap cannot hold an arrival it has no receive for (it would
 * end the conversation with the sender), so the ranks leave a full-pool
 * phase by messages into receives posted before it, not by a barrier. */
static MPI_Request syncs[kMaxFill];

/* Receives that nothing matches, until the pool is exhausted: how many. */
static int fill_pool(void) {
  for (int i = 0; i < size; ++i) {
    syncs[i] = MPI_REQUEST_NULL;
    if (i != rank) CHECK_OK(MPI_Irecv(NULL, 0, MPI_CHAR, i, 4243, MPI_COMM_WORLD, &syncs[i]));
  }
  int n = 0;
  for (; n < kMaxFill; ++n) {
    int e = MPI_Irecv(&sink[n], 1, MPI_CHAR, MPI_ANY_SOURCE, 4242, MPI_COMM_WORLD, &fills[n]);
    if (e != MPI_SUCCESS) {
      int cls = 0;
      MPI_Error_class(e, &cls);
      CHECK_EQ(cls, MPI_ERR_NO_MEM);
      break;
    }
  }
  CHECK(n > 0 && n < kMaxFill);
  return n;
}

static void drain_pool(int n) {
  for (int i = 0; i < n; ++i) {
    MPI_Status st;
    int cancelled = 0;
    CHECK_OK(MPI_Cancel(&fills[i]));
    CHECK_OK(MPI_Wait(&fills[i], &st));
    MPI_Test_cancelled(&st, &cancelled);
    CHECK(cancelled);
  }
  for (int i = 0; i < size; ++i)
    if (i != rank) CHECK_OK(MPI_Send(NULL, 0, MPI_CHAR, i, 4243, MPI_COMM_WORLD));
  CHECK_OK(MPI_Waitall(size, syncs, MPI_STATUSES_IGNORE));
}

/* The call failed with MPI_ERR_NO_MEM, its message names the cap and what
 * was being started, and no request came back. */
static void check_nomem(int line, const char* call, int e, const char* want, MPI_Request r) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0, cls = -1;
  if (e == MPI_SUCCESS) {
    mt_fail(__FILE__, line, call, e, MPI_ERR_NO_MEM);
    return;
  }
  MPI_Error_class(e, &cls);
  MPI_Error_string(e, text, &len);
  if (cls != MPI_ERR_NO_MEM || !strstr(text, "ADI3_MAX_REQUESTS") || !strstr(text, want)) {
    fprintf(stderr, "[rank %d] line %d: %s: class %d, message \"%s\" (want MPI_ERR_NO_MEM naming \"%s\")\n", rank, line,
            call, cls, text, want);
    ++mt_errors;
  }
  if (r != MPI_REQUEST_NULL) mt_fail(__FILE__, line, "no request on failure", (long long)r, 0);
}
#define EXPECT_NOMEM(call, want, req)            \
  do {                                           \
    req = MPI_REQUEST_NULL;                      \
    const int e_ = (call);                       \
    check_nomem(__LINE__, #call, e_, want, req); \
  } while (0)

static int free_fn(void* x) {
  ++*(int*)x; /* must not run for a start that failed */
  return MPI_SUCCESS;
}

struct windows {
  MPI_Win win[2]; /* allocated, created */
  int* base[2];
  int* created_mem;
};

static void open_windows(struct windows* w) {
  CHECK_OK(MPI_Win_allocate(kInts * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w->base[0], &w->win[0]));
  w->created_mem = calloc(kInts, sizeof(int));
  w->base[1] = w->created_mem;
  CHECK_OK(MPI_Win_create(w->created_mem, kInts * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w->win[1]));
  for (int k = 0; k < 2; ++k) {
    MPI_Win_set_errhandler(w->win[k], MPI_ERRORS_RETURN);
    CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w->win[k]));
    for (int i = 0; i < kInts; ++i) w->base[k][i] = 0;
    CHECK_OK(MPI_Win_unlock(rank, w->win[k]));
  }
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  for (int k = 0; k < 2; ++k) CHECK_OK(MPI_Win_lock_all(0, w->win[k]));
}

/* At the cap: every call fails cleanly and starts nothing. */
static void at_the_cap(struct windows* w) {
  MPI_Request r;
  int in[4] = {1, 2, 3, 4}, out[4] = {0}, one = 1, res = 0;
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  EXPECT_NOMEM(MPI_Ibarrier(MPI_COMM_WORLD, &r), "a nonblocking collective", r);
  EXPECT_NOMEM(MPI_Iallreduce(in, out, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r), "a nonblocking collective", r);
  EXPECT_NOMEM(MPI_Ibcast(in, 4, MPI_INT, 0, MPI_COMM_WORLD, &r), "a nonblocking collective", r);
  EXPECT_NOMEM(MPI_Allreduce_init(in, out, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
               "a persistent collective", r);
  MPI_Comm dup = MPI_COMM_NULL;
  EXPECT_NOMEM(MPI_Comm_idup(MPI_COMM_WORLD, &dup, &r), "MPI_Comm_idup", r);
  CHECK(dup == MPI_COMM_NULL);
  int freed = 0;
  EXPECT_NOMEM(MPI_Grequest_start(greq_stub_query, free_fn, greq_stub_cancel, &freed, &r), "a generalized request", r);
  CHECK_EQ(freed, 0);
  EXPECT_NOMEM(MPI_Isendrecv(in, 4, MPI_INT, right, 5, out, 4, MPI_INT, left, 5, MPI_COMM_WORLD, &r),
               "a generalized request", r);
  EXPECT_NOMEM(MPI_Psend_init(in, 2, 2, MPI_INT, right, 6, MPI_COMM_WORLD, MPI_INFO_NULL, &r), "MPI_Psend_init", r);
  EXPECT_NOMEM(MPI_Precv_init(out, 2, 2, MPI_INT, left, 6, MPI_COMM_WORLD, MPI_INFO_NULL, &r), "MPI_Precv_init", r);
  for (int k = 0; k < 2; ++k) {
    EXPECT_NOMEM(MPI_Rput(in, 4, MPI_INT, right, 0, 4, MPI_INT, w->win[k], &r), "Rput", r);
    EXPECT_NOMEM(MPI_Rget(out, 4, MPI_INT, right, 0, 4, MPI_INT, w->win[k], &r), "Rget", r);
    EXPECT_NOMEM(MPI_Raccumulate(&one, 1, MPI_INT, right, kInts - 1, 1, MPI_INT, MPI_SUM, w->win[k], &r), "Raccumulate",
                 r);
    EXPECT_NOMEM(
        MPI_Rget_accumulate(&one, 1, MPI_INT, &res, 1, MPI_INT, right, kInts - 1, 1, MPI_INT, MPI_SUM, w->win[k], &r),
        "Rget_accumulate", r);
    /* To no one: still a request, so still out of them. */
    EXPECT_NOMEM(MPI_Rput(in, 4, MPI_INT, MPI_PROC_NULL, 0, 4, MPI_INT, w->win[k], &r), "Rput", r);
  }
}

/* Below the cap again: the same calls work, every value checked. */
static void after(struct windows* w) {
  MPI_Request r;
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int in[4], out[4];
  for (int i = 0; i < 4; ++i) in[i] = rank * 10 + i;
  CHECK_OK(MPI_Ibarrier(MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  CHECK_OK(MPI_Iallreduce(in, out, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  for (int i = 0; i < 4; ++i) CHECK_EQ(out[i], 10 * size * (size - 1) / 2 + size * i);
  CHECK_OK(MPI_Allreduce_init(in, out, 4, MPI_INT, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
  for (int round = 0; round < 2; ++round) {
    CHECK_OK(MPI_Start(&r));
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; ++i) CHECK_EQ(out[i], (size - 1) * 10 + i);
  }
  CHECK_OK(MPI_Request_free(&r));
  MPI_Comm dup = MPI_COMM_NULL;
  CHECK_OK(MPI_Comm_idup(MPI_COMM_WORLD, &dup, &r));
  CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  int sum = 0;
  CHECK_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, dup));
  CHECK_EQ(sum, size * (size - 1) / 2);
  CHECK_OK(MPI_Comm_free(&dup));
  int freed = 0;
  CHECK_OK(MPI_Grequest_start(greq_stub_query, free_fn, greq_stub_cancel, &freed, &r));
  CHECK_OK(MPI_Grequest_complete(r));
  CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  CHECK_EQ(freed, 1);
  CHECK_OK(MPI_Isendrecv(in, 4, MPI_INT, right, 5, out, 4, MPI_INT, left, 5, MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  for (int i = 0; i < 4; ++i) CHECK_EQ(out[i], left * 10 + i);
  MPI_Request part[2];
  for (int i = 0; i < 4; ++i) out[i] = -1;
  CHECK_OK(MPI_Psend_init(in, 2, 2, MPI_INT, right, 6, MPI_COMM_WORLD, MPI_INFO_NULL, &part[0]));
  CHECK_OK(MPI_Precv_init(out, 2, 2, MPI_INT, left, 6, MPI_COMM_WORLD, MPI_INFO_NULL, &part[1]));
  CHECK_OK(MPI_Startall(2, part));
  CHECK_OK(MPI_Pready_range(0, 1, part[0]));
  CHECK_OK(MPI_Waitall(2, part, MPI_STATUSES_IGNORE));
  for (int i = 0; i < 4; ++i) CHECK_EQ(out[i], left * 10 + i);
  CHECK_OK(MPI_Request_free(&part[0]));
  CHECK_OK(MPI_Request_free(&part[1]));
  for (int k = 0; k < 2; ++k) {
    int one = 1, res = -1;
    CHECK_OK(MPI_Rput(in, 4, MPI_INT, right, 4 * k, 4, MPI_INT, w->win[k], &r));
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Win_flush(right, w->win[k]));
    CHECK_OK(MPI_Rget(out, 4, MPI_INT, right, 4 * k, 4, MPI_INT, w->win[k], &r));
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; ++i) CHECK_EQ(out[i], in[i]);
    CHECK_OK(MPI_Raccumulate(&one, 1, MPI_INT, right, kInts - 1, 1, MPI_INT, MPI_SUM, w->win[k], &r));
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Win_flush(right, w->win[k]));
    CHECK_OK(
        MPI_Rget_accumulate(&one, 1, MPI_INT, &res, 1, MPI_INT, right, kInts - 1, 1, MPI_INT, MPI_SUM, w->win[k], &r));
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK_EQ(res, 1); /* this rank is the counter's only adder */
    CHECK_OK(MPI_Win_flush_all(w->win[k]));
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  struct windows w;
  open_windows(&w);
  const int n = fill_pool();
  at_the_cap(&w);
  drain_pool(n);
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  after(&w);
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  const int again = fill_pool();
  CHECK_EQ(again, n); /* the failed calls leaked no request */
  drain_pool(again);
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  for (int k = 0; k < 2; ++k) CHECK_OK(MPI_Win_unlock_all(w.win[k]));
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  for (int k = 0; k < 2; ++k) {
    const int left = (rank + size - 1) % size;
    CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w.win[k]));
    for (int i = 0; i < 4; ++i) CHECK_EQ(w.base[k][4 * k + i], left * 10 + i);
    CHECK_EQ(w.base[k][kInts - 1], 2);
    CHECK_OK(MPI_Win_unlock(rank, w.win[k]));
    CHECK_OK(MPI_Win_free(&w.win[k]));
  }
  free(w.created_mem);
  return mt_finish();
}
