/* MPI-4.1 additions, checked against the standard's text: the status field
 * accessors (3.2.5), MPI_Request_get_status_any/all/some (3.7.6), the error
 * classes MPI_ERR_SESSION/VALUE_TOO_LARGE/ERRHANDLER and
 * MPI_Remove_error_class/code/string (9.4, 9.5), MPI_Type_get_value_index
 * (6.9.4), MPI_Get_hw_resource_info and MPI_COMM_TYPE_HW_GUIDED/UNGUIDED
 * splits (7.4.2, 11.4). */
#include "mpitest.h"

static int rank, size;

static void test_status_fields(void) {
  MPI_Status st;
  int v = -1;
  CHECK_OK(MPI_Status_set_source(&st, 3));
  CHECK_OK(MPI_Status_set_tag(&st, 77));
  CHECK_OK(MPI_Status_set_error(&st, MPI_ERR_TAG));
  CHECK_OK(MPI_Status_get_source(&st, &v));
  CHECK_EQ(v, 3);
  CHECK_EQ(st.MPI_SOURCE, 3);
  CHECK_OK(MPI_Status_get_tag(&st, &v));
  CHECK_EQ(v, 77);
  CHECK_OK(MPI_Status_get_error(&st, &v));
  CHECK_EQ(v, MPI_ERR_TAG);
  CHECK_CLASS(MPI_Status_get_tag(MPI_STATUS_IGNORE, &v), MPI_ERR_ARG);
}

static void test_error_classes(void) {
  int cls[3] = {MPI_ERR_SESSION, MPI_ERR_VALUE_TOO_LARGE, MPI_ERR_ERRHANDLER};
  for (int i = 0; i < 3; ++i) {
    int c = -1, len = 0;
    char text[MPI_MAX_ERROR_STRING];
    CHECK(cls[i] > MPI_SUCCESS && cls[i] <= MPI_ERR_LASTCODE);
    CHECK(cls[i] != MPI_ERR_ARG);
    CHECK_OK(MPI_Error_class(cls[i], &c));
    CHECK_EQ(c, cls[i]);
    CHECK_OK(MPI_Error_string(cls[i], text, &len));
    CHECK(len > 0);
  }
  CHECK(MPI_ERR_SESSION != MPI_ERR_VALUE_TOO_LARGE && MPI_ERR_VALUE_TOO_LARGE != MPI_ERR_ERRHANDLER);
  CHECK_CLASS(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRHANDLER_NULL), MPI_ERR_ERRHANDLER);
  int n = 0;
  CHECK_CLASS(MPI_Session_get_num_psets(MPI_SESSION_NULL, MPI_INFO_NULL, &n), MPI_ERR_SESSION);
}

static void test_remove_errors(void) {
  int cls, code, c = -1, len = -1;
  char text[MPI_MAX_ERROR_STRING];
  CHECK_OK(MPI_Add_error_class(&cls));
  CHECK_OK(MPI_Add_error_code(cls, &code));
  CHECK_OK(MPI_Add_error_string(code, "the thing broke"));
  /* a class with codes cannot go; a predefined one never */
  CHECK_CLASS(MPI_Remove_error_class(cls), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Remove_error_class(MPI_ERR_OTHER), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Remove_error_code(MPI_ERR_OTHER), MPI_ERR_ARG);
  CHECK_OK(MPI_Error_string(code, text, &len));
  CHECK(strcmp(text, "the thing broke") == 0);
  CHECK_OK(MPI_Remove_error_string(code));
  CHECK_OK(MPI_Error_string(code, text, &len));
  CHECK_EQ(len, 0);
  CHECK_CLASS(MPI_Remove_error_string(code), MPI_ERR_ARG); /* no string left */
  CHECK_OK(MPI_Remove_error_code(code));
  CHECK_CLASS(MPI_Error_class(code, &c), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Remove_error_code(code), MPI_ERR_ARG);
  CHECK_OK(MPI_Remove_error_class(cls));
  CHECK_CLASS(MPI_Error_class(cls, &c), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Add_error_code(cls, &code), MPI_ERR_ARG);
}

static void test_value_index(void) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  MPI_Datatype value[] = {MPI_FLOAT, MPI_DOUBLE, MPI_LONG, MPI_INT, MPI_SHORT, MPI_LONG_DOUBLE};
  MPI_Datatype pair[] = {MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT};
  for (int i = 0; i < 6; ++i) {
    CHECK_OK(MPI_Type_get_value_index(value[i], MPI_INT, &t));
    CHECK(t == pair[i]);
  }
  CHECK_OK(MPI_Type_get_value_index(MPI_CHAR, MPI_INT, &t));
  CHECK(t == MPI_DATATYPE_NULL);
  CHECK_OK(MPI_Type_get_value_index(MPI_DOUBLE, MPI_LONG, &t));
  CHECK(t == MPI_DATATYPE_NULL);
  CHECK_CLASS(MPI_Type_get_value_index(MPI_DATATYPE_NULL, MPI_INT, &t), MPI_ERR_TYPE);
  /* the pair type works with MPI_MINLOC */
  struct {
    double v;
    int i;
  } in = {(double)(size - rank), rank}, out = {0, -1};
  CHECK_OK(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &t));
  CHECK_OK(MPI_Allreduce(&in, &out, 1, t, MPI_MINLOC, MPI_COMM_WORLD));
  CHECK_EQ(out.i, size - 1);
}

static void test_request_status_arrays(void) {
  MPI_Request reqs[3];
  MPI_Status st[3];
  int index = -2, flag = -1, outcount = -2, indices[3], buf = 0, val = 42;
  /* nothing active: a null handle and an inactive persistent request */
  reqs[0] = MPI_REQUEST_NULL;
  CHECK_OK(MPI_Recv_init(&buf, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, &reqs[1]));
  CHECK_OK(MPI_Request_get_status_any(2, reqs, &index, &flag, &st[0]));
  CHECK_EQ(flag, 1);
  CHECK_EQ(index, MPI_UNDEFINED);
  CHECK_EQ(st[0].MPI_SOURCE, MPI_ANY_SOURCE);
  CHECK_EQ(st[0].MPI_TAG, MPI_ANY_TAG);
  CHECK_OK(MPI_Request_get_status_all(2, reqs, &flag, st));
  CHECK_EQ(flag, 1);
  CHECK_EQ(st[1].MPI_TAG, MPI_ANY_TAG);
  CHECK_OK(MPI_Request_get_status_some(2, reqs, &outcount, indices, st));
  CHECK_EQ(outcount, MPI_UNDEFINED);
  /* started, nothing sent yet */
  CHECK_OK(MPI_Start(&reqs[1]));
  CHECK_OK(MPI_Irecv(&val, 0, MPI_INT, rank, 6, MPI_COMM_WORLD, &reqs[2]));
  CHECK_OK(MPI_Request_get_status_any(3, reqs, &index, &flag, &st[0]));
  CHECK_EQ(flag, 0);
  CHECK_OK(MPI_Request_get_status_all(3, reqs, &flag, st));
  CHECK_EQ(flag, 0);
  CHECK_OK(MPI_Request_get_status_some(3, reqs, &outcount, indices, st));
  CHECK_EQ(outcount, 0);
  /* the persistent one completes: found, and neither freed nor deactivated */
  int one = 7;
  CHECK_OK(MPI_Send(&one, 1, MPI_INT, rank, 5, MPI_COMM_WORLD));
  flag = 0;
  for (int spin = 0; spin < 1000000 && !flag; ++spin) {
    CHECK_OK(MPI_Request_get_status_any(3, reqs, &index, &flag, &st[0]));
  }
  CHECK_EQ(flag, 1);
  CHECK_EQ(index, 1);
  CHECK_EQ(st[0].MPI_SOURCE, rank);
  CHECK_EQ(st[0].MPI_TAG, 5);
  CHECK(reqs[1] != MPI_REQUEST_NULL);
  CHECK_OK(MPI_Request_get_status_some(3, reqs, &outcount, indices, st));
  CHECK_EQ(outcount, 1);
  CHECK_EQ(indices[0], 1);
  CHECK_EQ(st[0].MPI_TAG, 5);
  CHECK_OK(MPI_Request_get_status_all(3, reqs, &flag, st));
  CHECK_EQ(flag, 0); /* reqs[2] is still pending */
  CHECK_OK(MPI_Send(NULL, 0, MPI_INT, rank, 6, MPI_COMM_WORLD));
  flag = 0;
  for (int spin = 0; spin < 1000000 && !flag; ++spin) CHECK_OK(MPI_Request_get_status_all(3, reqs, &flag, st));
  CHECK_EQ(flag, 1);
  CHECK_EQ(st[0].MPI_TAG, MPI_ANY_TAG); /* the null request */
  CHECK_EQ(st[1].MPI_TAG, 5);
  CHECK_EQ(st[2].MPI_TAG, 6);
  CHECK(reqs[2] != MPI_REQUEST_NULL);
  CHECK_OK(MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE));
  CHECK_EQ(buf, 7);
  CHECK(reqs[1] != MPI_REQUEST_NULL); /* persistent: inactive again */
  CHECK(reqs[2] == MPI_REQUEST_NULL);
  CHECK_OK(MPI_Request_free(&reqs[1]));
}

static void test_hw_split(void) {
  MPI_Info info, got;
  MPI_Comm shared, guided, unguided;
  int n_shared = 0, n_guided = 0, flag = 0, len = MPI_MAX_INFO_VAL;
  char value[MPI_MAX_INFO_VAL + 1];
  CHECK_OK(MPI_Get_hw_resource_info(&info));
  CHECK_OK(MPI_Info_get_string(info, "mpi_hw_resource_type", &len, value, &flag));
  CHECK_EQ(flag, 1);
  CHECK(strcmp(value, "mpi_shared_memory") == 0);
  CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared));
  CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &guided));
  CHECK(guided != MPI_COMM_NULL);
  MPI_Comm_size(shared, &n_shared);
  MPI_Comm_size(guided, &n_guided);
  CHECK_EQ(n_guided, n_shared);
  CHECK_OK(MPI_Comm_get_info(guided, &got));
  len = MPI_MAX_INFO_VAL;
  CHECK_OK(MPI_Info_get_string(got, "mpi_hw_resource_type", &len, value, &flag));
  CHECK_EQ(flag, 1);
  CHECK(strcmp(value, "mpi_shared_memory") == 0);
  MPI_Info_free(&got);
  /* an unknown resource type, or none: MPI_COMM_NULL */
  CHECK_OK(MPI_Info_set(info, "mpi_hw_resource_type", "hwloc://NoSuchLevel"));
  CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &unguided));
  CHECK(unguided == MPI_COMM_NULL);
  CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, MPI_INFO_NULL, &unguided));
  CHECK(unguided == MPI_COMM_NULL);
  /* unguided: a strict subset of the ranks or MPI_COMM_NULL (here all
   * ranks share the host, so no smaller level exists) */
  CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, MPI_INFO_NULL, &unguided));
  if (n_shared == size) {
    CHECK(unguided == MPI_COMM_NULL);
  } else {
    int n = 0;
    MPI_Comm_size(unguided, &n);
    CHECK(n < size);
    MPI_Comm_free(&unguided);
  }
  MPI_Info_free(&info);
  MPI_Comm_free(&guided);
  MPI_Comm_free(&shared);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  test_status_fields();
  test_error_classes();
  test_remove_errors();
  test_value_index();
  test_request_status_arrays();
  test_hw_split();
  return mt_finish();
}
