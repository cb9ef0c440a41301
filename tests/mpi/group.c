/* Groups: size/rank, incl/excl, range_incl/range_excl, the set operations,
 * translate_ranks and compare, checked against their definitions. */
#include "mpitest.h"

static int rank, size;

/* The members of g as world ranks. */
static int members(MPI_Group g, int* out) {
  MPI_Group world;
  int n;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_size(g, &n);
  int* idx = malloc(sizeof(int) * (size_t)(n + 1));
  for (int i = 0; i < n; ++i) idx[i] = i;
  CHECK_OK(MPI_Group_translate_ranks(g, n, idx, world, out));
  free(idx);
  MPI_Group_free(&world);
  return n;
}

static void expect(MPI_Group g, const int* want, int n) {
  int got[64];
  int m = members(g, got);
  CHECK_EQ(m, n);
  for (int i = 0; i < n && i < m; ++i) CHECK_EQ(got[i], want[i]);
  int r;
  MPI_Group_rank(g, &r);
  int expect_rank = MPI_UNDEFINED;
  for (int i = 0; i < n; ++i)
    if (want[i] == rank) expect_rank = i;
  CHECK_EQ(r, expect_rank);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Group world, a, b, u, x, d, e;
  CHECK_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
  int n, r;
  MPI_Group_size(world, &n);
  MPI_Group_rank(world, &r);
  CHECK_EQ(n, size);
  CHECK_EQ(r, rank);

  /* a = reversed world, b = even ranks */
  int rev[64], evens[64], ne = 0, all[64];
  for (int i = 0; i < size; ++i) rev[i] = size - 1 - i, all[i] = i;
  for (int i = 0; i < size; i += 2) evens[ne++] = i;
  CHECK_OK(MPI_Group_incl(world, size, rev, &a));
  expect(a, rev, size);
  CHECK_OK(MPI_Group_incl(world, ne, evens, &b));
  expect(b, evens, ne);

  int res;
  CHECK_OK(MPI_Group_compare(world, a, &res));
  CHECK_EQ(res, size == 1 ? MPI_IDENT : MPI_SIMILAR);
  CHECK_OK(MPI_Group_compare(world, world, &res));
  CHECK_EQ(res, MPI_IDENT);
  if (size > 1) {
    CHECK_OK(MPI_Group_compare(world, b, &res));
    CHECK_EQ(res, MPI_UNEQUAL);
  }

  /* union of b and a: b's members, then a's others in a's order */
  int want[64], nw = 0;
  for (int i = 0; i < ne; ++i) want[nw++] = evens[i];
  for (int i = 0; i < size; ++i)
    if (rev[i] % 2) want[nw++] = rev[i];
  CHECK_OK(MPI_Group_union(b, a, &u));
  expect(u, want, nw);
  /* intersection in a's order: the evens, reversed */
  nw = 0;
  for (int i = 0; i < size; ++i)
    if (rev[i] % 2 == 0) want[nw++] = rev[i];
  CHECK_OK(MPI_Group_intersection(a, b, &x));
  expect(x, want, nw);
  /* difference: the odds in a's order */
  nw = 0;
  for (int i = 0; i < size; ++i)
    if (rev[i] % 2) want[nw++] = rev[i];
  CHECK_OK(MPI_Group_difference(a, b, &d));
  expect(d, want, nw);
  MPI_Group_free(&d);
  /* difference with itself: empty */
  CHECK_OK(MPI_Group_difference(a, a, &d));
  MPI_Group_size(d, &n);
  CHECK_EQ(n, 0);
  CHECK_OK(MPI_Group_compare(d, MPI_GROUP_EMPTY, &res));
  CHECK_EQ(res, MPI_IDENT);
  MPI_Group_free(&d);

  /* excl */
  CHECK_OK(MPI_Group_excl(world, ne, evens, &e));
  nw = 0;
  for (int i = 1; i < size; i += 2) want[nw++] = i;
  expect(e, want, nw);
  MPI_Group_free(&e);
  CHECK_OK(MPI_Group_excl(world, 0, NULL, &e));
  expect(e, all, size);
  MPI_Group_free(&e);

  /* range_incl: (size-1 .. 0 step -2) and (0..0 step 1) if not covered */
  int ranges[2][3] = {{size - 1, 0, -2}, {0, 0, 1}};
  int nr = (size - 1) % 2 == 0 ? 1 : 2;
  CHECK_OK(MPI_Group_range_incl(world, nr, ranges, &e));
  nw = 0;
  for (int i = size - 1; i >= 0; i -= 2) want[nw++] = i;
  if (nr == 2) want[nw++] = 0;
  expect(e, want, nw);
  MPI_Group_free(&e);
  /* range_excl of the same ranges leaves the rest, in order */
  CHECK_OK(MPI_Group_range_excl(world, nr, ranges, &e));
  int taken[64] = {0}, nk = 0;
  for (int i = size - 1; i >= 0; i -= 2) taken[i] = 1;
  if (nr == 2) taken[0] = 1;
  for (int i = 0; i < size; ++i)
    if (!taken[i]) want[nk++] = i;
  expect(e, want, nk);
  MPI_Group_free(&e);

  /* translate with PROC_NULL and non-members */
  int in[2] = {MPI_PROC_NULL, 0}, out2[2];
  CHECK_OK(MPI_Group_translate_ranks(world, 2, in, b, out2));
  CHECK_EQ(out2[0], MPI_PROC_NULL);
  CHECK_EQ(out2[1], 0);
  if (size > 1) {
    int one = 1;
    CHECK_OK(MPI_Group_translate_ranks(world, 1, &one, b, out2));
    CHECK_EQ(out2[0], MPI_UNDEFINED);
  }
  /* the empty group */
  CHECK_OK(MPI_Group_size(MPI_GROUP_EMPTY, &n));
  CHECK_EQ(n, 0);
  CHECK_OK(MPI_Group_rank(MPI_GROUP_EMPTY, &r));
  CHECK_EQ(r, MPI_UNDEFINED);
  CHECK_OK(MPI_Group_incl(world, 0, NULL, &e));
  CHECK(e == MPI_GROUP_EMPTY);
  CHECK_OK(MPI_Group_free(&e));

  MPI_Group_free(&u);
  MPI_Group_free(&x);
  MPI_Group_free(&a);
  MPI_Group_free(&b);
  MPI_Group_free(&world);
  return mt_finish();
}
