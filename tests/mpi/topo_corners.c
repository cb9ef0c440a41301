/* More topology corners (MPI 3.1 chapter 7): a 0-dimensional Cartesian
 * communicator, shifts by negative and by more than a dimension, Cart_rank
 * out of range on a non-periodic dimension, graph queries about other
 * ranks, a graph with isolated nodes, v- and w- neighbour collectives on a
 * Cartesian grid with MPI_PROC_NULL neighbours, neighbour collectives on a
 * dup of a topology communicator (the topology is copied), and the errors
 * of bad topology arguments; Cartesian, graph and distributed graph
 * topologies with their queries and the neighbour collectives (neighbour
 * order, MPI_PROC_NULL neighbours leave their blocks untouched), negative
 * or missing distributed graph weights, bad arguments on one rank only
 * (every rank fails, none waits). */
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

/* Bad topology arguments on rank 0 alone: its class there, MPI_ERR_OTHER
 * at the others, none waits for it. */
static void one_bad_rank(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm c = MPI_COMM_NULL;
  int dims[1] = {rank == 0 ? -1 : size}, per[1] = {0}, cls = -1;
  MPI_Error_class(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 0, &c), &cls);
  CHECK_EQ(cls, rank == 0 ? MPI_ERR_DIMS : MPI_ERR_OTHER);
  dims[0] = rank == 0 ? size + 1 : size;
  MPI_Error_class(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 0, &c), &cls);
  CHECK_EQ(cls, rank == 0 ? MPI_ERR_ARG : MPI_ERR_OTHER);
  int index[1] = {1}, edges[1] = {rank == 0 ? 5 : 0};
  MPI_Error_class(MPI_Graph_create(MPI_COMM_WORLD, 1, index, edges, 0, &c), &cls);
  CHECK_EQ(cls, rank == 0 ? MPI_ERR_RANK : MPI_ERR_OTHER); /* an edge to no node */
  CHECK(c == MPI_COMM_NULL);
  int one = 1, sum = 0;
  CHECK_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  CHECK_EQ(sum, size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  zero_dims();
  shifts();
  graph_queries();
  v_neighbours();
  cart();
  graph();
  dist_graph();
  one_bad_rank();
  return mt_finish();
}
