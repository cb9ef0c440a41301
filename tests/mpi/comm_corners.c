/* Communicator and group corners a conformance suite probes
 * (MPI 3.1 chapters 6 and 7): MPI_Comm_split with MPI_UNDEFINED and tied
 * keys, MPI_Comm_create_group, MPI_Comm_idup (attributes copied, traffic on
 * the parent meanwhile), MPI_Intercomm_create / MPI_Intercomm_merge and the
 * merged order, MPI_Comm_compare, MPI_Group_range_incl / range_excl and
 * MPI_Group_translate_ranks corners, a bad color or split type on one rank
 * only (the others still split), a bad group or info on one rank only
 * (every rank fails, none waits). Topologies are in topo_corners.c. */
#include "mpitest.h"

static int rank, size;

static void split_corners(void) {
  MPI_Comm c, c2g = MPI_COMM_WORLD;
  /* Ranks 0 and 2 (mod 3) join color 0/1, ranks 1 (mod 3) stay out. */
  int color = rank % 3 == 1 ? MPI_UNDEFINED : rank % 3 / 2;
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, color, 0 /* tie: world order */, &c));
  if (color == MPI_UNDEFINED) {
    CHECK(c == MPI_COMM_NULL);
  } else {
    int r = -1, n = -1;
    CHECK(c != MPI_COMM_NULL);
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    int want_n = 0, want_r = 0;
    for (int q = 0; q < size; ++q)
      if (q % 3 != 1 && q % 3 / 2 == color) {
        if (q < rank) ++want_r;
        ++want_n;
      }
    CHECK_EQ(n, want_n);
    CHECK_EQ(r, want_r);
    CHECK_OK(MPI_Comm_free(&c));
  }
  /* Everyone undefined. */
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, MPI_UNDEFINED, rank, &c));
  CHECK(c == MPI_COMM_NULL);
  CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, rank % 2 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c));
  if (rank % 2) {
    CHECK(c == MPI_COMM_NULL);
  } else {
    CHECK(c != MPI_COMM_NULL);
    CHECK_OK(MPI_Comm_free(&c));
  }
  /* Keys reverse the order; equal keys keep the old order. */
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, rank / 2 == 0 ? 5 : -rank, &c));
  int r = -1;
  MPI_Comm_rank(c, &r);
  int want = 0;
  for (int q = 0; q < size; ++q) {
    int kq = q / 2 == 0 ? 5 : -q, kr = rank / 2 == 0 ? 5 : -rank;
    if (kq < kr || (kq == kr && q < rank)) ++want;
  }
  CHECK_EQ(r, want);
  CHECK_OK(MPI_Comm_free(&c));
  /* A bad color or split type on rank 0 alone: MPI_ERR_ARG and
   * MPI_COMM_NULL there, and the others still get their communicator
   * (without rank 0) instead of waiting for it. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  c = MPI_COMM_WORLD;
  int rc = MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? -3 : 0, 0, &c);
  int rc2 = MPI_Comm_split_type(MPI_COMM_WORLD, rank == 0 ? 4242 : MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c2g);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  if (rank == 0) {
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_ARG);
    CHECK(c == MPI_COMM_NULL);
    MPI_Error_class(rc2, &cls);
    CHECK_EQ(cls, MPI_ERR_ARG);
    CHECK(c2g == MPI_COMM_NULL);
  } else {
    CHECK_OK(rc);
    CHECK_OK(rc2);
    int n = -1;
    MPI_Comm_size(c, &n);
    CHECK_EQ(n, size - 1);
    MPI_Comm_rank(c, &r);
    CHECK_EQ(r, rank - 1);
    int one = 1, sum = 0;
    CHECK_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK_EQ(sum, size - 1);
    MPI_Comm_free(&c);
    MPI_Comm_size(c2g, &n);
    CHECK(n >= 1 && n <= size - 1);
    MPI_Comm_free(&c2g);
  }
  /* A bad group (MPI_Comm_create) or info (MPI_Comm_split_type) on rank 0
   * alone: its class there, MPI_ERR_OTHER at the others, none waits. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Group wg;
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  MPI_Info freed;
  MPI_Info_create(&freed);
  MPI_Info gone = freed;
  MPI_Info_free(&gone);
  int cls[2] = {-1, -1}, want_cls[2] = {MPI_ERR_GROUP, MPI_ERR_INFO};
  MPI_Error_class(MPI_Comm_create(MPI_COMM_WORLD, rank == 0 ? MPI_GROUP_NULL : wg, &c), &cls[0]);
  MPI_Error_class(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, rank == 0 ? freed : MPI_INFO_NULL, &c),
                  &cls[1]);
  for (int i = 0; i < 2; ++i) CHECK_EQ(cls[i], rank == 0 ? want_cls[i] : MPI_ERR_OTHER);
  MPI_Group_free(&wg);
  int one = 1, sum = 0;
  CHECK_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  CHECK_EQ(sum, size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void create_group(void) {
  MPI_Group world, evens, odds;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int range[1][3] = {{0, size - 1, 2}};
  CHECK_OK(MPI_Group_range_incl(world, 1, range, &evens));
  CHECK_OK(MPI_Group_range_excl(world, 1, range, &odds));
  MPI_Comm c = MPI_COMM_NULL;
  /* Only the members call it: the two halves at once, same tag. */
  CHECK_OK(MPI_Comm_create_group(MPI_COMM_WORLD, rank % 2 ? odds : evens, 9, &c));
  int n = -1, r = -1;
  MPI_Comm_size(c, &n);
  MPI_Comm_rank(c, &r);
  CHECK_EQ(n, rank % 2 ? size / 2 : (size + 1) / 2);
  CHECK_EQ(r, rank / 2);
  int sum = 0;
  CHECK_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
  int want = 0;
  for (int q = rank % 2; q < size; q += 2) want += q;
  CHECK_EQ(sum, want);
  CHECK_OK(MPI_Comm_free(&c));
  /* MPI_Comm_create with a group that lacks the caller: MPI_COMM_NULL */
  CHECK_OK(MPI_Comm_create(MPI_COMM_WORLD, evens, &c));
  if (rank % 2)
    CHECK(c == MPI_COMM_NULL);
  else
    CHECK_OK(MPI_Comm_free(&c));
  /* MPI_GROUP_EMPTY: a creation of it gives MPI_COMM_NULL everywhere */
  CHECK_OK(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, &c));
  CHECK(c == MPI_COMM_NULL);
  MPI_Group_free(&evens);
  MPI_Group_free(&odds);
  MPI_Group_free(&world);
}

static int copies = 0;
static int copy_fn(MPI_Comm c, int key, void* extra, void* in, void* out, int* flag) {
  (void)c, (void)key, (void)extra;
  ++copies;
  *(void**)out = (char*)in + 1;
  *flag = 1;
  return MPI_SUCCESS;
}

static void idup(void) {
  int key;
  static char base[4];
  CHECK_OK(MPI_Comm_create_keyval(copy_fn, MPI_COMM_NULL_DELETE_FN, &key, NULL));
  CHECK_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, key, base));
  MPI_Comm d;
  MPI_Request rq[3];
  int next = (rank + 1) % size, prev = (rank + size - 1) % size, in = -1;
  CHECK_OK(MPI_Irecv(&in, 1, MPI_INT, prev, 4, MPI_COMM_WORLD, &rq[0]));
  CHECK_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d, &rq[1]));
  CHECK_OK(MPI_Isend(&rank, 1, MPI_INT, next, 4, MPI_COMM_WORLD, &rq[2]));
  CHECK_OK(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE));
  CHECK_EQ(in, prev);
  int result = -1;
  CHECK_OK(MPI_Comm_compare(MPI_COMM_WORLD, d, &result));
  CHECK_EQ(result, MPI_CONGRUENT);
  void* val = NULL;
  int flag = 0;
  CHECK_OK(MPI_Comm_get_attr(d, key, &val, &flag));
  CHECK(flag);
  CHECK(val == base + 1);
  CHECK_EQ(copies, 1);
  int sum = 0;
  CHECK_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, d));
  CHECK_EQ(sum, size * (size - 1) / 2);
  /* Two idups in flight on one communicator */
  MPI_Comm e1, e2;
  CHECK_OK(MPI_Comm_idup(d, &e1, &rq[0]));
  CHECK_OK(MPI_Comm_idup(d, &e2, &rq[1]));
  CHECK_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
  CHECK_OK(MPI_Comm_compare(e1, e2, &result));
  CHECK_EQ(result, MPI_CONGRUENT);
  CHECK_OK(MPI_Barrier(e2));
  CHECK_OK(MPI_Barrier(e1));
  MPI_Comm_free(&e1);
  MPI_Comm_free(&e2);
  MPI_Comm_free(&d);
  CHECK_OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, key));
  CHECK_OK(MPI_Comm_free_keyval(&key));
  CHECK(key == MPI_KEYVAL_INVALID);
}

static void intercomm(void) {
  if (size < 2) return;
  /* Group A: ranks < size/3 + 1 (at least one), group B: the rest. */
  const int na = size / 3 + 1, in_a = rank < na;
  MPI_Comm local, inter, merged;
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, in_a, rank, &local));
  CHECK_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, in_a ? na : 0, 3, &inter));
  int lsize = -1, rsize = -1, flag = 0;
  MPI_Comm_size(inter, &lsize);
  MPI_Comm_remote_size(inter, &rsize);
  CHECK_EQ(lsize, in_a ? na : size - na);
  CHECK_EQ(rsize, in_a ? size - na : na);
  MPI_Comm_test_inter(inter, &flag);
  CHECK(flag);
  MPI_Group rg;
  CHECK_OK(MPI_Comm_remote_group(inter, &rg));
  int gs = -1;
  MPI_Group_size(rg, &gs);
  CHECK_EQ(gs, rsize);
  MPI_Group_free(&rg);
  /* Point-to-point across: local rank i of A talks to remote rank i of B */
  int lr = -1;
  MPI_Comm_rank(inter, &lr);
  if (lr < na && lr < size - na) {
    int got = -1;
    CHECK_OK(MPI_Sendrecv(&rank, 1, MPI_INT, lr, 0, &got, 1, MPI_INT, lr, 0, inter, MPI_STATUS_IGNORE));
    CHECK_EQ(got, in_a ? na + lr : lr);
  }
  /* merge: B says high = 0, A says high = 1: B's ranks come first */
  CHECK_OK(MPI_Intercomm_merge(inter, in_a, &merged));
  int mr = -1, ms = -1;
  MPI_Comm_rank(merged, &mr);
  MPI_Comm_size(merged, &ms);
  CHECK_EQ(ms, size);
  CHECK_EQ(mr, in_a ? (size - na) + rank : rank - na);
  MPI_Comm_test_inter(merged, &flag);
  CHECK(!flag);
  int result = -1;
  CHECK_OK(MPI_Comm_compare(merged, MPI_COMM_WORLD, &result));
  CHECK_EQ(result, MPI_SIMILAR);
  /* Compare intercommunicators */
  MPI_Comm inter2;
  CHECK_OK(MPI_Comm_dup(inter, &inter2));
  CHECK_OK(MPI_Comm_compare(inter, inter2, &result));
  CHECK_EQ(result, MPI_CONGRUENT);
  CHECK_OK(MPI_Comm_compare(inter, inter, &result));
  CHECK_EQ(result, MPI_IDENT);
  MPI_Comm_free(&inter2);
  MPI_Comm_free(&merged);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
}

static void compare(void) {
  MPI_Comm d, rev, half;
  int result = -1;
  CHECK_OK(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &result));
  CHECK_EQ(result, MPI_IDENT);
  MPI_Comm_dup(MPI_COMM_WORLD, &d);
  CHECK_OK(MPI_Comm_compare(MPI_COMM_WORLD, d, &result));
  CHECK_EQ(result, MPI_CONGRUENT);
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
  CHECK_OK(MPI_Comm_compare(d, rev, &result));
  CHECK_EQ(result, size > 1 ? MPI_SIMILAR : MPI_CONGRUENT);
  MPI_Comm_split(MPI_COMM_WORLD, rank < (size + 1) / 2, rank, &half);
  CHECK_OK(MPI_Comm_compare(half, MPI_COMM_WORLD, &result));
  CHECK_EQ(result, size > 1 ? MPI_UNEQUAL : MPI_CONGRUENT);
  CHECK_OK(MPI_Comm_compare(MPI_COMM_SELF, MPI_COMM_SELF, &result));
  CHECK_EQ(result, MPI_IDENT);
  MPI_Comm_free(&d);
  MPI_Comm_free(&rev);
  MPI_Comm_free(&half);
}

static void expect_group(MPI_Group g, const int* want, int n) {
  int gs = -1;
  MPI_Group_size(g, &gs);
  CHECK_EQ(gs, n);
  MPI_Group world;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  for (int i = 0; i < n && i < gs; ++i) {
    int w = -1;
    CHECK_OK(MPI_Group_translate_ranks(g, 1, &i, world, &w));
    CHECK_EQ(w, want[i]);
  }
  MPI_Group_free(&world);
}

static void groups(void) {
  MPI_Group world, g;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int want[64], n;
  /* Descending range */
  int r1[1][3] = {{size - 1, 0, -1}};
  CHECK_OK(MPI_Group_range_incl(world, 1, r1, &g));
  for (int i = 0; i < size; ++i) want[i] = size - 1 - i;
  expect_group(g, want, size);
  int result = -1;
  CHECK_OK(MPI_Group_compare(world, g, &result));
  CHECK_EQ(result, size > 1 ? MPI_SIMILAR : MPI_IDENT);
  MPI_Group_free(&g);
  /* Two ranges, strides that overshoot the last rank */
  int r2[2][3] = {{0, size - 1, 3}, {size - 1, 1, -3}};
  n = 0;
  for (int i = 0; i <= size - 1; i += 3) want[n++] = i;
  int seen[64] = {0};
  for (int i = 0; i < n; ++i) seen[want[i]] = 1;
  int ok = 1;
  for (int i = size - 1; i >= 1; i -= 3) {
    if (seen[i]) ok = 0;
    want[n++] = i;
  }
  if (ok && size >= 2) { /* the ranges must not overlap */
    CHECK_OK(MPI_Group_range_incl(world, 2, r2, &g));
    expect_group(g, want, n);
    MPI_Group_free(&g);
    /* range_excl of the same: the rest, in world order */
    CHECK_OK(MPI_Group_range_excl(world, 2, r2, &g));
    int m = 0;
    for (int i = 0; i < size; ++i) {
      int in = 0;
      for (int k = 0; k < n; ++k) in |= want[k] == i;
      if (!in) want[m++] = i;
    }
    expect_group(g, want, m);
    MPI_Group_free(&g);
  }
  /* Excluding everyone: MPI_GROUP_EMPTY */
  int r3[1][3] = {{0, size - 1, 1}};
  CHECK_OK(MPI_Group_range_excl(world, 1, r3, &g));
  int gs = -1;
  MPI_Group_size(g, &gs);
  CHECK_EQ(gs, 0);
  CHECK_OK(MPI_Group_compare(g, MPI_GROUP_EMPTY, &result));
  CHECK_EQ(result, MPI_IDENT);
  if (g != MPI_GROUP_EMPTY) MPI_Group_free(&g);
  CHECK_OK(MPI_Group_incl(world, 0, NULL, &g));
  MPI_Group_size(g, &gs);
  CHECK_EQ(gs, 0);
  if (g != MPI_GROUP_EMPTY) MPI_Group_free(&g);
  /* translate_ranks: MPI_PROC_NULL stays, absent ranks are MPI_UNDEFINED */
  MPI_Group evens;
  int r4[1][3] = {{0, size - 1, 2}};
  MPI_Group_range_incl(world, 1, r4, &evens);
  int from[3] = {MPI_PROC_NULL, size - 1, 0}, to[3] = {-9, -9, -9};
  CHECK_OK(MPI_Group_translate_ranks(world, 3, from, evens, to));
  CHECK_EQ(to[0], MPI_PROC_NULL);
  CHECK_EQ(to[1], (size - 1) % 2 ? MPI_UNDEFINED : (size - 1) / 2);
  CHECK_EQ(to[2], 0);
  /* rank of a non-member */
  int my = -5;
  MPI_Group_rank(evens, &my);
  CHECK_EQ(my, rank % 2 ? MPI_UNDEFINED : rank / 2);
  /* Set operations keep the first group's order */
  MPI_Group u, x, d;
  CHECK_OK(MPI_Group_union(evens, world, &u));
  n = 0;
  for (int i = 0; i < size; i += 2) want[n++] = i;
  for (int i = 1; i < size; i += 2) want[n++] = i;
  expect_group(u, want, size);
  CHECK_OK(MPI_Group_intersection(world, evens, &x));
  n = 0;
  for (int i = 0; i < size; i += 2) want[n++] = i;
  expect_group(x, want, n);
  CHECK_OK(MPI_Group_difference(world, evens, &d));
  n = 0;
  for (int i = 1; i < size; i += 2) want[n++] = i;
  expect_group(d, want, n);
  MPI_Group_free(&u);
  MPI_Group_free(&x);
  if (d != MPI_GROUP_EMPTY) MPI_Group_free(&d);
  /* Bad ranges and ranks are errors, not crashes */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int bad1[1][3] = {{0, size, 1}};
  CHECK(MPI_Group_range_incl(world, 1, bad1, &g) != MPI_SUCCESS);
  int bad2[1][3] = {{0, size - 1, 0}};
  CHECK(MPI_Group_range_incl(world, 1, bad2, &g) != MPI_SUCCESS);
  int bad3[2][3] = {{0, 0, 1}, {0, 0, 1}};
  CHECK(MPI_Group_range_incl(world, 2, bad3, &g) != MPI_SUCCESS);
  int dup2[2] = {0, 0};
  CHECK(MPI_Group_incl(world, 2, dup2, &g) != MPI_SUCCESS);
  int neg = -1;
  CHECK(MPI_Group_excl(world, 1, &neg, &g) != MPI_SUCCESS);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Group_free(&evens);
  MPI_Group_free(&world);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  split_corners();
  create_group();
  idup();
  intercomm();
  compare();
  groups();
  return mt_finish();
}
