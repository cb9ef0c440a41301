/* Patterns from the public RMA test suites (MPICH test/mpi/rma and the
 * like), written here from their descriptions: locks on several targets at
 * once (nested), lock/unlock of MPI_PROC_NULL, two windows over the same
 * memory, pair types inside derived types in accumulates (acc-pairtype),
 * thousands of operations in one epoch (manyget), accumulates to oneself
 * under fence (selfrma), a linked list appended by every rank with
 * compare_and_swap and fetch_and_op on a dynamic window, Rget followed by
 * unlock then wait (rget-unlock), large accumulates completed by
 * flush_local, mixed synchronizations on one window epoch by epoch. */
#include "mpitest.h"

static int rank, size, right, left;

static void test_nested_locks(void) {
  int* mem;
  MPI_Win w;
  CHECK_OK(MPI_Win_allocate(4 * size * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &w));
  MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
  for (int i = 0; i < 4 * size; ++i) mem[i] = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  /* lock every rank (shared), one after the other, then unlock backwards */
  for (int t = 0; t < size; ++t) CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, w));
  for (int t = 0; t < size; ++t) {
    int v = rank + 1;
    CHECK_OK(MPI_Accumulate(&v, 1, MPI_INT, t, rank, 1, MPI_INT, MPI_SUM, w));
  }
  for (int t = size - 1; t >= 0; --t) CHECK_OK(MPI_Win_unlock(t, w));
  /* exclusive on two targets at once, in the same order everywhere (some
     ranks may still hold their shared locks: no barrier) */
  if (size > 1) {
    int a = 0, b = 1;
    CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, a, 0, w));
    CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, b, 0, w));
    int v = 1;
    CHECK_OK(MPI_Accumulate(&v, 1, MPI_INT, a, size + rank, 1, MPI_INT, MPI_SUM, w));
    CHECK_OK(MPI_Accumulate(&v, 1, MPI_INT, b, size + rank, 1, MPI_INT, MPI_SUM, w));
    CHECK_OK(MPI_Win_unlock(a, w));
    CHECK_OK(MPI_Win_flush(b, w));
    CHECK_OK(MPI_Win_unlock(b, w));
  }
  /* MPI_PROC_NULL: lock and unlock do nothing */
  int rc = MPI_Win_lock(MPI_LOCK_EXCLUSIVE, MPI_PROC_NULL, 0, w);
  if (rc == MPI_SUCCESS) {
    int v = 5;
    CHECK_OK(MPI_Put(&v, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, w));
    CHECK_OK(MPI_Win_unlock(MPI_PROC_NULL, w));
  } else {
    int cls;
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_RANK);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w);
  for (int r = 0; r < size; ++r) CHECK_EQ(mem[r], r + 1);
  if (size > 1 && rank < 2)
    for (int r = 0; r < size; ++r) CHECK_EQ(mem[size + r], 1);
  MPI_Win_unlock(rank, w);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_free(&w));
}

/* Two windows over the same memory: accumulates through both stay exact
   (MPI-3.1 11.7: concurrent accumulates through different windows are
   erroneous, so each phase uses one window and closes it before the other). */
static void test_overlapping_windows(void) {
  long long* mem;
  MPI_Win wa, wc;
  CHECK_OK(MPI_Win_allocate(8 * sizeof(long long), sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &wa));
  CHECK_OK(MPI_Win_create(mem, 8 * sizeof(long long), sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &wc));
  MPI_Win_set_errhandler(wa, MPI_ERRORS_RETURN);
  MPI_Win_set_errhandler(wc, MPI_ERRORS_RETURN);
  for (int i = 0; i < 8; ++i) mem[i] = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  for (int round = 0; round < 4; ++round) {
    MPI_Win w = round % 2 ? wc : wa;
    long long one = 1, old;
    CHECK_OK(MPI_Win_lock_all(0, w));
    for (int i = 0; i < 10; ++i) {
      CHECK_OK(MPI_Accumulate(&one, 1, MPI_LONG_LONG, 0, 0, 1, MPI_LONG_LONG, MPI_SUM, w));
      CHECK_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG_LONG, 0, 1, MPI_SUM, w));
    }
    CHECK_OK(MPI_Win_unlock_all(w));
    MPI_Barrier(MPI_COMM_WORLD);
  }
  if (rank == 0) {
    CHECK_EQ(mem[0], 40LL * size);
    CHECK_EQ(mem[1], 40LL * size);
  }
  /* a put through one, a get through the other after a barrier */
  long long v = rank + 7, got = -1;
  CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, wc));
  CHECK_OK(MPI_Put(&v, 1, MPI_LONG_LONG, right, 3, 1, MPI_LONG_LONG, wc));
  CHECK_OK(MPI_Win_unlock(right, wc));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, wa));
  CHECK_OK(MPI_Get(&got, 1, MPI_LONG_LONG, right, 3, 1, MPI_LONG_LONG, wa));
  CHECK_OK(MPI_Win_unlock(right, wa));
  CHECK_EQ(got, rank + 7);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_free(&wc));
  CHECK_OK(MPI_Win_free(&wa));
}

/* Pair types inside derived types: contiguous and vector of MPI_DOUBLE_INT
   and of MPI_2INT with MAXLOC/MINLOC, REPLACE. */
typedef struct {
  double v;
  int i;
} dint;
static void test_pair_derived(void) {
  dint* mem;
  MPI_Win w;
  const int n = 6;
  CHECK_OK(MPI_Win_allocate(n * sizeof(dint), sizeof(dint), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &w));
  MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
  for (int i = 0; i < n; ++i) mem[i].v = 0.5, mem[i].i = 1000;
  MPI_Datatype c3, v2;
  MPI_Type_contiguous(3, MPI_DOUBLE_INT, &c3);
  MPI_Type_vector(3, 1, 2, MPI_DOUBLE_INT, &v2); /* elements 0, 2, 4 */
  MPI_Type_commit(&c3);
  MPI_Type_commit(&v2);
  dint src[3];
  for (int k = 0; k < 3; ++k) src[k].v = (double)(rank % 3) + k, src[k].i = rank;
  CHECK_OK(MPI_Win_fence(0, w));
  /* everyone: MAXLOC into rank 0's 0..2 (contiguous), MINLOC into 0, 2, 4 of rank right */
  CHECK_OK(MPI_Accumulate(src, 1, c3, 0, 0, 3, MPI_DOUBLE_INT, MPI_MAXLOC, w));
  CHECK_OK(MPI_Win_fence(0, w));
  if (rank == 0) {
    /* max over ranks of (r % 3) + k, lowest rank with it */
    int best = size >= 3 ? 2 : size - 1;
    for (int k = 0; k < 3; ++k) {
      int init_wins = best + k < 0.5; /* the window's own (0.5, 1000) */
      CHECK(mem[k].v == (init_wins ? 0.5 : best + k));
      CHECK_EQ(mem[k].i, init_wins ? 1000 : best);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD); /* checked before anyone writes again */
  CHECK_OK(MPI_Accumulate(src, 3, MPI_DOUBLE_INT, right, 0, 1, v2, MPI_MINLOC, w));
  CHECK_OK(MPI_Win_fence(0, w));
  /* MINLOC of (left % 3) + k against what was there */
  {
    /* element 4 of every rank was 0.5 / 1000 before (rank 0: 4 untouched by MAXLOC) */
    double lv = (double)(left % 3) + 2;
    CHECK(mem[4].v == (lv < 0.5 ? lv : 0.5));
    CHECK_EQ(mem[4].i, lv < 0.5 ? left : 1000);
    if (rank != 0) {
      double l0 = (double)(left % 3);
      CHECK(mem[0].v == (l0 < 0.5 ? l0 : 0.5));
      CHECK_EQ(mem[0].i, l0 < 0.5 ? left : 1000);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  /* get_accumulate with a pair type and REPLACE through the vector */
  dint res[3];
  CHECK_OK(MPI_Get_accumulate(src, 3, MPI_DOUBLE_INT, res, 3, MPI_DOUBLE_INT, right, 0, 1, v2, MPI_REPLACE, w));
  CHECK_OK(MPI_Win_fence(0, w));
  for (int k = 0; k < 3; ++k) {
    CHECK(mem[2 * k].v == (double)(left % 3) + k);
    CHECK_EQ(mem[2 * k].i, left);
  }
  CHECK_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, w));
  MPI_Type_free(&c3);
  MPI_Type_free(&v2);
  CHECK_OK(MPI_Win_free(&w));
}

/* Many operations in one epoch, some completing only at its end. */
static void test_many(void) {
  const int n = 20000;
  int* mem;
  MPI_Win w;
  CHECK_OK(MPI_Win_allocate(256 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &w));
  MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
  for (int i = 0; i < 256; ++i) mem[i] = rank * 256 + i;
  int* got = malloc(n * sizeof(int));
  CHECK_OK(MPI_Win_fence(0, w));
  for (int i = 0; i < n; ++i) CHECK_OK(MPI_Get(&got[i], 1, MPI_INT, right, i % 256, 1, MPI_INT, w));
  CHECK_OK(MPI_Win_fence(0, w));
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += got[i] != right * 256 + i % 256;
  CHECK_EQ(bad, 0);
  /* many accumulates under one lock */
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w));
  for (int i = 0; i < n; ++i) {
    int one = 1;
    CHECK_OK(MPI_Accumulate(&one, 1, MPI_INT, right, i % 256, 1, MPI_INT, MPI_SUM, w));
  }
  CHECK_OK(MPI_Win_unlock(right, w));
  MPI_Barrier(MPI_COMM_WORLD);
  bad = 0;
  for (int i = 0; i < 256; ++i) bad += mem[i] != rank * 256 + i + n / 256 + (i < n % 256);
  CHECK_EQ(bad, 0);
  MPI_Barrier(MPI_COMM_WORLD);
  /* many request-based gets, waited all at once after the unlock */
  MPI_Request* rq = malloc(2000 * sizeof(MPI_Request));
  CHECK_OK(MPI_Win_lock_all(0, w));
  for (int i = 0; i < 2000; ++i) CHECK_OK(MPI_Rget(&got[i], 1, MPI_INT, left, i % 256, 1, MPI_INT, w, &rq[i]));
  CHECK_OK(MPI_Win_unlock_all(w));
  CHECK_OK(MPI_Waitall(2000, rq, MPI_STATUSES_IGNORE));
  bad = 0;
  for (int i = 0; i < 2000; ++i) bad += got[i] != left * 256 + i % 256 + n / 256 + (i % 256 < n % 256);
  CHECK_EQ(bad, 0);
  free(rq);
  free(got);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_free(&w));
}

/* Operations to oneself under fence, through derived types (selfrma). */
static void test_self(void) {
  int* mem;
  MPI_Win w;
  CHECK_OK(MPI_Win_allocate(32 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &w));
  MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
  for (int i = 0; i < 32; ++i) mem[i] = i;
  MPI_Datatype ev;
  MPI_Type_vector(8, 1, 2, MPI_INT, &ev);
  MPI_Type_commit(&ev);
  int src[8], got[16];
  for (int i = 0; i < 8; ++i) src[i] = 100 + i;
  CHECK_OK(MPI_Win_fence(0, w));
  CHECK_OK(MPI_Put(src, 8, MPI_INT, rank, 0, 1, ev, w));                 /* 0, 2, ..., 14 */
  CHECK_OK(MPI_Accumulate(src, 8, MPI_INT, rank, 1, 1, ev, MPI_SUM, w)); /* 1, 3, ..., 15 */
  CHECK_OK(MPI_Get(got, 16, MPI_INT, rank, 16, 16, MPI_INT, w));
  CHECK_OK(MPI_Win_fence(0, w));
  for (int i = 0; i < 8; ++i) {
    CHECK_EQ(mem[2 * i], 100 + i);
    CHECK_EQ(mem[2 * i + 1], 2 * i + 1 + 100 + i);
  }
  for (int i = 0; i < 16; ++i) CHECK_EQ(got[i], 16 + i);
  int old = -1, one = 1;
  CHECK_OK(MPI_Fetch_and_op(&one, &old, MPI_INT, rank, 20, MPI_SUM, w));
  CHECK_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, w));
  CHECK_EQ(old, 20);
  CHECK_EQ(mem[20], 21);
  MPI_Type_free(&ev);
  CHECK_OK(MPI_Win_free(&w));
}

/* A list at rank 0 on a dynamic window: every rank allocates nodes in its
   own attached memory and appends them with compare_and_swap on the tail
   (a (rank, displacement) pair in one long long). */
typedef struct {
  long long value;
  long long next; /* (rank << 48) | address low bits; -1 = none */
} node_t;
static void test_linked_list(void) {
  MPI_Win w;
  CHECK_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w));
  MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
  const int per = 8;
  node_t* nodes = calloc((size_t)per + 1, sizeof(node_t));
  CHECK_OK(MPI_Win_attach(w, nodes, (per + 1) * sizeof(node_t)));
  MPI_Aint my_base, *bases = malloc((size_t)size * sizeof(MPI_Aint));
  MPI_Get_address(nodes, &my_base);
  MPI_Allgather(&my_base, 1, MPI_AINT, bases, 1, MPI_AINT, MPI_COMM_WORLD);
  /* rank 0's nodes[per] is the head and holds the tail in .value */
  if (rank == 0) {
    nodes[per].value = -1;
    nodes[per].next = -1;
  }
  for (int i = 0; i < per; ++i) nodes[i].value = rank * 100 + i, nodes[i].next = -1;
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Aint tail_disp = bases[0] + per * (MPI_Aint)sizeof(node_t); /* head.value */
  CHECK_OK(MPI_Win_lock_all(0, w));
  for (int i = 0; i < per; ++i) {
    long long me = ((long long)rank << 48) | i, prev = -2, expect = -1;
    /* swing the tail to us */
    for (int tries = 0; tries < 1000000; ++tries) {
      CHECK_OK(MPI_Compare_and_swap(&me, &expect, &prev, MPI_LONG_LONG, 0, tail_disp, w));
      CHECK_OK(MPI_Win_flush(0, w));
      if (prev == expect) break;
      expect = prev;
    }
    /* link the old tail (or the head) to us */
    if (prev == -1) {
      CHECK_OK(
          MPI_Accumulate(&me, 1, MPI_LONG_LONG, 0, tail_disp + sizeof(long long), 1, MPI_LONG_LONG, MPI_REPLACE, w));
    } else {
      int pr = (int)(prev >> 48), pi = (int)(prev & 0xffff);
      CHECK_OK(MPI_Accumulate(&me, 1, MPI_LONG_LONG, pr,
                              bases[pr] + pi * (MPI_Aint)sizeof(node_t) + (MPI_Aint)sizeof(long long), 1, MPI_LONG_LONG,
                              MPI_REPLACE, w));
      CHECK_OK(MPI_Win_flush(pr, w));
    }
    CHECK_OK(MPI_Win_flush_all(w));
  }
  CHECK_OK(MPI_Win_unlock_all(w));
  MPI_Barrier(MPI_COMM_WORLD);
  /* rank 0 walks the list with gets: every node once */
  if (rank == 0) {
    int seen = 0, bad = 0;
    long long cur = -1;
    CHECK_OK(MPI_Win_lock_all(0, w));
    CHECK_OK(MPI_Get(&cur, 1, MPI_LONG_LONG, 0, tail_disp + sizeof(long long), 1, MPI_LONG_LONG, w));
    CHECK_OK(MPI_Win_flush(0, w));
    int* count = calloc((size_t)size * per, sizeof(int));
    while (cur != -1 && seen <= size * per) {
      int pr = (int)(cur >> 48), pi = (int)(cur & 0xffff);
      node_t nd;
      if (pr < 0 || pr >= size || pi < 0 || pi >= per) {
        ++bad;
        break;
      }
      CHECK_OK(MPI_Get(&nd, 2, MPI_LONG_LONG, pr, bases[pr] + pi * (MPI_Aint)sizeof(node_t), 2, MPI_LONG_LONG, w));
      CHECK_OK(MPI_Win_flush(pr, w));
      bad += nd.value != pr * 100 + pi;
      ++count[pr * per + pi];
      ++seen;
      cur = nd.next;
    }
    CHECK_OK(MPI_Win_unlock_all(w));
    CHECK_EQ(seen, size * per);
    CHECK_EQ(bad, 0);
    for (int i = 0; i < size * per; ++i) CHECK_EQ(count[i], 1);
    free(count);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_detach(w, nodes));
  CHECK_OK(MPI_Win_free(&w));
  free(nodes);
  free(bases);
}

/* Rget, unlock, then wait; a large accumulate completed by flush_local. */
static void test_rget_unlock_large(void) {
  const int n = 1 << 18; /* 1 MiB of ints */
  int* mem;
  MPI_Win w;
  CHECK_OK(MPI_Win_allocate(n * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &w));
  MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
  for (int i = 0; i < n; ++i) mem[i] = i;
  int* buf = malloc(n * sizeof(int));
  for (int i = 0; i < n; ++i) buf[i] = 1;
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w));
  CHECK_OK(MPI_Accumulate(buf, n, MPI_INT, right, 0, n, MPI_INT, MPI_SUM, w));
  CHECK_OK(MPI_Win_flush_local(right, w));
  for (int i = 0; i < n; ++i) buf[i] = -5; /* reusable after flush_local */
  CHECK_OK(MPI_Win_unlock(right, w));
  MPI_Barrier(MPI_COMM_WORLD);
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += mem[i] != i + 1;
  CHECK_EQ(bad, 0);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Request rq;
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, left, 0, w));
  CHECK_OK(MPI_Rget(buf, n, MPI_INT, left, 0, n, MPI_INT, w, &rq));
  CHECK_OK(MPI_Win_unlock(left, w));
  CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  bad = 0;
  for (int i = 0; i < n; ++i) bad += buf[i] != i + 1;
  CHECK_EQ(bad, 0);
  free(buf);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_free(&w));
}

/* Fence, PSCW, lock and lock_all epochs after one another on one window. */
static void test_mixed_sync(void) {
  int* mem;
  MPI_Win w;
  CHECK_OK(MPI_Win_allocate(8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &w));
  MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
  for (int i = 0; i < 8; ++i) mem[i] = 0;
  MPI_Group world, to, from;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &right, &to);
  MPI_Group_incl(world, 1, &left, &from);
  int one = 1;
  for (int round = 0; round < 5; ++round) {
    CHECK_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, w));
    CHECK_OK(MPI_Accumulate(&one, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_SUM, w));
    CHECK_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, w));
    CHECK_OK(MPI_Win_post(from, 0, w));
    CHECK_OK(MPI_Win_start(to, 0, w));
    CHECK_OK(MPI_Accumulate(&one, 1, MPI_INT, right, 1, 1, MPI_INT, MPI_SUM, w));
    CHECK_OK(MPI_Win_complete(w));
    CHECK_OK(MPI_Win_wait(w));
    CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w));
    CHECK_OK(MPI_Accumulate(&one, 1, MPI_INT, right, 2, 1, MPI_INT, MPI_SUM, w));
    CHECK_OK(MPI_Win_unlock(right, w));
    CHECK_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, w));
    CHECK_OK(MPI_Accumulate(&one, 1, MPI_INT, right, 3, 1, MPI_INT, MPI_SUM, w));
    CHECK_OK(MPI_Win_unlock_all(w));
    MPI_Barrier(MPI_COMM_WORLD);
  }
  CHECK_EQ(mem[0], 5);
  CHECK_EQ(mem[1], 5);
  CHECK_EQ(mem[2], 5);
  CHECK_EQ(mem[3], 5);
  MPI_Group_free(&world);
  MPI_Group_free(&to);
  MPI_Group_free(&from);
  CHECK_OK(MPI_Win_free(&w));
}

int main(int argc, char** argv) {
  mt_init_ring(&argc, &argv, &rank, &size, &right, &left);
  test_nested_locks();
  test_overlapping_windows();
  test_pair_derived();
  test_many();
  test_self();
  test_linked_list();
  test_rget_unlock_large();
  test_mixed_sync();
  return mt_finish();
}
