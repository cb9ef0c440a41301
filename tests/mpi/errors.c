/* Error handling: with MPI_ERRORS_RETURN every bad argument gives its error
 * class; error strings name what was wrong; user-added classes, codes and
 * strings; user error handlers and their reference counting. */
#include <limits.h>

#include "mpitest.h"

static int rank, size;
static int handler_calls = 0, handler_last = 0;
static MPI_Comm handler_comm = MPI_COMM_NULL;

static void my_handler(MPI_Comm* comm, int* code, ...) {
  ++handler_calls;
  handler_last = *code;
  handler_comm = *comm;
}

static int contains(const char* s, const char* part) { return strstr(s, part) != NULL; }

static void test_argument_classes(void) {
  int buf[4] = {0};
  MPI_Status st;
  MPI_Request req;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  /* communicators */
  CHECK_CLASS(MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
  CHECK_CLASS(MPI_Send(buf, 1, MPI_INT, 0, 0, (MPI_Comm)0x12345), MPI_ERR_COMM);
  CHECK_CLASS(MPI_Send(buf, 1, MPI_INT, 0, 0, (MPI_Comm)0x84000fff), MPI_ERR_COMM);
  int sz;
  CHECK_CLASS(MPI_Comm_size(MPI_COMM_NULL, &sz), MPI_ERR_COMM);
  MPI_Comm world = MPI_COMM_WORLD;
  CHECK_CLASS(MPI_Comm_free(&world), MPI_ERR_COMM);
  /* ranks, tags, counts */
  CHECK_CLASS(MPI_Send(buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
  CHECK_CLASS(MPI_Send(buf, 1, MPI_INT, -5, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
  CHECK_CLASS(MPI_Send(buf, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
  CHECK_CLASS(MPI_Recv(buf, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK);
  CHECK_CLASS(MPI_Send(buf, 1, MPI_INT, 0, -3, MPI_COMM_WORLD), MPI_ERR_TAG);
  CHECK_CLASS(MPI_Send(buf, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG);
  int *ub, flag;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
  CHECK(flag && *ub >= 32767);
  CHECK_CLASS(MPI_Isend(buf, 1, MPI_INT, 0, *ub + 1, MPI_COMM_WORLD, &req), MPI_ERR_TAG);
  CHECK_CLASS(MPI_Irecv(buf, 1, MPI_INT, 0, -7, MPI_COMM_WORLD, &req), MPI_ERR_TAG);
  CHECK_CLASS(MPI_Send(buf, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
  CHECK_CLASS(MPI_Recv(buf, -1, MPI_INT, 0, 0, MPI_COMM_WORLD, &st), MPI_ERR_COUNT);
  {
    /* count * size beyond what a buffer can hold: 2^30 elements of 2^33 bytes */
    MPI_Datatype gib, big;
    int psize = 0;
    CHECK_OK(MPI_Type_contiguous(1 << 30, MPI_BYTE, &gib));
    CHECK_OK(MPI_Type_contiguous(8, gib, &big));
    CHECK_OK(MPI_Type_commit(&big));
    CHECK_CLASS(MPI_Send(buf, 1 << 30, big, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Irecv(buf, 1 << 30, big, 0, 0, MPI_COMM_WORLD, &req), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Bcast(buf, 1 << 30, big, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Pack_size(1 << 30, big, MPI_COMM_WORLD, &psize), MPI_ERR_COUNT);
    /* recvcount * processes beyond an int (every rank refuses it alike) */
    if (size > 1) {
      CHECK_CLASS(MPI_Reduce_scatter_block(buf, buf + 1, INT_MAX, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    }
    CHECK_OK(MPI_Type_free(&big));
    CHECK_OK(MPI_Type_free(&gib));
  }
  /* datatypes */
  CHECK_CLASS(MPI_Send(buf, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
  CHECK_CLASS(MPI_Send(buf, 1, (MPI_Datatype)0x4c0000ff, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
  CHECK_CLASS(MPI_Send(buf, 1, MPI_COMM_WORLD, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
  MPI_Datatype un;
  CHECK_OK(MPI_Type_contiguous(2, MPI_INT, &un));
  CHECK_CLASS(MPI_Send(buf, 1, un, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE); /* not committed */
  MPI_Datatype freed = un;
  CHECK_OK(MPI_Type_free(&un));
  CHECK_CLASS(MPI_Type_commit(&freed), MPI_ERR_TYPE);
  MPI_Datatype pre = MPI_INT;
  CHECK_CLASS(MPI_Type_free(&pre), MPI_ERR_TYPE);
  CHECK_CLASS(MPI_Type_contiguous(-1, MPI_INT, &un), MPI_ERR_COUNT);
  CHECK_CLASS(MPI_Type_vector(2, -1, 1, MPI_INT, &un), MPI_ERR_ARG);
  /* buffers */
  CHECK_CLASS(MPI_Send(NULL, 3, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Buffer_attach(NULL, 100), MPI_ERR_BUFFER);
  /* requests and messages */
  MPI_Request bad = (MPI_Request)0x12;
  CHECK_CLASS(MPI_Wait(&bad, &st), MPI_ERR_REQUEST);
  MPI_Request nul = MPI_REQUEST_NULL;
  CHECK_CLASS(MPI_Request_free(&nul), MPI_ERR_REQUEST);
  CHECK_CLASS(MPI_Start(&nul), MPI_ERR_REQUEST);
  MPI_Request two[2] = {MPI_REQUEST_NULL, (MPI_Request)0xac000777};
  CHECK_CLASS(MPI_Waitall(2, two, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST);
  {
    /* A handle names a request pool slot and its generation: the handle of
     * a finished request (also once its slot serves a new request) and
     * made-up slots and generations are errors, never a crash. */
    int v = 0, w = 1;
    MPI_Request r, old;
    MPI_Irecv(&v, 1, MPI_INT, 0, 5, MPI_COMM_SELF, &r);
    old = r;
    MPI_Send(&w, 1, MPI_INT, 0, 5, MPI_COMM_SELF);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(r == MPI_REQUEST_NULL && v == 1);
    CHECK_CLASS(MPI_Wait(&old, &st), MPI_ERR_REQUEST);
    MPI_Irecv(&v, 1, MPI_INT, 0, 6, MPI_COMM_SELF, &r); /* likely the same slot */
    int flag = 0;
    CHECK_CLASS(MPI_Test(&old, &flag, &st), MPI_ERR_REQUEST);
    CHECK_CLASS(MPI_Cancel(&old), MPI_ERR_REQUEST);
    CHECK_CLASS(MPI_Request_free(&old), MPI_ERR_REQUEST);
    MPI_Request other = (MPI_Request)((unsigned)r ^ (1u << 20)); /* another generation */
    CHECK_CLASS(MPI_Wait(&other, &st), MPI_ERR_REQUEST);
    MPI_Request junk[3] = {(MPI_Request)0xffffffff, (MPI_Request)0xc00fffff, (MPI_Request)0xc0000000};
    for (int i = 0; i < 3; ++i) CHECK_CLASS(MPI_Wait(&junk[i], &st), MPI_ERR_REQUEST);
    MPI_Request pair[2] = {r, (MPI_Request)0xc00fffff};
    CHECK_CLASS(MPI_Waitall(2, pair, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST);
    w = 2;
    MPI_Send(&w, 1, MPI_INT, 0, 6, MPI_COMM_SELF);
    MPI_Wait(&r, MPI_STATUS_IGNORE); /* the live one is untouched by the above */
    CHECK(r == MPI_REQUEST_NULL && v == 2);
  }
  MPI_Message msg = MPI_MESSAGE_NULL;
  CHECK_CLASS(MPI_Mrecv(buf, 1, MPI_INT, &msg, &st), MPI_ERR_REQUEST);
  /* collectives: root, op, type */
  CHECK_CLASS(MPI_Bcast(buf, 1, MPI_INT, size, MPI_COMM_WORLD), MPI_ERR_ROOT);
  CHECK_CLASS(MPI_Bcast(buf, 1, MPI_INT, -1, MPI_COMM_WORLD), MPI_ERR_ROOT);
  int one = 1, out = 0;
  CHECK_CLASS(MPI_Allreduce(&one, &out, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
  CHECK_CLASS(MPI_Allreduce(&one, &out, 1, MPI_INT, (MPI_Op)0x58000077, MPI_COMM_WORLD), MPI_ERR_OP);
  double d = 1, dd;
  CHECK_CLASS(MPI_Allreduce(&d, &dd, 1, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD), MPI_ERR_OP);
  CHECK_CLASS(MPI_Allreduce(&one, &out, 1, MPI_INT, MPI_REPLACE, MPI_COMM_WORLD), MPI_ERR_OP);
  CHECK_CLASS(MPI_Reduce(&one, &out, -2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
  MPI_Op pop = MPI_SUM;
  CHECK_CLASS(MPI_Op_free(&pop), MPI_ERR_OP);
  /* groups */
  MPI_Group g, ng;
  CHECK_OK(MPI_Comm_group(MPI_COMM_WORLD, &g));
  int bad_ranks[2] = {0, size};
  CHECK_CLASS(MPI_Group_incl(g, 2, bad_ranks, &ng), MPI_ERR_RANK);
  int dup_ranks[2] = {0, 0};
  CHECK_CLASS(MPI_Group_incl(g, 2, dup_ranks, &ng), MPI_ERR_RANK);
  CHECK_CLASS(MPI_Group_size(MPI_GROUP_NULL, &sz), MPI_ERR_GROUP);
  MPI_Comm nc;
  CHECK_CLASS(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, &nc), MPI_ERR_GROUP);
  CHECK_OK(MPI_Group_free(&g));
  /* keyvals and attributes */
  CHECK_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, NULL), MPI_ERR_KEYVAL);
  CHECK_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL), MPI_ERR_KEYVAL);
  int tkey;
  CHECK_OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &tkey, NULL));
  CHECK_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, tkey, NULL), MPI_ERR_KEYVAL); /* wrong kind */
  CHECK_OK(MPI_Type_free_keyval(&tkey));
  int ckey;
  CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ckey, NULL));
  CHECK_CLASS(MPI_Comm_delete_attr(MPI_COMM_WORLD, ckey), MPI_ERR_KEYVAL); /* nothing set */
  CHECK_OK(MPI_Comm_free_keyval(&ckey));
  /* info */
  MPI_Info info;
  CHECK_OK(MPI_Info_create(&info));
  char longkey[MPI_MAX_INFO_KEY + 10];
  memset(longkey, 'k', sizeof longkey);
  longkey[sizeof longkey - 1] = 0;
  CHECK_CLASS(MPI_Info_set(info, longkey, "v"), MPI_ERR_INFO_KEY);
  CHECK_CLASS(MPI_Info_set(info, "", "v"), MPI_ERR_INFO_KEY);
  static char longval[MPI_MAX_INFO_VAL + 10];
  memset(longval, 'v', sizeof longval);
  longval[sizeof longval - 1] = 0;
  CHECK_CLASS(MPI_Info_set(info, "k", longval), MPI_ERR_INFO_VALUE);
  CHECK_CLASS(MPI_Info_delete(info, "absent"), MPI_ERR_INFO_NOKEY);
  char key[MPI_MAX_INFO_KEY + 1];
  CHECK_CLASS(MPI_Info_get_nthkey(info, 0, key), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Info_set(MPI_INFO_NULL, "k", "v"), MPI_ERR_INFO);
  CHECK_OK(MPI_Info_free(&info));
  CHECK_CLASS(MPI_Info_free(&info), MPI_ERR_INFO);
  /* other arguments */
  CHECK_CLASS(MPI_Comm_split(MPI_COMM_WORLD, -5, 0, &nc), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRHANDLER_NULL), MPI_ERR_ERRHANDLER);
  CHECK_CLASS(MPI_Alloc_mem(-1, MPI_INFO_NULL, &ub), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Error_class(-77, &sz), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Comm_remote_size(MPI_COMM_WORLD, &sz), MPI_ERR_COMM);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* A truncated receive: ERR_TRUNCATE; in waitall, ERR_IN_STATUS. */
static void test_truncate(void) {
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  int big[8] = {1, 2, 3, 4, 5, 6, 7, 8}, small[2];
  MPI_Request r[2];
  MPI_Status st[2];
  CHECK_OK(MPI_Isend(big, 8, MPI_INT, next, 1, c, &r[0]));
  CHECK_CLASS(MPI_Recv(small, 2, MPI_INT, prev, 1, c, &st[0]), MPI_ERR_TRUNCATE);
  CHECK_OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
  CHECK_OK(MPI_Irecv(small, 2, MPI_INT, prev, 2, c, &r[0]));
  CHECK_OK(MPI_Isend(big, 8, MPI_INT, next, 2, c, &r[1]));
  st[0].MPI_ERROR = st[1].MPI_ERROR = -1;
  int rc = MPI_Waitall(2, r, st);
  CHECK_CLASS(rc, MPI_ERR_IN_STATUS);
  int cls = -1;
  MPI_Error_class(st[0].MPI_ERROR, &cls);
  CHECK_EQ(cls, MPI_ERR_TRUNCATE);
  CHECK_EQ(st[1].MPI_ERROR, MPI_SUCCESS);
  char text[MPI_MAX_ERROR_STRING];
  int len;
  CHECK_OK(MPI_Error_string(st[0].MPI_ERROR, text, &len));
  CHECK(contains(text, "truncated"));
  CHECK_EQ((int)strlen(text), len);
  MPI_Comm_free(&c);
}

static void test_strings(void) {
  char text[MPI_MAX_ERROR_STRING];
  int len;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int buf;
  int rc = MPI_Send(&buf, 1, MPI_INT, size + 10, 0, MPI_COMM_WORLD);
  CHECK_OK(MPI_Error_string(rc, text, &len));
  char want[32];
  snprintf(want, sizeof want, "%d", size + 10);
  CHECK(contains(text, want)); /* the message names the bad rank */
  CHECK(contains(text, "MPI_ERR_RANK"));
  for (int c = 0; c < MPI_ERR_LASTCODE; ++c) {
    CHECK_OK(MPI_Error_string(c, text, &len));
    CHECK(len > 0 && len < MPI_MAX_ERROR_STRING);
    int cls;
    CHECK_OK(MPI_Error_class(c, &cls));
    CHECK_EQ(cls, c);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void test_user_errors(void) {
  int cls, code, code2;
  CHECK_OK(MPI_Add_error_class(&cls));
  CHECK(cls > MPI_ERR_LASTCODE);
  CHECK_OK(MPI_Add_error_code(cls, &code));
  CHECK_OK(MPI_Add_error_code(cls, &code2));
  CHECK(code != code2);
  CHECK(code >= MPI_ERR_LASTCODE);
  int got;
  CHECK_OK(MPI_Error_class(code, &got));
  CHECK_EQ(got, cls);
  CHECK_OK(MPI_Add_error_string(code, "my special failure"));
  char text[MPI_MAX_ERROR_STRING];
  int len;
  CHECK_OK(MPI_Error_string(code, text, &len));
  CHECK(strcmp(text, "my special failure") == 0);
  int *last, flag;
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
  CHECK(flag && *last >= code2);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK_CLASS(MPI_Add_error_string(MPI_ERR_RANK, "no"), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Add_error_code(MPI_ERR_LASTCODE + 200, &code), MPI_ERR_ARG);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void test_handlers(void) {
  MPI_Errhandler eh, got;
  MPI_Comm c;
  CHECK_OK(MPI_Comm_create_errhandler(my_handler, &eh));
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
  CHECK_OK(MPI_Comm_set_errhandler(c, eh));
  CHECK_OK(MPI_Errhandler_free(&eh)); /* the communicator keeps it */
  CHECK(eh == MPI_ERRHANDLER_NULL);
  int buf = 0;
  int rc = MPI_Send(&buf, 1, MPI_INT, -9, 0, c);
  CHECK_EQ(handler_calls, 1);
  CHECK_EQ(handler_last, rc);
  CHECK(handler_comm == c);
  int cls;
  MPI_Error_class(rc, &cls);
  CHECK_EQ(cls, MPI_ERR_RANK);
  CHECK_OK(MPI_Comm_call_errhandler(c, MPI_ERR_OTHER));
  CHECK_EQ(handler_calls, 2);
  CHECK_EQ(handler_last, MPI_ERR_OTHER);
  /* dup inherits the handler */
  MPI_Comm c2;
  CHECK_OK(MPI_Comm_dup(c, &c2));
  CHECK_OK(MPI_Comm_get_errhandler(c2, &got));
  MPI_Send(&buf, 1, MPI_INT, -9, 0, c2);
  CHECK_EQ(handler_calls, 3);
  CHECK_OK(MPI_Errhandler_free(&got));
  CHECK_OK(MPI_Comm_free(&c2));
  CHECK_OK(MPI_Comm_free(&c));
  /* predefined handlers come back as themselves */
  CHECK_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
  CHECK(got == MPI_ERRORS_ARE_FATAL);
  CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
  CHECK_OK(MPI_Comm_get_errhandler(MPI_COMM_SELF, &got));
  CHECK(got == MPI_ERRORS_RETURN);
  /* an error on COMM_NULL goes to COMM_WORLD's handler */
  CHECK_OK(MPI_Comm_create_errhandler(my_handler, &eh));
  CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
  int before = handler_calls;
  MPI_Barrier(MPI_COMM_NULL);
  CHECK_EQ(handler_calls, before + 1);
  CHECK(handler_comm == MPI_COMM_WORLD);
  CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  CHECK_OK(MPI_Errhandler_free(&eh));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  test_argument_classes();
  test_truncate();
  test_strings();
  test_user_errors();
  test_handlers();
  return mt_finish();
}
