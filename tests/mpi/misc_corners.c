/* Attribute, error handler, MPI_Info and MPI_T corners a conformance suite
 * probes (MPI 3.1 chapters 6.7, 8, 9, 14): predefined attributes of
 * MPI_COMM_WORLD, copy and delete callbacks (on dup, overwrite, delete,
 * free; a copy that declines; a freed keyval still attached; a copy that
 * fails the dup; a keyval handle freed several times), type
 * attributes through MPI_Type_dup, error handlers inherited by new
 * communicators and invoked by MPI_Comm_call_errhandler, the error class of
 * each bad argument under MPI_ERRORS_RETURN, user error classes and codes,
 * MPI_Info (truncated values, key and value limits, nthkey, dup, delete),
 * and the MPI_T string and index conventions. */
#include "mpitest.h"

static int rank, size;

/* ---- attributes ---- */

static int deletes = 0, copies = 0;
static int del_fn(MPI_Comm c, int key, void* val, void* extra) {
  (void)c, (void)key, (void)val;
  ++deletes;
  ++*(int*)extra;
  return MPI_SUCCESS;
}
static int copy_fn(MPI_Comm c, int key, void* extra, void* in, void* out, int* flag) {
  (void)c, (void)key, (void)extra;
  ++copies;
  *(void**)out = in;
  *flag = 1;
  return MPI_SUCCESS;
}
static int decline_fn(MPI_Comm c, int key, void* extra, void* in, void* out, int* flag) {
  (void)c, (void)key, (void)extra, (void)in, (void)out;
  *flag = 0;
  return MPI_SUCCESS;
}

static void predefined_attrs(void) {
  int* v = NULL;
  int flag = 0;
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
  CHECK(flag);
  if (flag) CHECK(*v >= 32767);
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &v, &flag));
  CHECK(flag);
  if (flag) CHECK(*v == MPI_PROC_NULL || (*v >= 0 && *v < size));
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &v, &flag));
  CHECK(flag);
  if (flag) CHECK(*v == MPI_ANY_SOURCE || *v == MPI_PROC_NULL || (*v >= 0 && *v < size));
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &v, &flag));
  if (flag) CHECK(*v == 0 || *v == 1);
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag));
  CHECK(flag);
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &v, &flag));
  if (flag) CHECK(*v >= size);
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &v, &flag));
  if (flag) CHECK_EQ(*v, 0);
  /* MPI_TAG_UB is the largest tag that works */
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag);
  int ub = *v;
  int x = 3, y = -1;
  CHECK_OK(MPI_Sendrecv(&x, 1, MPI_INT, rank, ub, &y, 1, MPI_INT, rank, ub, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CHECK_EQ(y, 3);
  /* predefined keyvals cannot be set or deleted */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, &x) != MPI_SUCCESS);
  CHECK(MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_TAG_UB) != MPI_SUCCESS);
  int pk = MPI_TAG_UB;
  CHECK(MPI_Comm_free_keyval(&pk) != MPI_SUCCESS);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  /* Dups see them too */
  MPI_Comm d;
  MPI_Comm_dup(MPI_COMM_WORLD, &d);
  CHECK_OK(MPI_Comm_get_attr(d, MPI_TAG_UB, &v, &flag));
  CHECK(flag);
  MPI_Comm_free(&d);
}

static void user_attrs(void) {
  int key, nocopy, mine = 0, other = 0;
  static int vals[4];
  CHECK_OK(MPI_Comm_create_keyval(copy_fn, del_fn, &key, &mine));
  CHECK_OK(MPI_Comm_create_keyval(decline_fn, del_fn, &nocopy, &other));
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  CHECK_OK(MPI_Comm_set_attr(c, key, &vals[0]));
  CHECK_OK(MPI_Comm_set_attr(c, nocopy, &vals[1]));
  /* overwrite: the old value is deleted first */
  CHECK_OK(MPI_Comm_set_attr(c, key, &vals[2]));
  CHECK_EQ(mine, 1);
  MPI_Comm d;
  CHECK_OK(MPI_Comm_dup(c, &d));
  CHECK_EQ(copies, 1);
  void* v = NULL;
  int flag = 0;
  CHECK_OK(MPI_Comm_get_attr(d, key, &v, &flag));
  CHECK(flag);
  CHECK(v == &vals[2]);
  CHECK_OK(MPI_Comm_get_attr(d, nocopy, &v, &flag));
  CHECK(!flag);
  /* delete_attr runs the callback; getting it afterwards: flag 0 */
  CHECK_OK(MPI_Comm_delete_attr(c, nocopy));
  CHECK_EQ(other, 1);
  CHECK_OK(MPI_Comm_get_attr(c, nocopy, &v, &flag));
  CHECK(!flag);
  /* a keyval freed while attached: still works until the last comm goes */
  CHECK_OK(MPI_Comm_free_keyval(&key));
  CHECK(key == MPI_KEYVAL_INVALID);
  deletes = 0;
  CHECK_OK(MPI_Comm_free(&c)); /* deletes &vals[2] on c */
  CHECK_EQ(deletes, 1);
  CHECK_OK(MPI_Comm_free(&d)); /* and on d */
  CHECK_EQ(deletes, 2);
  CHECK_EQ(mine, 3);
  CHECK_OK(MPI_Comm_free_keyval(&nocopy));
  /* MPI_COMM_DUP_FN / MPI_COMM_NULL_COPY_FN */
  int k1, k2;
  MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &k1, NULL);
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k2, NULL);
  MPI_Comm_set_attr(MPI_COMM_WORLD, k1, &vals[3]);
  MPI_Comm_set_attr(MPI_COMM_WORLD, k2, &vals[3]);
  MPI_Comm_dup(MPI_COMM_WORLD, &d);
  CHECK_OK(MPI_Comm_get_attr(d, k1, &v, &flag));
  CHECK(flag && v == &vals[3]);
  CHECK_OK(MPI_Comm_get_attr(d, k2, &v, &flag));
  CHECK(!flag);
  MPI_Comm_free(&d);
  MPI_Comm_delete_attr(MPI_COMM_WORLD, k1);
  MPI_Comm_delete_attr(MPI_COMM_WORLD, k2);
  MPI_Comm_free_keyval(&k1);
  MPI_Comm_free_keyval(&k2);
  /* an invalid keyval is an error */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, 987654, &v, &flag) != MPI_SUCCESS);
  CHECK(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &v) != MPI_SUCCESS);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* A copy callback that fails makes the dup fail (MPI-3.1 6.7.2) on every
 * rank here: newcomm is then MPI_COMM_NULL (as MPICH leaves it), the values
 * copied before it are deleted again, and the parent dups fine later. */
static int failing_copy(MPI_Comm c, int key, void* extra, void* in, void* out, int* flag) {
  (void)c, (void)key, (void)extra, (void)in, (void)out, (void)flag;
  return MPI_ERR_OTHER;
}

static void failed_dup(void) {
  int good, bad, gone = 0;
  static int val;
  CHECK_OK(MPI_Comm_create_keyval(copy_fn, del_fn, &good, &gone));
  CHECK_OK(MPI_Comm_create_keyval(failing_copy, MPI_COMM_NULL_DELETE_FN, &bad, NULL));
  MPI_Comm c, d = MPI_COMM_WORLD;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  CHECK_OK(MPI_Comm_set_attr(c, good, &val));
  CHECK_OK(MPI_Comm_set_attr(c, bad, &val));
  CHECK_CLASS(MPI_Comm_dup(c, &d), MPI_ERR_OTHER);
  CHECK(d == MPI_COMM_NULL);
  CHECK_EQ(gone, 1); /* the copy of `good` made before the failure */
  d = MPI_COMM_WORLD;
  CHECK_CLASS(MPI_Comm_dup_with_info(c, MPI_INFO_NULL, &d), MPI_ERR_OTHER);
  CHECK(d == MPI_COMM_NULL);
  MPI_Request rq = MPI_REQUEST_NULL;
  d = MPI_COMM_WORLD;
  CHECK_CLASS(MPI_Comm_idup(c, &d, &rq), MPI_ERR_OTHER);
  CHECK(d == MPI_COMM_NULL);
  CHECK(rq == MPI_REQUEST_NULL);
  /* a bad info fails dup_with_info before anything is copied */
  MPI_Info freed;
  MPI_Info_create(&freed);
  MPI_Info tmp = freed;
  MPI_Info_free(&tmp);
  d = MPI_COMM_WORLD;
  CHECK_CLASS(MPI_Comm_dup_with_info(c, freed, &d), MPI_ERR_INFO);
  CHECK(d == MPI_COMM_NULL);
  /* without the failing attribute the same communicator dups */
  CHECK_OK(MPI_Comm_delete_attr(c, bad));
  CHECK_OK(MPI_Comm_dup(c, &d));
  CHECK(d != MPI_COMM_NULL);
  int x = rank, sum = -1;
  CHECK_OK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, d));
  CHECK_EQ(sum, size * (size - 1) / 2);
  MPI_Comm_free(&d);
  MPI_Comm_free(&c);
  MPI_Comm_free_keyval(&good);
  MPI_Comm_free_keyval(&bad);
}

/* MPICH's keyval_double_free: the keyval is freed through several copies
 * of its handle and by the delete callback itself while attributes still
 * use it. Each free succeeds, the keyval lives until its last attribute is
 * deleted (here at MPI_Finalize, on MPI_COMM_SELF), and only then does the
 * handle become invalid. (The second free used to drop the attributes'
 * reference: MPI_COMM_SELF's delete at MPI_Finalize read a freed keyval.) */
static int freeing_deletes = 0;
static int freeing_delete(MPI_Comm c, int key, void* val, void* extra) {
  (void)c, (void)val, (void)extra;
  ++freeing_deletes;
  CHECK_OK(MPI_Comm_free_keyval(&key));
  return MPI_SUCCESS;
}

static void keyval_double_free(void) {
  int key, copy, copy2;
  MPI_Comm a, b;
  MPI_Comm_dup(MPI_COMM_WORLD, &a);
  MPI_Comm_dup(MPI_COMM_WORLD, &b);
  CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, freeing_delete, &key, NULL));
  copy = copy2 = key;
  CHECK_OK(MPI_Comm_set_attr(a, key, NULL));
  CHECK_OK(MPI_Comm_set_attr(b, key, NULL));
  CHECK_OK(MPI_Comm_set_attr(MPI_COMM_SELF, key, NULL)); /* deleted at MPI_Finalize */
  CHECK_OK(MPI_Comm_free(&a));                           /* the callback frees the keyval */
  CHECK_EQ(freeing_deletes, 1);
  CHECK_OK(MPI_Comm_free_keyval(&key));
  CHECK_OK(MPI_Comm_free_keyval(&copy));
  void* v = &v;
  int flag = -1;
  CHECK_OK(MPI_Comm_get_attr(b, copy2, &v, &flag)); /* still attached to b */
  CHECK(flag && v == NULL);
  CHECK_OK(MPI_Comm_free(&b));
  CHECK_EQ(freeing_deletes, 2);
  /* a keyval that no attribute uses any more is gone with its last free */
  int lone, lone_copy;
  CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &lone, NULL));
  lone_copy = lone;
  CHECK_OK(MPI_Comm_free_keyval(&lone));
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK_CLASS(MPI_Comm_free_keyval(&lone_copy), MPI_ERR_KEYVAL);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static int type_deletes = 0;
static int type_del(MPI_Datatype t, int key, void* val, void* extra) {
  (void)t, (void)key, (void)val, (void)extra;
  ++type_deletes;
  return MPI_SUCCESS;
}

static void type_attrs(void) {
  int key;
  CHECK_OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, type_del, &key, NULL));
  MPI_Datatype t, u;
  MPI_Type_contiguous(2, MPI_INT, &t);
  static int val;
  CHECK_OK(MPI_Type_set_attr(t, key, &val));
  CHECK_OK(MPI_Type_dup(t, &u));
  void* v = NULL;
  int flag = 0;
  CHECK_OK(MPI_Type_get_attr(u, key, &v, &flag));
  CHECK(flag && v == &val);
  MPI_Type_free(&t);
  CHECK_EQ(type_deletes, 1);
  MPI_Type_free(&u);
  CHECK_EQ(type_deletes, 2);
  /* on a predefined type */
  CHECK_OK(MPI_Type_set_attr(MPI_INT, key, &val));
  CHECK_OK(MPI_Type_get_attr(MPI_INT, key, &v, &flag));
  CHECK(flag && v == &val);
  CHECK_OK(MPI_Type_delete_attr(MPI_INT, key));
  CHECK_EQ(type_deletes, 3);
  MPI_Type_free_keyval(&key);
}

/* ---- error handlers ---- */

static int handled = 0, handled_code = 0;
static void handler(MPI_Comm* c, int* code, ...) {
  (void)c;
  ++handled;
  handled_code = *code;
}

static void errhandlers(void) {
  MPI_Errhandler eh, got;
  CHECK_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
  CHECK(got == MPI_ERRORS_ARE_FATAL);
  MPI_Errhandler_free(&got);
  CHECK_OK(MPI_Comm_create_errhandler(handler, &eh));
  MPI_Comm c, d, s;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  CHECK_OK(MPI_Comm_set_errhandler(c, eh));
  /* the handler is freed by the user, stays with the comm */
  CHECK_OK(MPI_Errhandler_free(&eh));
  CHECK(eh == MPI_ERRHANDLER_NULL);
  /* dup and split inherit it */
  MPI_Comm_dup(c, &d);
  MPI_Comm_split(c, 0, rank, &s);
  int x = 0;
  handled = 0;
  int rc = MPI_Send(&x, 1, MPI_INT, size + 5, 0, d);
  CHECK_EQ(handled, 1);
  int cls = -1;
  MPI_Error_class(rc, &cls);
  CHECK_EQ(cls, MPI_ERR_RANK);
  MPI_Error_class(handled_code, &cls);
  CHECK_EQ(cls, MPI_ERR_RANK);
  rc = MPI_Send(&x, 1, MPI_INT, 0, -3, s);
  CHECK_EQ(handled, 2);
  MPI_Error_class(handled_code, &cls);
  CHECK_EQ(cls, MPI_ERR_TAG);
  /* call_errhandler hands the code as is, even a user one */
  int uclass, ucode;
  CHECK_OK(MPI_Add_error_class(&uclass));
  CHECK_OK(MPI_Add_error_code(uclass, &ucode));
  CHECK_OK(MPI_Add_error_string(ucode, "robust: a user code"));
  CHECK_OK(MPI_Comm_call_errhandler(c, ucode));
  CHECK_EQ(handled, 3);
  CHECK_EQ(handled_code, ucode);
  MPI_Error_class(ucode, &cls);
  CHECK_EQ(cls, uclass);
  char str[MPI_MAX_ERROR_STRING];
  int len = 0;
  CHECK_OK(MPI_Error_string(ucode, str, &len));
  CHECK(strcmp(str, "robust: a user code") == 0);
  CHECK_EQ(len, (int)strlen("robust: a user code"));
  int* last = NULL;
  int flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag);
  CHECK(flag && *last >= ucode && *last >= uclass);
  /* get on a comm with a user handler returns it; it compares equal */
  CHECK_OK(MPI_Comm_get_errhandler(d, &got));
  CHECK(got != MPI_ERRORS_ARE_FATAL && got != MPI_ERRORS_RETURN);
  MPI_Errhandler_free(&got);
  MPI_Comm_free(&d);
  MPI_Comm_free(&s);
  MPI_Comm_free(&c);
  /* MPI_ERRORS_RETURN: the class of each bad argument */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm w = MPI_COMM_WORLD;
  int buf[4] = {0};
  MPI_Datatype unc;
  MPI_Type_contiguous(2, MPI_INT, &unc); /* not committed */
  CHECK_CLASS(MPI_Send(buf, -1, MPI_INT, 0, 0, w), MPI_ERR_COUNT);
  CHECK_CLASS(MPI_Send(buf, 1, MPI_INT, -7, 0, w), MPI_ERR_RANK);
  CHECK_CLASS(MPI_Send(buf, 1, MPI_INT, 0, MPI_ANY_TAG, w), MPI_ERR_TAG);
  CHECK_CLASS(MPI_Send(buf, 1, MPI_DATATYPE_NULL, 0, 0, w), MPI_ERR_TYPE);
  CHECK_CLASS(MPI_Send(buf, 1, unc, 0, 0, w), MPI_ERR_TYPE);
  CHECK_CLASS(MPI_Send(NULL, 1, MPI_INT, 0, 0, w), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
  CHECK_CLASS(MPI_Recv(buf, 1, MPI_INT, size, 0, w, MPI_STATUS_IGNORE), MPI_ERR_RANK);
  CHECK_CLASS(MPI_Bcast(buf, 1, MPI_INT, size, w), MPI_ERR_ROOT);
  CHECK_CLASS(MPI_Bcast(buf, 1, MPI_INT, -1, w), MPI_ERR_ROOT);
  CHECK_CLASS(MPI_Allreduce(buf, buf + 1, 1, MPI_INT, MPI_OP_NULL, w), MPI_ERR_OP);
  CHECK_CLASS(MPI_Allreduce(buf, buf + 1, 1, MPI_INT, MPI_MAXLOC, w), MPI_ERR_OP); /* not a pair type */
  CHECK_CLASS(MPI_Allreduce(buf, buf + 1, 1, MPI_DOUBLE, MPI_BAND, w), MPI_ERR_OP);
  MPI_Request rq = MPI_REQUEST_NULL;
  CHECK_CLASS(MPI_Start(&rq), MPI_ERR_REQUEST);
  int flg = 0;
  CHECK_CLASS(MPI_Iprobe(MPI_PROC_NULL - 77, 0, w, &flg, MPI_STATUS_IGNORE), MPI_ERR_RANK);
  MPI_Group g;
  MPI_Comm_group(w, &g);
  MPI_Comm nc;
  int bad = size;
  CHECK(MPI_Group_incl(g, 1, &bad, &(MPI_Group){MPI_GROUP_NULL}) != MPI_SUCCESS);
  CHECK_CLASS(MPI_Comm_create(w, MPI_GROUP_NULL, &nc), MPI_ERR_GROUP);
  MPI_Group_free(&g);
  CHECK_CLASS(MPI_Type_free(&(MPI_Datatype){MPI_INT}), MPI_ERR_TYPE);
  CHECK_CLASS(MPI_Comm_free(&(MPI_Comm){MPI_COMM_WORLD}), MPI_ERR_COMM);
  CHECK_CLASS(MPI_Op_free(&(MPI_Op){MPI_SUM}), MPI_ERR_OP);
  MPI_Type_free(&unc);
  /* error strings of every class below MPI_ERR_LASTCODE exist (it bounds
   * the classes; it need not be one) */
  for (int k = 0; k < MPI_ERR_LASTCODE && k < 256; ++k) {
    str[0] = 0;
    len = -1;
    if (MPI_Error_string(k, str, &len) != MPI_SUCCESS || len <= 0 || (int)strlen(str) != len) {
      mt_fail(__FILE__, __LINE__, "MPI_Error_string of a class", k, len);
      break;
    }
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* ---- MPI_Info ---- */

static void info(void) {
  MPI_Info in, d;
  CHECK_OK(MPI_Info_create(&in));
  CHECK_OK(MPI_Info_set(in, "alpha", "1"));
  CHECK_OK(MPI_Info_set(in, "beta", "a longer value"));
  CHECK_OK(MPI_Info_set(in, "alpha", "2")); /* replaces */
  int n = -1, flag = 0, vlen = -1;
  CHECK_OK(MPI_Info_get_nkeys(in, &n));
  CHECK_EQ(n, 2);
  char key[MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
  CHECK_OK(MPI_Info_get(in, "alpha", 10, val, &flag));
  CHECK(flag && strcmp(val, "2") == 0);
  /* truncated to valuelen characters (plus the terminator) */
  memset(val, 'x', sizeof val);
  CHECK_OK(MPI_Info_get(in, "beta", 3, val, &flag));
  CHECK(flag);
  CHECK(strncmp(val, "a l", 3) == 0);
  CHECK_EQ(val[3], 0);
  CHECK_OK(MPI_Info_get_valuelen(in, "beta", &vlen, &flag));
  CHECK(flag);
  CHECK_EQ(vlen, (int)strlen("a longer value"));
  CHECK_OK(MPI_Info_get_valuelen(in, "gamma", &vlen, &flag));
  CHECK(!flag);
  CHECK_OK(MPI_Info_get(in, "gamma", 10, val, &flag));
  CHECK(!flag);
  /* nthkey covers every key once */
  int seen_a = 0, seen_b = 0;
  for (int k = 0; k < n; ++k) {
    CHECK_OK(MPI_Info_get_nthkey(in, k, key));
    seen_a += strcmp(key, "alpha") == 0;
    seen_b += strcmp(key, "beta") == 0;
  }
  CHECK_EQ(seen_a, 1);
  CHECK_EQ(seen_b, 1);
  /* dup is independent */
  CHECK_OK(MPI_Info_dup(in, &d));
  CHECK_OK(MPI_Info_delete(in, "alpha"));
  CHECK_OK(MPI_Info_get(d, "alpha", 10, val, &flag));
  CHECK(flag && strcmp(val, "2") == 0);
  CHECK_OK(MPI_Info_get_nkeys(in, &n));
  CHECK_EQ(n, 1);
  /* errors (raised on MPI_COMM_WORLD: no object of their own) */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK_CLASS(MPI_Info_delete(in, "alpha"), MPI_ERR_INFO_NOKEY);
  char longkey[MPI_MAX_INFO_KEY + 8];
  memset(longkey, 'k', sizeof longkey - 1);
  longkey[sizeof longkey - 1] = 0;
  CHECK_CLASS(MPI_Info_set(in, longkey, "v"), MPI_ERR_INFO_KEY);
  CHECK_CLASS(MPI_Info_set(in, "", "v"), MPI_ERR_INFO_KEY);
  /* Keys have at most MPI_MAX_INFO_KEY characters (MPI-3.1 9.1): one of
   * exactly that length is a key like any other (as in MPICH), one more
   * is not; nthkey hands it back whole in a buffer of MPI_MAX_INFO_KEY + 1. */
  longkey[MPI_MAX_INFO_KEY + 1] = 0;
  CHECK_CLASS(MPI_Info_set(in, longkey, "v"), MPI_ERR_INFO_KEY);
  longkey[MPI_MAX_INFO_KEY] = 0;
  CHECK_OK(MPI_Info_set(in, longkey, "max"));
  CHECK_OK(MPI_Info_get(in, longkey, 10, val, &flag));
  CHECK(flag && strcmp(val, "max") == 0);
  CHECK_OK(MPI_Info_get_valuelen(in, longkey, &vlen, &flag));
  CHECK(flag && vlen == 3);
  CHECK_OK(MPI_Info_get_nkeys(in, &n));
  CHECK_EQ(n, 2);
  memset(key, 'x', sizeof key);
  CHECK_OK(MPI_Info_get_nthkey(in, 1, key));
  CHECK(strcmp(key, longkey) == 0);
  CHECK_OK(MPI_Info_delete(in, longkey));
  char* longval = malloc(MPI_MAX_INFO_VAL + 8);
  memset(longval, 'v', MPI_MAX_INFO_VAL + 7);
  longval[MPI_MAX_INFO_VAL + 7] = 0;
  CHECK_CLASS(MPI_Info_set(in, "k", longval), MPI_ERR_INFO_VALUE);
  free(longval);
  CHECK(MPI_Info_get_nthkey(in, 5, key) != MPI_SUCCESS);
  CHECK(MPI_Info_get_nthkey(in, -1, key) != MPI_SUCCESS);
  CHECK_CLASS(MPI_Info_get_nkeys(MPI_INFO_NULL, &n), MPI_ERR_INFO);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  CHECK_OK(MPI_Info_free(&in));
  CHECK(in == MPI_INFO_NULL);
  CHECK_OK(MPI_Info_free(&d));
  /* MPI_INFO_ENV exists and can be read */
  CHECK_OK(MPI_Info_get_nkeys(MPI_INFO_ENV, &n));
  CHECK(n >= 0);
  /* Comm_get_info returns a new object the user frees */
  MPI_Info ci;
  CHECK_OK(MPI_Comm_get_info(MPI_COMM_WORLD, &ci));
  CHECK(ci != MPI_INFO_NULL);
  MPI_Info_free(&ci);
}

/* ---- MPI_T ---- */

static void tools(void) {
  int provided = -1, n = -1;
  CHECK_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
  CHECK_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided)); /* nested */
  CHECK_OK(MPI_T_cvar_get_num(&n));
  CHECK(n >= 0);
  for (int i = 0; i < n; ++i) {
    char name[256], desc[1024];
    int nlen = sizeof name, dlen = sizeof desc, verb = -1, bind = -1, scope = -1;
    MPI_Datatype dt;
    MPI_T_enum en;
    CHECK_OK(MPI_T_cvar_get_info(i, name, &nlen, &verb, &dt, &en, desc, &dlen, &bind, &scope));
    /* name_len counts the terminator */
    CHECK_EQ(nlen, (int)strlen(name) + 1);
    CHECK_EQ(dlen, (int)strlen(desc) + 1);
    /* a 0 length returns the needed length and writes nothing */
    int z = 0, zd = 0;
    char guard = 'g';
    CHECK_OK(MPI_T_cvar_get_info(i, &guard, &z, &verb, &dt, &en, NULL, &zd, &bind, &scope));
    CHECK_EQ(z, nlen);
    CHECK_EQ(guard, 'g');
    /* a short buffer: truncated and terminated */
    char small[4] = {'x', 'x', 'x', 'x'};
    int sl = 4;
    CHECK_OK(MPI_T_cvar_get_info(i, small, &sl, &verb, &dt, &en, NULL, &zd, &bind, &scope));
    if (nlen > 4) {
      CHECK_EQ(small[3], 0);
      CHECK(strncmp(small, name, 3) == 0);
    }
    int idx = -1;
    CHECK_OK(MPI_T_cvar_get_index(name, &idx));
    CHECK_EQ(idx, i);
    if (i >= 3) break;
  }
  CHECK_EQ(MPI_T_cvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
  int idx;
  CHECK_EQ(MPI_T_cvar_get_index("no_such_variable_anywhere", &idx), MPI_T_ERR_INVALID_NAME);
  CHECK_OK(MPI_T_pvar_get_num(&n));
  CHECK(n >= 0);
  CHECK_OK(MPI_T_category_get_num(&n));
  CHECK(n >= 0);
  CHECK_EQ(MPI_T_category_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
  MPI_T_pvar_session ses;
  CHECK_OK(MPI_T_pvar_session_create(&ses));
  CHECK_OK(MPI_T_pvar_session_free(&ses));
  CHECK(ses == MPI_T_PVAR_SESSION_NULL);
  CHECK_OK(MPI_T_finalize());
  CHECK_OK(MPI_T_finalize());
  CHECK_EQ(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
  CHECK_EQ(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
}

/* MPI_Status_c2f/f2c: every field survives both ways, hidden ones too
   (count, cancelled), and ignore values are refused, not dereferenced. */
static void status_convert(void) {
  double out[5] = {1, 2, 3, 4, 5}, in[5];
  MPI_Status st, back;
  const int peer = (rank + 1) % size, from = (rank + size - 1) % size;
  CHECK_OK(MPI_Sendrecv(out, 5, MPI_DOUBLE, peer, 77, in, 5, MPI_DOUBLE, from, 77, MPI_COMM_WORLD, &st));
  MPI_Fint f[MPI_F_STATUS_SIZE + 1];
  f[MPI_F_STATUS_SIZE] = 12345; /* the conversion writes exactly MPI_F_STATUS_SIZE ints */
  CHECK_OK(MPI_Status_c2f(&st, f));
  CHECK_EQ(f[MPI_F_SOURCE], from);
  CHECK_EQ(f[MPI_F_TAG], 77);
  CHECK_EQ(f[MPI_F_STATUS_SIZE], 12345);
  memset(&back, 0xff, sizeof back);
  CHECK_OK(MPI_Status_f2c(f, &back));
  CHECK_EQ(back.MPI_SOURCE, from);
  CHECK_EQ(back.MPI_TAG, 77);
  int n = -1, cancelled = -1;
  CHECK_OK(MPI_Get_count(&back, MPI_DOUBLE, &n));
  CHECK_EQ(n, 5);
  CHECK_OK(MPI_Get_elements(&back, MPI_BYTE, &n));
  CHECK_EQ(n, 40);
  CHECK_OK(MPI_Test_cancelled(&back, &cancelled));
  CHECK_EQ(cancelled, 0);
  /* A status MPI made itself (set_elements, set_cancelled) converts too. */
  CHECK_OK(MPI_Status_set_elements(&st, MPI_INT, 3));
  CHECK_OK(MPI_Status_set_cancelled(&st, 1));
  CHECK_OK(MPI_Status_c2f(&st, f));
  CHECK_OK(MPI_Status_f2c(f, &back));
  CHECK_OK(MPI_Get_count(&back, MPI_INT, &n));
  CHECK_EQ(n, 3);
  CHECK_OK(MPI_Test_cancelled(&back, &cancelled));
  CHECK_EQ(cancelled, 1);
  /* Erroneous: ignore values and null pointers give MPI_ERR_ARG. */
  CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  int cls = -1;
  MPI_Error_class(MPI_Status_c2f(MPI_STATUS_IGNORE, f), &cls);
  CHECK_EQ(cls, MPI_ERR_ARG);
  MPI_Error_class(MPI_Status_c2f(&st, MPI_F_STATUS_IGNORE), &cls);
  CHECK_EQ(cls, MPI_ERR_ARG);
  MPI_Error_class(MPI_Status_f2c(MPI_F_STATUS_IGNORE, &back), &cls);
  CHECK_EQ(cls, MPI_ERR_ARG);
  MPI_Error_class(MPI_Status_f2c(NULL, &back), &cls);
  CHECK_EQ(cls, MPI_ERR_ARG);
  MPI_Error_class(MPI_Status_f2c(f, MPI_STATUS_IGNORE), &cls);
  CHECK_EQ(cls, MPI_ERR_ARG);
  MPI_Error_class(PMPI_Status_c2f(NULL, f), &cls);
  CHECK_EQ(cls, MPI_ERR_ARG);
  CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  predefined_attrs();
  user_attrs();
  failed_dup();
  keyval_double_free();
  type_attrs();
  errhandlers();
  info();
  tools();
  status_convert();
  return mt_finish();
}
