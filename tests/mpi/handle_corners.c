/* Handle conversions, environment queries, error classes and attributes
 * (MPI 3.1 8.1-8.5, 6.7, 17.2.4): MPI_Fint round trips of every handle
 * kind (predefined, user, null) and of statuses; the version, library
 * version and processor name; MPI_Wtime/MPI_Wtick; MPI_Error_string of
 * every class; user error classes, codes and strings with
 * MPI_LASTUSEDCODE; MPI_Aint_add/diff; delete callbacks of MPI_COMM_SELF's
 * attributes at MPI_Finalize in reverse order of setting (a key set again
 * counts as set last). */
#include "mpitest.h"

static int rank, size;

static void fint_round_trips(void) {
  CHECK_EQ(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)), MPI_COMM_WORLD);
  CHECK_EQ(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_SELF)), MPI_COMM_SELF);
  CHECK_EQ(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_NULL)), MPI_COMM_NULL);
  MPI_Comm d;
  MPI_Comm_dup(MPI_COMM_WORLD, &d);
  CHECK_EQ(MPI_Comm_f2c(MPI_Comm_c2f(d)), d);
  MPI_Comm_free(&d);
  CHECK_EQ(MPI_Type_f2c(MPI_Type_c2f(MPI_DOUBLE)), MPI_DOUBLE);
  CHECK_EQ(MPI_Type_f2c(MPI_Type_c2f(MPI_DATATYPE_NULL)), MPI_DATATYPE_NULL);
  MPI_Datatype t;
  MPI_Type_contiguous(3, MPI_INT, &t);
  CHECK_EQ(MPI_Type_f2c(MPI_Type_c2f(t)), t);
  MPI_Type_free(&t);
  MPI_Group g;
  MPI_Comm_group(MPI_COMM_WORLD, &g);
  CHECK_EQ(MPI_Group_f2c(MPI_Group_c2f(g)), g);
  CHECK_EQ(MPI_Group_f2c(MPI_Group_c2f(MPI_GROUP_EMPTY)), MPI_GROUP_EMPTY);
  MPI_Group_free(&g);
  CHECK_EQ(MPI_Op_f2c(MPI_Op_c2f(MPI_SUM)), MPI_SUM);
  CHECK_EQ(MPI_Op_f2c(MPI_Op_c2f(MPI_OP_NULL)), MPI_OP_NULL);
  CHECK_EQ(MPI_Errhandler_f2c(MPI_Errhandler_c2f(MPI_ERRORS_RETURN)), MPI_ERRORS_RETURN);
  CHECK_EQ(MPI_Info_f2c(MPI_Info_c2f(MPI_INFO_NULL)), MPI_INFO_NULL);
  CHECK_EQ(MPI_Info_f2c(MPI_Info_c2f(MPI_INFO_ENV)), MPI_INFO_ENV);
  MPI_Info info;
  MPI_Info_create(&info);
  CHECK_EQ(MPI_Info_f2c(MPI_Info_c2f(info)), info);
  MPI_Info_free(&info);
  CHECK_EQ(MPI_Request_f2c(MPI_Request_c2f(MPI_REQUEST_NULL)), MPI_REQUEST_NULL);
  MPI_Request r;
  int x = 0;
  MPI_Irecv(&x, 1, MPI_INT, rank, 1, MPI_COMM_WORLD, &r);
  CHECK_EQ(MPI_Request_f2c(MPI_Request_c2f(r)), r);
  MPI_Send(&x, 1, MPI_INT, rank, 1, MPI_COMM_WORLD);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  CHECK_EQ(MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NULL)), MPI_MESSAGE_NULL);
  CHECK_EQ(MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NO_PROC)), MPI_MESSAGE_NO_PROC);
  CHECK_EQ(MPI_Win_f2c(MPI_Win_c2f(MPI_WIN_NULL)), MPI_WIN_NULL);
  /* statuses: C -> Fortran -> C keeps every public field and the count */
  MPI_Status s, back;
  memset(&s, 0, sizeof s);
  s.MPI_SOURCE = 3;
  s.MPI_TAG = 44;
  s.MPI_ERROR = MPI_ERR_TRUNCATE;
  MPI_Status_set_elements(&s, MPI_INT, 5);
  MPI_Status_set_cancelled(&s, 1);
  MPI_Fint f[MPI_F_STATUS_SIZE];
  CHECK_OK(MPI_Status_c2f(&s, f));
  memset(&back, 0x33, sizeof back);
  CHECK_OK(MPI_Status_f2c(f, &back));
  CHECK_EQ(back.MPI_SOURCE, 3);
  CHECK_EQ(back.MPI_TAG, 44);
  CHECK_EQ(back.MPI_ERROR, MPI_ERR_TRUNCATE);
  int n = -1, c = 0;
  MPI_Get_count(&back, MPI_INT, &n);
  CHECK_EQ(n, 5);
  MPI_Test_cancelled(&back, &c);
  CHECK(c);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK(MPI_Status_c2f(MPI_STATUS_IGNORE, f) != MPI_SUCCESS);
  CHECK(MPI_Status_f2c(MPI_F_STATUS_IGNORE, &back) != MPI_SUCCESS);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void environment(void) {
  int v = 0, sv = -1;
  CHECK_OK(MPI_Get_version(&v, &sv));
  CHECK_EQ(v, MPI_VERSION);
  CHECK_EQ(sv, MPI_SUBVERSION);
  CHECK(MPI_VERSION >= 3);
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = -1;
  memset(lib, 'x', sizeof lib);
  CHECK_OK(MPI_Get_library_version(lib, &len));
  CHECK(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING);
  CHECK_EQ(strlen(lib), len);
  char name[MPI_MAX_PROCESSOR_NAME];
  memset(name, 'x', sizeof name);
  CHECK_OK(MPI_Get_processor_name(name, &len));
  CHECK(len > 0 && len < MPI_MAX_PROCESSOR_NAME);
  CHECK_EQ(strlen(name), len);
  double t0 = MPI_Wtime(), tick = MPI_Wtick();
  CHECK(tick > 0 && tick < 1);
  double t1 = MPI_Wtime();
  CHECK(t1 >= t0);
  /* PMPI forms are the same functions' implementation */
  CHECK(PMPI_Wtick() == tick);
  int flag = 0;
  CHECK_OK(MPI_Initialized(&flag));
  CHECK(flag);
  CHECK_OK(MPI_Finalized(&flag));
  CHECK(!flag);
  int provided = -1, main = 0;
  CHECK_OK(MPI_Query_thread(&provided));
  CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE);
  CHECK_OK(MPI_Is_thread_main(&main));
  CHECK(main);
  /* Aint arithmetic on addresses */
  char buf[64];
  MPI_Aint a, b;
  MPI_Get_address(&buf[10], &a);
  MPI_Get_address(&buf[50], &b);
  CHECK_EQ(MPI_Aint_diff(b, a), 40);
  CHECK_EQ(MPI_Aint_add(a, 40), b);
  CHECK_EQ(MPI_Aint_diff(a, b), -40);
}

static void error_strings(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  char s[MPI_MAX_ERROR_STRING];
  int len = -1;
  /* every predefined class, MPI_ERR_LASTCODE too (MPI 3.1 table 8.1), has
   * a string and is its own class */
  for (int c = MPI_SUCCESS; c <= MPI_ERR_LASTCODE; ++c) {
    int cls = -1;
    CHECK_OK(MPI_Error_class(c, &cls));
    CHECK_EQ(cls, c);
    len = -1;
    CHECK_OK(MPI_Error_string(c, s, &len));
    CHECK(len > 0 && len < MPI_MAX_ERROR_STRING);
    CHECK_EQ(strlen(s), len);
  }
  /* MPI-4.0's class for an aborted peer is there */
  CHECK_OK(MPI_Error_string(MPI_ERR_PROC_ABORTED, s, &len));
  CHECK(strstr(s, "MPI_ERR_PROC_ABORTED") != NULL);
  CHECK(MPI_ERR_PROC_ABORTED < MPI_ERR_LASTCODE);
  int cls = -1;
  CHECK_OK(MPI_Error_class(MPI_ERR_OTHER, &cls));
  CHECK_EQ(cls, MPI_ERR_OTHER);
  /* invalid codes */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK_CLASS(MPI_Error_class(-5, &cls), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Error_string(-5, s, &len), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Error_class(0x7ffffff0, &cls), MPI_ERR_ARG);
  /* user classes and codes */
  int *last = NULL, flag = 0, uc = -1, ucode = -1, ucode2 = -1;
  CHECK_OK(MPI_Add_error_class(&uc));
  CHECK(uc > MPI_ERR_LASTCODE);
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
  CHECK(flag && *last >= uc);
  CHECK_OK(MPI_Add_error_code(uc, &ucode));
  CHECK_OK(MPI_Add_error_code(uc, &ucode2));
  CHECK(ucode != ucode2 && ucode != uc);
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
  CHECK(*last >= ucode && *last >= ucode2);
  CHECK_OK(MPI_Error_class(ucode, &cls));
  CHECK_EQ(cls, uc);
  CHECK_OK(MPI_Error_class(uc, &cls));
  CHECK_EQ(cls, uc);
  /* no string yet: an empty string */
  len = -1;
  CHECK_OK(MPI_Error_string(ucode2, s, &len));
  CHECK_EQ(len, (int)strlen(s));
  CHECK_OK(MPI_Add_error_string(ucode, "a code of mine"));
  CHECK_OK(MPI_Error_string(ucode, s, &len));
  CHECK(strcmp(s, "a code of mine") == 0);
  CHECK_EQ(len, 14);
  CHECK_OK(MPI_Add_error_string(ucode, "replaced"));
  CHECK_OK(MPI_Error_string(ucode, s, &len));
  CHECK(strcmp(s, "replaced") == 0);
  CHECK_OK(MPI_Add_error_string(uc, "my class"));
  CHECK_OK(MPI_Error_string(uc, s, &len));
  CHECK(strcmp(s, "my class") == 0);
  /* strings on predefined codes, codes of predefined classes, bad classes */
  CHECK_CLASS(MPI_Add_error_string(MPI_ERR_TAG, "no"), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Add_error_string(MPI_ERR_LASTCODE, "no"), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Add_error_code(12345678, &ucode), MPI_ERR_ARG);
  char longs[MPI_MAX_ERROR_STRING + 8];
  memset(longs, 'a', sizeof longs);
  longs[sizeof longs - 1] = 0;
  CHECK_CLASS(MPI_Add_error_string(ucode2, longs), MPI_ERR_ARG);
  /* A handler gets a user code; MPI_Comm_call_errhandler returns success */
  CHECK_OK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, ucode));
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* MPI_COMM_SELF's attributes are deleted first at MPI_Finalize (before
 * anything else: communication still works), the last set first, where
 * setting a key again counts as its latest setting (MPI 3.1 8.7.1); the
 * order is checked after MPI_Finalize. */
static int order[4], norder = 0;
static int self_delete(MPI_Comm c, int key, void* val, void* extra) {
  (void)c, (void)key, (void)extra;
  int finalized = 1;
  MPI_Finalized(&finalized);
  int one = 1, sum = 0;
  if (MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS || sum != size) finalized = 1;
  if (norder < 4) order[norder++] = finalized ? -1 : (int)(long)val;
  return MPI_SUCCESS;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  fint_round_trips();
  environment();
  error_strings();
  int keys[3];
  for (int i = 0; i < 3; ++i) {
    CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &keys[i], NULL));
  }
  /* set in the order 1, 0, 2, then 1 again (its first value is deleted at
   * once): deleted 1, 2, 0 */
  CHECK_OK(MPI_Comm_set_attr(MPI_COMM_SELF, keys[1], (void*)1L));
  CHECK_OK(MPI_Comm_set_attr(MPI_COMM_SELF, keys[0], (void*)10L));
  CHECK_OK(MPI_Comm_set_attr(MPI_COMM_SELF, keys[2], (void*)2L));
  CHECK_OK(MPI_Comm_set_attr(MPI_COMM_SELF, keys[1], (void*)11L));
  CHECK_EQ(norder, 1);
  CHECK_EQ(order[0], 1);
  norder = 0;
  for (int i = 0; i < 3; ++i) CHECK_OK(MPI_Comm_free_keyval(&keys[i]));
  /* mt_finish without its MPI_Finalize: the order is checked after it */
  int total = 0;
  MPI_Allreduce(&mt_errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  int bad = total;
  if (norder != 3 || order[0] != 11 || order[1] != 2 || order[2] != 10) {
    fprintf(stderr, "[rank %d] check failed: MPI_COMM_SELF delete order %d: %d %d %d\n", rank, norder, order[0],
            order[1], order[2]);
    bad = 1;
  }
  if (rank == 0) printf(bad ? " Found %d errors\n" : " No Errors\n", bad);
  return bad != 0;
}
