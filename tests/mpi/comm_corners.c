/* Communicator, group and topology corners a conformance suite probes
 * (MPI 3.1 chapters 6 and 7): MPI_Comm_split with MPI_UNDEFINED and tied
 * keys, MPI_Comm_create_group, MPI_Comm_idup (attributes copied, traffic on
 * the parent meanwhile), MPI_Intercomm_create / MPI_Intercomm_merge and the
 * merged order, MPI_Comm_compare, MPI_Group_range_incl / range_excl and
 * MPI_Group_translate_ranks corners, Cartesian, graph and distributed graph
 * topologies with their queries and the neighbour collectives (neighbour
 * order, MPI_PROC_NULL neighbours leave their blocks untouched), a bad
 * color or split type on one rank only (the others still split), negative
 * distributed graph weights. */
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

/* ---- topologies ---- */

static void cart(void) {
  int dims[2] = {0, 0};
  CHECK_OK(MPI_Dims_create(size, 2, dims));
  CHECK_EQ(dims[0] * dims[1], size);
  CHECK(dims[0] >= dims[1]);
  int periods[2] = {1, 0};
  MPI_Comm c;
  CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c));
  int type = -1, nd = -1;
  CHECK_OK(MPI_Topo_test(c, &type));
  CHECK_EQ(type, MPI_CART);
  CHECK_OK(MPI_Cartdim_get(c, &nd));
  CHECK_EQ(nd, 2);
  int d2[2], p2[2], co[2];
  CHECK_OK(MPI_Cart_get(c, 2, d2, p2, co));
  CHECK_EQ(d2[0], dims[0]);
  CHECK_EQ(p2[0], 1);
  CHECK_EQ(p2[1], 0);
  CHECK_EQ(co[0], rank / dims[1]);
  CHECK_EQ(co[1], rank % dims[1]);
  int r = -1, big[2] = {co[0] + dims[0], co[1]};
  CHECK_OK(MPI_Cart_rank(c, big, &r)); /* periodic dimension wraps */
  CHECK_EQ(r, rank);
  /* shifts: periodic wraps, non-periodic gives MPI_PROC_NULL */
  int src, dst;
  CHECK_OK(MPI_Cart_shift(c, 0, 1, &src, &dst));
  CHECK_EQ(src, ((co[0] + dims[0] - 1) % dims[0]) * dims[1] + co[1]);
  CHECK_EQ(dst, ((co[0] + 1) % dims[0]) * dims[1] + co[1]);
  CHECK_OK(MPI_Cart_shift(c, 1, 1, &src, &dst));
  CHECK_EQ(src, co[1] == 0 ? MPI_PROC_NULL : rank - 1);
  CHECK_EQ(dst, co[1] == dims[1] - 1 ? MPI_PROC_NULL : rank + 1);
  /* Neighbour allgather: order (dim 0 -, dim 0 +, dim 1 -, dim 1 +) */
  int got[4] = {-1, -1, -1, -1}, nb[4];
  MPI_Cart_shift(c, 0, 1, &nb[0], &nb[1]);
  MPI_Cart_shift(c, 1, 1, &nb[2], &nb[3]);
  CHECK_OK(MPI_Neighbor_allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, c));
  for (int k = 0; k < 4; ++k) CHECK_EQ(got[k], nb[k] == MPI_PROC_NULL ? -1 : nb[k]);
  /* Neighbour alltoall: block k to neighbour k; what neighbour k sent to us */
  int out[4], in[4] = {-1, -1, -1, -1};
  for (int k = 0; k < 4; ++k) out[k] = rank * 10 + k;
  MPI_Request rq;
  CHECK_OK(MPI_Ineighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, c, &rq));
  CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  for (int k = 0; k < 4; ++k) {
    /* neighbour in direction k sent us its block for the opposite
     * direction (not checked along a periodic dimension of 1 or 2, where
     * both neighbours are one rank and MPI 3.1 leaves the pairing open) */
    int opp = k ^ 1;
    if (k < 2 && dims[0] <= 2) continue;
    CHECK_EQ(in[k], nb[k] == MPI_PROC_NULL ? -1 : nb[k] * 10 + opp);
  }
  /* Cart_sub keeping dim 1: rows */
  int keep[2] = {0, 1};
  MPI_Comm row;
  CHECK_OK(MPI_Cart_sub(c, keep, &row));
  int rs = -1, rr = -1;
  MPI_Comm_size(row, &rs);
  MPI_Comm_rank(row, &rr);
  CHECK_EQ(rs, dims[1]);
  CHECK_EQ(rr, co[1]);
  CHECK_OK(MPI_Cartdim_get(row, &nd));
  CHECK_EQ(nd, 1);
  MPI_Comm_free(&row);
  /* Keeping no dimension: a 0-dimensional Cartesian communicator of one */
  int none[2] = {0, 0};
  CHECK_OK(MPI_Cart_sub(c, none, &row));
  MPI_Comm_size(row, &rs);
  CHECK_EQ(rs, 1);
  MPI_Comm_free(&row);
  /* Coordinates and map */
  int cc[2];
  CHECK_OK(MPI_Cart_coords(c, size - 1, 2, cc));
  CHECK_EQ(cc[0], dims[0] - 1);
  CHECK_EQ(cc[1], dims[1] - 1);
  int newrank = -2;
  CHECK_OK(MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, &newrank));
  CHECK(newrank >= 0 && newrank < size);
  MPI_Comm_free(&c);
  /* Fewer grid points than ranks: the rest get MPI_COMM_NULL */
  int one = 1, per = 0;
  CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, &one, &per, 0, &c));
  if (rank == 0) {
    CHECK(c != MPI_COMM_NULL);
    int s = -1, d = -1;
    MPI_Cart_shift(c, 0, 1, &s, &d);
    CHECK_EQ(s, MPI_PROC_NULL);
    CHECK_EQ(d, MPI_PROC_NULL);
    MPI_Comm_free(&c);
  } else {
    CHECK(c == MPI_COMM_NULL);
  }
  /* dims_create with fixed entries, and errors */
  int d3[3] = {0, 1, 0};
  CHECK_OK(MPI_Dims_create(size * 4, 3, d3));
  CHECK_EQ(d3[0] * d3[1] * d3[2], size * 4);
  CHECK_EQ(d3[1], 1);
  CHECK(d3[0] >= d3[2]);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int d4[2] = {3, 0};
  if (size % 3) CHECK(MPI_Dims_create(size, 2, d4) != MPI_SUCCESS);
  int toolarge[1] = {size + 1};
  CHECK(MPI_Cart_create(MPI_COMM_WORLD, 1, toolarge, &per, 0, &c) != MPI_SUCCESS);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void graph(void) {
  /* A ring in both directions (for size 1: no edges; size 2: 0-1 twice) */
  int index[64], edges[128], ne = 0;
  for (int r = 0; r < size; ++r) {
    if (size > 1) {
      edges[ne++] = (r + 1) % size;
      edges[ne++] = (r + size - 1) % size;
    }
    index[r] = ne;
  }
  MPI_Comm g;
  CHECK_OK(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g));
  int type = -1, nn = -1, nedges = -1, cnt = -1;
  MPI_Topo_test(g, &type);
  CHECK_EQ(type, MPI_GRAPH);
  CHECK_OK(MPI_Graphdims_get(g, &nn, &nedges));
  CHECK_EQ(nn, size);
  CHECK_EQ(nedges, ne);
  CHECK_OK(MPI_Graph_neighbors_count(g, rank, &cnt));
  CHECK_EQ(cnt, size > 1 ? 2 : 0);
  int nb[2] = {-1, -1};
  CHECK_OK(MPI_Graph_neighbors(g, rank, 2, nb));
  if (size > 1) {
    CHECK_EQ(nb[0], (rank + 1) % size);
    CHECK_EQ(nb[1], (rank + size - 1) % size);
  }
  int gi[64], ge[128];
  CHECK_OK(MPI_Graph_get(g, size, ne > 0 ? ne : 1, gi, ge));
  for (int r = 0; r < size; ++r) CHECK_EQ(gi[r], index[r]);
  for (int k = 0; k < ne; ++k) CHECK_EQ(ge[k], edges[k]);
  /* Neighbour collectives follow the edge order */
  int got[2] = {-1, -1}, out[2] = {rank * 10, rank * 10 + 1}, in[2] = {-1, -1};
  CHECK_OK(MPI_Neighbor_allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, g));
  int counts[2] = {1, 1}, displs[2] = {1, 0};
  CHECK_OK(MPI_Neighbor_alltoallv(out, counts, displs, MPI_INT, in, counts, displs, MPI_INT, g));
  if (size > 2) {
    CHECK_EQ(got[0], nb[0]);
    CHECK_EQ(got[1], nb[1]);
    /* displs swap the blocks: we sent out[1] to nb[0]; nb[0] sent its
     * out[0] (block for its neighbour (r+1)... ) */
    CHECK_EQ(in[1], nb[0] * 10 + 0); /* nb[0] = r+1, whose edge 1 is r: it sent out[0] to r via displ 0 */
    CHECK_EQ(in[0], nb[1] * 10 + 1);
  }
  int newrank = -2;
  CHECK_OK(MPI_Graph_map(MPI_COMM_WORLD, size, index, edges, &newrank));
  CHECK(newrank >= 0 && newrank < size);
  MPI_Comm_free(&g);
}

static void dist_graph(void) {
  /* Adjacent: in from r-1 and r-2, out to r+1 and r+2, weighted */
  int srcs[2] = {(rank + size - 1) % size, (rank + 2 * size - 2) % size};
  int dsts[2] = {(rank + 1) % size, (rank + 2) % size};
  int sw[2] = {1, 2}, dw[2] = {1, 2};
  MPI_Comm dg;
  CHECK_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, sw, 2, dsts, dw, MPI_INFO_NULL, 0, &dg));
  int type = -1, indeg = -1, outdeg = -1, weighted = -1;
  MPI_Topo_test(dg, &type);
  CHECK_EQ(type, MPI_DIST_GRAPH);
  CHECK_OK(MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted));
  CHECK_EQ(indeg, 2);
  CHECK_EQ(outdeg, 2);
  CHECK(weighted);
  int s2[2], w2[2], d2[2], x2[2];
  CHECK_OK(MPI_Dist_graph_neighbors(dg, 2, s2, w2, 2, d2, x2));
  for (int k = 0; k < 2; ++k) {
    CHECK_EQ(s2[k], srcs[k]);
    CHECK_EQ(d2[k], dsts[k]);
    CHECK_EQ(w2[k], sw[k]);
    CHECK_EQ(x2[k], dw[k]);
  }
  /* Neighbour alltoall: block k to dsts[k]; block k from srcs[k] */
  int out[2] = {rank * 10, rank * 10 + 1}, in[2] = {-1, -1};
  CHECK_OK(MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, dg));
  CHECK_EQ(in[0], srcs[0] * 10 + 0);
  CHECK_EQ(in[1], srcs[1] * 10 + 1);
  int got[2] = {-1, -1};
  MPI_Request rq;
  CHECK_OK(MPI_Ineighbor_allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, dg, &rq));
  CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  CHECK_EQ(got[0], srcs[0]);
  CHECK_EQ(got[1], srcs[1]);
  /* alltoallw with byte displacements */
  int cnt[2] = {1, 1};
  MPI_Aint sd[2] = {sizeof(int), 0}, rd[2] = {0, sizeof(int)};
  MPI_Datatype ty[2] = {MPI_INT, MPI_INT};
  in[0] = in[1] = -1;
  CHECK_OK(MPI_Neighbor_alltoallw(out, cnt, sd, ty, in, cnt, rd, ty, dg));
  CHECK_EQ(in[0], srcs[0] * 10 + 1);
  CHECK_EQ(in[1], srcs[1] * 10 + 0);
  MPI_Comm_free(&dg);
  /* General form, unweighted: each rank names its own out-edges */
  int me = rank, deg = 2;
  CHECK_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &me, &deg, dsts, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg));
  CHECK_OK(MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted));
  CHECK_EQ(indeg, 2);
  CHECK_EQ(outdeg, 2);
  CHECK(!weighted);
  CHECK_OK(MPI_Dist_graph_neighbors(dg, 2, s2, MPI_UNWEIGHTED, 2, d2, MPI_UNWEIGHTED));
  /* any order: compare as multisets */
  int a = s2[0] + s2[1], b = srcs[0] + srcs[1];
  CHECK_EQ(a, b);
  CHECK_EQ(s2[0] * s2[0] + s2[1] * s2[1], srcs[0] * srcs[0] + srcs[1] * srcs[1]);
  CHECK_EQ(d2[0] + d2[1], dsts[0] + dsts[1]);
  MPI_Comm_free(&dg);
  /* No edges at all on odd ranks (MPI_WEIGHTS_EMPTY) */
  int zero = 0;
  CHECK_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_WEIGHTS_EMPTY, 0, NULL, MPI_WEIGHTS_EMPTY,
                                          MPI_INFO_NULL, 0, &dg));
  CHECK_OK(MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted));
  CHECK_EQ(indeg, 0);
  CHECK_EQ(outdeg, 0);
  CHECK_OK(MPI_Neighbor_allgather(&rank, 1, MPI_INT, &zero, 1, MPI_INT, dg));
  CHECK_EQ(zero, 0);
  MPI_Comm_free(&dg);
  /* Weights are nonnegative (MPI-3.1 7.5.4): a negative one is MPI_ERR_ARG
   * on every rank (each passes one), and no communicator is made; zero is
   * a weight like any other. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int neg[2] = {3, -1};
  dg = MPI_COMM_NULL;
  CHECK_CLASS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, neg, 2, dsts, dw, MPI_INFO_NULL, 0, &dg),
              MPI_ERR_ARG);
  CHECK_CLASS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, sw, 2, dsts, neg, MPI_INFO_NULL, 0, &dg),
              MPI_ERR_ARG);
  CHECK_CLASS(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &me, &deg, dsts, neg, MPI_INFO_NULL, 0, &dg), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &me, &deg, dsts, NULL, MPI_INFO_NULL, 0, &dg), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, NULL, 2, dsts, dw, MPI_INFO_NULL, 0, &dg),
              MPI_ERR_ARG);
  CHECK(dg == MPI_COMM_NULL);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  int zw[2] = {0, 0};
  CHECK_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &me, &deg, dsts, zw, MPI_INFO_NULL, 0, &dg));
  w2[0] = w2[1] = x2[0] = x2[1] = -7;
  CHECK_OK(MPI_Dist_graph_neighbors(dg, 2, s2, w2, 2, d2, x2));
  CHECK_EQ(w2[0] + w2[1] + x2[0] + x2[1], 0);
  MPI_Comm_free(&dg);
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
  cart();
  graph();
  dist_graph();
  return mt_finish();
}
