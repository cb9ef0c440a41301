/* Synchronization corners of MPI-3.1 11.5 through the C binding, on every
 * window flavour: PSCW with empty groups, with MPI_MODE_NOCHECK and with
 * MPI_Win_test loops; fence assertion combinations; locks on oneself;
 * lock_all with flush_local/flush_all and request-based operations
 * completed by MPI_Wait/Waitall/Testall/Waitany inside and after the
 * epoch; a mutex and a counter built on compare_and_swap; MPI_Win_free
 * while a peer still holds a lock on this rank (free waits, the peer's
 * put lands); attributes and info of every flavour; and errors: a freed
 * window, PSCW misuse, MPI_Win_shared_query on a window that is not
 * shared, user error handlers called with the window. */
#include <unistd.h>

#include "mpitest.h"

#define N 32

static int rank, size, right, left;

/* flavour 0 create, 1 allocate, 2 allocate_shared (over MPI_COMM_WORLD:
   only when all ranks share memory, else skipped), 3 dynamic (one region) */
static int make_window(int flav, int** mem, MPI_Aint* tbase, MPI_Win* w) {
  MPI_Aint bytes = N * sizeof(int);
  int rc = MPI_SUCCESS;
  *tbase = 0;
  switch (flav) {
    case 0:
      *mem = malloc((size_t)bytes);
      rc = MPI_Win_create(*mem, bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, w);
      break;
    case 1:
      rc = MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, mem, w);
      break;
    case 2:
      rc = MPI_Win_allocate_shared(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, mem, w);
      break;
    case 3: {
      *mem = malloc((size_t)bytes);
      rc = MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, w);
      if (rc == MPI_SUCCESS) rc = MPI_Win_attach(*w, *mem, bytes);
      MPI_Aint a, all[64];
      MPI_Get_address(*mem, &a);
      MPI_Allgather(&a, 1, MPI_AINT, all, 1, MPI_AINT, MPI_COMM_WORLD);
      *tbase = all[right];
      break;
    }
  }
  if (rc == MPI_SUCCESS) {
    MPI_Win_set_errhandler(*w, MPI_ERRORS_RETURN);
    for (int i = 0; i < N; ++i) (*mem)[i] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
  }
  return rc;
}

static void free_window(int flav, int* mem, MPI_Win* w) {
  MPI_Barrier(MPI_COMM_WORLD);
  if (flav == 3) CHECK_OK(MPI_Win_detach(*w, mem));
  CHECK_OK(MPI_Win_free(w));
  CHECK(*w == MPI_WIN_NULL);
  if (flav == 0 || flav == 3) free(mem);
}

/* units: disp_unit is sizeof(int) except for dynamic windows (bytes) */
static MPI_Aint D(int flav, MPI_Aint tbase, int i) { return flav == 3 ? tbase + i * (MPI_Aint)sizeof(int) : i; }

static void test_pscw(int flav, int* mem, MPI_Aint tb, MPI_Win w) {
  MPI_Group world, to, from;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &right, &to);
  MPI_Group_incl(world, 1, &left, &from);
  /* empty groups: nothing to wait for, test says done at once */
  CHECK_OK(MPI_Win_post(MPI_GROUP_EMPTY, 0, w));
  CHECK_OK(MPI_Win_start(MPI_GROUP_EMPTY, 0, w));
  CHECK_OK(MPI_Win_complete(w));
  int flag = 0;
  CHECK_OK(MPI_Win_test(w, &flag));
  CHECK(flag);
  /* the exposure epoch is over: test again is an error */
  CHECK_CLASS(MPI_Win_test(w, &flag), MPI_ERR_RMA_SYNC);
  /* a put to the right, the target loops on MPI_Win_test */
  CHECK_OK(MPI_Win_post(from, 0, w));
  CHECK_OK(MPI_Win_start(to, 0, w));
  int v = rank + 1;
  CHECK_OK(MPI_Put(&v, 1, MPI_INT, right, D(flav, tb, 1), 1, MPI_INT, w));
  /* double start / double post are errors */
  CHECK_CLASS(MPI_Win_start(to, 0, w), MPI_ERR_RMA_SYNC);
  CHECK_CLASS(MPI_Win_post(from, 0, w), MPI_ERR_RMA_SYNC);
  /* a rank outside the access group */
  if (size > 2) CHECK_CLASS(MPI_Put(&v, 1, MPI_INT, left, D(flav, tb, 1), 1, MPI_INT, w), MPI_ERR_RMA_SYNC);
  CHECK_OK(MPI_Win_complete(w));
  flag = 0;
  for (long spins = 0; !flag && spins < 200000000L; ++spins) CHECK_OK(MPI_Win_test(w, &flag));
  CHECK(flag);
  CHECK_EQ(mem[1], left + 1);
  /* MPI_MODE_NOCHECK: the matching post is known to be done (a barrier) */
  CHECK_OK(MPI_Win_post(from, MPI_MODE_NOCHECK | MPI_MODE_NOSTORE, w));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_start(to, MPI_MODE_NOCHECK, w));
  int got = -1;
  CHECK_OK(MPI_Get(&got, 1, MPI_INT, right, D(flav, tb, 1), 1, MPI_INT, w));
  CHECK_OK(MPI_Accumulate(&v, 1, MPI_INT, right, D(flav, tb, 2), 1, MPI_INT, MPI_SUM, w));
  CHECK_OK(MPI_Win_complete(w));
  CHECK_EQ(got, rank + 1);
  CHECK_OK(MPI_Win_wait(w));
  CHECK_EQ(mem[2], left + 1);
  /* bad assertion, group not in the window */
  int rc = MPI_Win_post(from, 0x4000000, w), cls = -1;
  if (rc == MPI_SUCCESS) {
    CHECK(!"post with an unknown assertion bit accepted");
    MPI_Win_start(to, 0, w);
    MPI_Win_complete(w);
    MPI_Win_wait(w);
  } else {
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_ASSERT);
  }
  CHECK_CLASS(MPI_Win_start(MPI_GROUP_NULL, 0, w), MPI_ERR_GROUP);
  CHECK_CLASS(MPI_Win_post(MPI_GROUP_NULL, 0, w), MPI_ERR_GROUP);
  MPI_Group_free(&world);
  MPI_Group_free(&to);
  MPI_Group_free(&from);
  MPI_Barrier(MPI_COMM_WORLD);
}

static void test_fence_asserts(int flav, int* mem, MPI_Aint tb, MPI_Win w) {
  int v = rank + 10;
  CHECK_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, w));
  CHECK_OK(MPI_Put(&v, 1, MPI_INT, right, D(flav, tb, 3), 1, MPI_INT, w));
  CHECK_OK(MPI_Win_fence(MPI_MODE_NOSTORE, w));
  CHECK_EQ(mem[3], left + 10);
  /* nobody puts in the next epoch; the local memory is not stored to */
  int got = -1;
  CHECK_OK(MPI_Get(&got, 1, MPI_INT, right, D(flav, tb, 3), 1, MPI_INT, w));
  CHECK_OK(MPI_Win_fence(MPI_MODE_NOPUT | MPI_MODE_NOSTORE, w));
  CHECK_EQ(got, rank + 10);
  /* an empty epoch with every assertion */
  CHECK_OK(MPI_Win_fence(MPI_MODE_NOPUT | MPI_MODE_NOSTORE | MPI_MODE_NOSUCCEED, w));
  CHECK_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, w));
  CHECK_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSTORE, w));
  CHECK_OK(MPI_Accumulate(&v, 1, MPI_INT, right, D(flav, tb, 3), 1, MPI_INT, MPI_SUM, w));
  CHECK_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, w));
  CHECK_EQ(mem[3], 2 * (left + 10));
  /* after NOSUCCEED no epoch is open: operations are refused */
  CHECK_CLASS(MPI_Put(&v, 1, MPI_INT, right, D(flav, tb, 3), 1, MPI_INT, w), MPI_ERR_RMA_SYNC);
  MPI_Barrier(MPI_COMM_WORLD);
}

static void test_lock_self(int flav, int* mem, MPI_Aint tb, MPI_Win w) {
  MPI_Aint selfbase = tb;
  if (flav == 3) MPI_Get_address(mem, &selfbase);
  int v[4] = {1, 2, 3, 4}, got[4] = {0};
  CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w));
  CHECK_OK(MPI_Put(v, 4, MPI_INT, rank, D(flav, selfbase, 4), 4, MPI_INT, w));
  CHECK_OK(MPI_Accumulate(v, 4, MPI_INT, rank, D(flav, selfbase, 4), 4, MPI_INT, MPI_SUM, w));
  CHECK_OK(MPI_Win_flush(rank, w));
  CHECK_OK(MPI_Get(got, 4, MPI_INT, rank, D(flav, selfbase, 4), 4, MPI_INT, w));
  CHECK_OK(MPI_Win_unlock(rank, w));
  for (int i = 0; i < 4; ++i) CHECK_EQ(got[i], 2 * (i + 1));
  for (int i = 0; i < 4; ++i) CHECK_EQ(mem[4 + i], 2 * (i + 1));
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, MPI_MODE_NOCHECK, w));
  int one = 1, old = -1;
  CHECK_OK(MPI_Fetch_and_op(&one, &old, MPI_INT, rank, D(flav, selfbase, 4), MPI_SUM, w));
  CHECK_OK(MPI_Win_unlock(rank, w));
  CHECK_EQ(old, 2);
  CHECK_EQ(mem[4], 3);
  MPI_Barrier(MPI_COMM_WORLD);
}

static void test_requests(int flav, int* mem, MPI_Aint tb, MPI_Win w) {
  int src[8], dst[8], res[8];
  MPI_Request rq[6];
  for (int i = 0; i < 8; ++i) src[i] = rank * 10 + i, dst[i] = -1, res[i] = -1;
  CHECK_OK(MPI_Win_lock_all(0, w));
  CHECK_OK(MPI_Rput(src, 4, MPI_INT, right, D(flav, tb, 8), 4, MPI_INT, w, &rq[0]));
  CHECK_OK(MPI_Raccumulate(src + 4, 4, MPI_INT, right, D(flav, tb, 12), 4, MPI_INT, MPI_SUM, w, &rq[1]));
  CHECK_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
  CHECK_OK(MPI_Win_flush(right, w));
  CHECK_OK(MPI_Rget(dst, 4, MPI_INT, right, D(flav, tb, 8), 4, MPI_INT, w, &rq[0]));
  CHECK_OK(
      MPI_Rget_accumulate(src, 2, MPI_INT, res, 2, MPI_INT, right, D(flav, tb, 12), 2, MPI_INT, MPI_SUM, w, &rq[1]));
  CHECK_OK(MPI_Rget_accumulate(NULL, 0, MPI_INT, res + 2, 2, MPI_INT, right, D(flav, tb, 14), 2, MPI_INT, MPI_NO_OP, w,
                               &rq[2]));
  int done = 0;
  for (long spins = 0; !done && spins < 100000000L; ++spins) CHECK_OK(MPI_Testall(3, rq, &done, MPI_STATUSES_IGNORE));
  CHECK(done);
  for (int i = 0; i < 4; ++i) CHECK_EQ(dst[i], rank * 10 + i);
  CHECK_EQ(res[0], rank * 10 + 4);
  CHECK_EQ(res[1], rank * 10 + 5);
  CHECK_EQ(res[2], rank * 10 + 6);
  CHECK_EQ(res[3], rank * 10 + 7);
  /* waitany over a mix; flush_local_all, flush_all */
  int idx = -1, a = 5, b = 6;
  CHECK_OK(MPI_Rput(&a, 1, MPI_INT, right, D(flav, tb, 16), 1, MPI_INT, w, &rq[0]));
  CHECK_OK(MPI_Rput(&b, 1, MPI_INT, right, D(flav, tb, 17), 1, MPI_INT, w, &rq[1]));
  CHECK_OK(MPI_Waitany(2, rq, &idx, MPI_STATUS_IGNORE));
  CHECK(idx == 0 || idx == 1);
  CHECK_OK(MPI_Waitany(2, rq, &idx, MPI_STATUS_IGNORE));
  CHECK_OK(MPI_Waitany(2, rq, &idx, MPI_STATUS_IGNORE));
  CHECK_EQ(idx, MPI_UNDEFINED);
  CHECK_OK(MPI_Win_flush_local_all(w));
  CHECK_OK(MPI_Win_flush_all(w));
  /* left pending at unlock_all, waited after; status of an RMA request */
  int c = 7;
  CHECK_OK(MPI_Rput(&c, 1, MPI_INT, right, D(flav, tb, 18), 1, MPI_INT, w, &rq[0]));
  CHECK_OK(MPI_Rget(&res[4], 1, MPI_INT, right, D(flav, tb, 16), 1, MPI_INT, w, &rq[1]));
  CHECK_OK(MPI_Win_unlock_all(w));
  MPI_Status st[2];
  CHECK_OK(MPI_Waitall(2, rq, st));
  CHECK_EQ(res[4], 5);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < 4; ++i) CHECK_EQ(mem[8 + i], left * 10 + i);
  CHECK_EQ(mem[12], (left * 10 + 4) + (left * 10 + 0));
  CHECK_EQ(mem[13], (left * 10 + 5) + (left * 10 + 1));
  CHECK_EQ(mem[16], 5);
  CHECK_EQ(mem[17], 6);
  CHECK_EQ(mem[18], 7);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* A mutex at rank 0 element 20 taken with compare_and_swap; a counter at
   element 21 read and written under it (MPICH's mutex tests). */
static void test_cas_mutex(int flav, int* mem, MPI_Aint tb0, MPI_Win w) {
  const int iters = 20;
  CHECK_OK(MPI_Win_lock_all(0, w));
  for (int i = 0; i < iters; ++i) {
    int mine = rank + 1, free0 = 0, old = -1;
    long spins = 0;
    do {
      CHECK_OK(MPI_Compare_and_swap(&mine, &free0, &old, MPI_INT, 0, D(flav, tb0, 20), w));
      CHECK_OK(MPI_Win_flush(0, w));
    } while (old != 0 && ++spins < 10000000L);
    CHECK_EQ(old, 0);
    int cnt = -1;
    CHECK_OK(MPI_Get(&cnt, 1, MPI_INT, 0, D(flav, tb0, 21), 1, MPI_INT, w));
    CHECK_OK(MPI_Win_flush(0, w));
    ++cnt;
    CHECK_OK(MPI_Put(&cnt, 1, MPI_INT, 0, D(flav, tb0, 21), 1, MPI_INT, w));
    CHECK_OK(MPI_Win_flush(0, w));
    int back = -1;
    CHECK_OK(MPI_Compare_and_swap(&free0, &mine, &back, MPI_INT, 0, D(flav, tb0, 20), w));
    CHECK_OK(MPI_Win_flush(0, w));
    CHECK_EQ(back, mine);
  }
  CHECK_OK(MPI_Win_unlock_all(w));
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    CHECK_EQ(mem[20], 0);
    CHECK_EQ(mem[21], iters * size);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

static void test_attrs(int flav, int* mem, MPI_Win w) {
  static const int fl[4] = {MPI_WIN_FLAVOR_CREATE, MPI_WIN_FLAVOR_ALLOCATE, MPI_WIN_FLAVOR_SHARED,
                            MPI_WIN_FLAVOR_DYNAMIC};
  void* base = NULL;
  MPI_Aint* sz = NULL;
  int *du = NULL, *f = NULL, *model = NULL, flag = 0;
  CHECK_OK(MPI_Win_get_attr(w, MPI_WIN_BASE, &base, &flag));
  CHECK(flag);
  CHECK(base == (flav == 3 ? MPI_BOTTOM : (void*)mem));
  CHECK_OK(MPI_Win_get_attr(w, MPI_WIN_SIZE, &sz, &flag));
  CHECK(flag && *sz == (flav == 3 ? 0 : N * (MPI_Aint)sizeof(int)));
  CHECK_OK(MPI_Win_get_attr(w, MPI_WIN_DISP_UNIT, &du, &flag));
  CHECK(flag && *du == (flav == 3 ? 1 : (int)sizeof(int)));
  CHECK_OK(MPI_Win_get_attr(w, MPI_WIN_CREATE_FLAVOR, &f, &flag));
  CHECK(flag && *f == fl[flav]);
  CHECK_OK(MPI_Win_get_attr(w, MPI_WIN_MODEL, &model, &flag));
  CHECK(flag && (*model == MPI_WIN_UNIFIED || *model == MPI_WIN_SEPARATE));
  /* group, name, info after set_info */
  MPI_Group g, wg;
  int cmp = -1;
  CHECK_OK(MPI_Win_get_group(w, &g));
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  MPI_Group_compare(g, wg, &cmp);
  CHECK_EQ(cmp, MPI_IDENT);
  MPI_Group_free(&g);
  MPI_Group_free(&wg);
  char name[MPI_MAX_OBJECT_NAME];
  int len = -1;
  CHECK_OK(MPI_Win_get_name(w, name, &len));
  CHECK_EQ(len, (int)strlen(name));
  CHECK_OK(MPI_Win_set_name(w, "conformance window"));
  CHECK_OK(MPI_Win_get_name(w, name, &len));
  CHECK(strcmp(name, "conformance window") == 0);
  MPI_Info in, out;
  MPI_Info_create(&in);
  MPI_Info_set(in, "accumulate_ordering", "none");
  MPI_Info_set(in, "no_locks", "false");
  CHECK_OK(MPI_Win_set_info(w, in));
  MPI_Info_free(&in);
  CHECK_OK(MPI_Win_get_info(w, &out));
  char v[MPI_MAX_INFO_VAL + 1];
  MPI_Info_get(out, "accumulate_ordering", MPI_MAX_INFO_VAL, v, &flag);
  CHECK(flag && strcmp(v, "none") == 0);
  int nkeys = -1;
  MPI_Info_get_nkeys(out, &nkeys);
  CHECK(nkeys >= 1);
  MPI_Info_free(&out);
  MPI_Info_create(&in);
  MPI_Info_set(in, "accumulate_ordering", "rar,raw,war,waw");
  CHECK_OK(MPI_Win_set_info(w, in));
  MPI_Info_free(&in);
  /* shared_query on a window that is not shared */
  if (flav != 2) {
    MPI_Aint qs;
    int qu;
    void* qb;
    int rc = MPI_Win_shared_query(w, rank, &qs, &qu, &qb), cls = -1;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    /* MPI-3.1: only shared windows (MPI_ERR_RMA_FLAVOR); MPI-4.0 allows
       others and returns what is shared, or size 0 and a null base */
    if (rc == MPI_SUCCESS)
      CHECK(qs == 0 || qb != NULL);
    else
      CHECK_EQ(cls, MPI_ERR_RMA_FLAVOR);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

static int handler_calls;
static MPI_Win handler_win;
static void on_error(MPI_Win* w, int* code, ...) {
  ++handler_calls;
  handler_win = *w;
  (void)code;
}

/* MPI_Win_free while the right neighbour still holds a lock on this rank:
   free is collective, so it waits; the neighbour's put lands. */
static void test_free_waits(void) {
  int* mem = calloc(4, sizeof(int));
  MPI_Win w;
  CHECK_OK(MPI_Win_create(mem, 4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w));
  MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
  if (rank == 1 % size && size > 1) {
    CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w));
    int v = 99;
    CHECK_OK(MPI_Put(&v, 1, MPI_INT, 0, 2, 1, MPI_INT, w));
    MPI_Barrier(MPI_COMM_WORLD);
    usleep(100000);
    CHECK_OK(MPI_Win_unlock(0, w));
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
  }
  CHECK_OK(MPI_Win_free(&w));
  if (rank == 0 && size > 1) CHECK_EQ(mem[2], 99);
  free(mem);
}

/* A freed window handle, and a user handler that gets the window. */
static void test_errors(void) {
  int mem[4];
  MPI_Win w, stale;
  CHECK_OK(MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w));
  stale = w;
  CHECK_OK(MPI_Win_free(&w));
  int v = 0;
  CHECK_CLASS(MPI_Win_fence(0, stale), MPI_ERR_WIN);
  CHECK_CLASS(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, stale), MPI_ERR_WIN);
  CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, stale), MPI_ERR_WIN);
  CHECK_CLASS(MPI_Win_free(&stale), MPI_ERR_WIN);
  MPI_Win nul = MPI_WIN_NULL;
  CHECK_CLASS(MPI_Win_free(&nul), MPI_ERR_WIN);
  /* a user handler is called with the window and the code */
  MPI_Errhandler eh;
  int* amem = NULL;
  CHECK_OK(MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &amem, &w));
  CHECK_OK(MPI_Win_create_errhandler(on_error, &eh));
  CHECK_OK(MPI_Win_set_errhandler(w, eh));
  CHECK_OK(MPI_Errhandler_free(&eh)); /* still attached */
  handler_calls = 0;
  int rc = MPI_Win_unlock(right, w);
  CHECK(rc != MPI_SUCCESS);
  CHECK_EQ(handler_calls, 1);
  CHECK(handler_win == w);
  rc = MPI_Win_complete(w);
  CHECK_EQ(handler_calls, 2);
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w));
  rc = MPI_Put(&v, 1, MPI_INT, right, 4, 1, MPI_INT, w); /* past the end */
  CHECK_EQ(handler_calls, 3);
  CHECK_OK(MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN));
  /* flushes of a rank this epoch did not lock */
  if (size > 2) {
    CHECK_CLASS(MPI_Win_flush(left, w), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_flush_local(left, w), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Put(&v, 1, MPI_INT, left, 0, 1, MPI_INT, w), MPI_ERR_RMA_SYNC);
  }
  /* element types that differ between the result and the target */
  float f = 0;
  CHECK_CLASS(MPI_Get_accumulate(&v, 1, MPI_INT, &f, 1, MPI_FLOAT, right, 0, 1, MPI_INT, MPI_SUM, w), MPI_ERR_TYPE);
  CHECK_CLASS(MPI_Get_accumulate(NULL, 0, MPI_INT, &f, 1, MPI_FLOAT, right, 0, 1, MPI_INT, MPI_NO_OP, w), MPI_ERR_TYPE);
  CHECK_CLASS(MPI_Fetch_and_op(&v, &v, MPI_DATATYPE_NULL, right, 0, MPI_SUM, w), MPI_ERR_TYPE);
  CHECK_CLASS(MPI_Put(&v, 1, MPI_INT, right, 0, -1, MPI_INT, w), MPI_ERR_COUNT);
  CHECK_CLASS(MPI_Get(&v, 1, MPI_INT, -7, 0, 1, MPI_INT, w), MPI_ERR_RANK);
  CHECK_CLASS(MPI_Accumulate(&v, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_MAXLOC, w), MPI_ERR_OP);
  MPI_Request rq = MPI_REQUEST_NULL;
  CHECK_CLASS(MPI_Raccumulate(&v, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_NO_OP, w, &rq), MPI_ERR_OP);
  CHECK_OK(MPI_Win_unlock(right, w));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_free(&w));
}

int main(int argc, char** argv) {
  mt_init_ring(&argc, &argv, &rank, &size, &right, &left);
  for (int flav = 0; flav < 4; ++flav) {
    int* mem = NULL;
    MPI_Aint tb = 0;
    MPI_Win w;
    int rc = make_window(flav, &mem, &tb, &w);
    if (flav == 2 && rc != MPI_SUCCESS) continue; /* ranks do not share memory */
    CHECK_OK(rc);
    test_attrs(flav, mem, w);
    test_pscw(flav, mem, tb, w);
    test_fence_asserts(flav, mem, tb, w);
    test_lock_self(flav, mem, tb, w);
    test_requests(flav, mem, tb, w);
    MPI_Aint tb0 = tb;
    if (flav == 3) {
      MPI_Aint a;
      MPI_Get_address(mem, &a);
      MPI_Bcast(&a, 1, MPI_AINT, 0, MPI_COMM_WORLD);
      tb0 = a;
    }
    test_cas_mutex(flav, mem, tb0, w);
    free_window(flav, mem, &w);
  }
  test_free_waits();
  test_errors();
  return mt_finish();
}
