/* MPI-4 persistent collectives on an intercommunicator (even world ranks
 * against odd ones): every _init form, restarted with new data each round,
 * the two groups starting them in opposite orders (each request must be
 * advanced by the progress engine, not run inside MPI_Start). */
#include "mpitest.h"

enum { ROUNDS = 3, K = 16, MAXP = 8 };

static int wrank, color, lr, ls, rs;
/* The world rank of remote rank i. */
static int remote(int i) { return 2 * i + (color ? 0 : 1); }

int main(int argc, char** argv) {
  int wsize;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_size(MPI_COMM_WORLD, &wsize);
  if (wsize < 2) {
    printf(" No Errors\n");
    MPI_Finalize();
    return 0;
  }
  color = wrank % 2;
  MPI_Comm local, inter;
  MPI_Comm_split(MPI_COMM_WORLD, color, wrank, &local);
  MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color ? 0 : 1, 7, &inter);
  MPI_Comm_rank(inter, &lr);
  MPI_Comm_size(inter, &ls);
  MPI_Comm_remote_size(inter, &rs);
  MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);

  /* Roots: group 0's rank 0 for bcast/gather(v), group 1's rank 0 for
   * reduce/scatter(v). */
  int root0 = color == 0 ? (lr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  int root1 = color == 1 ? (lr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;

  int bc, one, sum, red, ag[MAXP], a2a_s[MAXP], a2a_r[MAXP], ga[MAXP], sc_s[MAXP], sc_r;
  int agv[MAXP], a2av_r[MAXP], a2aw_r[MAXP], gav[MAXP], scv_r, rsb_s[MAXP], rsb_r, rs_s[MAXP], rs_r;
  int ones[MAXP], displs[MAXP], bdispls[MAXP], lones[MAXP];
  MPI_Datatype types[MAXP];
  for (int i = 0; i < MAXP; ++i) {
    ones[i] = 1;
    lones[i] = 1;
    displs[i] = i;
    bdispls[i] = i * (int)sizeof(int);
    types[i] = MPI_INT;
  }
  const int equal = ls == rs; /* reduce_scatter's two vectors then agree */
  enum { NREQ = 16 };
  MPI_Request req[NREQ];
  int n = 0;
  CHECK_OK(MPI_Barrier_init(inter, MPI_INFO_NULL, &req[n++]));
  CHECK_OK(MPI_Bcast_init(&bc, 1, MPI_INT, root0, inter, MPI_INFO_NULL, &req[n++]));
  CHECK_OK(MPI_Allreduce_init(&one, &sum, 1, MPI_INT, MPI_SUM, inter, MPI_INFO_NULL, &req[n++]));
  CHECK_OK(MPI_Reduce_init(&one, &red, 1, MPI_INT, MPI_SUM, root1, inter, MPI_INFO_NULL, &req[n++]));
  CHECK_OK(MPI_Allgather_init(&one, 1, MPI_INT, ag, 1, MPI_INT, inter, MPI_INFO_NULL, &req[n++]));
  CHECK_OK(MPI_Alltoall_init(a2a_s, 1, MPI_INT, a2a_r, 1, MPI_INT, inter, MPI_INFO_NULL, &req[n++]));
  CHECK_OK(MPI_Gather_init(&one, 1, MPI_INT, ga, 1, MPI_INT, root0, inter, MPI_INFO_NULL, &req[n++]));
  CHECK_OK(MPI_Scatter_init(sc_s, 1, MPI_INT, &sc_r, 1, MPI_INT, root1, inter, MPI_INFO_NULL, &req[n++]));
  CHECK_OK(MPI_Allgatherv_init(&one, 1, MPI_INT, agv, ones, displs, MPI_INT, inter, MPI_INFO_NULL, &req[n++]));
  CHECK_OK(
      MPI_Alltoallv_init(a2a_s, ones, displs, MPI_INT, a2av_r, ones, displs, MPI_INT, inter, MPI_INFO_NULL, &req[n++]));
  CHECK_OK(
      MPI_Alltoallw_init(a2a_s, ones, bdispls, types, a2aw_r, ones, bdispls, types, inter, MPI_INFO_NULL, &req[n++]));
  CHECK_OK(MPI_Gatherv_init(&one, 1, MPI_INT, gav, ones, displs, MPI_INT, root0, inter, MPI_INFO_NULL, &req[n++]));
  CHECK_OK(MPI_Scatterv_init(sc_s, ones, displs, MPI_INT, &scv_r, 1, MPI_INT, root1, inter, MPI_INFO_NULL, &req[n++]));
  if (equal) {
    CHECK_OK(MPI_Reduce_scatter_block_init(rsb_s, &rsb_r, 1, MPI_INT, MPI_SUM, inter, MPI_INFO_NULL, &req[n++]));
    CHECK_OK(MPI_Reduce_scatter_init(rs_s, &rs_r, lones, MPI_INT, MPI_SUM, inter, MPI_INFO_NULL, &req[n++]));
  }

  for (int round = 0; round < ROUNDS; ++round) {
    bc = color == 0 && lr == 0 ? 1000 + round : -1;
    one = wrank + round;
    for (int j = 0; j < MAXP; ++j) {
      a2a_s[j] = wrank * K + j + round;
      sc_s[j] = 500 + j + round;
      rsb_s[j] = rs_s[j] = wrank * K + j + round;
    }
    /* Group 0 starts them in order, group 1 backwards. */
    for (int i = 0; i < n; ++i) CHECK_OK(MPI_Start(&req[color ? n - 1 - i : i]));
    CHECK_OK(MPI_Waitall(n, req, MPI_STATUSES_IGNORE));

    int rsum = 0;
    for (int i = 0; i < rs; ++i) rsum += remote(i) + round;
    if (color == 1) CHECK_EQ(bc, 1000 + round);
    CHECK_EQ(sum, rsum);
    if (color == 1 && lr == 0) CHECK_EQ(red, rsum);
    for (int i = 0; i < rs; ++i) {
      CHECK_EQ(ag[i], remote(i) + round);
      CHECK_EQ(agv[i], remote(i) + round);
      CHECK_EQ(a2a_r[i], remote(i) * K + lr + round);
      CHECK_EQ(a2av_r[i], remote(i) * K + lr + round);
      CHECK_EQ(a2aw_r[i], remote(i) * K + lr + round);
      if (color == 0 && lr == 0) {
        CHECK_EQ(ga[i], remote(i) + round);
        CHECK_EQ(gav[i], remote(i) + round);
      }
    }
    if (color == 0) {
      CHECK_EQ(sc_r, 500 + lr + round);
      CHECK_EQ(scv_r, 500 + lr + round);
    }
    if (equal) {
      /* Element lr of the remote group's summed vectors. */
      int want = 0;
      for (int i = 0; i < rs; ++i) want += remote(i) * K + lr + round;
      CHECK_EQ(rsb_r, want);
      CHECK_EQ(rs_r, want);
    }
  }
  for (int i = 0; i < n; ++i) CHECK_OK(MPI_Request_free(&req[i]));
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
  return mt_finish();
}
