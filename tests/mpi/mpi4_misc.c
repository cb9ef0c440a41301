/* MPI-4 odds and ends: MPI_Info_create_env (before MPI_Init too),
 * MPI_Comm_idup_with_info, MPI_Comm_disconnect, MPI_Buffer_flush/iflush,
 * MPI_Type_match_size and MPI_Type_create_f90_integer/real/complex. */
#include "mpitest.h"

static int has_key(MPI_Info info, const char* key) {
  int flag = 0, len = 0;
  MPI_Info_get_valuelen(info, key, &len, &flag);
  return flag;
}

static void check_size(MPI_Datatype t, int want) {
  int n = -1;
  CHECK_OK(MPI_Type_size(t, &n));
  CHECK_EQ(n, want);
}

/* A type of MPI_Type_create_f90_*: its envelope names the f90 combiner
 * and its contents are (r) or (p, r) (MPI 3.1 4.1.13). */
static void check_f90(MPI_Datatype t, int combiner, int p, int r) {
  int ni = -1, na = -1, nd = -1, c = -1, iv[2] = {-1, -1};
  CHECK_OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &c));
  CHECK_EQ(c, combiner);
  CHECK_EQ(ni, combiner == MPI_COMBINER_F90_INTEGER ? 1 : 2);
  CHECK_EQ(na + nd, 0);
  CHECK_OK(MPI_Type_get_contents(t, 2, 0, 0, iv, NULL, NULL));
  if (combiner == MPI_COMBINER_F90_INTEGER) {
    CHECK_EQ(iv[0], r);
  } else {
    CHECK_EQ(iv[0], p);
    CHECK_EQ(iv[1], r);
  }
}

int main(int argc, char** argv) {
  MPI_Info env;
  CHECK_EQ(MPI_Info_create_env(argc, argv, &env), MPI_SUCCESS); /* before MPI_Init */
  CHECK(has_key(env, "command"));
  MPI_Info_free(&env);
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK_OK(MPI_Info_create_env(argc, argv, &env));
  CHECK(has_key(env, "command"));
  CHECK(has_key(env, "maxprocs"));
  MPI_Info_free(&env);

  /* idup_with_info: the new communicator's hints are exactly the given ones */
  MPI_Info hints, used;
  MPI_Comm dup, dup2;
  MPI_Request req;
  MPI_Info_create(&hints);
  MPI_Info_set(hints, "mpi_assert_no_any_tag", "true");
  CHECK_OK(MPI_Comm_idup_with_info(MPI_COMM_WORLD, hints, &dup, &req));
  CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  CHECK_OK(MPI_Comm_get_info(dup, &used));
  char value[MPI_MAX_INFO_VAL + 1];
  int flag = 0;
  CHECK_OK(MPI_Info_get(used, "mpi_assert_no_any_tag", MPI_MAX_INFO_VAL, value, &flag));
  CHECK(flag && strcmp(value, "true") == 0);
  MPI_Info_free(&used);
  int sum = 0;
  CHECK_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, dup));
  CHECK_EQ(sum, size * (size - 1) / 2);
  CHECK_OK(MPI_Comm_idup_with_info(dup, MPI_INFO_NULL, &dup2, &req));
  CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  CHECK_OK(MPI_Comm_get_info(dup2, &used));
  CHECK(!has_key(used, "mpi_assert_no_any_tag")); /* not inherited */
  MPI_Info_free(&used);
  MPI_Info_free(&hints);

  /* disconnect: collective, leaves MPI_COMM_NULL */
  CHECK_OK(MPI_Comm_disconnect(&dup2));
  CHECK_EQ(dup2, MPI_COMM_NULL);
  CHECK_OK(MPI_Comm_disconnect(&dup));
  CHECK_EQ(dup, MPI_COMM_NULL);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm world = MPI_COMM_WORLD;
  CHECK_CLASS(MPI_Comm_disconnect(&world), MPI_ERR_COMM);

  /* buffer flush: buffered messages are delivered, the buffer stays */
  static char buf[4096];
  int out = rank + 100, in = -1, peer = (rank + 1) % size, from = (rank - 1 + size) % size;
  CHECK_OK(MPI_Buffer_attach(buf, sizeof buf));
  CHECK_OK(MPI_Bsend(&out, 1, MPI_INT, peer, 7, MPI_COMM_WORLD));
  CHECK_OK(MPI_Irecv(&in, 1, MPI_INT, from, 7, MPI_COMM_WORLD, &req));
  CHECK_OK(MPI_Buffer_flush());
  CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  CHECK_EQ(in, from + 100);
  CHECK_OK(MPI_Bsend(&out, 1, MPI_INT, peer, 8, MPI_COMM_WORLD));
  MPI_Request fl;
  CHECK_OK(MPI_Irecv(&in, 1, MPI_INT, from, 8, MPI_COMM_WORLD, &req));
  CHECK_OK(MPI_Buffer_iflush(&fl));
  CHECK_OK(MPI_Wait(&fl, MPI_STATUS_IGNORE));
  CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  void* b = NULL;
  int bsize = 0;
  CHECK_OK(MPI_Buffer_detach(&b, &bsize)); /* still attached after the flushes */
  CHECK(b == buf);

  /* type matching */
  MPI_Datatype t;
  CHECK_OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &t));
  CHECK_EQ(t, MPI_INT);
  CHECK_OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &t));
  CHECK_EQ(t, MPI_DOUBLE);
  CHECK_OK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 8, &t));
  CHECK_EQ(t, MPI_C_FLOAT_COMPLEX);
  CHECK_CLASS(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 3, &t), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Type_match_size(99, 4, &t), MPI_ERR_ARG);
  CHECK_OK(MPI_Type_create_f90_integer(9, &t));
  check_size(t, 4);
  check_f90(t, MPI_COMBINER_F90_INTEGER, 0, 9);
  CHECK_OK(MPI_Type_create_f90_integer(18, &t));
  check_size(t, 8);
  CHECK_OK(MPI_Type_create_f90_integer(2, &t));
  check_size(t, 1);
  CHECK_CLASS(MPI_Type_create_f90_integer(40, &t), MPI_ERR_ARG);
  CHECK_OK(MPI_Type_create_f90_real(6, MPI_UNDEFINED, &t));
  check_size(t, 4);
  check_f90(t, MPI_COMBINER_F90_REAL, 6, MPI_UNDEFINED);
  CHECK_OK(MPI_Type_create_f90_real(15, 300, &t));
  check_size(t, 8);
  check_f90(t, MPI_COMBINER_F90_REAL, 15, 300);
  MPI_Datatype t2;
  CHECK_OK(MPI_Type_create_f90_real(15, 300, &t2));
  CHECK_EQ(t2, t);                               /* the same (p, r): the same handle */
  CHECK_CLASS(MPI_Type_free(&t2), MPI_ERR_TYPE); /* predefined */
  /* inside a derived type, get_contents gives the f90 handle back */
  MPI_Datatype pair, inner = MPI_DATATYPE_NULL;
  int two = -1;
  CHECK_OK(MPI_Type_contiguous(2, t, &pair));
  CHECK_OK(MPI_Type_get_contents(pair, 1, 0, 1, &two, NULL, &inner));
  CHECK_EQ(two, 2);
  CHECK_EQ(inner, t);
  CHECK_OK(MPI_Type_free(&pair));
  check_f90(t, MPI_COMBINER_F90_REAL, 15, 300);
  CHECK_OK(MPI_Type_create_f90_real(MPI_UNDEFINED, 100, &t));
  check_size(t, 8);
  CHECK_CLASS(MPI_Type_create_f90_real(MPI_UNDEFINED, MPI_UNDEFINED, &t), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Type_create_f90_real(60, 10, &t), MPI_ERR_ARG);
  CHECK_OK(MPI_Type_create_f90_complex(15, MPI_UNDEFINED, &t));
  check_size(t, 16);
  check_f90(t, MPI_COMBINER_F90_COMPLEX, 15, MPI_UNDEFINED);
  int i32 = 0, isum = 0;
  CHECK_OK(MPI_Type_create_f90_integer(5, &t));
  CHECK_OK(MPI_Allreduce(&rank, &i32, 1, t, MPI_MAX, MPI_COMM_WORLD));
  CHECK_EQ(i32, size - 1);
  CHECK_OK(MPI_Allreduce(&rank, &isum, 1, t, MPI_SUM, MPI_COMM_WORLD));
  CHECK_EQ(isum, size * (size - 1) / 2);
  /* a matched type communicates */
  double d = rank, dsum = 0;
  CHECK_OK(MPI_Type_create_f90_real(12, MPI_UNDEFINED, &t));
  CHECK_OK(MPI_Allreduce(&d, &dsum, 1, t, MPI_SUM, MPI_COMM_WORLD));
  CHECK_EQ((long)dsum, size * (size - 1) / 2);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  return mt_finish();
}
