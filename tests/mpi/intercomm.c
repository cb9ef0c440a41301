/* Intercommunicators: create (even and odd world ranks as the two groups),
 * point-to-point across, remote size/group, dup, barrier, merge, free. */
#include "mpitest.h"

/* world rank of remote rank i: the groups are the even and odd ranks */
static int remote_world(int color, int i) { return 2 * i + (1 - color); }

static void test_collectives(MPI_Comm inter, int color, int lrank, int lsize, int rsize) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int other_sum = 0;
  for (int i = 0; i < rsize; ++i) other_sum += remote_world(color, i);
  /* bcast from the even group's rank 0 */
  int v = color == 0 ? 4242 : -1;
  int root = color == 0 ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  CHECK_OK(MPI_Bcast(&v, 1, MPI_INT, root, inter));
  if (color == 1) CHECK_EQ(v, 4242);
  MPI_Request q;
  v = color == 0 ? 77 : -1;
  CHECK_OK(MPI_Ibcast(&v, 1, MPI_INT, root, inter, &q));
  CHECK_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
  if (color == 1) CHECK_EQ(v, 77);
  /* reduce to the odd group's rank 0 */
  int sum = -1;
  root = color == 1 ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  CHECK_OK(MPI_Reduce(&rank, &sum, 1, MPI_INT, MPI_SUM, root, inter));
  if (color == 1 && lrank == 0) CHECK_EQ(sum, other_sum);
  /* allreduce: the other group's sum */
  CHECK_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, inter));
  CHECK_EQ(sum, other_sum);
  /* gather to the even root, scatter back from it */
  int all[64];
  root = color == 0 ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  CHECK_OK(MPI_Gather(&rank, 1, MPI_INT, all, 1, MPI_INT, root, inter));
  if (color == 0 && lrank == 0)
    for (int i = 0; i < rsize; ++i) CHECK_EQ(all[i], remote_world(color, i));
  int one = -1;
  for (int i = 0; i < 64; ++i) all[i] = 1000 + i;
  CHECK_OK(MPI_Scatter(all, 1, MPI_INT, &one, 1, MPI_INT, root, inter));
  if (color == 1) CHECK_EQ(one, 1000 + lrank);
  int counts[64], displs[64];
  for (int i = 0; i < 64; ++i) counts[i] = 1, displs[i] = 2 * i;
  CHECK_OK(MPI_Gatherv(&rank, 1, MPI_INT, all, counts, displs, MPI_INT, root, inter));
  if (color == 0 && lrank == 0)
    for (int i = 0; i < rsize; ++i) CHECK_EQ(all[2 * i], remote_world(color, i));
  /* allgather(v): the other group's ranks */
  for (int i = 0; i < 64; ++i) all[i] = -1;
  CHECK_OK(MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, inter));
  for (int i = 0; i < rsize; ++i) CHECK_EQ(all[i], remote_world(color, i));
  CHECK_OK(MPI_Allgatherv(&rank, 1, MPI_INT, all, counts, displs, MPI_INT, inter));
  for (int i = 0; i < rsize; ++i) CHECK_EQ(all[2 * i], remote_world(color, i));
  /* alltoall: to remote j goes rank * 100 + j */
  int out[64], in[64];
  for (int j = 0; j < rsize; ++j) out[j] = rank * 100 + j;
  CHECK_OK(MPI_Alltoall(out, 1, MPI_INT, in, 1, MPI_INT, inter));
  for (int i = 0; i < rsize; ++i) CHECK_EQ(in[i], remote_world(color, i) * 100 + lrank);
  int zeros[64] = {0}, ones[64], bytes[64];
  MPI_Datatype types[64];
  for (int i = 0; i < 64; ++i) ones[i] = 1, bytes[i] = i * (int)sizeof(int), types[i] = MPI_INT, zeros[i] = i;
  for (int i = 0; i < 64; ++i) in[i] = -1;
  CHECK_OK(MPI_Alltoallv(out, ones, zeros, MPI_INT, in, ones, zeros, MPI_INT, inter));
  for (int i = 0; i < rsize; ++i) CHECK_EQ(in[i], remote_world(color, i) * 100 + lrank);
  for (int i = 0; i < 64; ++i) in[i] = -1;
  CHECK_OK(MPI_Alltoallw(out, ones, bytes, types, in, ones, bytes, types, inter));
  for (int i = 0; i < rsize; ++i) CHECK_EQ(in[i], remote_world(color, i) * 100 + lrank);
  /* reduce_scatter_block: each group's vector is recvcount times its own
   * size (MPI-4.1 6.11.2), so with recvcount = rsize both have lsize*rsize */
  for (int j = 0; j < lsize * rsize; ++j) out[j] = rank + j;
  int got[64];
  CHECK_OK(MPI_Reduce_scatter_block(out, got, rsize, MPI_INT, MPI_SUM, inter));
  for (int i = 0; i < rsize; ++i) CHECK_EQ(got[i], other_sum + rsize * (lrank * rsize + i));
  /* reduce_scatter: local rank i gets i + 1 elements; both groups' vectors
   * have the same length only when the groups are equal in size */
  if (lsize == rsize) {
    int rc[64], tot = 0;
    for (int i = 0; i < lsize; ++i) rc[i] = i + 1, tot += i + 1;
    for (int j = 0; j < tot; ++j) out[j] = rank + j;
    int res[64];
    CHECK_OK(MPI_Reduce_scatter(out, res, rc, MPI_INT, MPI_SUM, inter));
    int first = lrank * (lrank + 1) / 2;
    for (int j = 0; j <= lrank; ++j) CHECK_EQ(res[j], other_sum + rsize * (first + j));
  }
  CHECK_OK(MPI_Iallreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, inter, &q));
  CHECK_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
  CHECK_EQ(sum, other_sum);
  CHECK_OK(MPI_Ibarrier(inter, &q));
  CHECK_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
  (void)lsize;
}

int main(int argc, char** argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) return mt_finish();
  int color = rank % 2;
  MPI_Comm local, inter, dup, merged;
  MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local);
  int lrank, lsize;
  MPI_Comm_rank(local, &lrank);
  MPI_Comm_size(local, &lsize);
  /* leaders: world rank 0 (evens) and 1 (odds) */
  CHECK_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - color, 99, &inter));
  int flag = 0, rsize = 0, r = -1, s = -1;
  CHECK_OK(MPI_Comm_test_inter(inter, &flag));
  CHECK_EQ(flag, 1);
  CHECK_OK(MPI_Comm_remote_size(inter, &rsize));
  CHECK_EQ(rsize, color ? (size + 1) / 2 : size / 2);
  MPI_Comm_rank(inter, &r);
  MPI_Comm_size(inter, &s);
  CHECK_EQ(r, lrank);
  CHECK_EQ(s, lsize);
  MPI_Group rg, wg;
  CHECK_OK(MPI_Comm_remote_group(inter, &rg));
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  int zero = 0, w0 = -1;
  MPI_Group_translate_ranks(rg, 1, &zero, wg, &w0);
  CHECK_EQ(w0, 1 - color); /* remote rank 0 is the other leader */
  MPI_Group_free(&rg);
  MPI_Group_free(&wg);
  /* each rank sends its world rank to remote rank (lrank % rsize) and
   * receives from every remote rank that targets it */
  int v = rank, expect = 0, got = 0;
  for (int q = 0; q < rsize; ++q)
    if (q % s == lrank) ++expect;
  MPI_Request req;
  CHECK_OK(MPI_Isend(&v, 1, MPI_INT, lrank % rsize, 5, inter, &req));
  for (int i = 0; i < expect; ++i) {
    MPI_Status st;
    int w;
    CHECK_OK(MPI_Recv(&w, 1, MPI_INT, MPI_ANY_SOURCE, 5, inter, &st));
    CHECK_EQ(st.MPI_SOURCE % s, lrank);
    CHECK_EQ(w % 2, 1 - color); /* it came from the other group */
    ++got;
  }
  CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  CHECK_EQ(got, expect);
  CHECK_OK(MPI_Barrier(inter));
  /* dup keeps the shape */
  CHECK_OK(MPI_Comm_dup(inter, &dup));
  CHECK_OK(MPI_Comm_remote_size(dup, &rsize));
  CHECK_EQ(rsize, color ? (size + 1) / 2 : size / 2);
  int res;
  CHECK_OK(MPI_Comm_compare(inter, dup, &res));
  CHECK_EQ(res, MPI_CONGRUENT);
  int a = rank, b = -1;
  if (lrank == 0) CHECK_OK(MPI_Sendrecv(&a, 1, MPI_INT, 0, 1, &b, 1, MPI_INT, 0, 1, dup, MPI_STATUS_IGNORE));
  if (lrank == 0) CHECK_EQ(b, 1 - color);
  /* merge: odds high, so evens come first */
  CHECK_OK(MPI_Intercomm_merge(inter, color, &merged));
  int mr, ms;
  MPI_Comm_rank(merged, &mr);
  MPI_Comm_size(merged, &ms);
  CHECK_EQ(ms, size);
  CHECK_EQ(mr, color ? (size + 1) / 2 + lrank : lrank);
  int sum = 0;
  CHECK_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, merged));
  CHECK_EQ(sum, size * (size - 1) / 2);
  test_collectives(inter, color, lrank, s, rsize);
  /* scans are not defined on intercommunicators */
  MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
  CHECK_CLASS(MPI_Scan(&rank, &sum, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_COMM);
  MPI_Comm_set_errhandler(inter, MPI_ERRORS_ARE_FATAL);
  /* split: keep local ranks below 2 on both sides, reversed */
  MPI_Comm sub;
  CHECK_OK(MPI_Comm_split(inter, lrank < 2 ? 0 : MPI_UNDEFINED, -lrank, &sub));
  if (lrank < 2) {
    int ss, srs, sr;
    MPI_Comm_size(sub, &ss);
    MPI_Comm_remote_size(sub, &srs);
    MPI_Comm_rank(sub, &sr);
    CHECK_EQ(ss, s < 2 ? s : 2);
    CHECK_EQ(srs, rsize < 2 ? rsize : 2);
    CHECK_EQ(sr, ss - 1 - lrank);
    int x = rank, y = -1;
    if (sr < srs) { /* pairs across: my rank with the same remote rank */
      CHECK_OK(MPI_Sendrecv(&x, 1, MPI_INT, sr, 3, &y, 1, MPI_INT, sr, 3, sub, MPI_STATUS_IGNORE));
      CHECK_EQ(y % 2, 1 - color);
    }
    MPI_Comm_free(&sub);
  } else {
    CHECK(sub == MPI_COMM_NULL);
  }
  /* create: each side keeps its local rank 0 only */
  MPI_Group lg, first;
  MPI_Comm_group(inter, &lg);
  int zero0 = 0;
  MPI_Group_incl(lg, 1, &zero0, &first);
  CHECK_OK(MPI_Comm_create(inter, first, &sub));
  if (lrank == 0) {
    int rs2;
    MPI_Comm_remote_size(sub, &rs2);
    CHECK_EQ(rs2, 1);
    MPI_Comm_free(&sub);
  } else {
    CHECK(sub == MPI_COMM_NULL);
  }
  MPI_Group_free(&first);
  MPI_Group_free(&lg);
  MPI_Comm_free(&merged);
  MPI_Comm_free(&dup);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
  return mt_finish();
}
