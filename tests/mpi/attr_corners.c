/* Attribute callback corners (MPI 3.1 6.7, 8.7.1): a copy callback that
 * fails on some ranks only fails MPI_Comm_dup, MPI_Comm_dup_with_info and
 * MPI_Comm_idup at every rank (none waits for the failed one) and leaves
 * MPI_COMM_NULL; a delete callback that sets attributes on the
 * communicator being freed runs once per attribute and the keyvals stay
 * sound (MPI_COMM_SELF's order at MPI_Finalize: handle_corners.c); an
 * attribute call given a keyval of another kind (a user one, a predefined
 * one) fails with MPI_ERR_KEYVAL and runs the object's handler once. */
#include "mpitest.h"

static int rank, size;

/* Fails on the ranks whose bit is set in *extra. */
static int picky_copy(MPI_Comm c, int key, void* extra, void* in, void* out, int* flag) {
  (void)c, (void)key;
  if ((*(int*)extra >> rank) & 1) return MPI_ERR_OTHER;
  *(void**)out = in;
  *flag = 1;
  return MPI_SUCCESS;
}

static void failing_copy(void) {
  int failing = 0, key;
  CHECK_OK(MPI_Comm_create_keyval(picky_copy, MPI_COMM_NULL_DELETE_FN, &key, &failing));
  MPI_Comm c;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  CHECK_OK(MPI_Comm_set_attr(c, key, &failing));
  /* the last rank fails, then rank 0, then every rank */
  int masks[3] = {1 << (size - 1), 1, (1 << size) - 1};
  for (int m = 0; m < 3; ++m) {
    failing = masks[m];
    MPI_Comm d = MPI_COMM_WORLD;
    CHECK(MPI_Comm_dup(c, &d) != MPI_SUCCESS);
    CHECK(d == MPI_COMM_NULL);
    d = MPI_COMM_WORLD;
    CHECK(MPI_Comm_dup_with_info(c, MPI_INFO_NULL, &d) != MPI_SUCCESS);
    CHECK(d == MPI_COMM_NULL);
    MPI_Request r = MPI_REQUEST_NULL;
    d = MPI_COMM_WORLD;
    int rc = MPI_Comm_idup(c, &d, &r);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(rc != MPI_SUCCESS);
    CHECK(d == MPI_COMM_NULL);
    if ((failing >> rank) & 1) {
      int cls = -1;
      MPI_Error_class(rc, &cls);
      CHECK_EQ(cls, MPI_ERR_OTHER); /* the callback's own code */
    }
  }
  /* and the parent still works: a dup that succeeds everywhere */
  failing = 0;
  MPI_Comm d;
  CHECK_OK(MPI_Comm_dup(c, &d));
  int sum = 0;
  CHECK_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, d));
  CHECK_EQ(sum, size * (size - 1) / 2);
  MPI_Comm_free(&d);
  MPI_Comm_free(&c);
  MPI_Comm_free_keyval(&key);
}

/* A delete callback that sets another attribute on the communicator it is
 * called for (once: the attribute it sets has a plain delete callback). */
static int key_a, key_b, deleted_a, deleted_b;
static int count_b(MPI_Comm c, int key, void* val, void* extra) {
  (void)c, (void)key, (void)val, (void)extra;
  ++deleted_b;
  return MPI_SUCCESS;
}
static int sets_b(MPI_Comm c, int key, void* val, void* extra) {
  (void)key, (void)val, (void)extra;
  ++deleted_a;
  return MPI_Comm_set_attr(c, key_b, NULL);
}

static void delete_sets_attr(void) {
  CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, sets_b, &key_a, NULL));
  CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_b, &key_b, NULL));
  for (int round = 0; round < 2; ++round) {
    deleted_a = deleted_b = 0;
    MPI_Comm c;
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    CHECK_OK(MPI_Comm_set_attr(c, key_a, NULL));
    if (round == 1) {
      /* free key_a first: its attribute keeps it until the callback ran */
      CHECK_OK(MPI_Comm_free_keyval(&key_a));
    }
    CHECK_OK(MPI_Comm_free(&c));
    CHECK_EQ(deleted_a, 1);
    CHECK_EQ(deleted_b, 1);
  }
  CHECK_OK(MPI_Comm_free_keyval(&key_b));
  /* Both keyvals are gone now: new ones work and the old handles are
   * errors, not a double free */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int k2;
  CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k2, NULL));
  CHECK_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, k2, &k2));
  CHECK_OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, k2));
  CHECK_OK(MPI_Comm_free_keyval(&k2));
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  /* MPI_Comm_delete_attr whose callback sets another attribute */
  CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, sets_b, &key_a, NULL));
  CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_b, &key_b, NULL));
  deleted_a = deleted_b = 0;
  MPI_Comm c;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
  CHECK_OK(MPI_Comm_set_attr(c, key_a, NULL));
  CHECK_OK(MPI_Comm_delete_attr(c, key_a));
  CHECK_EQ(deleted_a, 1);
  void* v = NULL;
  int flag = 0;
  CHECK_OK(MPI_Comm_get_attr(c, key_b, &v, &flag));
  CHECK(flag);
  CHECK_OK(MPI_Comm_get_attr(c, key_a, &v, &flag));
  CHECK(!flag);
  CHECK_OK(MPI_Comm_free(&c));
  CHECK_EQ(deleted_a, 1);
  CHECK_EQ(deleted_b, 1);
  MPI_Comm_free_keyval(&key_a);
  MPI_Comm_free_keyval(&key_b);
}

static int handler_calls;
static void count_comm(MPI_Comm* c, int* code, ...) { (void)c, (void)code, ++handler_calls; }
static void count_win(MPI_Win* w, int* code, ...) { (void)w, (void)code, ++handler_calls; }

/* The call fails with MPI_ERR_KEYVAL and its handler ran once. */
#define ONCE_KEYVAL(call)              \
  do {                                 \
    handler_calls = 0;                 \
    CHECK_CLASS(call, MPI_ERR_KEYVAL); \
    CHECK_EQ(handler_calls, 1);        \
  } while (0)

static void wrong_kind(void) {
  MPI_Errhandler ce, we;
  MPI_Comm c;
  MPI_Win w;
  int type_key, win_key, flag, *mem;
  void* v;
  CHECK_OK(MPI_Comm_create_errhandler(count_comm, &ce));
  CHECK_OK(MPI_Win_create_errhandler(count_win, &we));
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
  CHECK_OK(MPI_Comm_set_errhandler(c, ce));
  CHECK_OK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &w));
  CHECK_OK(MPI_Win_set_errhandler(w, we));
  CHECK_OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &type_key, NULL));
  CHECK_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &win_key, NULL));
  ONCE_KEYVAL(MPI_Comm_get_attr(c, type_key, &v, &flag));
  ONCE_KEYVAL(MPI_Attr_get(c, win_key, &v, &flag));
  ONCE_KEYVAL(MPI_Comm_set_attr(c, type_key, &flag));
  ONCE_KEYVAL(MPI_Win_get_attr(w, type_key, &v, &flag));
#ifdef ADI3_MPI /* (predefined keyvals of another kind: not checked by every MPI) */
  ONCE_KEYVAL(MPI_Comm_get_attr(c, MPI_WIN_BASE, &v, &flag));
  ONCE_KEYVAL(MPI_Win_get_attr(w, MPI_TAG_UB, &v, &flag));
#endif
  /* the right kinds still answer */
  CHECK_OK(MPI_Comm_get_attr(c, MPI_TAG_UB, &v, &flag));
  CHECK(flag);
  CHECK_OK(MPI_Win_get_attr(w, MPI_WIN_BASE, &v, &flag));
  CHECK(flag && v == mem);
  CHECK_OK(MPI_Win_get_attr(w, win_key, &v, &flag));
  CHECK(!flag);
  MPI_Type_free_keyval(&type_key);
  MPI_Win_free_keyval(&win_key);
  MPI_Win_free(&w);
  MPI_Comm_free(&c);
  MPI_Errhandler_free(&ce);
  MPI_Errhandler_free(&we);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  failing_copy();
  delete_sets_attr();
  wrong_kind();
  return mt_finish();
}
