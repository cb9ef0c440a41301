/* Misuse of one-sided communication under MPI_ERRORS_RETURN: each error
 * gives its class, and nothing outside the window changes. Checks that
 * MPICH does not make (it leaves some erroneous programs undetected) are
 * marked ADI3_ONLY. */
#include "mpitest.h"

#ifdef ADI3_MPI
#define ADI3_ONLY(x) x
#else
#define ADI3_ONLY(x) (void)0
#endif
/* MPI-4.1's class for a bad error handler (MPICH 4.0 has none). */
#ifdef MPI_ERR_ERRHANDLER
#define ADI3_ERR_ERRHANDLER MPI_ERR_ERRHANDLER
#else
#define ADI3_ERR_ERRHANDLER MPI_ERR_ARG
#endif

#define WIN_INTS 16
#define GUARD 16
#define SENTINEL 0x5a5a5a5a

static int rank, size;
static int handler_calls, handler_code;
static MPI_Win handler_win;

static void win_handler(MPI_Win* win, int* code, ...) {
  ++handler_calls;
  handler_code = *code;
  handler_win = *win;
}

/* mem = [GUARD sentinels][WIN_INTS window][GUARD sentinels] */
static void check_guards(int* mem, const char* when) {
  int bad = 0;
  for (int i = 0; i < GUARD; ++i) bad += mem[i] != SENTINEL || mem[GUARD + WIN_INTS + i] != SENTINEL;
  for (int i = 0; i < WIN_INTS; ++i) bad += mem[GUARD + i] != i;
  if (bad) fprintf(stderr, "[rank %d] memory changed %s\n", rank, when);
  CHECK_EQ(bad, 0);
}

static void test_args(MPI_Win win) {
  int buf[64] = {0}, res[64];
  int right = (rank + 1) % size;
  MPI_Datatype loose;
  MPI_Type_contiguous(2, MPI_INT, &loose); /* never committed */

  /* no epoch */
  CHECK_CLASS(MPI_Put(buf, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
  CHECK_CLASS(MPI_Get(buf, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
  CHECK_CLASS(MPI_Accumulate(buf, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_SUM, win), MPI_ERR_RMA_SYNC);
  CHECK_CLASS(MPI_Win_unlock(right, win), MPI_ERR_RMA_SYNC);
  CHECK_CLASS(MPI_Win_unlock_all(win), MPI_ERR_RMA_SYNC);
  CHECK_CLASS(MPI_Win_flush(right, win), MPI_ERR_RMA_SYNC);
  CHECK_CLASS(MPI_Win_flush_all(win), MPI_ERR_RMA_SYNC);
  CHECK_CLASS(MPI_Win_complete(win), MPI_ERR_RMA_SYNC);
  CHECK_CLASS(MPI_Win_wait(win), MPI_ERR_RMA_SYNC);

  /* bad lock type, rank, assertion */
  ADI3_ONLY(CHECK_CLASS(MPI_Win_lock(12345, right, 0, win), MPI_ERR_LOCKTYPE)); /* MPICH: MPI_ERR_ARG */
  CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, size, 0, win), MPI_ERR_RANK);
  CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, -5, 0, win), MPI_ERR_RANK);
  ADI3_ONLY(CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, right, 0x7, win), MPI_ERR_ASSERT));
  ADI3_ONLY(CHECK_CLASS(MPI_Win_fence(0x3, win), MPI_ERR_ASSERT));

  /* inside a passive epoch */
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
  CHECK_CLASS(MPI_Put(buf, 1, MPI_INT, size + 2, 0, 1, MPI_INT, win), MPI_ERR_RANK);
  CHECK_CLASS(MPI_Put(buf, -1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_COUNT);
  CHECK_CLASS(MPI_Put(buf, 1, MPI_DATATYPE_NULL, right, 0, 1, MPI_INT, win), MPI_ERR_TYPE);
  CHECK_CLASS(MPI_Put(buf, 1, loose, right, 0, 1, MPI_INT, win), MPI_ERR_TYPE);
  ADI3_ONLY(CHECK_CLASS(MPI_Put(buf, 1, MPI_INT, right, 0, 1, loose, win), MPI_ERR_TYPE));
  /* outside the window: past the end, negative, straddling the end */
  ADI3_ONLY(CHECK_CLASS(MPI_Put(buf, 1, MPI_INT, right, WIN_INTS, 1, MPI_INT, win), MPI_ERR_RMA_RANGE));
  ADI3_ONLY(CHECK_CLASS(MPI_Put(buf, 1, MPI_INT, right, -1, 1, MPI_INT, win), MPI_ERR_RMA_RANGE));
  ADI3_ONLY(CHECK_CLASS(MPI_Put(buf, 4, MPI_INT, right, WIN_INTS - 2, 4, MPI_INT, win), MPI_ERR_RMA_RANGE));
  ADI3_ONLY(CHECK_CLASS(MPI_Get(res, 4, MPI_INT, right, WIN_INTS - 2, 4, MPI_INT, win), MPI_ERR_RMA_RANGE));
  ADI3_ONLY(CHECK_CLASS(MPI_Accumulate(buf, 20, MPI_INT, right, 0, 20, MPI_INT, MPI_SUM, win), MPI_ERR_RMA_RANGE));
  ADI3_ONLY(CHECK_CLASS(MPI_Fetch_and_op(buf, res, MPI_INT, right, WIN_INTS, MPI_SUM, win), MPI_ERR_RMA_RANGE));
  ADI3_ONLY(CHECK_CLASS(MPI_Compare_and_swap(buf, buf, res, MPI_INT, right, 1L << 40, win), MPI_ERR_RMA_RANGE));
  /* a target type whose extent reaches past the end */
  MPI_Datatype wide;
  MPI_Type_vector(2, 1, WIN_INTS, MPI_INT, &wide);
  MPI_Type_commit(&wide);
  ADI3_ONLY(CHECK_CLASS(MPI_Put(buf, 2, MPI_INT, right, 0, 1, wide, win), MPI_ERR_RMA_RANGE));
  MPI_Type_free(&wide);
  /* type signatures that differ, accumulate rules */
  ADI3_ONLY(CHECK_CLASS(MPI_Put(buf, 2, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_TYPE));
  ADI3_ONLY(CHECK_CLASS(MPI_Accumulate(buf, 1, MPI_INT, right, 0, 1, MPI_FLOAT, MPI_SUM, win), MPI_ERR_TYPE));
  CHECK_CLASS(MPI_Accumulate(buf, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_OP_NULL, win), MPI_ERR_OP);
  MPI_Datatype pair;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  CHECK_CLASS(MPI_Fetch_and_op(buf, res, pair, right, 0, MPI_SUM, win), MPI_ERR_TYPE);
  CHECK_CLASS(MPI_Compare_and_swap(buf, buf, res, MPI_FLOAT, right, 0, win), MPI_ERR_TYPE);
  MPI_Type_free(&pair);
  CHECK_CLASS(MPI_Win_fence(0, win), MPI_ERR_RMA_SYNC);
  CHECK_CLASS(MPI_Win_lock_all(0, win), MPI_ERR_RMA_SYNC);
  CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win), MPI_ERR_RMA_SYNC);
  /* a rank that is not locked (MPICH 4 aborts with an internal assertion) */
  if (size > 2) ADI3_ONLY(CHECK_CLASS(MPI_Win_unlock((right + 1) % size, win), MPI_ERR_RMA_SYNC));
  CHECK_OK(MPI_Win_unlock(right, win));

  /* request-based operations need a passive epoch */
  CHECK_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
#ifdef ADI3_MPI
  MPI_Request req;
  CHECK_CLASS(MPI_Rput(buf, 1, MPI_INT, right, 0, 1, MPI_INT, win, &req), MPI_ERR_RMA_SYNC);
  /* in a fence epoch that issued an operation (one without operations has
     not started, MPI-4.1 12.5.1, and a lock may follow it) */
  CHECK_OK(MPI_Put(buf, 1, MPI_INT, right, 0, 1, MPI_INT, win));
  CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win), MPI_ERR_RMA_SYNC);
#endif
  CHECK_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));

  /* freeing with an epoch open */
  CHECK_OK(MPI_Win_lock_all(0, win));
  MPI_Win tmp = win;
  CHECK_CLASS(MPI_Win_free(&tmp), MPI_ERR_RMA_SYNC);
  CHECK(tmp == win);
  CHECK_OK(MPI_Win_unlock_all(win));
  MPI_Type_free(&loose);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* The end of an epoch is seen by the operations and flushes after it, once
 * the epoch's own took the fast paths (which remember per target what the
 * epoch allows). Nothing here changes the window: gets, NO_OP fetches and a
 * REPLACE of element 0 with its own value 0. */
static int zero = 0, res = -1, cmp = -1; /* not on the stack: the epoch's end completes the operations */
static void ops_pass(int right, MPI_Win win) {
  CHECK_OK(MPI_Get(&res, 1, MPI_INT, right, 1, 1, MPI_INT, win));
  CHECK_OK(MPI_Fetch_and_op(&zero, &res, MPI_INT, right, 2, MPI_NO_OP, win));
  CHECK_OK(MPI_Accumulate(&zero, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_REPLACE, win));
  CHECK_OK(MPI_Compare_and_swap(&zero, &cmp, &res, MPI_INT, right, 3, win)); /* 3 != -1: no swap */
}
static void ops_refused(int right, MPI_Win win) {
  CHECK_CLASS(MPI_Get(&res, 1, MPI_INT, right, 1, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
  CHECK_CLASS(MPI_Put(&zero, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
  CHECK_CLASS(MPI_Accumulate(&zero, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_REPLACE, win), MPI_ERR_RMA_SYNC);
  ADI3_ONLY(CHECK_CLASS(MPI_Fetch_and_op(&zero, &res, MPI_INT, right, 2, MPI_NO_OP, win), MPI_ERR_RMA_SYNC));
  ADI3_ONLY(CHECK_CLASS(MPI_Compare_and_swap(&zero, &cmp, &res, MPI_INT, right, 3, win), MPI_ERR_RMA_SYNC));
  CHECK_CLASS(MPI_Win_flush(right, win), MPI_ERR_RMA_SYNC);
}
static void test_epoch_ends(MPI_Win win) {
  int right = (rank + 1) % size;
  for (int round = 0; round < 2; ++round) { /* the second finds what the first left */
    CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    ops_pass(right, win);
    CHECK_OK(MPI_Win_flush(right, win));
    ops_pass(right, win);
    CHECK_OK(MPI_Win_flush(right, win));
    CHECK_OK(MPI_Win_unlock(right, win));
    ops_refused(right, win);
    CHECK_OK(MPI_Win_lock_all(0, win));
    ops_pass(right, win);
    CHECK_OK(MPI_Win_flush(right, win));
    CHECK_OK(MPI_Win_unlock_all(win));
    ops_refused(right, win);
    CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, MPI_MODE_NOCHECK, win));
    ops_pass(right, win);
    CHECK_OK(MPI_Win_flush(right, win));
    CHECK_OK(MPI_Win_unlock(right, win));
    ops_refused(right, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_fence(0, win));
  ops_pass(right, win);
  CHECK_CLASS(MPI_Win_flush(right, win), MPI_ERR_RMA_SYNC);
  CHECK_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  ops_refused(right, win);
  MPI_Barrier(MPI_COMM_WORLD);
}

static void test_handles(MPI_Win win, int* mem) {
  MPI_Win w;
  int buf = 0, pair[2] = {0, 0}, flag;
  CHECK_CLASS(MPI_Win_fence(0, MPI_WIN_NULL), MPI_ERR_WIN);
  CHECK_CLASS(MPI_Put(&buf, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_WIN_NULL), MPI_ERR_WIN);
  CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, (MPI_Win)0x12345), MPI_ERR_WIN);
  CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, (MPI_Win)MPI_COMM_WORLD), MPI_ERR_WIN);
  void* attr;
  CHECK_CLASS(MPI_Win_get_attr(MPI_WIN_NULL, MPI_WIN_BASE, &attr, &flag), MPI_ERR_WIN);
  /* window creation arguments */
  CHECK_CLASS(MPI_Win_create(mem, -4, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w), MPI_ERR_SIZE);
  CHECK_CLASS(MPI_Win_create(mem, 4, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &w), MPI_ERR_DISP);
  CHECK_CLASS(MPI_Win_create(mem, 4, 1, MPI_INFO_NULL, MPI_COMM_NULL, &w), MPI_ERR_COMM);
  void* p;
  CHECK_CLASS(MPI_Win_allocate(-1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &p, &w), MPI_ERR_SIZE);
  /* attach needs a dynamic window */
  CHECK_CLASS(MPI_Win_attach(win, &buf, sizeof buf), MPI_ERR_RMA_FLAVOR);
  /* communicator error handlers do not go on windows */
  MPI_Errhandler ce;
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &ce);
  ADI3_ONLY(CHECK_CLASS(MPI_Win_set_errhandler(win, MPI_ERRHANDLER_NULL), ADI3_ERR_ERRHANDLER));
  MPI_Errhandler_free(&ce);
  /* keyvals of other objects */
  int ckey;
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ckey, NULL);
  CHECK_CLASS(MPI_Win_set_attr(win, ckey, NULL), MPI_ERR_KEYVAL);
  CHECK_CLASS(MPI_Win_set_attr(win, MPI_WIN_BASE, NULL), MPI_ERR_KEYVAL);
  MPI_Comm_free_keyval(&ckey);
  /* a dynamic window: attach overlaps, detach of what was never attached */
  CHECK_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w));
  MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
  int region[8];
  CHECK_OK(MPI_Win_attach(w, region, sizeof region));
  ADI3_ONLY(CHECK_CLASS(MPI_Win_attach(w, region + 2, sizeof(int)), MPI_ERR_RMA_ATTACH));
  ADI3_ONLY(CHECK_CLASS(MPI_Win_detach(w, &buf), MPI_ERR_RMA_ATTACH));
  /* a dynamic window: addresses outside what the target attached */
  MPI_Aint addr, all[64];
  MPI_Get_address(region, &addr);
  MPI_Allgather(&addr, 1, MPI_AINT, all, 1, MPI_AINT, MPI_COMM_WORLD);
  int right = (rank + 1) % size;
  /* only the target knows what it attached: it refuses the access and the
     origin's unlock reports it */
#ifdef ADI3_MPI
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w));
  CHECK_OK(MPI_Put(&buf, 1, MPI_INT, right, all[right] + 8 * (MPI_Aint)sizeof(int), 1, MPI_INT, w));
  CHECK_CLASS(MPI_Win_unlock(right, w), MPI_ERR_RMA_RANGE);
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w));
  CHECK_OK(MPI_Put(pair, 2, MPI_INT, right, all[right] + 7 * (MPI_Aint)sizeof(int), 2, MPI_INT, w));
  CHECK_CLASS(MPI_Win_unlock(right, w), MPI_ERR_RMA_RANGE);
#endif
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w));
  CHECK_OK(MPI_Put(&buf, 1, MPI_INT, right, all[right] + 7 * (MPI_Aint)sizeof(int), 1, MPI_INT, w));
  CHECK_OK(MPI_Win_unlock(right, w));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_detach(w, region));
  CHECK_OK(MPI_Win_free(&w));
  MPI_Barrier(MPI_COMM_WORLD);
}

static void test_handler(MPI_Win win) {
  MPI_Errhandler eh, got;
  CHECK_OK(MPI_Win_create_errhandler(win_handler, &eh));
  CHECK_OK(MPI_Win_set_errhandler(win, eh));
  CHECK_OK(MPI_Win_get_errhandler(win, &got));
  CHECK(got == eh);
  MPI_Errhandler_free(&got);
  int buf = 0;
  handler_calls = 0;
  int rc = MPI_Put(&buf, 1, MPI_INT, 0, 0, 1, MPI_INT, win); /* no epoch */
  CHECK(rc != MPI_SUCCESS);
  CHECK_EQ(handler_calls, 1);
  CHECK_EQ(handler_code, rc);
  CHECK(handler_win == win);
  int cls;
  MPI_Error_class(handler_code, &cls);
  CHECK_EQ(cls, MPI_ERR_RMA_SYNC);
  char msg[MPI_MAX_ERROR_STRING];
  int len;
  MPI_Error_string(rc, msg, &len);
  CHECK(len > 0);
  CHECK_OK(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
  CHECK_EQ(handler_calls, 2);
  CHECK_EQ(handler_code, MPI_ERR_OTHER);
  CHECK_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  CHECK_OK(MPI_Errhandler_free(&eh));
  CHECK_OK(MPI_Win_get_errhandler(win, &got));
  CHECK(got == MPI_ERRORS_RETURN);
  /* the default on a new window is MPI_ERRORS_ARE_FATAL (the communicator's) */
  MPI_Win w;
  int mem[2];
  CHECK_OK(MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w));
  CHECK_OK(MPI_Win_get_errhandler(w, &got));
  CHECK(got == MPI_ERRORS_ARE_FATAL);
  CHECK_OK(MPI_Win_free(&w));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  for (int flav = 0; flav < 2; ++flav) {
    int* mem = malloc((2 * GUARD + WIN_INTS) * sizeof(int));
    for (int i = 0; i < 2 * GUARD + WIN_INTS; ++i) mem[i] = SENTINEL;
    for (int i = 0; i < WIN_INTS; ++i) mem[GUARD + i] = i;
    MPI_Win win;
    int* base = mem + GUARD;
    if (flav == 0) {
      CHECK_OK(MPI_Win_create(base, WIN_INTS * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    } else {
      /* an allocated window, copied into the guarded buffer to check it */
      CHECK_OK(MPI_Win_allocate(WIN_INTS * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
      for (int i = 0; i < WIN_INTS; ++i) base[i] = i;
    }
    CHECK_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_Barrier(MPI_COMM_WORLD);
    test_args(win);
    test_epoch_ends(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (flav == 1) {
      MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
      memcpy(mem + GUARD, base, WIN_INTS * sizeof(int));
      MPI_Win_unlock(rank, win);
    }
    check_guards(mem, flav ? "(allocate window)" : "(create window)");
    test_handles(win, mem + GUARD);
    test_handler(win);
    CHECK_OK(MPI_Win_free(&win));
    free(mem);
  }
  return mt_finish();
}
