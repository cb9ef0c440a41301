/* Cartesian topologies and MPI_Dims_create; Fortran handle conversions
 * and MPI_Comm_get_parent. */
#include "mpitest.h"

static int rank, size;

static void test_dims(void) {
  int d[3] = {0, 0, 0};
  CHECK_OK(MPI_Dims_create(12, 3, d));
  CHECK(d[0] == 3 && d[1] == 2 && d[2] == 2);
  int e[2] = {0, 0};
  CHECK_OK(MPI_Dims_create(16, 2, e));
  CHECK(e[0] == 4 && e[1] == 4);
  int f[3] = {0, 3, 0};
  CHECK_OK(MPI_Dims_create(30, 3, f));
  CHECK(f[0] == 5 && f[1] == 3 && f[2] == 2);
  int g[2] = {0, 0};
  CHECK_OK(MPI_Dims_create(7, 2, g));
  CHECK(g[0] == 7 && g[1] == 1);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int h[2] = {4, 0};
  CHECK_CLASS(MPI_Dims_create(10, 2, h), MPI_ERR_DIMS);
  int topo;
  CHECK_CLASS(MPI_Cartdim_get(MPI_COMM_WORLD, &topo), MPI_ERR_TOPOLOGY);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void test_cart(void) {
  int dims[2] = {0, 0}, periods[2] = {1, 0};
  MPI_Dims_create(size, 2, dims);
  MPI_Comm cart;
  CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart));
  int topo, nd, r;
  CHECK_OK(MPI_Topo_test(cart, &topo));
  CHECK_EQ(topo, MPI_CART);
  CHECK_OK(MPI_Cartdim_get(cart, &nd));
  CHECK_EQ(nd, 2);
  int gd[2], gp[2], gc[2];
  CHECK_OK(MPI_Cart_get(cart, 2, gd, gp, gc));
  CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 1 && gp[1] == 0);
  MPI_Comm_rank(cart, &r);
  CHECK_EQ(gc[0] * dims[1] + gc[1], r);
  int back;
  CHECK_OK(MPI_Cart_rank(cart, gc, &back));
  CHECK_EQ(back, r);
  int coords[2];
  CHECK_OK(MPI_Cart_coords(cart, size - 1, 2, coords));
  CHECK(coords[0] == dims[0] - 1 && coords[1] == dims[1] - 1);
  /* periodic dimension 0 wraps; dimension 1 ends in PROC_NULL */
  int src, dst;
  CHECK_OK(MPI_Cart_shift(cart, 0, 1, &src, &dst));
  CHECK_EQ(dst, ((gc[0] + 1) % dims[0]) * dims[1] + gc[1]);
  CHECK_EQ(src, ((gc[0] - 1 + dims[0]) % dims[0]) * dims[1] + gc[1]);
  CHECK_OK(MPI_Cart_shift(cart, 1, 1, &src, &dst));
  CHECK_EQ(dst, gc[1] + 1 < dims[1] ? r + 1 : MPI_PROC_NULL);
  CHECK_EQ(src, gc[1] > 0 ? r - 1 : MPI_PROC_NULL);
  /* halo exchange along dimension 1 */
  int v = r, got = -7;
  CHECK_OK(MPI_Sendrecv(&v, 1, MPI_INT, dst, 0, &got, 1, MPI_INT, src, 0, cart, MPI_STATUS_IGNORE));
  CHECK_EQ(got, src == MPI_PROC_NULL ? -7 : r - 1);
  /* rows: keep dimension 1 */
  int keep[2] = {0, 1};
  MPI_Comm row;
  CHECK_OK(MPI_Cart_sub(cart, keep, &row));
  int rs, rr;
  MPI_Comm_size(row, &rs);
  MPI_Comm_rank(row, &rr);
  CHECK_EQ(rs, dims[1]);
  CHECK_EQ(rr, gc[1]);
  CHECK_OK(MPI_Cartdim_get(row, &nd));
  CHECK_EQ(nd, 1);
  int sum = 0;
  MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, row);
  CHECK_EQ(sum, gc[0] * dims[1] * dims[1] + dims[1] * (dims[1] - 1) / 2);
  MPI_Comm d;
  MPI_Comm_dup(cart, &d);
  CHECK_OK(MPI_Topo_test(d, &topo));
  CHECK_EQ(topo, MPI_CART);
  int nr;
  CHECK_OK(MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, &nr));
  CHECK_EQ(nr, rank);
  MPI_Comm_free(&d);
  MPI_Comm_free(&row);
  MPI_Comm_free(&cart);
  /* a smaller grid leaves the others out */
  int one[1] = {1}, per[1] = {0};
  CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, one, per, 0, &cart));
  if (rank == 0) {
    CHECK(cart != MPI_COMM_NULL);
    MPI_Comm_free(&cart);
  } else {
    CHECK(cart == MPI_COMM_NULL);
  }
}

static void test_graphs(void) {
  int left = (rank + size - 1) % size, right = (rank + 1) % size;
  /* a ring as an MPI-1 graph */
  int index[64], edges[128];
  for (int i = 0; i < size; ++i) {
    index[i] = 2 * (i + 1);
    edges[2 * i] = (i + size - 1) % size;
    edges[2 * i + 1] = (i + 1) % size;
  }
  MPI_Comm g;
  CHECK_OK(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g));
  int topo, nn, ne, cnt, nb[2];
  CHECK_OK(MPI_Topo_test(g, &topo));
  CHECK_EQ(topo, MPI_GRAPH);
  CHECK_OK(MPI_Graphdims_get(g, &nn, &ne));
  CHECK_EQ(nn, size);
  CHECK_EQ(ne, 2 * size);
  CHECK_OK(MPI_Graph_neighbors_count(g, rank, &cnt));
  CHECK_EQ(cnt, 2);
  CHECK_OK(MPI_Graph_neighbors(g, rank, 2, nb));
  CHECK(nb[0] == left && nb[1] == right);
  int gi[64], ge[128];
  CHECK_OK(MPI_Graph_get(g, size, 2 * size, gi, ge));
  CHECK_EQ(gi[size - 1], 2 * size);
  int got[2] = {-1, -1};
  CHECK_OK(MPI_Neighbor_allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, g));
  CHECK(got[0] == left && got[1] == right);
  int nr;
  CHECK_OK(MPI_Graph_map(MPI_COMM_WORLD, size, index, edges, &nr));
  CHECK_EQ(nr, rank);
  MPI_Comm_free(&g);

  /* distributed graph, adjacent form: receive from the left, send right */
  MPI_Comm d;
  CHECK_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, MPI_UNWEIGHTED, 1, &right, MPI_UNWEIGHTED,
                                          MPI_INFO_NULL, 0, &d));
  CHECK_OK(MPI_Topo_test(d, &topo));
  CHECK_EQ(topo, MPI_DIST_GRAPH);
  int in, out, w;
  CHECK_OK(MPI_Dist_graph_neighbors_count(d, &in, &out, &w));
  CHECK(in == 1 && out == 1 && w == 0);
  int v = rank * 3, r = -1;
  CHECK_OK(MPI_Neighbor_alltoall(&v, 1, MPI_INT, &r, 1, MPI_INT, d));
  CHECK_EQ(r, left * 3);
  MPI_Request q;
  r = -1;
  CHECK_OK(MPI_Ineighbor_allgather(&v, 1, MPI_INT, &r, 1, MPI_INT, d, &q));
  CHECK_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
  CHECK_EQ(r, left * 3);
  int one = 1, zero = 0;
  r = -1;
  CHECK_OK(MPI_Neighbor_alltoallv(&v, &one, &zero, MPI_INT, &r, &one, &zero, MPI_INT, d));
  CHECK_EQ(r, left * 3);
  MPI_Aint z = 0;
  MPI_Datatype ti = MPI_INT;
  r = -1;
  CHECK_OK(MPI_Neighbor_alltoallw(&v, &one, &z, &ti, &r, &one, &z, &ti, d));
  CHECK_EQ(r, left * 3);
  MPI_Comm_free(&d);

  /* distributed graph, general form: each rank names its edge to the
   * right with weight = its rank */
  int deg = 1, wt = rank;
  CHECK_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, &deg, &right, &wt, MPI_INFO_NULL, 0, &d));
  CHECK_OK(MPI_Dist_graph_neighbors_count(d, &in, &out, &w));
  CHECK(in == 1 && out == 1 && w == 1);
  int src, sw, dst, dw;
  CHECK_OK(MPI_Dist_graph_neighbors(d, 1, &src, &sw, 1, &dst, &dw));
  CHECK(src == left && sw == left && dst == right && dw == rank);
  MPI_Comm_free(&d);

  /* Cartesian neighbourhood: PROC_NULL slots stay untouched */
  int dims[1] = {size}, per[1] = {0};
  MPI_Comm c;
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 0, &c);
  int two[2] = {-5, -5};
  CHECK_OK(MPI_Neighbor_allgather(&rank, 1, MPI_INT, two, 1, MPI_INT, c));
  CHECK_EQ(two[0], rank > 0 ? rank - 1 : -5);
  CHECK_EQ(two[1], rank < size - 1 ? rank + 1 : -5);
  MPI_Comm_free(&c);
}

static void test_misc(void) {
  MPI_Comm parent = MPI_COMM_WORLD;
  CHECK_OK(MPI_Comm_get_parent(&parent));
  CHECK(parent == MPI_COMM_NULL);
  MPI_Fint f = MPI_Comm_c2f(MPI_COMM_WORLD);
  CHECK(MPI_Comm_f2c(f) == MPI_COMM_WORLD);
  CHECK(MPI_Type_f2c(MPI_Type_c2f(MPI_DOUBLE)) == MPI_DOUBLE);
  CHECK(MPI_Op_f2c(MPI_Op_c2f(MPI_SUM)) == MPI_SUM);
  CHECK(MPI_Request_f2c(MPI_Request_c2f(MPI_REQUEST_NULL)) == MPI_REQUEST_NULL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  test_dims();
  test_cart();
  test_graphs();
  test_misc();
  return mt_finish();
}
