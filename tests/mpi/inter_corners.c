/* Intercommunicator construction corners (MPI 3.1 6.4, 6.6): MPI_Comm_dup
 * and MPI_Comm_idup of an intercommunicator, MPI_Comm_split and
 * MPI_Comm_create on one (both give intercommunicators, MPI_COMM_NULL where a
 * side is empty or the caller is left out), MPI_Intercomm_merge with the
 * same "high" on both sides, the remote-group calls on an
 * intracommunicator (MPI_ERR_COMM), and point-to-point addressing by remote
 * rank with MPI_ANY_SOURCE reporting the remote rank; MPI_Intercomm_create
 * with overlapping groups or bad leader arguments fails at every member. */
#include "mpitest.h"

static int rank, size;

/* MPI 3.1 6.6.2: the two groups must be disjoint, and only the local leader
 * reads peer_comm and remote_leader. Every member gets the error the leader
 * finds (the class through it), none waits for a partner that never comes. */
static void bad_leader_args(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm c = MPI_COMM_NULL;
  /* the remote leader is the local leader itself */
  CHECK_CLASS(MPI_Intercomm_create(MPI_COMM_WORLD, 0, MPI_COMM_WORLD, 0, 7, &c), MPI_ERR_RANK);
  CHECK_CLASS(MPI_Intercomm_create(MPI_COMM_WORLD, 0, MPI_COMM_SELF, 0, 7, &c), MPI_ERR_RANK);
  if (size > 1) {
    /* the remote leader is another member of the local group */
    CHECK_CLASS(MPI_Intercomm_create(MPI_COMM_WORLD, 0, MPI_COMM_WORLD, size - 1, 7, &c), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Intercomm_create(MPI_COMM_WORLD, size - 1, MPI_COMM_WORLD, 0, 7, &c), MPI_ERR_COMM);
  }
  /* a bad remote_leader or peer_comm at the leader only (ignored elsewhere) */
  CHECK_CLASS(MPI_Intercomm_create(MPI_COMM_WORLD, 0, MPI_COMM_WORLD, rank == 0 ? size : 0, 7, &c), MPI_ERR_RANK);
  CHECK_CLASS(MPI_Intercomm_create(MPI_COMM_WORLD, 0, MPI_COMM_WORLD, rank == 0 ? -1 : 0, 7, &c), MPI_ERR_RANK);
  CHECK_CLASS(MPI_Intercomm_create(MPI_COMM_WORLD, 0, rank == 0 ? MPI_COMM_NULL : MPI_COMM_WORLD, 0, 7, &c),
              MPI_ERR_COMM);
  CHECK(c == MPI_COMM_NULL);
  /* the world still works */
  int one = 1, sum = 0;
  CHECK_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  CHECK_EQ(sum, size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void check_inter(MPI_Comm c, int want_local, int want_remote) {
  int flag = 0, ls = -1, rs = -1;
  MPI_Comm_test_inter(c, &flag);
  CHECK(flag);
  MPI_Comm_size(c, &ls);
  MPI_Comm_remote_size(c, &rs);
  CHECK_EQ(ls, want_local);
  CHECK_EQ(rs, want_remote);
  /* an allreduce across: the remote group's size */
  int one = 1, sum = -1;
  CHECK_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c));
  CHECK_EQ(sum, want_remote);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  bad_leader_args();
  if (size < 2) {
    /* remote calls on an intracommunicator */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rs;
    MPI_Group g;
    CHECK_CLASS(MPI_Comm_remote_size(MPI_COMM_WORLD, &rs), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Comm_remote_group(MPI_COMM_WORLD, &g), MPI_ERR_COMM);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return mt_finish();
  }
  /* A = even world ranks, B = odd */
  const int color = rank % 2, na = (size + 1) / 2, nb = size / 2;
  const int nl = color ? nb : na, nr = color ? na : nb;
  MPI_Comm local, inter;
  MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local);
  CHECK_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - color, 21, &inter));
  int lr = -1;
  MPI_Comm_rank(inter, &lr);
  CHECK_EQ(lr, rank / 2);
  check_inter(inter, nl, nr);

  /* point-to-point by remote rank; ANY_SOURCE reports the remote rank */
  if (lr == 0) {
    int v = rank, got = -1;
    MPI_Status st;
    MPI_Request rq;
    CHECK_OK(MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 5, inter, &rq));
    CHECK_OK(MPI_Send(&v, 1, MPI_INT, 0, 5, inter));
    CHECK_OK(MPI_Wait(&rq, &st));
    CHECK_EQ(st.MPI_SOURCE, 0);
    CHECK_EQ(got, 1 - color);
  }

  /* dup and idup keep both groups */
  MPI_Comm d, e;
  MPI_Request rq;
  CHECK_OK(MPI_Comm_dup(inter, &d));
  check_inter(d, nl, nr);
  CHECK_OK(MPI_Comm_idup(inter, &e, &rq));
  CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  check_inter(e, nl, nr);
  int result = -1;
  CHECK_OK(MPI_Comm_compare(d, e, &result));
  CHECK_EQ(result, MPI_CONGRUENT);
  MPI_Comm_free(&d);
  MPI_Comm_free(&e);

  /* split: color by local rank parity on both sides */
  MPI_Comm s;
  const int sc = lr % 2;
  CHECK_OK(MPI_Comm_split(inter, sc, -lr, &s)); /* keys reverse the order */
  int mine = 0, theirs = 0;
  for (int i = 0; i < nl; ++i) mine += i % 2 == sc;
  for (int i = 0; i < nr; ++i) theirs += i % 2 == sc;
  if (theirs == 0) {
    CHECK(s == MPI_COMM_NULL);
  } else {
    CHECK(s != MPI_COMM_NULL);
    if (s != MPI_COMM_NULL) {
      check_inter(s, mine, theirs);
      int sr = -1;
      MPI_Comm_rank(s, &sr);
      int want = 0; /* ranks of my color with a larger local rank come first */
      for (int i = lr + 1; i < nl; ++i) want += i % 2 == sc;
      CHECK_EQ(sr, want);
      MPI_Comm_free(&s);
    }
  }
  /* MPI_UNDEFINED on one side only: both sides get MPI_COMM_NULL */
  CHECK_OK(MPI_Comm_split(inter, color ? MPI_UNDEFINED : 0, 0, &s));
  CHECK(s == MPI_COMM_NULL);

  /* create: each side keeps its local rank 0 only */
  MPI_Group lg, first;
  MPI_Comm_group(inter, &lg);
  int zero = 0;
  MPI_Group_incl(lg, 1, &zero, &first);
  MPI_Comm cr;
  CHECK_OK(MPI_Comm_create(inter, first, &cr));
  if (lr == 0) {
    CHECK(cr != MPI_COMM_NULL);
    if (cr != MPI_COMM_NULL) {
      check_inter(cr, 1, 1);
      MPI_Comm_free(&cr);
    }
  } else {
    CHECK(cr == MPI_COMM_NULL);
  }
  /* one side passes MPI_GROUP_EMPTY: MPI_COMM_NULL everywhere */
  CHECK_OK(MPI_Comm_create(inter, color ? MPI_GROUP_EMPTY : first, &cr));
  CHECK(cr == MPI_COMM_NULL);
  MPI_Group_free(&first);
  MPI_Group_free(&lg);

  /* merge with high = 0 on both sides */
  MPI_Comm m;
  CHECK_OK(MPI_Intercomm_merge(inter, 0, &m));
  int mr = -1, ms = -1;
  MPI_Comm_rank(m, &mr);
  MPI_Comm_size(m, &ms);
  CHECK_EQ(ms, size);
  int ranks[64];
  CHECK_OK(MPI_Allgather(&rank, 1, MPI_INT, ranks, 1, MPI_INT, m));
  /* the same "high" everywhere: the order of the union is arbitrary
   * (MPI 3.1 6.6.2), but it is every rank once */
  int seen[64] = {0}, ok = 1;
  for (int i = 0; i < size; ++i) {
    if (ranks[i] < 0 || ranks[i] >= size || seen[ranks[i]]++) ok = 0;
  }
  CHECK_EQ(ranks[mr], rank);
  CHECK(ok);
  MPI_Comm_free(&m);

  /* remote calls on an intracommunicator */
  MPI_Comm_set_errhandler(local, MPI_ERRORS_RETURN);
  int rs;
  MPI_Group g;
  CHECK_CLASS(MPI_Comm_remote_size(local, &rs), MPI_ERR_COMM);
  CHECK_CLASS(MPI_Comm_remote_group(local, &g), MPI_ERR_COMM);
  /* a collective needing an intracommunicator */
  MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
  int x = 1, y;
  CHECK(MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, inter) != MPI_SUCCESS);
  int dims[1] = {1}, per[1] = {0};
  MPI_Comm cart;
  CHECK(MPI_Cart_create(inter, 1, dims, per, 0, &cart) != MPI_SUCCESS);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
  return mt_finish();
}
