/* More topology corners (MPI 3.1 chapter 7): a 0-dimensional Cartesian
 * communicator, shifts by negative and by more than a dimension, Cart_rank
 * out of range on a non-periodic dimension, graph queries about other
 * ranks, a graph with isolated nodes, v- and w- neighbour collectives on a
 * Cartesian grid with MPI_PROC_NULL neighbours, neighbour collectives on a
 * dup of a topology communicator (the topology is copied), and the errors
 * of bad topology arguments. */
#include "mpitest.h"

static int rank, size;

static void zero_dims(void) {
  MPI_Comm c;
  CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &c));
  /* one process: rank 0 only */
  if (rank == 0) {
    CHECK(c != MPI_COMM_NULL);
    int n = -1, nd = -1;
    MPI_Comm_size(c, &n);
    CHECK_EQ(n, 1);
    CHECK_OK(MPI_Cartdim_get(c, &nd));
    CHECK_EQ(nd, 0);
    int r = -1;
    CHECK_OK(MPI_Cart_rank(c, NULL, &r));
    CHECK_EQ(r, 0);
    MPI_Comm_free(&c);
  } else {
    CHECK(c == MPI_COMM_NULL);
  }
}

static void shifts(void) {
  int dims[1] = {size}, per[1] = {1};
  MPI_Comm ring, line;
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 0, &ring);
  int s, d;
  CHECK_OK(MPI_Cart_shift(ring, 0, -1, &s, &d));
  CHECK_EQ(s, (rank + 1) % size);
  CHECK_EQ(d, (rank + size - 1) % size);
  CHECK_OK(MPI_Cart_shift(ring, 0, size + 2, &s, &d));
  CHECK_EQ(d, (rank + size + 2) % size);
  CHECK_EQ(s, ((rank - size - 2) % size + size) % size);
  per[0] = 0;
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 0, &line);
  CHECK_OK(MPI_Cart_shift(line, 0, 2, &s, &d));
  CHECK_EQ(d, rank + 2 < size ? rank + 2 : MPI_PROC_NULL);
  CHECK_EQ(s, rank - 2 >= 0 ? rank - 2 : MPI_PROC_NULL);
  CHECK_OK(MPI_Cart_shift(line, 0, 0, &s, &d));
  CHECK_EQ(s, rank);
  CHECK_EQ(d, rank);
  /* out of range on a non-periodic dimension: an error */
  MPI_Comm_set_errhandler(line, MPI_ERRORS_RETURN);
  int co = size, r = -5;
  CHECK(MPI_Cart_rank(line, &co, &r) != MPI_SUCCESS);
  co = -1;
  CHECK(MPI_Cart_rank(line, &co, &r) != MPI_SUCCESS);
  int cc[1];
  CHECK(MPI_Cart_coords(line, size, 1, cc) != MPI_SUCCESS);
  CHECK(MPI_Cart_shift(line, 1, 1, &s, &d) != MPI_SUCCESS); /* no dimension 1 */
  /* a non-topology communicator */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK_CLASS(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &s, &d), MPI_ERR_TOPOLOGY);
  int nn;
  CHECK_CLASS(MPI_Graph_neighbors_count(MPI_COMM_WORLD, 0, &nn), MPI_ERR_TOPOLOGY);
  int in, out, w;
  MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN);
  CHECK_CLASS(MPI_Dist_graph_neighbors_count(ring, &in, &out, &w), MPI_ERR_TOPOLOGY);
  /* neighbour collectives need a topology */
  int x = 0, y[4];
  CHECK_CLASS(MPI_Neighbor_allgather(&x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TOPOLOGY);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  /* the topology survives MPI_Comm_dup */
  MPI_Comm dup;
  MPI_Comm_dup(ring, &dup);
  int type = -1;
  MPI_Topo_test(dup, &type);
  CHECK_EQ(type, MPI_CART);
  int got[2] = {-1, -1};
  CHECK_OK(MPI_Neighbor_allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, dup));
  if (size > 2) {
    CHECK_EQ(got[0], (rank + size - 1) % size);
    CHECK_EQ(got[1], (rank + 1) % size);
  }
  MPI_Comm_free(&dup);
  MPI_Comm_free(&ring);
  MPI_Comm_free(&line);
}

static void graph_queries(void) {
  /* a star: node 0 linked to everyone, isolated last node when size > 2 */
  int index[64], edges[128], ne = 0;
  for (int r = 0; r < size; ++r) {
    if (r == 0) {
      for (int q = 1; q < size - (size > 2); ++q) edges[ne++] = q;
    } else if (r < size - (size > 2)) {
      edges[ne++] = 0;
    }
    index[r] = ne;
  }
  MPI_Comm g;
  CHECK_OK(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g));
  /* ask about every rank, not only oneself */
  for (int r = 0; r < size; ++r) {
    int cnt = -1, want = index[r] - (r ? index[r - 1] : 0);
    CHECK_OK(MPI_Graph_neighbors_count(g, r, &cnt));
    CHECK_EQ(cnt, want);
    int nb[64];
    CHECK_OK(MPI_Graph_neighbors(g, r, 64, nb));
    for (int k = 0; k < cnt; ++k) CHECK_EQ(nb[k], edges[(r ? index[r - 1] : 0) + k]);
  }
  /* neighbour alltoall on the star: the hub hears from each spoke */
  int out[64], in[64];
  for (int k = 0; k < 64; ++k) out[k] = rank * 100 + k, in[k] = -1;
  CHECK_OK(MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, g));
  int mine = index[rank] - (rank ? index[rank - 1] : 0);
  for (int k = 0; k < mine; ++k) {
    int nbr = edges[(rank ? index[rank - 1] : 0) + k];
    /* where am I in nbr's list? */
    int pos = -1, start = nbr ? index[nbr - 1] : 0;
    for (int q = start; q < index[nbr]; ++q)
      if (edges[q] == rank) pos = q - start;
    CHECK_EQ(in[k], nbr * 100 + pos);
  }
  CHECK_EQ(in[mine], -1);
  MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
  int cnt;
  CHECK(MPI_Graph_neighbors_count(g, size, &cnt) != MPI_SUCCESS);
  MPI_Comm_free(&g);
  /* bad graph descriptions are errors */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int bidx[2] = {1, 0}; /* decreasing */
  int bedg[1] = {0};
  if (size >= 2) CHECK(MPI_Graph_create(MPI_COMM_WORLD, 2, bidx, bedg, 0, &g) != MPI_SUCCESS);
  int oidx[1] = {1}, oedg[1] = {size}; /* edge to a rank that is not a node */
  CHECK(MPI_Graph_create(MPI_COMM_WORLD, 1, oidx, oedg, 0, &g) != MPI_SUCCESS);
  CHECK(MPI_Graph_create(MPI_COMM_WORLD, size + 1, index, edges, 0, &g) != MPI_SUCCESS);
  int one = size;
  CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &one, MPI_UNWEIGHTED, 0, NULL, MPI_UNWEIGHTED, MPI_INFO_NULL,
                                       0, &g) != MPI_SUCCESS);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* Neighbour allgatherv / alltoallv / alltoallw on a non-periodic line:
 * the ends have an MPI_PROC_NULL neighbour whose blocks stay untouched. */
static void v_neighbours(void) {
  int dims[1] = {size}, per[1] = {0};
  MPI_Comm line;
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 0, &line);
  int left = rank > 0 ? rank - 1 : MPI_PROC_NULL, right = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
  /* allgatherv: 2 ints from each, the left one's at 3, the right one's at 0 */
  int two[2] = {rank * 10, rank * 10 + 1}, got[6];
  int rc[2] = {2, 2}, rd[2] = {3, 0};
  for (int i = 0; i < 6; ++i) got[i] = -1;
  CHECK_OK(MPI_Neighbor_allgatherv(two, 2, MPI_INT, got, rc, rd, MPI_INT, line));
  CHECK_EQ(got[3], left == MPI_PROC_NULL ? -1 : left * 10);
  CHECK_EQ(got[4], left == MPI_PROC_NULL ? -1 : left * 10 + 1);
  CHECK_EQ(got[0], right == MPI_PROC_NULL ? -1 : right * 10);
  CHECK_EQ(got[2], -1);
  /* alltoallv: 1 int to the left, 2 to the right */
  int out[3] = {rank * 10 + 7, rank * 10 + 8, rank * 10 + 9}, in[4];
  int sc[2] = {1, 2}, sd[2] = {0, 1}, rcv[2] = {2, 1}, rdv[2] = {0, 2};
  for (int i = 0; i < 4; ++i) in[i] = -1;
  MPI_Request r;
  CHECK_OK(MPI_Ineighbor_alltoallv(out, sc, sd, MPI_INT, in, rcv, rdv, MPI_INT, line, &r));
  CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  /* from the left: its 2 for the right; from the right: its 1 for the left */
  CHECK_EQ(in[0], left == MPI_PROC_NULL ? -1 : left * 10 + 8);
  CHECK_EQ(in[1], left == MPI_PROC_NULL ? -1 : left * 10 + 9);
  CHECK_EQ(in[2], right == MPI_PROC_NULL ? -1 : right * 10 + 7);
  CHECK_EQ(in[3], -1);
  /* alltoallw: a double to each side */
  double dout[2] = {rank + 0.5, rank + 0.75}, din[2] = {-1, -1};
  int c1[2] = {1, 1};
  MPI_Aint bd[2] = {0, sizeof(double)};
  MPI_Datatype dt[2] = {MPI_DOUBLE, MPI_DOUBLE};
  CHECK_OK(MPI_Neighbor_alltoallw(dout, c1, bd, dt, din, c1, bd, dt, line));
  CHECK(din[0] == (left == MPI_PROC_NULL ? -1 : left + 0.75));
  CHECK(din[1] == (right == MPI_PROC_NULL ? -1 : right + 0.5));
  MPI_Comm_free(&line);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  zero_dims();
  shifts();
  graph_queries();
  v_neighbours();
  return mt_finish();
}
