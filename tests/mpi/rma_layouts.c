/* Window layouts and datatype layouts a conformance suite presses on:
 * derived datatypes on both sides (vector, indexed, struct with gaps,
 * resized, hindexed with negative displacements, subarray) for put, get,
 * accumulate, get_accumulate and the request forms; a displacement unit
 * that differs by rank; windows of size 0 on some ranks; dynamic windows
 * with several regions attached, detached and attached again;
 * MPI_Win_allocate_shared with some ranks of size 0 (contiguous and not)
 * and MPI_Win_shared_query on each, MPI_PROC_NULL included. */
#include "mpitest.h"

#define WN 64 /* ints per window */

static int rank, size, right, left;

static int ival(int r, int i) { return r * 1000 + i; }
static int sval(int r, int i) { return -(r * 100 + i + 1); }

/* A layout: the int cells one instance of a type covers, in type order. */
typedef struct {
  const char* name;
  MPI_Datatype t;
  int n;        /* ints per instance */
  int cells[8]; /* offsets (ints) from the buffer pointer */
  int ext;      /* extent in ints */
  int base;     /* where the buffer pointer sits in the array (for negative displacements) */
} Layout;

static Layout lay[6];
static int nlay;

static void make_layouts(void) {
  Layout* l = lay;
  /* contiguous */
  l->name = "int";
  l->t = MPI_INT;
  l->n = 1;
  l->cells[0] = 0;
  l->ext = 1;
  l->base = 0;
  ++l;
  /* vector: 3 blocks of 2, stride 3 */
  l->name = "vector";
  MPI_Type_vector(3, 2, 3, MPI_INT, &l->t);
  l->n = 6;
  int v[6] = {0, 1, 3, 4, 6, 7};
  memcpy(l->cells, v, sizeof v);
  l->ext = 8;
  l->base = 0;
  ++l;
  /* struct with gaps, resized to 8 ints: ints at 1, 4, 5 */
  {
    MPI_Datatype s;
    int bl[2] = {1, 2};
    MPI_Aint d[2] = {4, 16};
    MPI_Datatype ts[2] = {MPI_INT, MPI_INT};
    MPI_Type_create_struct(2, bl, d, ts, &s);
    MPI_Type_create_resized(s, 0, 8 * sizeof(int), &l->t);
    MPI_Type_free(&s);
    l->name = "struct-gaps-resized";
    l->n = 3;
    int c[3] = {1, 4, 5};
    memcpy(l->cells, c, sizeof c);
    l->ext = 8;
    l->base = 0;
    ++l;
  }
  /* resized int with extent 3 ints: count k covers 0, 3, 6, ... */
  l->name = "resized";
  MPI_Type_create_resized(MPI_INT, 0, 3 * sizeof(int), &l->t);
  l->n = 1;
  l->cells[0] = 0;
  l->ext = 3;
  l->base = 0;
  ++l;
  /* hindexed with negative displacements: -3 ints (2 of them), +2 ints (1);
     type order follows the displacements given: -3, -2, 2 */
  {
    int bl[2] = {2, 1};
    MPI_Aint d[2] = {-3 * (MPI_Aint)sizeof(int), 2 * (MPI_Aint)sizeof(int)};
    MPI_Type_create_hindexed(2, bl, d, MPI_INT, &l->t);
    l->name = "hindexed-negative";
    l->n = 3;
    int c[3] = {-3, -2, 2};
    memcpy(l->cells, c, sizeof c);
    l->ext = 6; /* lb -3, ub 3 */
    l->base = 3;
    ++l;
  }
  /* subarray 2x2 out of 3x4 starting at (1,1), C order */
  {
    int sizes[2] = {3, 4}, sub[2] = {2, 2}, start[2] = {1, 1};
    MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_INT, &l->t);
    l->name = "subarray";
    l->n = 4;
    int c[4] = {5, 6, 9, 10};
    memcpy(l->cells, c, sizeof c);
    l->ext = 12;
    l->base = 0;
    ++l;
  }
  nlay = (int)(l - lay);
  for (int i = 1; i < nlay; ++i) MPI_Type_commit(&lay[i].t);
}

/* the int cell of element k of `count` instances of layout l */
static int cell(const Layout* l, int k) { return (k / l->n) * l->ext + l->cells[k % l->n]; }

enum { K_PUT, K_GET, K_ACC, K_GACC, K_RPUT, K_RGET, K_RACC, K_RGACC, NK };
static const char* kname[NK] = {"put", "get", "acc", "get_acc", "rput", "rget", "racc", "rget_acc"};

/* One operation from every rank to its right neighbour with origin layout
   lo (count oc) and target layout lt (count tc), both covering the same
   number of ints, under lock (sync 0) or fence (sync 1). */
static void one(int kind, const Layout* lo, const Layout* lt, int sync, int* win, MPI_Win w) {
  int total = lt == lay ? lo->n * 2 : lt->n * 2; /* ints moved */
  int oc = total / lo->n, tc = total / lt->n;
  int obuf[64], rbuf[64];
  for (int i = 0; i < 64; ++i) obuf[i] = sval(rank, i), rbuf[i] = 7;
  int* op = obuf + lo->base;
  int* rp = rbuf + lo->base;
  const int tdisp = 4 + lt->base; /* target displacement in ints (disp_unit = sizeof(int)) */
  for (int i = 0; i < WN; ++i) win[i] = ival(rank, i);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Request rq = MPI_REQUEST_NULL;
  if (sync)
    CHECK_OK(MPI_Win_fence(0, w));
  else
    CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w));
  int rc = 0;
  switch (kind) {
    case K_PUT:
      rc = MPI_Put(op, oc, lo->t, right, tdisp, tc, lt->t, w);
      break;
    case K_GET:
      rc = MPI_Get(rp, oc, lo->t, right, tdisp, tc, lt->t, w);
      break;
    case K_ACC:
      rc = MPI_Accumulate(op, oc, lo->t, right, tdisp, tc, lt->t, MPI_SUM, w);
      break;
    case K_GACC:
      rc = MPI_Get_accumulate(op, oc, lo->t, rp, oc, lo->t, right, tdisp, tc, lt->t, MPI_SUM, w);
      break;
    case K_RPUT:
      rc = MPI_Rput(op, oc, lo->t, right, tdisp, tc, lt->t, w, &rq);
      break;
    case K_RGET:
      rc = MPI_Rget(rp, oc, lo->t, right, tdisp, tc, lt->t, w, &rq);
      break;
    case K_RACC:
      rc = MPI_Raccumulate(op, oc, lo->t, right, tdisp, tc, lt->t, MPI_SUM, w, &rq);
      break;
    case K_RGACC:
      rc = MPI_Rget_accumulate(op, oc, lo->t, rp, oc, lo->t, right, tdisp, tc, lt->t, MPI_SUM, w, &rq);
      break;
  }
  if (rc != MPI_SUCCESS) {
    fprintf(stderr, "[rank %d] %s origin %s x%d target %s x%d: rc %d\n", rank, kname[kind], lo->name, oc, lt->name, tc,
            rc);
    ++mt_errors;
  }
  if (rq != MPI_REQUEST_NULL) CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  if (sync)
    CHECK_OK(MPI_Win_fence(0, w));
  else
    CHECK_OK(MPI_Win_unlock(right, w));
  MPI_Barrier(MPI_COMM_WORLD);
  /* what this rank's window must hold after left's operation */
  int want[WN];
  for (int i = 0; i < WN; ++i) want[i] = ival(rank, i);
  int writes = kind == K_PUT || kind == K_RPUT || kind == K_ACC || kind == K_GACC || kind == K_RACC || kind == K_RGACC;
  int sums = kind == K_ACC || kind == K_GACC || kind == K_RACC || kind == K_RGACC;
  int fetches = kind == K_GET || kind == K_RGET || kind == K_GACC || kind == K_RGACC;
  if (writes) {
    for (int k = 0; k < total; ++k) {
      int tcell = tdisp + cell(lt, k), ocell = lo->base + cell(lo, k);
      want[tcell] = sums ? want[tcell] + sval(left, ocell) : sval(left, ocell);
    }
  }
  int bad = 0;
  for (int i = 0; i < WN; ++i)
    if (win[i] != want[i] && !bad++)
      fprintf(stderr, "[rank %d] %s origin %s target %s %s: cell %d is %d, want %d\n", rank, kname[kind], lo->name,
              lt->name, sync ? "fence" : "lock", i, win[i], want[i]);
  if (fetches) {
    int wr[64];
    for (int i = 0; i < 64; ++i) wr[i] = 7;
    for (int k = 0; k < total; ++k) wr[lo->base + cell(lo, k)] = ival(right, tdisp + cell(lt, k));
    for (int i = 0; i < 64; ++i)
      if (rbuf[i] != wr[i] && !bad++)
        fprintf(stderr, "[rank %d] %s origin %s target %s %s: result %d is %d, want %d\n", rank, kname[kind], lo->name,
                lt->name, sync ? "fence" : "lock", i, rbuf[i], wr[i]);
  }
  mt_errors += bad != 0;
  MPI_Barrier(MPI_COMM_WORLD);
}

static void test_datatypes(int flav) {
  int* win;
  MPI_Win w;
  if (flav == 0) {
    win = malloc(WN * sizeof(int));
    CHECK_OK(MPI_Win_create(win, WN * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w));
  } else {
    CHECK_OK(MPI_Win_allocate(WN * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win, &w));
  }
  MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
  for (int kind = 0; kind < NK; ++kind)
    for (int a = 0; a < nlay; ++a)
      for (int b = 0; b < nlay; ++b) {
        /* both sides must cover the same number of ints: 2 instances of the
           bigger layout, and a matching count of the other when it divides */
        const Layout* lo = &lay[a];
        const Layout* lt = &lay[b];
        int total = lt == lay ? lo->n * 2 : lt->n * 2;
        if (total % lo->n || total % lt->n) continue;
        int sync = (kind + a + b) % 2;
        if (kind >= K_RPUT) sync = 0; /* request forms: passive target only */
        one(kind, lo, lt, sync, win, w);
      }
  CHECK_OK(MPI_Win_free(&w));
  if (flav == 0) free(win);
}

/* disp_unit = 4 * (rank + 1) bytes; odd ranks (but not all) size 0. */
static void test_units_and_empty(void) {
  MPI_Datatype empty_t;
  MPI_Type_contiguous(0, MPI_INT, &empty_t);
  MPI_Type_commit(&empty_t);
  int du = 4 * (rank + 1);
  int empty = rank % 2 == 1;
  int* mem = empty ? NULL : calloc(WN, sizeof(int));
  MPI_Win w;
  CHECK_OK(MPI_Win_create(mem, empty ? 0 : WN * sizeof(int), du, MPI_INFO_NULL, MPI_COMM_WORLD, &w));
  MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
  int* du_attr = NULL;
  int flag = 0;
  CHECK_OK(MPI_Win_get_attr(w, MPI_WIN_DISP_UNIT, &du_attr, &flag));
  CHECK(flag && *du_attr == du);
  MPI_Aint* sz = NULL;
  CHECK_OK(MPI_Win_get_attr(w, MPI_WIN_SIZE, &sz, &flag));
  CHECK(flag && *sz == (empty ? 0 : WN * (MPI_Aint)sizeof(int)));
  /* every rank puts its rank into displacement 1 of every other rank (unit
     4 * (t + 1) bytes: int cell t + 1) */
  CHECK_OK(MPI_Win_fence(0, w));
  int v = rank + 100; /* the origin buffer lives until the fence completes the puts */
  for (int t = 0; t < size; ++t) {
    int tempty = t % 2 == 1;
    if (tempty) {
      CHECK_CLASS(MPI_Put(&v, 1, MPI_INT, t, 0, 1, MPI_INT, w), MPI_ERR_RMA_RANGE);
      CHECK_OK(MPI_Put(&v, 0, MPI_INT, t, 0, 0, MPI_INT, w)); /* zero bytes fit anywhere */
      CHECK_OK(MPI_Accumulate(&v, 0, MPI_INT, t, 0, 0, MPI_INT, MPI_SUM, w));
      /* nor does one element of a type of size 0, at any displacement */
      CHECK_OK(MPI_Put(&v, 1, empty_t, t, 1000, 1, empty_t, w));
      CHECK_OK(MPI_Accumulate(&v, 1, empty_t, t, 1000, 1, empty_t, MPI_SUM, w));
    } else if (t != rank) {
      CHECK_OK(MPI_Put(&v, 1, MPI_INT, t, rank, 1, MPI_INT, w)); /* byte rank * 4 * (t + 1) */
    }
  }
  CHECK_OK(MPI_Win_fence(0, w));
  MPI_Type_free(&empty_t);
  if (!empty) {
    for (int r = 0; r < size; ++r) {
      if (r == rank) continue;
      int idx = r * (rank + 1); /* r * du / 4 */
      if (idx < WN) CHECK_EQ(mem[idx], r + 100);
    }
  }
  /* passive: gets back through each target's unit */
  CHECK_OK(MPI_Win_lock_all(0, w));
  for (int t = 0; t < size; ++t) {
    if (t % 2 == 1 || t == rank) continue;
    int got = -1;
    CHECK_OK(MPI_Get(&got, 1, MPI_INT, t, rank, 1, MPI_INT, w));
    CHECK_OK(MPI_Win_flush(t, w));
    CHECK_EQ(got, rank + 100);
    long long ll = -1;
    int rc = MPI_Fetch_and_op(NULL, &got, MPI_INT, t, WN / (t + 1), MPI_NO_OP, w); /* just past the end */
    if (WN % (t + 1) == 0) CHECK_EQ(rc != MPI_SUCCESS, 1);
    CHECK_OK(MPI_Win_flush(t, w)); /* got is written by then, before it leaves scope */
    (void)ll;
  }
  CHECK_OK(MPI_Win_unlock_all(w));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_free(&w));
  free(mem);

  /* allocate with size 0 on odd ranks: a base pointer comes back; zero-count operations to them are fine */
  int* p = NULL;
  CHECK_OK(MPI_Win_allocate(empty ? 0 : 8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &p, &w));
  MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
  CHECK_OK(MPI_Win_lock_all(0, w));
  int z = 0, res = 0;
  CHECK_OK(MPI_Put(&z, 0, MPI_INT, right, 0, 0, MPI_INT, w));
  CHECK_OK(MPI_Get(&res, 0, MPI_INT, right, 0, 0, MPI_INT, w));
  if (right % 2 == 1) CHECK_CLASS(MPI_Fetch_and_op(&z, &res, MPI_INT, right, 0, MPI_SUM, w), MPI_ERR_RMA_RANGE);
  CHECK_OK(MPI_Win_flush_all(w));
  CHECK_OK(MPI_Win_unlock_all(w));
  CHECK_OK(MPI_Win_free(&w));
}

/* Dynamic windows: three regions, operations into each through addresses
   from MPI_Get_address, one detached and one attached again. */
static void test_dynamic(void) {
  MPI_Win w;
  CHECK_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w));
  MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
  int* r0 = calloc(16, sizeof(int));
  double* r1 = calloc(8, sizeof(double));
  long long* r2 = calloc(4, sizeof(long long));
  CHECK_OK(MPI_Win_attach(w, r0, 16 * sizeof(int)));
  CHECK_OK(MPI_Win_attach(w, r1, 8 * sizeof(double)));
  CHECK_OK(MPI_Win_attach(w, r2, 4 * sizeof(long long)));
  /* attaching a zero-size region is allowed (MPI-3.1 11.2.4) */
  char dummy[1];
  int zrc = MPI_Win_attach(w, dummy, 0);
  if (zrc == MPI_SUCCESS) CHECK_OK(MPI_Win_detach(w, dummy));
  MPI_Aint a[3], all[3 * 64];
  MPI_Get_address(&r0[5], &a[0]);
  MPI_Get_address(&r1[2], &a[1]);
  MPI_Get_address(r2, &a[2]);
  MPI_Allgather(a, 3, MPI_AINT, all, 3, MPI_AINT, MPI_COMM_WORLD);
  const MPI_Aint* ta = &all[3 * right];
  CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, w));
  int iv[3] = {rank + 1, rank + 2, rank + 3};
  double dv = rank + 0.25;
  long long one = 1, old = -1;
  CHECK_OK(MPI_Put(iv, 3, MPI_INT, right, ta[0], 3, MPI_INT, w));
  CHECK_OK(MPI_Accumulate(&dv, 1, MPI_DOUBLE, right, ta[1], 1, MPI_DOUBLE, MPI_SUM, w));
  CHECK_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG_LONG, right, ta[2] + 3 * sizeof(long long), MPI_SUM, w));
  /* a displacement from MPI_Aint_add over the region's start */
  MPI_Aint back = MPI_Aint_add(ta[0], -5 * (MPI_Aint)sizeof(int));
  int v0 = 77;
  CHECK_OK(MPI_Put(&v0, 1, MPI_INT, right, back, 1, MPI_INT, w));
  CHECK_OK(MPI_Win_unlock(right, w));
  CHECK_EQ(old, 0);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_EQ(r0[0], 77);
  CHECK_EQ(r0[5], left + 1);
  CHECK_EQ(r0[6], left + 2);
  CHECK_EQ(r0[7], left + 3);
  CHECK(r1[2] == left + 0.25);
  CHECK_EQ(r2[3], 1);
  MPI_Barrier(MPI_COMM_WORLD);
  /* detach the middle region; the others still work */
  CHECK_OK(MPI_Win_detach(w, r1));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w));
  CHECK_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG_LONG, right, ta[2] + 3 * sizeof(long long), MPI_SUM, w));
  int got[3] = {0, 0, 0};
  CHECK_OK(MPI_Get(got, 3, MPI_INT, right, ta[0], 3, MPI_INT, w));
  CHECK_OK(MPI_Win_unlock(right, w));
  CHECK_EQ(old, 1);
  CHECK_EQ(got[0], rank + 1);
  CHECK_EQ(got[2], rank + 3);
  /* into the detached region: refused (at the target; the unlock tells) */
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w));
  int prc = MPI_Put(&dv, 1, MPI_DOUBLE, right, ta[1], 1, MPI_DOUBLE, w);
  int urc = MPI_Win_unlock(right, w);
  CHECK(prc != MPI_SUCCESS || urc != MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(r1[2] == left + 0.25); /* unchanged */
  /* attach it again: reachable again */
  CHECK_OK(MPI_Win_attach(w, r1, 8 * sizeof(double)));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w));
  CHECK_OK(MPI_Accumulate(&dv, 1, MPI_DOUBLE, right, ta[1], 1, MPI_DOUBLE, MPI_SUM, w));
  CHECK_OK(MPI_Win_unlock(right, w));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(r1[2] == 2 * (left + 0.25));
  /* fence and PSCW work on dynamic windows too */
  CHECK_OK(MPI_Win_fence(0, w));
  CHECK_OK(MPI_Put(&v0, 1, MPI_INT, right, MPI_Aint_add(ta[0], 10 * sizeof(int)), 1, MPI_INT, w));
  CHECK_OK(MPI_Win_fence(0, w));
  CHECK_EQ(r0[15], 77);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_detach(w, r0));
  CHECK_OK(MPI_Win_detach(w, r1));
  CHECK_OK(MPI_Win_detach(w, r2));
  CHECK_OK(MPI_Win_free(&w));
  free(r0);
  free(r1);
  free(r2);
}

/* Shared windows where even ranks bring no memory. */
static void test_shared_empty(int noncontig) {
  MPI_Info info = MPI_INFO_NULL;
  if (noncontig) {
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
  }
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int nr, ns;
  MPI_Comm_rank(node, &nr);
  MPI_Comm_size(node, &ns);
  MPI_Aint bytes = nr % 2 == 0 ? 0 : (MPI_Aint)(16 + nr) * (MPI_Aint)sizeof(int);
  int* base = NULL;
  MPI_Win w;
  CHECK_OK(MPI_Win_allocate_shared(bytes, sizeof(int), info, node, &base, &w));
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
  MPI_Aint qs;
  int qu;
  int* qb;
  int first = -1;
  for (int r = 0; r < ns; ++r) {
    CHECK_OK(MPI_Win_shared_query(w, r, &qs, &qu, &qb));
    CHECK_EQ(qs, r % 2 == 0 ? 0 : (16 + r) * (MPI_Aint)sizeof(int));
    CHECK_EQ(qu, sizeof(int));
    if (r == nr && bytes) CHECK(qb == base);
    if (qs && first < 0) first = r;
  }
  CHECK_OK(MPI_Win_shared_query(w, MPI_PROC_NULL, &qs, &qu, &qb));
  if (first >= 0) {
    MPI_Aint fs;
    int fu;
    int* fb;
    MPI_Win_shared_query(w, first, &fs, &fu, &fb);
    CHECK(qb == fb);
    CHECK_EQ(qs, fs);
  } else {
    CHECK_EQ(qs, 0);
  }
  CHECK_CLASS(MPI_Win_shared_query(w, ns, &qs, &qu, &qb), MPI_ERR_RANK);
  /* every rank writes its node rank into the last int of each non-empty part */
  CHECK_OK(MPI_Win_lock_all(0, w));
  for (int r = 1; r < ns; r += 2) {
    int* part;
    MPI_Win_shared_query(w, r, &qs, &qu, &part);
    int v = nr + 1;
    CHECK_OK(MPI_Accumulate(&v, 1, MPI_INT, r, 15 + r, 1, MPI_INT, MPI_SUM, w));
  }
  CHECK_OK(MPI_Win_unlock_all(w));
  MPI_Barrier(node);
  if (bytes) {
    MPI_Win_lock(MPI_LOCK_SHARED, nr, 0, w);
    CHECK_EQ(base[15 + nr], ns * (ns + 1) / 2);
    MPI_Win_unlock(nr, w);
  }
  MPI_Barrier(node);
  CHECK_OK(MPI_Win_free(&w));
  MPI_Comm_free(&node);
}

/* A target datatype with thousands of blocks: every other int of a
   2 x 2000-int window (rma_limits takes one of 10,000 blocks, whose
   description spans several packets). */
static void test_big_type(void) {
  const int nb = 2000;
  int* mem;
  MPI_Win w;
  CHECK_OK(MPI_Win_allocate(2 * nb * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &w));
  MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
  for (int i = 0; i < 2 * nb; ++i) mem[i] = -1;
  int* bl = malloc(nb * sizeof(int));
  int* disp = malloc(nb * sizeof(int));
  int* src = malloc(nb * sizeof(int));
  int* got = malloc(nb * sizeof(int));
  for (int i = 0; i < nb; ++i) bl[i] = 1, disp[i] = 2 * i, src[i] = rank * 100000 + i, got[i] = 0;
  MPI_Datatype t;
  MPI_Type_indexed(nb, bl, disp, MPI_INT, &t);
  MPI_Type_commit(&t);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, w));
  CHECK_OK(MPI_Put(src, nb, MPI_INT, right, 0, 1, t, w));
  CHECK_OK(MPI_Accumulate(src, nb, MPI_INT, right, 1, 1, t, MPI_REPLACE, w));
  CHECK_OK(MPI_Win_flush(right, w));
  CHECK_OK(MPI_Get(got, nb, MPI_INT, right, 1, 1, t, w));
  CHECK_OK(MPI_Win_unlock(right, w));
  MPI_Barrier(MPI_COMM_WORLD);
  int bad = 0;
  for (int i = 0; i < nb; ++i) bad += mem[2 * i] != left * 100000 + i || mem[2 * i + 1] != left * 100000 + i;
  for (int i = 0; i < nb; ++i) bad += got[i] != rank * 100000 + i;
  CHECK_EQ(bad, 0);
  MPI_Type_free(&t);
  free(bl);
  free(disp);
  free(src);
  free(got);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_free(&w));
}

int main(int argc, char** argv) {
  mt_init_ring(&argc, &argv, &rank, &size, &right, &left);
  make_layouts();
  test_datatypes(0);
  test_datatypes(1);
  test_units_and_empty();
  test_dynamic();
  test_shared_empty(0);
  test_shared_empty(1);
  test_big_type();
  for (int i = 1; i < nlay; ++i) MPI_Type_free(&lay[i].t);
  return mt_finish();
}
