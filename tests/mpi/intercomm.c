/* Intercommunicators: create (even and odd world ranks as the two groups),
 * point-to-point across, remote size/group, dup, barrier, merge, free. */
#include "mpitest.h"

int main(int argc, char **argv) {
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
  /* collectives other than barrier are refused, not wrong */
  MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
  CHECK_CLASS(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_COMM);
  MPI_Comm sub;
  CHECK_CLASS(MPI_Comm_split(inter, 0, 0, &sub), MPI_ERR_COMM);
  MPI_Comm_free(&merged);
  MPI_Comm_free(&dup);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
  return mt_finish();
}
