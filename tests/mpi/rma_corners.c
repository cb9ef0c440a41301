/* Corners of one-sided communication a conformance suite probes (MPI-3.1
 * chapter 11), each checked for its result and for the window memory it
 * must (not) change: MPI_PROC_NULL targets, displacements past the window
 * (MPI_ERR_RMA_RANGE naming the displacement), operations and
 * synchronizations outside or across epochs (MPI_ERR_RMA_SYNC), zero-count
 * operations, MPI_NO_OP fetches, MPI_REPLACE and MPI_SUM through derived
 * types of one predefined type, MPI_Win_flush_local(_all), request-based
 * operations, MPI_Win_lock_all + MPI_Win_sync on a shared window,
 * MPI_Win_shared_query(MPI_PROC_NULL), shared windows over whatever
 * MPI_COMM_TYPE_SHARED gives and over MPI_COMM_SELF, info keys and
 * MPI_WIN_MODEL. Runs natively, with ADI3_FORCE_EMULATION=1 and over tcp
 * (tests/mpi/CMakeLists.txt). */
#include "mpitest.h"

#ifdef ADI3_MPI
#define ADI3_ONLY(x) x
#else
#define ADI3_ONLY(x) (void)0
#endif

#define N 16

static int rank, size, right;

static int init_val(int r, int i) { return r * 1000 + i; }

/* This rank's window memory as every rank left it: init_val, except the
   cells (from, from + n) set to v (n = 0: none). Call after a barrier that
   follows the epochs. */
static void check_mem(MPI_Win win, const int* mem, int from, int n, const int* v, const char* what) {
  int bad = 0;
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
  for (int i = 0; i < N; ++i) {
    int want = (i >= from && i < from + n) ? v[i - from] : init_val(rank, i);
    if (mem[i] != want) {
      if (!bad) fprintf(stderr, "[rank %d] %s: cell %d is %d, want %d\n", rank, what, i, mem[i], want);
      ++bad;
    }
  }
  CHECK_OK(MPI_Win_unlock(rank, win));
  CHECK_EQ(bad, 0);
  MPI_Barrier(MPI_COMM_WORLD); /* before anyone writes here again */
}

static void reset_mem(MPI_Win win, int* mem) {
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
  for (int i = 0; i < N; ++i) mem[i] = init_val(rank, i);
  CHECK_OK(MPI_Win_unlock(rank, win));
  MPI_Barrier(MPI_COMM_WORLD);
}

/* MPI_PROC_NULL is a valid target of every operation: nothing moves, the
   epoch is still closed by its own synchronization (MPI-3.1 11.3). */
static void test_proc_null(MPI_Win win, int* mem) {
  int buf[4] = {7, 7, 7, 7}, res[4] = {-1, -1, -1, -1}, cmp = 0;
  CHECK_OK(MPI_Win_fence(0, win));
  CHECK_OK(MPI_Put(buf, 4, MPI_INT, MPI_PROC_NULL, 0, 4, MPI_INT, win));
  CHECK_OK(MPI_Get(res, 4, MPI_INT, MPI_PROC_NULL, 0, 4, MPI_INT, win));
  CHECK_OK(MPI_Accumulate(buf, 4, MPI_INT, MPI_PROC_NULL, 0, 4, MPI_INT, MPI_SUM, win));
  CHECK_OK(MPI_Get_accumulate(buf, 4, MPI_INT, res, 4, MPI_INT, MPI_PROC_NULL, 0, 4, MPI_INT, MPI_SUM, win));
  CHECK_OK(MPI_Fetch_and_op(buf, res, MPI_INT, MPI_PROC_NULL, 0, MPI_SUM, win));
  CHECK_OK(MPI_Compare_and_swap(buf, &cmp, res, MPI_INT, MPI_PROC_NULL, 0, win));
  /* no target, no window to be outside of */
  CHECK_OK(MPI_Put(buf, 4, MPI_INT, MPI_PROC_NULL, 1 << 20, 4, MPI_INT, win));
  /* a fence epoch is not a passive one */
  CHECK_CLASS(MPI_Win_flush_all(win), MPI_ERR_RMA_SYNC);
  CHECK_CLASS(MPI_Win_flush_local(right, win), MPI_ERR_RMA_SYNC);
  CHECK_OK(MPI_Win_fence(0, win));
  for (int i = 0; i < 4; ++i) CHECK_EQ(res[i], -1);

  MPI_Request rq[4];
  CHECK_OK(MPI_Win_lock_all(0, win));
  CHECK_OK(MPI_Rput(buf, 4, MPI_INT, MPI_PROC_NULL, 0, 4, MPI_INT, win, &rq[0]));
  CHECK_OK(MPI_Rget(res, 4, MPI_INT, MPI_PROC_NULL, 0, 4, MPI_INT, win, &rq[1]));
  CHECK_OK(MPI_Raccumulate(buf, 4, MPI_INT, MPI_PROC_NULL, 0, 4, MPI_INT, MPI_REPLACE, win, &rq[2]));
  CHECK_OK(MPI_Rget_accumulate(buf, 4, MPI_INT, res, 4, MPI_INT, MPI_PROC_NULL, 0, 4, MPI_INT, MPI_NO_OP, win, &rq[3]));
  CHECK_OK(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
  for (int i = 0; i < 4; ++i) CHECK(rq[i] == MPI_REQUEST_NULL);
  ADI3_ONLY(CHECK_OK(MPI_Win_flush(MPI_PROC_NULL, win)));
  ADI3_ONLY(CHECK_OK(MPI_Win_flush_local(MPI_PROC_NULL, win)));
  CHECK_OK(MPI_Win_unlock_all(win));
  for (int i = 0; i < 4; ++i) CHECK_EQ(res[i], -1);
  MPI_Barrier(MPI_COMM_WORLD);
  check_mem(win, mem, 0, 0, NULL, "after MPI_PROC_NULL operations");
}

/* Past the window: MPI_ERR_RMA_RANGE whose text names the displacement;
   nothing written. Zero-count operations anywhere inside are no-ops. */
static void test_range_and_zero(MPI_Win win, int* mem) {
  int buf[4] = {5, 6, 7, 8}, res[4] = {-1, -1, -1, -1};
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0, rc;
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
  rc = MPI_Put(buf, 1, MPI_INT, right, 1000003, 1, MPI_INT, win);
  CHECK_CLASS(rc, MPI_ERR_RMA_RANGE);
  if (rc != MPI_SUCCESS) {
    MPI_Error_string(rc, msg, &len);
    ADI3_ONLY(CHECK(strstr(msg, "1000003") != NULL));
  }
  CHECK_CLASS(MPI_Get(res, 2, MPI_INT, right, N - 1, 2, MPI_INT, win), MPI_ERR_RMA_RANGE);
  CHECK_CLASS(MPI_Get_accumulate(buf, 1, MPI_INT, res, 1, MPI_INT, right, N, 1, MPI_INT, MPI_SUM, win),
              MPI_ERR_RMA_RANGE);
  CHECK_CLASS(MPI_Fetch_and_op(buf, res, MPI_INT, right, N, MPI_NO_OP, win), MPI_ERR_RMA_RANGE);
  MPI_Request rq = MPI_REQUEST_NULL;
  CHECK_CLASS(MPI_Rput(buf, 1, MPI_INT, right, N, 1, MPI_INT, win, &rq), MPI_ERR_RMA_RANGE);
  if (rq != MPI_REQUEST_NULL) MPI_Wait(&rq, MPI_STATUS_IGNORE);
  /* zero counts: at the start, in the middle and at the very end */
  CHECK_OK(MPI_Put(buf, 0, MPI_INT, right, 0, 0, MPI_INT, win));
  CHECK_OK(MPI_Put(buf, 0, MPI_INT, right, N, 0, MPI_INT, win));
  CHECK_OK(MPI_Get(res, 0, MPI_INT, right, 3, 0, MPI_INT, win));
  CHECK_OK(MPI_Accumulate(buf, 0, MPI_INT, right, 5, 0, MPI_INT, MPI_SUM, win));
  CHECK_OK(MPI_Get_accumulate(buf, 0, MPI_INT, res, 0, MPI_INT, right, 7, 0, MPI_INT, MPI_SUM, win));
  CHECK_OK(MPI_Rget(res, 0, MPI_INT, right, N, 0, MPI_INT, win, &rq));
  CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  CHECK_OK(MPI_Win_unlock(right, win));
  for (int i = 0; i < 4; ++i) CHECK_EQ(res[i], -1);
  /* the window still works after the errors */
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
  CHECK_OK(MPI_Get(res, 2, MPI_INT, right, N - 2, 2, MPI_INT, win));
  CHECK_OK(MPI_Win_unlock(right, win));
  CHECK_EQ(res[0], init_val(right, N - 2));
  CHECK_EQ(res[1], init_val(right, N - 1));
  MPI_Barrier(MPI_COMM_WORLD);
  check_mem(win, mem, 0, 0, NULL, "after refused and zero-count operations");
}

/* Operations and synchronizations that do not fit the epoch. */
static void test_sync(MPI_Win win, int* mem) {
  int buf[2] = {1, 2}, res[2] = {0, 0}, cmp = 0;
  MPI_Request rq = MPI_REQUEST_NULL;
  CHECK_CLASS(MPI_Get_accumulate(buf, 1, MPI_INT, res, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_SUM, win),
              MPI_ERR_RMA_SYNC);
  CHECK_CLASS(MPI_Fetch_and_op(buf, res, MPI_INT, right, 0, MPI_SUM, win), MPI_ERR_RMA_SYNC);
  CHECK_CLASS(MPI_Compare_and_swap(buf, &cmp, res, MPI_INT, right, 0, win), MPI_ERR_RMA_SYNC);
  CHECK_CLASS(MPI_Rget(res, 1, MPI_INT, right, 0, 1, MPI_INT, win, &rq), MPI_ERR_RMA_SYNC);
  CHECK_CLASS(MPI_Win_flush_local(right, win), MPI_ERR_RMA_SYNC);
  CHECK_CLASS(MPI_Win_flush_local_all(win), MPI_ERR_RMA_SYNC);
  /* lock ... unlock_all, lock_all ... unlock */
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
  CHECK_CLASS(MPI_Win_unlock_all(win), MPI_ERR_RMA_SYNC);
  CHECK_CLASS(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win), MPI_ERR_RMA_SYNC);
  MPI_Win tmp = win;
  CHECK_CLASS(MPI_Win_free(&tmp), MPI_ERR_RMA_SYNC);
  CHECK(tmp == win);
  CHECK_OK(MPI_Win_unlock(right, win));
  CHECK_OK(MPI_Win_lock_all(0, win));
  CHECK_CLASS(MPI_Win_unlock(right, win), MPI_ERR_RMA_SYNC);
  CHECK_CLASS(MPI_Win_lock_all(0, win), MPI_ERR_RMA_SYNC);
  CHECK_OK(MPI_Win_unlock_all(win));
  /* an access epoch (start) left open at MPI_Win_free */
  MPI_Group world, peer;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int left = (rank + size - 1) % size;
  MPI_Group_incl(world, 1, &right, &peer);
  MPI_Group from;
  MPI_Group_incl(world, 1, &left, &from);
  CHECK_OK(MPI_Win_post(from, 0, win));
  CHECK_OK(MPI_Win_start(peer, 0, win));
  tmp = win;
  CHECK_CLASS(MPI_Win_free(&tmp), MPI_ERR_RMA_SYNC);
  CHECK(tmp == win);
  CHECK_OK(MPI_Put(buf, 1, MPI_INT, right, 2, 1, MPI_INT, win));
  CHECK_OK(MPI_Win_complete(win));
  CHECK_OK(MPI_Win_wait(win));
  MPI_Group_free(&world);
  MPI_Group_free(&peer);
  MPI_Group_free(&from);
  MPI_Barrier(MPI_COMM_WORLD);
  check_mem(win, mem, 2, 1, buf, "after the epoch errors and one put");
  reset_mem(win, mem);
}

/* MPI_NO_OP fetches without writing; origin arguments are ignored. */
static void test_no_op(MPI_Win win, int* mem) {
  int res[4] = {-1, -1, -1, -1}, one = -1;
  CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
  CHECK_OK(MPI_Get_accumulate(NULL, 0, MPI_INT, res, 4, MPI_INT, right, 4, 4, MPI_INT, MPI_NO_OP, win));
  CHECK_OK(MPI_Fetch_and_op(NULL, &one, MPI_INT, right, 9, MPI_NO_OP, win));
  CHECK_CLASS(MPI_Accumulate(res, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_NO_OP, win), MPI_ERR_OP);
  CHECK_OK(MPI_Win_unlock(right, win));
  for (int i = 0; i < 4; ++i) CHECK_EQ(res[i], init_val(right, 4 + i));
  CHECK_EQ(one, init_val(right, 9));
  MPI_Barrier(MPI_COMM_WORLD);
  check_mem(win, mem, 0, 0, NULL, "after MPI_NO_OP");
}

/* Accumulates through derived types of one predefined type. */
static void test_derived_acc(MPI_Win win, int* mem) {
  int src[8], res[4] = {0, 0, 0, 0};
  for (int i = 0; i < 8; ++i) src[i] = 100 + i;
  MPI_Datatype every_other, four, spread, mixed;
  MPI_Type_vector(4, 1, 2, MPI_INT, &every_other); /* src 0, 2, 4, 6 */
  MPI_Type_contiguous(4, MPI_INT, &four);
  int bl[2] = {1, 1}, disp[2] = {0, 3};
  MPI_Type_indexed(2, bl, disp, MPI_INT, &spread); /* cells d, d + 3 */
  int mbl[2] = {1, 1};
  MPI_Aint mdisp[2] = {0, 8};
  MPI_Datatype mtypes[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Type_create_struct(2, mbl, mdisp, mtypes, &mixed);
  MPI_Type_commit(&every_other);
  MPI_Type_commit(&four);
  MPI_Type_commit(&spread);
  MPI_Type_commit(&mixed);
  CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
  /* cells 0..3 := src 0, 2, 4, 6 */
  CHECK_OK(MPI_Accumulate(src, 1, every_other, right, 0, 1, four, MPI_REPLACE, win));
  /* cells 8, 11 += 1, 2; then 8, 11 := 3, 4 returning 8 + 1, 11 + 2 */
  int add[2] = {1, 2}, put[2] = {3, 4};
  CHECK_OK(MPI_Accumulate(add, 2, MPI_INT, right, 8, 1, spread, MPI_SUM, win));
  CHECK_OK(MPI_Get_accumulate(put, 2, MPI_INT, res, 2, MPI_INT, right, 8, 1, spread, MPI_REPLACE, win));
  /* one element type on every side: a struct of int and double is not */
  ADI3_ONLY(CHECK_CLASS(MPI_Accumulate(src, 1, mixed, right, 0, 1, mixed, MPI_REPLACE, win), MPI_ERR_TYPE));
  CHECK_OK(MPI_Win_unlock(right, win));
  CHECK_EQ(res[0], init_val(right, 8) + 1);
  CHECK_EQ(res[1], init_val(right, 11) + 2);
  MPI_Barrier(MPI_COMM_WORLD);
  int want[12];
  for (int i = 0; i < 12; ++i) want[i] = init_val(rank, i);
  for (int i = 0; i < 4; ++i) want[i] = 100 + 2 * i;
  want[8] = 3;
  want[11] = 4;
  check_mem(win, mem, 0, 12, want, "after derived-type accumulates");
  MPI_Type_free(&every_other);
  MPI_Type_free(&four);
  MPI_Type_free(&spread);
  MPI_Type_free(&mixed);
  reset_mem(win, mem);
}

/* flush_local: the origin buffer is free and a get's data is here, while
   the epoch goes on; request-based operations complete the same way. */
static void test_local_completion(MPI_Win win, int* mem) {
  int buf = 4242, got = -1, vals[2] = {0, 0};
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
  CHECK_OK(MPI_Put(&buf, 1, MPI_INT, right, 1, 1, MPI_INT, win));
  CHECK_OK(MPI_Win_flush_local(right, win));
  buf = -9; /* reusable: the put must not see this */
  CHECK_OK(MPI_Get(&got, 1, MPI_INT, right, 6, 1, MPI_INT, win));
  CHECK_OK(MPI_Win_flush_local(right, win));
  CHECK_EQ(got, init_val(right, 6));
  CHECK_OK(MPI_Win_unlock(right, win));
  MPI_Barrier(MPI_COMM_WORLD);
  int want = 4242;
  check_mem(win, mem, 1, 1, &want, "after flush_local");
  reset_mem(win, mem);

  /* lock_all: Rput, wait, flush, Rget, test until done; flush_local_all */
  MPI_Request rq;
  int flag = 0;
  buf = 777;
  CHECK_OK(MPI_Win_lock_all(0, win));
  CHECK_OK(MPI_Rput(&buf, 1, MPI_INT, right, 3, 1, MPI_INT, win, &rq));
  CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  buf = -7;
  CHECK_OK(MPI_Win_flush(right, win));
  CHECK_OK(MPI_Rget(&got, 1, MPI_INT, right, 3, 1, MPI_INT, win, &rq));
  for (int spins = 0; !flag && spins < 100000000; ++spins) CHECK_OK(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
  CHECK(flag);
  CHECK_EQ(got, 777);
  /* a request freed before completion still completes by the flush */
  vals[0] = 11;
  CHECK_OK(MPI_Rput(vals, 1, MPI_INT, right, 12, 1, MPI_INT, win, &rq));
  CHECK_OK(MPI_Request_free(&rq));
  CHECK_OK(MPI_Win_flush_local_all(win));
  vals[0] = -11;
  /* a request still pending at the unlock completes by it */
  vals[1] = 22;
  CHECK_OK(MPI_Rput(&vals[1], 1, MPI_INT, right, 11, 1, MPI_INT, win, &rq));
  CHECK_OK(MPI_Win_unlock_all(win));
  CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  MPI_Barrier(MPI_COMM_WORLD);
  int want2[10] = {0};
  for (int i = 0; i < 10; ++i) want2[i] = init_val(rank, 3 + i);
  want2[0] = 777;
  want2[8] = 22;
  want2[9] = 11;
  check_mem(win, mem, 3, 10, want2, "after request-based operations");
  reset_mem(win, mem);
}

/* Info keys in and out; MPI_WIN_MODEL and the flavour. */
static void test_info_and_model(void) {
  MPI_Info in, out;
  MPI_Win w;
  int mem[4], flag = 0;
  char v[MPI_MAX_INFO_VAL + 1];
  MPI_Info_create(&in);
  MPI_Info_set(in, "no_locks", "true");
  MPI_Info_set(in, "accumulate_ordering", "none");
  MPI_Info_set(in, "accumulate_ops", "same_op");
  MPI_Info_set(in, "some_unknown_key", "whatever");
  CHECK_OK(MPI_Win_create(mem, sizeof mem, sizeof(int), in, MPI_COMM_WORLD, &w));
  MPI_Info_free(&in);
  CHECK_OK(MPI_Win_get_info(w, &out));
  MPI_Info_get(out, "no_locks", MPI_MAX_INFO_VAL, v, &flag);
  CHECK(flag && strcmp(v, "true") == 0);
  MPI_Info_get(out, "accumulate_ordering", MPI_MAX_INFO_VAL, v, &flag);
  CHECK(flag && strcmp(v, "none") == 0);
  MPI_Info_get(out, "accumulate_ops", MPI_MAX_INFO_VAL, v, &flag);
  CHECK(flag && strcmp(v, "same_op") == 0);
  MPI_Info_free(&out);
  /* set_info changes the keys given, keeps the others */
  MPI_Info_create(&in);
  MPI_Info_set(in, "accumulate_ordering", "rar,waw");
  CHECK_OK(MPI_Win_set_info(w, in));
  MPI_Info_free(&in);
  CHECK_OK(MPI_Win_get_info(w, &out));
  MPI_Info_get(out, "accumulate_ordering", MPI_MAX_INFO_VAL, v, &flag);
  CHECK(flag && strcmp(v, "rar,waw") == 0);
  MPI_Info_get(out, "accumulate_ops", MPI_MAX_INFO_VAL, v, &flag);
  CHECK(flag && strcmp(v, "same_op") == 0);
  MPI_Info_free(&out);
  int* model = NULL;
  CHECK_OK(MPI_Win_get_attr(w, MPI_WIN_MODEL, &model, &flag));
  CHECK(flag && model && (*model == MPI_WIN_UNIFIED || *model == MPI_WIN_SEPARATE));
  int* flavor = NULL;
  CHECK_OK(MPI_Win_get_attr(w, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
  CHECK(flag && flavor && *flavor == MPI_WIN_FLAVOR_CREATE);
  CHECK_OK(MPI_Win_free(&w));
  /* defaults (MPI-3.1 11.2.1) */
  CHECK_OK(MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w));
  CHECK_OK(MPI_Win_get_info(w, &out));
  MPI_Info_get(out, "no_locks", MPI_MAX_INFO_VAL, v, &flag);
  CHECK(flag && strcmp(v, "false") == 0);
  MPI_Info_get(out, "accumulate_ordering", MPI_MAX_INFO_VAL, v, &flag);
  CHECK(flag && strcmp(v, "rar,raw,war,waw") == 0);
  MPI_Info_get(out, "accumulate_ops", MPI_MAX_INFO_VAL, v, &flag);
  CHECK(flag && strcmp(v, "same_op_no_op") == 0);
  MPI_Info_free(&out);
  CHECK_OK(MPI_Win_free(&w));
}

/* A shared window: load/store between ranks with lock_all + MPI_Win_sync,
   and MPI_Win_shared_query(MPI_PROC_NULL) = the lowest rank with memory. */
static void test_shared(void) {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int nr, ns;
  MPI_Comm_rank(node, &nr);
  MPI_Comm_size(node, &ns);
  MPI_Win w;
  int* mine = NULL;
  MPI_Aint bytes = nr == 0 ? 0 : 4 * (MPI_Aint)sizeof(int);
  /* whatever the channel: MPI_COMM_TYPE_SHARED parts can share memory
     (over tcp or forced emulation, each rank is a part of its own) */
  int rc = MPI_Win_allocate_shared(bytes, sizeof(int), MPI_INFO_NULL, node, &mine, &w);
  CHECK_OK(rc);
  if (rc != MPI_SUCCESS) {
    MPI_Comm_free(&node);
    return;
  }
  MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
  MPI_Aint qsize = -1;
  int qunit = -1;
  int* qbase = NULL;
  CHECK_OK(MPI_Win_shared_query(w, MPI_PROC_NULL, &qsize, &qunit, &qbase));
  if (ns == 1) {
    CHECK_EQ(qsize, 0);
  } else {
    MPI_Aint s1;
    int u1;
    int* b1;
    CHECK_OK(MPI_Win_shared_query(w, 1, &s1, &u1, &b1));
    CHECK_EQ(qsize, 4 * sizeof(int));
    CHECK_EQ(qunit, sizeof(int));
    CHECK(qbase == b1);
  }
  int* model = NULL;
  int flag = 0;
  CHECK_OK(MPI_Win_get_attr(w, MPI_WIN_MODEL, &model, &flag));
  CHECK(flag && model && (*model == MPI_WIN_UNIFIED || *model == MPI_WIN_SEPARATE));
  /* every rank with memory stores, syncs; the others load after a barrier */
  CHECK_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, w));
  if (nr > 0)
    for (int i = 0; i < 4; ++i) mine[i] = nr * 10 + i;
  CHECK_OK(MPI_Win_sync(w));
  MPI_Barrier(node);
  CHECK_OK(MPI_Win_sync(w));
  for (int r = 1; r < ns; ++r) {
    MPI_Aint s;
    int u;
    int* b;
    CHECK_OK(MPI_Win_shared_query(w, r, &s, &u, &b));
    for (int i = 0; i < 4; ++i) CHECK_EQ(b[i], r * 10 + i);
  }
  CHECK_OK(MPI_Win_unlock_all(w));
  CHECK_OK(MPI_Win_free(&w));
  MPI_Comm_free(&node);
  /* and one rank alone always can */
  int* self = NULL;
  CHECK_OK(MPI_Win_allocate_shared(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_SELF, &self, &w));
  MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
  CHECK_OK(MPI_Win_shared_query(w, 0, &qsize, &qunit, &qbase));
  CHECK(qbase == self);
  CHECK_EQ(qsize, 2 * sizeof(int));
  int v = 5, got = 0;
  CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w));
  CHECK_OK(MPI_Put(&v, 1, MPI_INT, 0, 1, 1, MPI_INT, w));
  CHECK_OK(MPI_Win_flush(0, w));
  CHECK_OK(MPI_Get(&got, 1, MPI_INT, 0, 1, 1, MPI_INT, w));
  CHECK_OK(MPI_Win_unlock(0, w));
  CHECK_EQ(got, 5);
  CHECK_EQ(self[1], 5);
  CHECK_OK(MPI_Win_free(&w));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  right = (rank + 1) % size;
  for (int flav = 0; flav < 2; ++flav) {
    int* mem = NULL;
    MPI_Win win;
    if (flav == 0) {
      mem = malloc(N * sizeof(int));
      CHECK_OK(MPI_Win_create(mem, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    } else {
      CHECK_OK(MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    }
    CHECK_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    reset_mem(win, mem);
    test_proc_null(win, mem);
    test_range_and_zero(win, mem);
    test_sync(win, mem);
    test_no_op(win, mem);
    test_derived_acc(win, mem);
    test_local_completion(win, mem);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(MPI_Win_free(&win));
    if (flav == 0) free(mem);
  }
  test_info_and_model();
  test_shared();
  return mt_finish();
}
