/* Bad input a hardening suite feeds every call: garbage and freed handles
 * of each kind (communicator, datatype, op, request, group, info, error
 * handler, window, message, keyval), and handles of the wrong kind, each
 * refused with its error class under MPI_ERRORS_RETURN - never a crash,
 * never a hang. Errors not tied to a valid object go to MPI_COMM_WORLD's
 * handler. */
#include "mpitest.h"

static int rank, size;

/* Garbage values: small, negative, huge, and the valid-looking kinds of
 * the other handle types (a datatype passed as a communicator, ...). */
static const int garbage[] = {12345, -7, 0x7fffffff, 0x44000123, 0x4c00ffff, 0x58000fff, 0x10000001};
enum { NG = sizeof garbage / sizeof garbage[0] };

static void comms(void) {
  int buf[4] = {0}, n = 0;
  for (int g = 0; g < NG; ++g) {
    MPI_Comm c = (MPI_Comm)garbage[g];
    CHECK_CLASS(MPI_Comm_size(c, &n), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Send(buf, 1, MPI_INT, 0, 0, c), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Barrier(c), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Allreduce(buf, buf + 1, 1, MPI_INT, MPI_SUM, c), MPI_ERR_COMM);
    MPI_Comm d;
    CHECK_CLASS(MPI_Comm_dup(c, &d), MPI_ERR_COMM);
  }
  CHECK_CLASS(MPI_Comm_size((MPI_Comm)MPI_INT, &n), MPI_ERR_COMM);
  CHECK_CLASS(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM);
  /* a freed communicator */
  MPI_Comm d, keep;
  MPI_Comm_dup(MPI_COMM_WORLD, &d);
  keep = d;
  MPI_Comm_free(&d);
  CHECK(d == MPI_COMM_NULL);
  CHECK_CLASS(MPI_Comm_size(keep, &n), MPI_ERR_COMM);
  CHECK_CLASS(MPI_Comm_free(&keep), MPI_ERR_COMM);
}

static void types_ops(void) {
  int buf[4] = {0};
  for (int g = 0; g < NG; ++g) {
    MPI_Datatype t = (MPI_Datatype)garbage[g];
    if (t == MPI_INT) continue;
    CHECK_CLASS(MPI_Send(buf, 1, t, rank, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Type_commit(&t), MPI_ERR_TYPE);
    int sz;
    CHECK_CLASS(MPI_Type_size(t, &sz), MPI_ERR_TYPE);
    MPI_Datatype u;
    CHECK_CLASS(MPI_Type_contiguous(2, t, &u), MPI_ERR_TYPE);
    MPI_Op o = (MPI_Op)garbage[g];
    CHECK_CLASS(MPI_Allreduce(buf, buf + 1, 1, MPI_INT, o, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_CLASS(MPI_Op_free(&o), MPI_ERR_OP);
  }
  MPI_Datatype t;
  MPI_Type_contiguous(2, MPI_INT, &t);
  MPI_Datatype stale = t;
  MPI_Type_free(&t);
  CHECK(t == MPI_DATATYPE_NULL);
  CHECK_CLASS(MPI_Type_commit(&stale), MPI_ERR_TYPE);
  CHECK_CLASS(MPI_Send(buf, 1, MPI_DATATYPE_NULL, rank, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
  CHECK_CLASS(MPI_Allreduce(buf, buf + 1, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
}

static void requests(void) {
  MPI_Status st;
  int flag;
  for (int g = 0; g < NG; ++g) {
    MPI_Request r = (MPI_Request)garbage[g];
    CHECK_CLASS(MPI_Wait(&r, &st), MPI_ERR_REQUEST);
    r = (MPI_Request)garbage[g];
    CHECK_CLASS(MPI_Test(&r, &flag, &st), MPI_ERR_REQUEST);
    r = (MPI_Request)garbage[g];
    CHECK_CLASS(MPI_Request_free(&r), MPI_ERR_REQUEST);
    r = (MPI_Request)garbage[g];
    CHECK_CLASS(MPI_Cancel(&r), MPI_ERR_REQUEST);
    MPI_Request two[2] = {MPI_REQUEST_NULL, (MPI_Request)garbage[g]};
    int rc = MPI_Waitall(2, two, MPI_STATUSES_IGNORE);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_REQUEST || cls == MPI_ERR_IN_STATUS);
    two[1] = (MPI_Request)garbage[g];
    int idx;
    CHECK_CLASS(MPI_Waitany(2, two, &idx, &st), MPI_ERR_REQUEST);
  }
  /* a completed and freed request, used again */
  int b = 1, c = 0;
  MPI_Request r, stale;
  MPI_Irecv(&c, 1, MPI_INT, rank, 77, MPI_COMM_WORLD, &r);
  stale = r;
  MPI_Send(&b, 1, MPI_INT, rank, 77, MPI_COMM_WORLD);
  MPI_Wait(&r, &st);
  CHECK_CLASS(MPI_Wait(&stale, &st), MPI_ERR_REQUEST);
  CHECK_CLASS(MPI_Start(&stale), MPI_ERR_REQUEST);
  /* MPI_Mrecv of a garbage message */
  MPI_Message m = (MPI_Message)12345;
  CHECK(MPI_Mrecv(&c, 1, MPI_INT, &m, &st) != MPI_SUCCESS);
}

static void others(void) {
  for (int g = 0; g < NG; ++g) {
    int n;
    MPI_Group gr = (MPI_Group)garbage[g];
    CHECK_CLASS(MPI_Group_size(gr, &n), MPI_ERR_GROUP);
    CHECK_CLASS(MPI_Group_free(&gr), MPI_ERR_GROUP);
    MPI_Info in = (MPI_Info)garbage[g];
    CHECK_CLASS(MPI_Info_get_nkeys(in, &n), MPI_ERR_INFO);
    CHECK_CLASS(MPI_Info_set(in, "k", "v"), MPI_ERR_INFO);
    MPI_Info d;
    CHECK_CLASS(MPI_Info_dup(in, &d), MPI_ERR_INFO);
    MPI_Errhandler eh = (MPI_Errhandler)garbage[g];
    int rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG || cls == MPI_ERR_ERRHANDLER);
    MPI_Win w = (MPI_Win)garbage[g];
    CHECK_CLASS(MPI_Win_fence(0, w), MPI_ERR_WIN);
    CHECK_CLASS(MPI_Win_free(&w), MPI_ERR_WIN);
    void* v;
    int flag;
    CHECK_CLASS(MPI_Comm_get_attr(MPI_COMM_WORLD, garbage[g], &v, &flag), MPI_ERR_KEYVAL);
    int k = garbage[g];
    CHECK_CLASS(MPI_Comm_free_keyval(&k), MPI_ERR_KEYVAL);
  }
  /* an error code that cannot be one: an error, not a crash */
  int cls;
  CHECK(MPI_Error_class(-3, &cls) != MPI_SUCCESS);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  comms();
  types_ops();
  requests();
  others();
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  return mt_finish();
}
