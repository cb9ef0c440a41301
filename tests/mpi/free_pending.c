/* Objects freed while operations still use them (MPI 3.1 3.7.3, 4.1.9,
 * 5.9.5, 6.4.3): a communicator freed with a nonblocking collective and a
 * receive pending on it, a datatype freed under a pending send and
 * receive, a user op freed under a pending Iallreduce, a request (plain
 * and persistent) freed while its send is active (the message still
 * arrives), an error handler handle and an info freed after use. Each operation must complete
 * normally: the objects live until nothing uses them. */
#include "mpitest.h"

static int rank, size;

static int calls = 0;
static void plus(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  ++calls;
  for (int i = 0; i < *len; ++i) ((int*)inout)[i] += ((int*)in)[i];
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;

  /* communicator freed under an Ibarrier, an Iallreduce and a receive */
  MPI_Comm d;
  MPI_Comm_dup(MPI_COMM_WORLD, &d);
  MPI_Request rq[4];
  int one = 1, sum = -1, in = -1, out = rank;
  CHECK_OK(MPI_Irecv(&in, 1, MPI_INT, prev, 3, d, &rq[0]));
  CHECK_OK(MPI_Ibarrier(d, &rq[1]));
  CHECK_OK(MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, d, &rq[2]));
  CHECK_OK(MPI_Isend(&out, 1, MPI_INT, next, 3, d, &rq[3]));
  CHECK_OK(MPI_Comm_free(&d));
  CHECK(d == MPI_COMM_NULL);
  CHECK_OK(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
  CHECK_EQ(sum, size);
  CHECK_EQ(in, prev);

  /* datatype freed under a pending send and receive */
  MPI_Datatype vec;
  MPI_Type_vector(100, 1, 3, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  int src[300], dst[300];
  for (int i = 0; i < 300; ++i) src[i] = rank * 1000 + i, dst[i] = -1;
  CHECK_OK(MPI_Irecv(dst, 1, vec, prev, 4, MPI_COMM_WORLD, &rq[0]));
  CHECK_OK(MPI_Isend(src, 1, vec, next, 4, MPI_COMM_WORLD, &rq[1]));
  CHECK_OK(MPI_Type_free(&vec));
  CHECK(vec == MPI_DATATYPE_NULL);
  CHECK_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
  for (int i = 0; i < 300; ++i) CHECK_EQ(dst[i], i % 3 == 0 ? prev * 1000 + i : -1);

  /* user op freed under a pending Iallreduce */
  MPI_Op op;
  MPI_Op_create(plus, 1, &op);
  int v[4] = {rank, 1, 2, 3}, r[4];
  CHECK_OK(MPI_Iallreduce(v, r, 4, MPI_INT, op, MPI_COMM_WORLD, &rq[0]));
  CHECK_OK(MPI_Op_free(&op));
  CHECK(op == MPI_OP_NULL);
  CHECK_OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
  CHECK_EQ(r[0], size * (size - 1) / 2);
  CHECK_EQ(r[3], 3 * size);

  /* a request freed while its send is active: the message still arrives */
  int msg = rank + 500, got = -1;
  MPI_Request s;
  CHECK_OK(MPI_Isend(&msg, 1, MPI_INT, next, 5, MPI_COMM_WORLD, &s));
  CHECK_OK(MPI_Request_free(&s));
  CHECK(s == MPI_REQUEST_NULL);
  CHECK_OK(MPI_Recv(&got, 1, MPI_INT, prev, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CHECK_EQ(got, prev + 500);
  /* (the sender knows its buffer is free again once the receiver says so) */
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));

  /* a persistent request freed while active */
  int pm = rank + 900, pg = -1;
  MPI_Request p;
  CHECK_OK(MPI_Send_init(&pm, 1, MPI_INT, next, 6, MPI_COMM_WORLD, &p));
  CHECK_OK(MPI_Start(&p));
  CHECK_OK(MPI_Request_free(&p));
  CHECK_OK(MPI_Recv(&pg, 1, MPI_INT, prev, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CHECK_EQ(pg, prev + 900);
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));

  /* an error handler's handle freed while attached: it still works */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_dup(MPI_COMM_WORLD, &d);
  MPI_Errhandler got_eh;
  MPI_Comm_get_errhandler(d, &got_eh); /* MPI_ERRORS_RETURN, inherited */
  CHECK_OK(MPI_Errhandler_free(&got_eh));
  CHECK(got_eh == MPI_ERRHANDLER_NULL);
  CHECK(MPI_Send(&msg, 1, MPI_INT, size + 3, 0, d) != MPI_SUCCESS);
  MPI_Comm_free(&d);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

  /* an info freed after it configured a communicator */
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "mpi_assert_no_any_tag", "false");
  CHECK_OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &d));
  MPI_Info_free(&info);
  CHECK_OK(MPI_Barrier(d));
  MPI_Comm_free(&d);
  return mt_finish();
}
