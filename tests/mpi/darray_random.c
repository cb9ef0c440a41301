/* MPI_Type_create_darray and MPI_Type_create_subarray against the
 * standard's definition (MPI 3.1 4.1.3-4.1.4), on random shapes of 1-4
 * dimensions with every order and distribution (block, cyclic, cyclic(k),
 * none, default and explicit arguments), for every rank of a process grid
 * (the constructors take size and rank, so one process checks them all),
 * over an old type with holes (extent 12 around 4 bytes). Each type's size,
 * bounds and the elements it selects (MPI_Pack of the array's indices) are
 * compared with a reference; its envelope and contents rebuild a type that
 * selects the same. */
#include "mpitest.h"

#define MAXD 4
#define MAXE 4096

static MPI_Datatype old; /* an int resized to extent 12 (lb 0) */
static const MPI_Aint old_ext = 12;

/* The array's element e (linear index in order) as an int at e * 12 bytes. */
static int* make_array(int n) {
  int* a = calloc((size_t)n * 3 + 3, sizeof(int));
  for (int e = 0; e < n; ++e) a[e * 3] = e;
  return a;
}

/* The indices t selects, in order (count 1 of t over the array). */
static int selected(MPI_Datatype t, const int* array, int* out, int cap) {
  int sz = 0;
  MPI_Type_size(t, &sz);
  if (sz / 4 > cap) return -1;
  int pos = 0;
  CHECK_OK(MPI_Pack(array, 1, t, out, cap * 4, &pos, MPI_COMM_SELF));
  return pos / 4;
}

/* Linear index of coordinates c in an array of sizes g, order o. */
static int linear(int nd, const int* g, const int* c, int o) {
  int e = 0;
  if (o == MPI_ORDER_C)
    for (int i = 0; i < nd; ++i) e = e * g[i] + c[i];
  else
    for (int i = nd - 1; i >= 0; --i) e = e * g[i] + c[i];
  return e;
}

/* The product of per-dimension index lists, traversed in order o (the
 * fastest dimension last for C, first for Fortran). */
static int product(int nd, const int* g, int o, int lists[MAXD][64], const int* lens, int* want) {
  int nw = 0, k[MAXD] = {0}, c[MAXD];
  for (int i = 0; i < nd; ++i)
    if (lens[i] == 0) return 0;
  for (;;) {
    for (int i = 0; i < nd; ++i) c[i] = lists[i][k[i]];
    want[nw++] = linear(nd, g, c, o);
    int d = o == MPI_ORDER_C ? nd - 1 : 0, step = o == MPI_ORDER_C ? -1 : 1, done = 1;
    for (int n = 0; n < nd; ++n, d += step) {
      if (++k[d] < lens[d]) {
        done = 0;
        break;
      }
      k[d] = 0;
    }
    if (done) return nw;
  }
}

static void compare(MPI_Datatype t, const int* array, const int* want, int nw, int total, int line) {
  static int got[MAXE];
  int sz = -1;
  MPI_Type_size(t, &sz);
  if (sz != nw * 4) mt_fail(__FILE__, line, "type size", sz, nw * 4);
  MPI_Aint lb = -1, ext = -1;
  MPI_Type_get_extent(t, &lb, &ext);
  if (lb != 0) mt_fail(__FILE__, line, "lb", lb, 0);
  if (ext != total * old_ext) mt_fail(__FILE__, line, "extent", ext, total * old_ext);
  int n = selected(t, array, got, MAXE);
  if (n != nw) {
    mt_fail(__FILE__, line, "elements selected", n, nw);
    return;
  }
  for (int i = 0; i < n; ++i)
    if (got[i] != want[i]) {
      mt_fail(__FILE__, line, "element", got[i], want[i]);
      return;
    }
}

/* Rebuilds t from its envelope and contents and checks the same selection. */
static void rebuild(MPI_Datatype t, const int* array, const int* want, int nw, int total, int comb, int line) {
  int ni, na, nd, c;
  CHECK_OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &c));
  if (c != comb) {
    mt_fail(__FILE__, line, "combiner", c, comb);
    return;
  }
  int ints[64];
  MPI_Aint aints[8];
  MPI_Datatype types[2];
  if (ni > 64 || na > 8 || nd != 1) {
    mt_fail(__FILE__, line, "envelope counts", ni, nd);
    return;
  }
  CHECK_OK(MPI_Type_get_contents(t, ni, na, nd, ints, aints, types));
  /* a derived old type comes back as a new handle to the same type */
  MPI_Aint olb = -1, oext = -1;
  MPI_Type_get_extent(types[0], &olb, &oext);
  if (oext != old_ext) mt_fail(__FILE__, line, "contents old type's extent", oext, old_ext);
  MPI_Datatype r = MPI_DATATYPE_NULL;
  if (comb == MPI_COMBINER_DARRAY) {
    int n = ints[2];
    CHECK_EQ(ni, 4 * n + 4);
    CHECK_OK(MPI_Type_create_darray(ints[0], ints[1], n, ints + 3, ints + 3 + n, ints + 3 + 2 * n, ints + 3 + 3 * n,
                                    ints[3 + 4 * n], types[0], &r));
  } else {
    int n = ints[0];
    CHECK_EQ(ni, 3 * n + 2);
    CHECK_OK(MPI_Type_create_subarray(n, ints + 1, ints + 1 + n, ints + 1 + 2 * n, ints[1 + 3 * n], types[0], &r));
  }
  CHECK_OK(MPI_Type_commit(&r));
  compare(r, array, want, nw, total, line);
  MPI_Type_free(&r);
  MPI_Type_free(&types[0]);
}

/* One darray: every rank of the grid ps. */
static void darray_case(int nd, const int* g, const int* dist, const int* darg, const int* ps, int o,
                        const int* array) {
  static int want[MAXE];
  int procs = 1, total = 1;
  for (int i = 0; i < nd; ++i) procs *= ps[i], total *= g[i];
  for (int r = 0; r < procs; ++r) {
    int coord[MAXD], rest = r;
    for (int i = nd - 1; i >= 0; --i) coord[i] = rest % ps[i], rest /= ps[i]; /* row-major grid */
    int lists[MAXD][64], lens[MAXD];
    for (int i = 0; i < nd; ++i) {
      lens[i] = 0;
      if (dist[i] == MPI_DISTRIBUTE_NONE) {
        for (int j = 0; j < g[i]; ++j) lists[i][lens[i]++] = j;
      } else if (dist[i] == MPI_DISTRIBUTE_BLOCK) {
        int b = darg[i] == MPI_DISTRIBUTE_DFLT_DARG ? (g[i] + ps[i] - 1) / ps[i] : darg[i];
        for (int j = coord[i] * b; j < (coord[i] + 1) * b && j < g[i]; ++j) lists[i][lens[i]++] = j;
      } else {
        int k = darg[i] == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg[i];
        for (int j = 0; j < g[i]; ++j)
          if ((j / k) % ps[i] == coord[i]) lists[i][lens[i]++] = j;
      }
    }
    int nw = product(nd, g, o, lists, lens, want);
    MPI_Datatype t;
    int rc = MPI_Type_create_darray(procs, r, nd, g, dist, darg, ps, o, old, &t);
    if (rc != MPI_SUCCESS) {
      mt_fail(__FILE__, __LINE__, "MPI_Type_create_darray", rc, 0);
      continue;
    }
    CHECK_OK(MPI_Type_commit(&t));
    compare(t, array, want, nw, total, __LINE__);
    rebuild(t, array, want, nw, total, MPI_COMBINER_DARRAY, __LINE__);
    /* Two in a row: the second starts one full array later. */
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    CHECK_EQ(ext, total * old_ext);
    MPI_Type_free(&t);
  }
}

static void random_darrays(unsigned seed, int cases) {
  int* array = make_array(MAXE);
  for (int n = 0; n < cases; ++n) {
    int nd = 1 + (int)(mt_rand(&seed) % MAXD), g[MAXD], dist[MAXD], darg[MAXD], ps[MAXD], total = 1;
    for (int i = 0; i < nd; ++i) {
      ps[i] = 1 + (int)(mt_rand(&seed) % 3);
      g[i] = 1 + (int)(mt_rand(&seed) % (nd > 2 ? 7 : 13));
      int kind = (int)(mt_rand(&seed) % 5);
      if (kind == 0) {
        dist[i] = MPI_DISTRIBUTE_NONE, darg[i] = MPI_DISTRIBUTE_DFLT_DARG, ps[i] = 1;
      } else if (kind == 1) {
        dist[i] = MPI_DISTRIBUTE_BLOCK, darg[i] = MPI_DISTRIBUTE_DFLT_DARG;
      } else if (kind == 2) { /* an explicit block at least the default */
        dist[i] = MPI_DISTRIBUTE_BLOCK, darg[i] = (g[i] + ps[i] - 1) / ps[i] + (int)(mt_rand(&seed) % 3);
      } else if (kind == 3) {
        dist[i] = MPI_DISTRIBUTE_CYCLIC, darg[i] = MPI_DISTRIBUTE_DFLT_DARG;
      } else {
        dist[i] = MPI_DISTRIBUTE_CYCLIC, darg[i] = 1 + (int)(mt_rand(&seed) % 4);
      }
      total *= g[i];
    }
    if (total > MAXE) continue;
    int o = mt_rand(&seed) % 2 ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
    darray_case(nd, g, dist, darg, ps, o, array);
  }
  free(array);
}

static void random_subarrays(unsigned seed, int cases) {
  static int want[MAXE];
  int* array = make_array(MAXE);
  for (int n = 0; n < cases; ++n) {
    int nd = 1 + (int)(mt_rand(&seed) % MAXD), g[MAXD], sub[MAXD], st[MAXD], total = 1;
    int lists[MAXD][64], lens[MAXD];
    for (int i = 0; i < nd; ++i) {
      g[i] = 1 + (int)(mt_rand(&seed) % 9);
      sub[i] = (int)(mt_rand(&seed) % (g[i] + 1)); /* 0 allowed */
      if (sub[i] == 0 && mt_rand(&seed) % 2) sub[i] = 1;
      st[i] = (int)(mt_rand(&seed) % (g[i] - sub[i] + 1));
      lens[i] = 0;
      for (int j = st[i]; j < st[i] + sub[i]; ++j) lists[i][lens[i]++] = j;
      total *= g[i];
    }
    int o = mt_rand(&seed) % 2 ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
    int nw = product(nd, g, o, lists, lens, want);
    MPI_Datatype t;
    CHECK_OK(MPI_Type_create_subarray(nd, g, sub, st, o, old, &t));
    CHECK_OK(MPI_Type_commit(&t));
    compare(t, array, want, nw, total, __LINE__);
    rebuild(t, array, want, nw, total, MPI_COMBINER_SUBARRAY, __LINE__);
    MPI_Type_free(&t);
  }
  free(array);
}

/* Arguments the standard makes erroneous, each with its error class. */
static void bad_arguments(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Datatype t = MPI_DATATYPE_NULL;
  int g[2] = {4, 4}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK};
  int darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, ps[2] = {2, 2};
  /* the grid's size is not size */
  CHECK(MPI_Type_create_darray(3, 0, 2, g, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t) != MPI_SUCCESS);
  /* rank outside the grid */
  CHECK(MPI_Type_create_darray(4, 4, 2, g, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t) != MPI_SUCCESS);
  CHECK(MPI_Type_create_darray(4, -1, 2, g, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t) != MPI_SUCCESS);
  /* DISTRIBUTE_NONE over more than one process */
  int dn[2] = {MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_BLOCK};
  CHECK(MPI_Type_create_darray(4, 0, 2, g, dn, darg, ps, MPI_ORDER_C, MPI_INT, &t) != MPI_SUCCESS);
  /* a bad distribution, a zero or negative size */
  int dbad[2] = {12345, MPI_DISTRIBUTE_BLOCK};
  CHECK(MPI_Type_create_darray(4, 0, 2, g, dbad, darg, ps, MPI_ORDER_C, MPI_INT, &t) != MPI_SUCCESS);
  int g0[2] = {0, 4}, gneg[2] = {-3, 4}, ps0[2] = {0, 4};
  CHECK(MPI_Type_create_darray(4, 0, 2, g0, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t) != MPI_SUCCESS);
  CHECK(MPI_Type_create_darray(4, 0, 2, gneg, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t) != MPI_SUCCESS);
  CHECK(MPI_Type_create_darray(4, 0, 2, g, dist, darg, ps0, MPI_ORDER_C, MPI_INT, &t) != MPI_SUCCESS);
  /* a cyclic argument of 0 or below (but the default) */
  int dc[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC}, a0[2] = {0, 1};
  CHECK(MPI_Type_create_darray(4, 0, 2, g, dc, a0, ps, MPI_ORDER_C, MPI_INT, &t) != MPI_SUCCESS);
  /* a bad order, ndims below 1 (darray: 0 is erroneous too), null arrays */
  CHECK(MPI_Type_create_darray(4, 0, 2, g, dist, darg, ps, 7, MPI_INT, &t) != MPI_SUCCESS);
  CHECK(MPI_Type_create_darray(4, 0, -1, g, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t) != MPI_SUCCESS);
  CHECK(MPI_Type_create_darray(4, 0, 2, NULL, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t) != MPI_SUCCESS);
  CHECK(MPI_Type_create_darray(4, 0, 2, g, dist, darg, ps, MPI_ORDER_C, MPI_DATATYPE_NULL, &t) != MPI_SUCCESS);
  /* subarray: a zero or negative size, a negative start, ndims 0 */
  int sz[2] = {4, 4}, sub[2] = {2, 2}, st[2] = {0, 0}, neg[2] = {-1, 0}, zero[2] = {0, 4};
  CHECK(MPI_Type_create_subarray(2, zero, sub, st, MPI_ORDER_C, MPI_INT, &t) != MPI_SUCCESS);
  CHECK(MPI_Type_create_subarray(2, sz, neg, st, MPI_ORDER_C, MPI_INT, &t) != MPI_SUCCESS);
  CHECK(MPI_Type_create_subarray(2, sz, sub, neg, MPI_ORDER_C, MPI_INT, &t) != MPI_SUCCESS);
  CHECK(MPI_Type_create_subarray(0, sz, sub, st, MPI_ORDER_C, MPI_INT, &t) != MPI_SUCCESS);
  CHECK(MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, MPI_DATATYPE_NULL, &t) != MPI_SUCCESS);
  CHECK_EQ(t, MPI_DATATYPE_NULL);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK_OK(MPI_Type_create_resized(MPI_INT, 0, old_ext, &old));
  CHECK_OK(MPI_Type_commit(&old));
  /* Each rank its own seeds: more shapes over more ranks. */
  random_darrays(17u + 31u * (unsigned)rank, 150);
  random_subarrays(91u + 7u * (unsigned)rank, 200);
  bad_arguments();
  MPI_Type_free(&old);
  return mt_finish();
}
