/* Communicators: dup, split, split_type, create, create_group, compare,
 * names, free; context ids reused after free; traffic on different
 * communicators kept apart; attributes with copy/delete callbacks. */
#include "mpitest.h"

static int rank, size;

/* Every rank sends its rank to every other over c; checks arrivals. */
static void exchange(MPI_Comm c, int tag) {
  int n, me;
  MPI_Comm_size(c, &n);
  MPI_Comm_rank(c, &me);
  for (int p = 0; p < n; ++p) {
    int v = me * 10 + tag, got = -1;
    CHECK_OK(
        MPI_Sendrecv(&v, 1, MPI_INT, (me + p) % n, tag, &got, 1, MPI_INT, (me - p + n) % n, tag, c, MPI_STATUS_IGNORE));
    CHECK_EQ(got, ((me - p + n) % n) * 10 + tag);
  }
}

static void test_dup_split(void) {
  MPI_Comm dup, split, rev;
  int result;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  CHECK_OK(MPI_Comm_compare(MPI_COMM_WORLD, dup, &result));
  CHECK_EQ(result, MPI_CONGRUENT);
  CHECK_OK(MPI_Comm_compare(dup, dup, &result));
  CHECK_EQ(result, MPI_IDENT);
  /* A message on dup is not received on WORLD, whatever the order. */
  int a = 1, b = 2, got1 = 0, got2 = 0;
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  MPI_Request r[2];
  CHECK_OK(MPI_Irecv(&got1, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, &r[0]));
  CHECK_OK(MPI_Irecv(&got2, 1, MPI_INT, prev, 0, dup, &r[1]));
  CHECK_OK(MPI_Send(&b, 1, MPI_INT, next, 0, dup));
  CHECK_OK(MPI_Send(&a, 1, MPI_INT, next, 0, MPI_COMM_WORLD));
  CHECK_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
  CHECK_EQ(got1, 1);
  CHECK_EQ(got2, 2);
  /* split: odd/even, ordered by descending rank */
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &split));
  int srank, ssize;
  MPI_Comm_rank(split, &srank);
  MPI_Comm_size(split, &ssize);
  CHECK_EQ(ssize, (size + 1 - rank % 2) / 2);
  int higher = 0;
  for (int r2 = rank + 2; r2 < size; r2 += 2) ++higher;
  CHECK_EQ(srank, higher);
  exchange(split, 3);
  /* same key everywhere: order by old rank */
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &rev));
  CHECK_OK(MPI_Comm_compare(MPI_COMM_WORLD, rev, &result));
  CHECK_EQ(result, MPI_CONGRUENT);
  CHECK_OK(MPI_Comm_free(&rev));
  /* reversed order: similar */
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &rev));
  CHECK_OK(MPI_Comm_compare(MPI_COMM_WORLD, rev, &result));
  CHECK_EQ(result, size == 1 ? MPI_CONGRUENT : MPI_SIMILAR);
  exchange(rev, 4);
  CHECK_OK(MPI_Comm_free(&rev));
  if (size > 1) {
    CHECK_OK(MPI_Comm_compare(MPI_COMM_WORLD, split, &result));
    CHECK_EQ(result, MPI_UNEQUAL);
  }
  /* UNDEFINED color gives COMM_NULL */
  MPI_Comm none;
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 1, 0, &none));
  if (rank == 0)
    CHECK(none == MPI_COMM_NULL);
  else {
    int n;
    MPI_Comm_size(none, &n);
    CHECK_EQ(n, size - 1);
    exchange(none, 5);
    MPI_Comm_free(&none);
  }
  /* split_type shared: everyone on one host; this host's ranks, a strict
   * subset, in a job across hosts (tests/tcp/hosts_suites.sh sets
   * ADI3_TEST_HOSTS). Each part must be able to make a shared window
   * (MPI-3.1 6.4.2): where the channel maps no peer memory (tcp alone,
   * forced emulation) every rank is a part of its own; verbs alone maps
   * its host's segments for shared windows (OneSided::shared_part). */
  MPI_Comm node;
  const char* hosts = getenv("ADI3_TEST_HOSTS");
  const int across = hosts && atoi(hosts) > 1;
  int alone = 0;
#ifdef ADI3_MPI
  const char* ch = getenv("ADI3_CHANNEL");
  const char* emul = getenv("ADI3_FORCE_EMULATION");
  alone = (ch && strcmp(ch, "tcp") == 0) || (emul && (strcmp(emul, "1") == 0 || strcmp(emul, "all") == 0));
#endif
  CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
  CHECK_OK(MPI_Comm_compare(MPI_COMM_WORLD, node, &result));
  if (alone) {
    int nsize;
    MPI_Comm_size(node, &nsize);
    CHECK_EQ(nsize, 1);
  } else {
    CHECK_EQ(result, across ? MPI_UNEQUAL : MPI_CONGRUENT);
  }
#ifdef ADI3_MPI
  MPI_Win sw;
  int* sbase;
  CHECK_OK(MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, node, &sbase, &sw));
  CHECK_OK(MPI_Win_free(&sw));
#endif
  CHECK_OK(MPI_Comm_free(&node));
  CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, rank, MPI_INFO_NULL, &node));
  CHECK(node == MPI_COMM_NULL);
  CHECK_OK(MPI_Comm_free(&split));
  CHECK(split == MPI_COMM_NULL);
  MPI_Comm ic;
  MPI_Request ir;
  CHECK_OK(MPI_Comm_idup(MPI_COMM_WORLD, &ic, &ir));
  CHECK_OK(MPI_Wait(&ir, MPI_STATUS_IGNORE));
  CHECK(ir == MPI_REQUEST_NULL);
  exchange(ic, 11);
  CHECK_OK(MPI_Comm_free(&ic));
  CHECK_OK(MPI_Comm_free(&dup));
}

static void test_create(void) {
  MPI_Group world, evens;
  MPI_Comm c;
  CHECK_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
  int range[1][3] = {{0, size - 1, 2}};
  CHECK_OK(MPI_Group_range_incl(world, 1, range, &evens));
  CHECK_OK(MPI_Comm_create(MPI_COMM_WORLD, evens, &c));
  if (rank % 2) {
    CHECK(c == MPI_COMM_NULL);
  } else {
    int r, n;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    CHECK_EQ(r, rank / 2);
    CHECK_EQ(n, (size + 1) / 2);
    exchange(c, 6);
    CHECK_OK(MPI_Comm_free(&c));
    /* only the members call create_group */
    CHECK_OK(MPI_Comm_create_group(MPI_COMM_WORLD, evens, 77, &c));
    MPI_Comm_rank(c, &r);
    CHECK_EQ(r, rank / 2);
    exchange(c, 7);
    MPI_Group cg;
    int res;
    CHECK_OK(MPI_Comm_group(c, &cg));
    CHECK_OK(MPI_Group_compare(cg, evens, &res));
    CHECK_EQ(res, MPI_IDENT);
    CHECK_OK(MPI_Group_free(&cg));
    CHECK_OK(MPI_Comm_free(&c));
  }
  CHECK_OK(MPI_Group_free(&evens));
  CHECK_OK(MPI_Group_free(&world));
  CHECK(world == MPI_GROUP_NULL);
}

/* More communicators than context ids over the run: ids are reused. */
static void test_many(void) {
  for (int i = 0; i < 3000; ++i) {
    MPI_Comm c;
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    if (i % 500 == 0) exchange(c, 8);
    CHECK_OK(MPI_Comm_free(&c));
  }
  MPI_Comm live[64];
  for (int i = 0; i < 64; ++i) CHECK_OK(MPI_Comm_dup(i ? live[i - 1] : MPI_COMM_WORLD, &live[i]));
  exchange(live[63], 9);
  for (int i = 63; i >= 0; --i) CHECK_OK(MPI_Comm_free(&live[i]));
}

static void test_names(void) {
  char name[MPI_MAX_OBJECT_NAME];
  int len;
  CHECK_OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
  CHECK(strcmp(name, "MPI_COMM_WORLD") == 0);
  CHECK_OK(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
  CHECK(strcmp(name, "MPI_COMM_SELF") == 0);
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  CHECK_OK(MPI_Comm_get_name(c, name, &len));
  CHECK_EQ(len, 0);
  CHECK_OK(MPI_Comm_set_name(c, "my comm"));
  CHECK_OK(MPI_Comm_get_name(c, name, &len));
  CHECK(strcmp(name, "my comm") == 0);
  CHECK_EQ(len, 7);
  int flag = 1;
  CHECK_OK(MPI_Comm_test_inter(c, &flag));
  CHECK_EQ(flag, 0);
  int topo;
  CHECK_OK(MPI_Topo_test(c, &topo));
  CHECK_EQ(topo, MPI_UNDEFINED);
  MPI_Info info, used;
  MPI_Info_create(&info);
  MPI_Info_set(info, "hint", "yes");
  CHECK_OK(MPI_Comm_set_info(c, info));
  CHECK_OK(MPI_Comm_get_info(c, &used));
  char v[16];
  CHECK_OK(MPI_Info_get(used, "hint", 15, v, &flag));
  CHECK(flag && strcmp(v, "yes") == 0);
  MPI_Comm d;
  CHECK_OK(MPI_Comm_dup_with_info(c, MPI_INFO_NULL, &d));
  MPI_Info_free(&used);
  MPI_Info_free(&info);
  MPI_Comm_free(&d);
  MPI_Comm_free(&c);
  int sz, r;
  MPI_Comm_size(MPI_COMM_SELF, &sz);
  MPI_Comm_rank(MPI_COMM_SELF, &r);
  CHECK_EQ(sz, 1);
  CHECK_EQ(r, 0);
}

/* attributes: copy on dup, delete on free and on replace */
static int copies = 0, deletes = 0;
static int copy_fn(MPI_Comm old, int key, void* extra, void* in, void* out, int* flag) {
  (void)old, (void)key;
  CHECK(extra == (void*)&copies);
  ++copies;
  *(void**)out = (void*)((char*)in + 1);
  *flag = 1;
  return MPI_SUCCESS;
}
static int delete_fn(MPI_Comm c, int key, void* val, void* extra) {
  (void)c, (void)key, (void)val, (void)extra;
  ++deletes;
  return MPI_SUCCESS;
}
static int failing_delete(MPI_Comm c, int key, void* val, void* extra) {
  (void)c, (void)key, (void)val, (void)extra;
  return MPI_ERR_OTHER;
}

static void test_attributes(void) {
  int key, nocopy;
  CHECK_OK(MPI_Comm_create_keyval(copy_fn, delete_fn, &key, &copies));
  CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &nocopy, NULL));
  MPI_Comm c, d;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  char base[4];
  CHECK_OK(MPI_Comm_set_attr(c, key, base));
  CHECK_OK(MPI_Comm_set_attr(c, nocopy, base));
  void* v;
  int flag;
  CHECK_OK(MPI_Comm_get_attr(c, key, &v, &flag));
  CHECK(flag && v == base);
  CHECK_OK(MPI_Comm_dup(c, &d));
  CHECK_EQ(copies, 1);
  CHECK_OK(MPI_Comm_get_attr(d, key, &v, &flag));
  CHECK(flag && v == base + 1);
  CHECK_OK(MPI_Comm_get_attr(d, nocopy, &v, &flag));
  CHECK_EQ(flag, 0);
  CHECK_OK(MPI_Comm_set_attr(c, key, base + 2)); /* replace: deletes the old value */
  CHECK_EQ(deletes, 1);
  CHECK_OK(MPI_Comm_delete_attr(c, key));
  CHECK_EQ(deletes, 2);
  CHECK_OK(MPI_Comm_get_attr(c, key, &v, &flag));
  CHECK_EQ(flag, 0);
  /* freeing the keyval keeps attributes that use it */
  CHECK_OK(MPI_Comm_free_keyval(&key));
  CHECK(key == MPI_KEYVAL_INVALID);
  CHECK_OK(MPI_Comm_free(&d));
  CHECK_EQ(deletes, 3);
  CHECK_OK(MPI_Comm_free(&c));
  CHECK_OK(MPI_Comm_free_keyval(&nocopy));
  /* a failing delete callback fails the free */
  int bad;
  MPI_Comm_create_keyval(MPI_COMM_DUP_FN, failing_delete, &bad, NULL);
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  MPI_Comm_set_attr(c, bad, base);
  CHECK(MPI_Comm_delete_attr(c, bad) != MPI_SUCCESS);
  MPI_Comm_dup(c, &d); /* DUP_FN copies the pointer */
  CHECK_OK(MPI_Comm_get_attr(d, bad, &v, &flag));
  CHECK(flag && v == base);
  MPI_Comm_free_keyval(&bad);
  /* predefined attributes */
  int* val;
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &val, &flag));
  CHECK(flag && *val >= 32767);
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &val, &flag));
  CHECK(flag && (*val == 0 || *val == 1));
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &val, &flag));
  CHECK(flag && *val >= size);
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &val, &flag));
  CHECK(flag);
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &val, &flag));
  CHECK(flag);
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &val, &flag));
  CHECK_OK(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &val, &flag));
  CHECK(flag && *val >= 32767);
  /* MPI-1 names */
  int k1;
  CHECK_OK(MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &k1, NULL));
  CHECK_OK(MPI_Attr_put(d, k1, base));
  CHECK_OK(MPI_Attr_get(d, k1, &v, &flag));
  CHECK(flag && v == base);
  CHECK_OK(MPI_Attr_delete(d, k1));
  CHECK_OK(MPI_Keyval_free(&k1));
  /* leave c and d to MPI_Finalize (a failing callback stays on them) */
}

/* MPI_COMM_SELF's attributes are deleted at the start of MPI_Finalize. */
static int self_deleted = 0;
static int self_delete(MPI_Comm c, int key, void* val, void* extra) {
  (void)key, (void)val, (void)extra;
  CHECK(c == MPI_COMM_SELF);
  int fin = 1;
  MPI_Finalized(&fin);
  CHECK_EQ(fin, 0);
  self_deleted = 1;
  return MPI_SUCCESS;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  test_dup_split();
  test_create();
  test_many();
  test_names();
  test_attributes();
  int key;
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &key, NULL);
  MPI_Comm_set_attr(MPI_COMM_SELF, key, NULL);
  int rc = mt_finish();
  if (!self_deleted) {
    fprintf(stderr, "COMM_SELF attribute not deleted at finalize\n");
    return 1;
  }
  return rc;
}
