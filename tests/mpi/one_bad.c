/* Bad arguments on ONE rank of a collective call, with MPI_ERRORS_RETURN
 * (the last rank is the bad one). argv[1] picks the call.
 * Carried (every rank must get an error back, then all finish cleanly):
 *   dup, dupinfo   MPI_Comm_dup(_with_info) with a null newcomm / bad info
 *   file           MPI_File_open with a bad amode (files return errors by default)
 *   dist           MPI_Dist_graph_create with a bad destination rank
 *   win            MPI_Win_create with disp_unit 0
 *   walloc, wshared, wdyn   MPI_Win_allocate with disp_unit 0,
 *                  MPI_Win_allocate_shared with size -1,
 *                  MPI_Win_create_dynamic with a null win
 *   split, splittype, create, cgnull   MPI_Comm_split, _split_type,
 *                  _create, _create_group with a null newcomm
 *   adj            MPI_Dist_graph_create_adjacent with a bad destination rank
 *   cartsub        MPI_Cart_sub with a null remain_dims
 *   merge          MPI_Intercomm_merge with a null newintracomm
 *   isplit, icreate   MPI_Comm_split, MPI_Comm_create on an
 *                  intercommunicator with a null newcomm
 *   idup, idupinfo MPI_Comm_idup with a null newcomm, MPI_Comm_idup_with_info
 *                  with a bad info (the others' MPI_Wait fails)
 *   icnull, ictag  MPI_Intercomm_create with a null newintercomm / a
 *                  negative tag (at 2 ranks the bad rank leads its group:
 *                  it tells the remote leader it named); both groups fail
 *   icpeer, iccomm MPI_Intercomm_create whose bad rank leads its group and
 *                  names a remote_leader out of range / an invalid peer_comm
 *                  (it cannot tell the remote leader: it asks who waits)
 *   icleader       MPI_Intercomm_create with local_leader -1 (at 2 ranks
 *                  the bad rank is its group's one member, so its leader)
 *   cgtag, cgbadtag   MPI_Comm_create_group with a negative tag (on the
 *                  whole group / at 3 ranks on ranks {1, 2} only)
 *   cfgtag         MPI_Comm_create_from_group with a null stringtag
 *   cgnogroup      MPI_Comm_create_group with MPI_GROUP_NULL (at 3 ranks the
 *                  group is {1, 2}: the bad member does not know who waits)
 * Stuck (the others wait in the call; the bad rank reaches MPI_Finalize,
 * which must end the job with a message after ADI3_FINALIZE_TIMEOUT):
 *   comm    MPI_Barrier on an invalid communicator handle
 *   bcast   MPI_Bcast with a negative count
 *   ibcast  MPI_Ibcast from the bad rank with a negative count (the others
 *           wait in MPI_Wait)
 *   send    MPI_Send with an invalid tag (the peer waits in MPI_Recv)
 * Not stuck: quiet   a local call fails on one rank, and the others reach
 *   MPI_Finalize a second later: the job ends normally.
 *   late    (run with ADI3_FINALIZE_TIMEOUT=1) the bad rank gets errors back
 *   that leave no peer waiting (files that do not exist, on MPI_COMM_SELF
 *   and on every rank; a put out of the window's range; a truncated message;
 *   MPI_Comm_call_errhandler; a bad keyval; a negative split color), and the
 *   others reach MPI_Finalize 3 s later: the job ends normally.
 *   threads (likewise) four threads of the bad rank (MPI_THREAD_MULTIPLE)
 *   each get MPI_ERR_NO_SUCH_FILE back 2000 times at once: no thread's
 *   error may be taken for one a peer waits on. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int expect(int got, int cls, const char* what) {
  int c = -1;
  if (got) MPI_Error_class(got, &c);
  if (c == cls) return 0;
  printf("late: %s gave class %d, wanted %d\n", what, c, cls);
  return 1;
}

/* Errors after which no peer waits for the bad rank (mode late). */
static int late(int rank, int size, int bad) {
  int fails = 0, x[2] = {1, 2};
  MPI_File f;
  char name[64];
  snprintf(name, sizeof name, "/tmp/adi3-one-bad-none-%d", (int)getppid());
  if (bad)
    fails += expect(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &f), MPI_ERR_NO_SUCH_FILE,
                    "File_open on MPI_COMM_SELF");
  fails += expect(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &f), MPI_ERR_NO_SUCH_FILE,
                  "File_open on MPI_COMM_WORLD");
  if (bad) fails += expect(MPI_File_delete(name, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE, "File_delete");
  MPI_Win w;
  MPI_Win_create(x, sizeof x, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w);
  MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
  MPI_Win_fence(0, w);
  if (bad) fails += expect(MPI_Put(x, 1, MPI_INT, 0, 5, 1, MPI_INT, w), MPI_ERR_RMA_RANGE, "Put out of range");
  MPI_Win_fence(0, w);
  MPI_Win_free(&w);
  if (rank == 0) MPI_Send(x, 2, MPI_INT, size - 1, 3, MPI_COMM_WORLD);
  if (bad) fails += expect(MPI_Recv(x, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_TRUNCATE, "Recv");
  if (bad) fails += MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER) != MPI_SUCCESS;
  int* v;
  int flag;
  if (bad) fails += expect(MPI_Comm_get_attr(MPI_COMM_WORLD, 12345, &v, &flag), MPI_ERR_KEYVAL, "Comm_get_attr");
  MPI_Comm c = MPI_COMM_NULL;
  int e = MPI_Comm_split(MPI_COMM_WORLD, bad ? -7 : 0, 0, &c);
  if (bad) fails += expect(e, MPI_ERR_ARG, "Comm_split with color -7");
  if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
  if (!bad) sleep(3);
  return fails;
}

static char missing[64];
static int thread_fails;

static void* open_missing(void* arg) {
  (void)arg;
  for (int i = 0; i < 2000; ++i) {
    MPI_File f;
    int c = -1, e = MPI_File_open(MPI_COMM_SELF, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &f);
    if (e) MPI_Error_class(e, &c);
    if (c != MPI_ERR_NO_SUCH_FILE) __atomic_add_fetch(&thread_fails, 1, __ATOMIC_RELAXED);
  }
  return NULL;
}

/* Mode threads: failing threads at once (their no-peer-waits marks). */
static int late_threads(int bad) {
  snprintf(missing, sizeof missing, "/tmp/adi3-one-bad-none-%d", (int)getppid());
  if (!bad) {
    sleep(3);
    return 0;
  }
  pthread_t t[4];
  for (int i = 0; i < 4; ++i) pthread_create(&t[i], NULL, open_missing, NULL);
  for (int i = 0; i < 4; ++i) pthread_join(t[i], NULL);
  if (thread_fails) printf("threads: %d opens gave another class than MPI_ERR_NO_SUCH_FILE\n", thread_fails);
  return thread_fails != 0;
}

/* After a failed MPI_Intercomm_create of even and odd ranks: the same call
   with good arguments works, on the same tag (no message of the failed
   meeting is taken for this one). */
static void intercomm_again(MPI_Comm half, int local_leader, int remote_leader, int rank, int size) {
  MPI_Comm inter = MPI_COMM_NULL;
  int remote = 0;
  if (MPI_Intercomm_create(half, local_leader, MPI_COMM_WORLD, remote_leader, 9, &inter) != 0) {
    printf("rank %d: the next MPI_Intercomm_create failed\n", rank);
    return;
  }
  MPI_Comm_remote_size(inter, &remote);
  if (remote != (rank % 2 ? (size + 1) / 2 : size / 2)) printf("rank %d: remote group of %d\n", rank, remote);
  MPI_Comm_free(&inter);
}

int main(int argc, char** argv) {
  const char* m = argc > 1 ? argv[1] : "";
  int rank, size, e = 0;
  int provided;
  MPI_Init_thread(&argc, &argv, strcmp(m, "threads") ? MPI_THREAD_SINGLE : MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int bad = rank == size - 1;
  int carried = 0;
  if (!strcmp(m, "dup")) {
    MPI_Comm c = MPI_COMM_NULL;
    e = MPI_Comm_dup(MPI_COMM_WORLD, bad ? NULL : &c);
    carried = 1;
  } else if (!strcmp(m, "dupinfo")) {
    MPI_Comm c = MPI_COMM_NULL;
    e = MPI_Comm_dup_with_info(MPI_COMM_WORLD, bad ? (MPI_Info)0x1234 : MPI_INFO_NULL, &c);
    carried = 1;
  } else if (!strcmp(m, "file")) {
    MPI_File f;
    char name[64];
    snprintf(name, sizeof name, "/tmp/adi3-one-bad-%d", (int)getppid());
    e = MPI_File_open(
        MPI_COMM_WORLD, name,
        bad ? (MPI_MODE_RDONLY | MPI_MODE_WRONLY) : (MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE),
        MPI_INFO_NULL, &f);
    if (e == 0) MPI_File_close(&f);
    carried = 1;
  } else if (!strcmp(m, "dist")) {
    MPI_Comm g;
    int src = rank, deg = 1, dst = bad ? size + 3 : (rank + 1) % size;
    e = MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &src, &deg, &dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g);
    if (e == 0) MPI_Comm_free(&g);
    carried = 1;
  } else if (!strcmp(m, "win")) {
    static int buf[16];
    MPI_Win w;
    e = MPI_Win_create(buf, sizeof buf, bad ? 0 : 4, MPI_INFO_NULL, MPI_COMM_WORLD, &w);
    if (e == 0) MPI_Win_free(&w);
    carried = 1;
  } else if (!strcmp(m, "walloc") || !strcmp(m, "wshared")) {
    int* p = NULL;
    MPI_Win w;
    if (m[1] == 'a')
      e = MPI_Win_allocate(64, bad ? 0 : 4, MPI_INFO_NULL, MPI_COMM_WORLD, &p, &w);
    else
      e = MPI_Win_allocate_shared(bad ? -1 : 64, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &p, &w);
    if (e == 0) MPI_Win_free(&w);
    carried = 1;
  } else if (!strcmp(m, "wdyn")) {
    MPI_Win w;
    e = MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, bad ? NULL : &w);
    if (e == 0) MPI_Win_free(&w);
    carried = 1;
  } else if (!strcmp(m, "split") || !strcmp(m, "splittype") || !strcmp(m, "create") || !strcmp(m, "cgnull")) {
    MPI_Comm c = MPI_COMM_NULL;
    MPI_Group g;
    MPI_Comm_group(MPI_COMM_WORLD, &g);
    if (!strcmp(m, "split")) e = MPI_Comm_split(MPI_COMM_WORLD, 1, rank, bad ? NULL : &c);
    if (!strcmp(m, "splittype"))
      e = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, bad ? NULL : &c);
    if (!strcmp(m, "create")) e = MPI_Comm_create(MPI_COMM_WORLD, g, bad ? NULL : &c);
    if (!strcmp(m, "cgnull")) e = MPI_Comm_create_group(MPI_COMM_WORLD, g, 7, bad ? NULL : &c);
    if (e == 0 && c != MPI_COMM_NULL) MPI_Comm_free(&c);
    MPI_Group_free(&g);
    carried = 1;
    /* a communicator made right after works */
    MPI_Comm d;
    if (MPI_Comm_dup(MPI_COMM_WORLD, &d) == 0) MPI_Comm_free(&d);
  } else if (!strcmp(m, "adj")) {
    MPI_Comm g;
    int src = (rank + size - 1) % size, dst = bad ? size + 5 : (rank + 1) % size;
    e = MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, MPI_UNWEIGHTED, 1, &dst, MPI_UNWEIGHTED, MPI_INFO_NULL,
                                       0, &g);
    if (e == 0) MPI_Comm_free(&g);
    carried = 1;
  } else if (!strcmp(m, "cartsub")) {
    MPI_Comm cart, sub;
    int dims[1] = {size}, periods[1] = {0}, remain[1] = {1};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
    e = MPI_Cart_sub(cart, bad ? NULL : remain, &sub);
    if (e == 0) MPI_Comm_free(&sub);
    MPI_Comm_free(&cart);
    carried = 1;
  } else if (!strcmp(m, "idup") || !strcmp(m, "idupinfo")) {
    MPI_Comm c = MPI_COMM_NULL;
    MPI_Request r = MPI_REQUEST_NULL;
    if (m[4])
      e = MPI_Comm_idup_with_info(MPI_COMM_WORLD, bad ? (MPI_Info)0x1234 : MPI_INFO_NULL, &c, &r);
    else
      e = MPI_Comm_idup(MPI_COMM_WORLD, bad ? NULL : &c, &r);
    if (e == 0) e = MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
    carried = 1;
  } else if (!strcmp(m, "cgtag") || !strcmp(m, "cgbadtag") || !strcmp(m, "cfgtag") || !strcmp(m, "cgnogroup")) {
    MPI_Group g, sub;
    MPI_Comm c = MPI_COMM_NULL;
    MPI_Comm_group(MPI_COMM_WORLD, &g);
    /* cgbadtag, cgnogroup: the group of ranks 1.. only (rank 0 is no member) */
    int first[1][3] = {{(m[2] == 'b' || m[2] == 'n') && size > 2 ? 1 : 0, size - 1, 1}};
    MPI_Group_range_incl(g, 1, first, &sub);
    if (m[1] == 'f')
      e = MPI_Comm_create_from_group(sub, bad ? NULL : "one_bad", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
    else if (m[2] == 'n')
      e = MPI_Comm_create_group(MPI_COMM_WORLD, bad ? MPI_GROUP_NULL : sub, 5, &c);
    else
      e = MPI_Comm_create_group(MPI_COMM_WORLD, sub, bad ? -3 : 5, &c);
    if (first[0][0] > rank) e = MPI_ERR_OTHER; /* no member: nothing to fail */
    if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
    MPI_Group_free(&sub);
    MPI_Group_free(&g);
    carried = 1;
    /* the same call right after works, on the same tag */
    MPI_Comm_group(MPI_COMM_WORLD, &g);
    if (MPI_Comm_create_group(MPI_COMM_WORLD, g, 5, &c) == 0) {
      int n = 0;
      MPI_Allreduce(&rank, &n, 1, MPI_INT, MPI_SUM, c);
      if (n != size * (size - 1) / 2) printf("rank %d: the next communicator summed %d\n", rank, n);
      MPI_Comm_free(&c);
    } else {
      printf("rank %d: the next MPI_Comm_create_group failed\n", rank);
    }
    MPI_Group_free(&g);
  } else if (!strcmp(m, "icpeer") || !strcmp(m, "iccomm")) {
    /* Even and odd ranks led by their last ranks: the bad rank leads its
       group and names a remote_leader out of range / an invalid peer_comm. */
    MPI_Comm half, inter = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int hsize = 0;
    MPI_Comm_size(half, &hsize);
    const int last_odd = (size - 1) % 2 ? size - 1 : size - 2, last_even = (size - 1) % 2 ? size - 2 : size - 1;
    const int remote_leader = rank % 2 ? last_even : last_odd;
    e = MPI_Intercomm_create(half, hsize - 1, bad && m[2] == 'c' ? (MPI_Comm)0x7777 : MPI_COMM_WORLD,
                             bad && m[2] == 'p' ? size + 7 : remote_leader, 9, &inter);
    if (inter != MPI_COMM_NULL) MPI_Comm_free(&inter);
    carried = 1;
    intercomm_again(half, hsize - 1, remote_leader, rank, size);
    MPI_Comm_free(&half);
  } else if (!strcmp(m, "merge") || !strcmp(m, "icnull") || !strcmp(m, "ictag") || !strcmp(m, "isplit") ||
             !strcmp(m, "icreate") || !strcmp(m, "icleader")) {
    /* Even and odd ranks, leaders 0 and 1 (the bad rank is 2's member at 3 ranks). */
    MPI_Comm half, inter = MPI_COMM_NULL, merged = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    const int remote_leader = rank % 2 ? 0 : 1;
    if (strcmp(m, "icnull") && strcmp(m, "ictag") && strcmp(m, "icleader")) {
      MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, remote_leader, 9, &inter);
      MPI_Group g;
      MPI_Comm_group(inter, &g);
      if (!strcmp(m, "merge")) e = MPI_Intercomm_merge(inter, rank % 2, bad ? NULL : &merged);
      if (!strcmp(m, "isplit")) e = MPI_Comm_split(inter, 0, rank, bad ? NULL : &merged);
      if (!strcmp(m, "icreate")) e = MPI_Comm_create(inter, g, bad ? NULL : &merged);
      MPI_Group_free(&g);
    } else {
      e = MPI_Intercomm_create(half, bad && m[2] == 'l' ? -1 : 0, MPI_COMM_WORLD, remote_leader,
                               bad && m[2] == 't' ? -4 : 9, bad && m[2] == 'n' ? NULL : &inter);
    }
    if (merged != MPI_COMM_NULL) MPI_Comm_free(&merged);
    if (inter != MPI_COMM_NULL) MPI_Comm_free(&inter);
    carried = 1;
    if (!strcmp(m, "icnull") || !strcmp(m, "ictag") || !strcmp(m, "icleader"))
      intercomm_again(half, 0, remote_leader, rank, size);
    MPI_Comm_free(&half);
  } else if (!strcmp(m, "late")) {
    if (late(rank, size, bad)) return 1;
  } else if (!strcmp(m, "threads")) {
    if (late_threads(bad)) return 1;
  } else if (!strcmp(m, "comm")) {
    e = MPI_Barrier(bad ? (MPI_Comm)0x7777 : MPI_COMM_WORLD);
  } else if (!strcmp(m, "bcast")) {
    int x[4] = {0};
    e = MPI_Bcast(x, bad ? -1 : 4, MPI_INT, 0, MPI_COMM_WORLD);
  } else if (!strcmp(m, "ibcast")) {
    int x[4] = {0};
    MPI_Request r = MPI_REQUEST_NULL;
    e = MPI_Ibcast(x, bad ? -1 : 4, MPI_INT, size - 1, MPI_COMM_WORLD, &r);
    if (e == 0) MPI_Wait(&r, MPI_STATUS_IGNORE);
  } else if (!strcmp(m, "send")) {
    int x = 0;
    if (bad) e = MPI_Send(&x, 1, MPI_INT, 0, -5, MPI_COMM_WORLD);
    if (rank == 0 && !bad) e = MPI_Recv(&x, 1, MPI_INT, size - 1, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else if (!strcmp(m, "quiet")) {
    if (bad)
      e = MPI_Type_size(MPI_INT, NULL);
    else
      sleep(1);
  } else {
    fprintf(stderr, "one_bad: unknown mode '%s'\n", m);
    return 2;
  }
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  if (e) MPI_Error_string(e, text, &len);
  printf("rank %d: %s returned %s%s\n", rank, m, e ? "an error: " : "success", text);
  fflush(stdout);
  if (carried) {
    int mine = e != 0, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf(all == size ? "every rank got an error\n" : "only %d of %d ranks got an error\n", all, size);
  }
  MPI_Finalize();
  if (rank == 0) printf("No Errors\n");
  return 0;
}
