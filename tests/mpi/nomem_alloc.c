/* Allocation failure anywhere on a communication path is MPI_ERR_NO_MEM,
 * never a crash: tests/mpi/nomem_alloc.sh runs this program under
 * libadi3_failalloc.so (tests/mpi/failalloc.c) once per failure point.
 * After MPI_Init the rank FAILALLOC_RANK names arms the interposer with
 * FAILALLOC_AT (n: its nth allocation from then on fails), and both ranks
 * run point-to-point (eager, unexpected, rendezvous, noncontiguous,
 * persistent), collectives (blocking, nonblocking, on a duplicate),
 * generalized requests and RMA (fence, lock, lock_all, on allocated and
 * created windows), checking every value. Each call must succeed or fail
 * with MPI_ERR_NO_MEM on the failing rank, which then prints "NOMEM ..."
 * and exits 7 (mpiexec ends the job); its peer may instead see the
 * conversation end (MPI_ERR_NO_MEM or MPI_ERR_PROC_FAILED: "PEER ...", exit
 * 7). Anything else prints "WRONG ..." and exits 1; other data than sent
 * prints "CORRUPT ..." and exits 4. At the end the failing rank prints
 * "ALLOCS <n>" (allocations since arming: the sweep's range) and every
 * rank "DONE <rank>". Needs two ranks.
 * NOMEM_PARTS (a comma list; default p2p,coll,greq,rma,tools) picks the
 * parts: rmaops is one-sided traffic that allocates per operation (derived
 * types, request-based operations, fetches: run it with
 * ADI3_FORCE_EMULATION=1 so every operation is queued), tools the MPI_T
 * calls that allocate (MPI_T_ERR_MEMORY is their NOMEM), handles many live
 * receive handles (a request pool that cannot grow must leave no receive
 * behind: the message it would have taken is received afterwards). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "greq_stub.h"

static int rank, peer, armed;
static void (*arm)(long);
static long arm_at;
static const char* parts = "p2p,coll,greq,rma,tools";

static int part(const char* name) {
  const size_t n = strlen(name);
  for (const char* p = parts; (p = strstr(p, name)) != NULL; p += n) {
    if ((p == parts || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return 1;
  }
  return 0;
}

static void call_failed(const char* what, int line, int e) {
  int cls = -1, len = 0;
  char text[MPI_MAX_ERROR_STRING] = "";
  MPI_Error_class(e, &cls);
  MPI_Error_string(e, text, &len);
  if (cls == MPI_ERR_NO_MEM && armed) {
    printf("NOMEM %d line %d %s: %s\n", rank, line, what, text);
  } else if (!armed && (cls == MPI_ERR_NO_MEM || cls == MPI_ERR_PROC_FAILED || cls == MPI_ERR_IN_STATUS)) {
    /* The failing rank refused this rank's operation (MPI_ERR_NO_MEM; in a
     * Waitall, MPI_ERR_IN_STATUS) or ended. */
    printf("PEER %d line %d %s: %s\n", rank, line, what, text);
  } else {
    printf("WRONG %d line %d %s: error class %d: %s\n", rank, line, what, cls, text);
    fflush(stdout);
    exit(1);
  }
  fflush(stdout);
  exit(7);
}
#define CALL(x)                            \
  do {                                     \
    int e_ = (x);                          \
    if (e_) call_failed(#x, __LINE__, e_); \
  } while (0)

static void expect(int ok, const char* what, int line) {
  if (ok) return;
  printf("CORRUPT %d line %d: %s\n", rank, line, what);
  fflush(stdout);
  exit(4);
}
#define EXPECT(c) expect((c), #c, __LINE__)

enum { kSmall = 256, kLarge = 64 * 1024, kUnexpected = 16, kWin = 1024 };

static void p2p(void) {
  int out[kSmall], in[kSmall];
  for (int round = 0; round < 8; ++round) {
    for (int i = 0; i < kSmall; ++i) out[i] = rank * 1000 + round + i;
    CALL(MPI_Sendrecv(out, kSmall, MPI_INT, peer, 1, in, kSmall, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < kSmall; ++i) EXPECT(in[i] == peer * 1000 + round + i);
  }
  /* Unexpected arrivals: both send first, then meet, then receive. */
  MPI_Request reqs[kUnexpected];
  static int many[kUnexpected][kSmall], got[kSmall];
  for (int m = 0; m < kUnexpected; ++m) {
    for (int i = 0; i < kSmall; ++i) many[m][i] = rank + m * 7 + i;
    CALL(MPI_Isend(many[m], kSmall, MPI_INT, peer, 100 + m, MPI_COMM_WORLD, &reqs[m]));
  }
  CALL(MPI_Barrier(MPI_COMM_WORLD));
  for (int m = kUnexpected - 1; m >= 0; --m) {
    CALL(MPI_Recv(got, kSmall, MPI_INT, peer, 100 + m, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < kSmall; ++i) EXPECT(got[i] == peer + m * 7 + i);
  }
  CALL(MPI_Waitall(kUnexpected, reqs, MPI_STATUSES_IGNORE));
  /* Rendezvous (the test's own buffers are static: only MPI allocates). */
  static int big[kLarge], back[kLarge];
  for (int i = 0; i < kLarge; ++i) big[i] = rank ^ i;
  CALL(MPI_Sendrecv(big, kLarge, MPI_INT, peer, 2, back, kLarge, MPI_INT, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  for (int i = 0; i < kLarge; ++i) EXPECT(back[i] == (peer ^ i));
  /* Noncontiguous: every other int. */
  MPI_Datatype every_other;
  CALL(MPI_Type_vector(kSmall / 2, 1, 2, MPI_INT, &every_other));
  CALL(MPI_Type_commit(&every_other));
  memset(in, 0, sizeof in);
  CALL(MPI_Sendrecv(out, 1, every_other, peer, 3, in, 1, every_other, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  for (int i = 0; i < kSmall; i += 2) EXPECT(in[i] == peer * 1000 + 7 + i);
  CALL(MPI_Type_free(&every_other));
  /* Persistent. */
  MPI_Request p[2];
  CALL(MPI_Send_init(big, kLarge / 4, MPI_INT, peer, 4, MPI_COMM_WORLD, &p[0]));
  CALL(MPI_Recv_init(back, kLarge / 4, MPI_INT, peer, 4, MPI_COMM_WORLD, &p[1]));
  for (int round = 0; round < 3; ++round) {
    CALL(MPI_Startall(2, p));
    CALL(MPI_Waitall(2, p, MPI_STATUSES_IGNORE));
    for (int i = 0; i < kLarge / 4; ++i) EXPECT(back[i] == (peer ^ i));
  }
  CALL(MPI_Request_free(&p[0]));
  CALL(MPI_Request_free(&p[1]));
}

static void collectives(void) {
  int v[kSmall], sum[kSmall];
  for (int i = 0; i < kSmall; ++i) v[i] = rank + i;
  CALL(MPI_Allreduce(v, sum, kSmall, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  for (int i = 0; i < kSmall; ++i) EXPECT(sum[i] == 1 + 2 * i);
  static char blob[kLarge];
  if (rank == 0) memset(blob, 0x5a, sizeof blob);
  CALL(MPI_Bcast(blob, kLarge, MPI_CHAR, 0, MPI_COMM_WORLD));
  EXPECT(blob[0] == 0x5a && blob[kLarge - 1] == 0x5a);
  MPI_Request r;
  CALL(MPI_Iallreduce(v, sum, kSmall, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &r));
  CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
  for (int i = 0; i < kSmall; ++i) EXPECT(sum[i] == 1 + i);
  int all[2 * kSmall];
  CALL(MPI_Allgather(v, kSmall, MPI_INT, all, kSmall, MPI_INT, MPI_COMM_WORLD));
  EXPECT(all[kSmall] == 1 && all[0] == 0);
  int to[2] = {rank * 10, rank * 10 + 1}, from[2];
  CALL(MPI_Alltoall(to, 1, MPI_INT, from, 1, MPI_INT, MPI_COMM_WORLD));
  EXPECT(from[peer] == peer * 10 + rank);
  MPI_Comm dup, half;
  CALL(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  CALL(MPI_Allreduce(v, sum, kSmall, MPI_INT, MPI_SUM, dup));
  EXPECT(sum[3] == 7);
  CALL(MPI_Comm_split(dup, rank, 0, &half));
  CALL(MPI_Barrier(half));
  CALL(MPI_Comm_free(&half));
  CALL(MPI_Comm_free(&dup));
}

static void greq(void) {
  for (int round = 0; round < 4; ++round) {
    MPI_Request r;
    CALL(MPI_Grequest_start(greq_stub_query, greq_stub_free, greq_stub_cancel, NULL, &r));
    CALL(MPI_Grequest_complete(r));
    CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
  }
}

static void rma(void) {
  int* base = NULL;
  MPI_Win win, created;
  CALL(MPI_Win_allocate(kWin * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
  CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  for (int i = 0; i < kWin; ++i) base[i] = 0;
  int out[kWin], got[kWin];
  for (int i = 0; i < kWin; ++i) out[i] = rank * 31 + i;
  CALL(MPI_Win_fence(0, win));
  CALL(MPI_Put(out, kWin / 2, MPI_INT, peer, 0, kWin / 2, MPI_INT, win));
  CALL(MPI_Win_fence(0, win));
  for (int i = 0; i < kWin / 2; ++i) EXPECT(base[i] == peer * 31 + i);
  CALL(MPI_Get(got, kWin / 2, MPI_INT, peer, 0, kWin / 2, MPI_INT, win));
  CALL(MPI_Win_fence(0, win));
  for (int i = 0; i < kWin / 2; ++i) EXPECT(got[i] == rank * 31 + i);
  CALL(MPI_Barrier(MPI_COMM_WORLD));
  int one = 1, old = -1;
  CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer, 0, win));
  CALL(MPI_Accumulate(&one, 1, MPI_INT, peer, kWin - 1, 1, MPI_INT, MPI_SUM, win));
  CALL(MPI_Win_unlock(peer, win));
  CALL(MPI_Win_lock_all(0, win));
  CALL(MPI_Fetch_and_op(&one, &old, MPI_INT, peer, kWin - 2, MPI_SUM, win));
  CALL(MPI_Win_flush_all(win));
  EXPECT(old == 0);
  CALL(MPI_Win_unlock_all(win));
  CALL(MPI_Barrier(MPI_COMM_WORLD));
  EXPECT(base[kWin - 1] == 1 && base[kWin - 2] == 1);
  CALL(MPI_Win_free(&win));

  static int mine[kWin];
  CALL(MPI_Win_create(mine, sizeof mine, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &created));
  CALL(MPI_Win_set_errhandler(created, MPI_ERRORS_RETURN));
  CALL(MPI_Win_fence(0, created));
  CALL(MPI_Put(out, kWin, MPI_INT, peer, 0, kWin, MPI_INT, created));
  CALL(MPI_Win_fence(0, created));
  for (int i = 0; i < kWin; ++i) EXPECT(mine[i] == peer * 31 + i);
  CALL(MPI_Win_free(&created));
}

/* One-sided operations that allocate per operation on the emulated path. */
static void rmaops(void) {
  static int mine[kWin];
  int out[kWin], got[kWin], res[kWin];
  MPI_Win win;
  MPI_Datatype strided;
  CALL(MPI_Win_create(mine, sizeof mine, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  CALL(MPI_Type_vector(kWin / 4, 1, 2, MPI_INT, &strided));
  CALL(MPI_Type_commit(&strided));
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < kWin; ++i) out[i] = rank * 1000 + round * 7 + i;
    memset(mine, 0, sizeof mine);
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_Win_fence(0, win));
    CALL(MPI_Put(out, 1, strided, peer, 0, 1, strided, win));                      /* derived both sides */
    CALL(MPI_Get(got, kWin / 4, MPI_INT, peer, kWin / 2, kWin / 4, MPI_INT, win)); /* a reply record */
    CALL(MPI_Win_fence(0, win));
    for (int i = 0; i < kWin / 4; ++i) EXPECT(mine[2 * i] == peer * 1000 + round * 7 + 2 * i);
    for (int i = 0; i < kWin / 4; ++i) EXPECT(got[i] == 0);
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Request r[4];
    int one = 1, old = -1, cmp = 0, swp = 5, was = -1;
    CALL(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win));
    CALL(MPI_Rput(out, kWin / 4, MPI_INT, peer, kWin / 2, kWin / 4, MPI_INT, win, &r[0]));
    CALL(MPI_Rget(res, 1, strided, peer, 0, 1, strided, win, &r[1]));
    CALL(MPI_Raccumulate(&one, 1, MPI_INT, peer, kWin - 1, 1, MPI_INT, MPI_SUM, win, &r[2]));
    CALL(MPI_Rget_accumulate(&one, 1, MPI_INT, &old, 1, MPI_INT, peer, kWin - 2, 1, MPI_INT, MPI_SUM, win, &r[3]));
    CALL(MPI_Waitall(4, r, MPI_STATUSES_IGNORE));
    CALL(MPI_Win_flush(peer, win));
    CALL(MPI_Compare_and_swap(&swp, &cmp, &was, MPI_INT, peer, kWin - 3, win));
    CALL(MPI_Get_accumulate(out, kWin / 8, MPI_INT, got, kWin / 8, MPI_INT, peer, kWin / 4, kWin / 8, MPI_INT,
                            MPI_REPLACE, win));
    CALL(MPI_Win_unlock(peer, win));
    EXPECT(old == 0 && was == 0);
    for (int i = 0; i < kWin / 4; ++i) EXPECT(res[2 * i] == rank * 1000 + round * 7 + 2 * i);
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < kWin / 4; ++i) EXPECT(mine[kWin / 2 + i] == peer * 1000 + round * 7 + i);
    EXPECT(mine[kWin - 1] == 1 && mine[kWin - 2] == 1 && mine[kWin - 3] == 5);
  }
  CALL(MPI_Type_free(&strided));
  CALL(MPI_Win_free(&win));
}

/* MPI_T calls that allocate: MPI_T_ERR_MEMORY is their out-of-memory error. */
static void tools_call(const char* what, int line, int e) {
  if (e == MPI_SUCCESS) return;
  if (e == MPI_T_ERR_MEMORY && armed) {
    printf("NOMEM %d line %d %s: MPI_T_ERR_MEMORY\n", rank, line, what);
  } else {
    printf("WRONG %d line %d %s: MPI_T error %d\n", rank, line, what, e);
    fflush(stdout);
    exit(1);
  }
  fflush(stdout);
  exit(7);
}
#define TCALL(x) tools_call(#x, __LINE__, (x))

static void tools(void) {
  int provided = 0, npvars = 0, ncvars = 0, count = 0;
  TCALL(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
  MPI_T_pvar_session session;
  TCALL(MPI_T_pvar_session_create(&session));
  TCALL(MPI_T_pvar_get_num(&npvars));
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < npvars && i < 8; ++i) {
      MPI_T_pvar_handle h;
      TCALL(MPI_T_pvar_handle_alloc(session, i, NULL, &h, &count));
      TCALL(MPI_T_pvar_handle_free(session, &h));
    }
    TCALL(MPI_T_cvar_get_num(&ncvars));
    for (int i = 0; i < ncvars && i < 8; ++i) {
      MPI_T_cvar_handle h;
      char value[256];
      TCALL(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
      TCALL(MPI_T_cvar_read(h, value));
      TCALL(MPI_T_cvar_handle_free(&h));
    }
  }
  TCALL(MPI_T_pvar_session_free(&session));
  TCALL(MPI_T_finalize());
}

/* Enough live receive handles that the request pool grows (by 64 at a
 * time; an MPI_Request names its slot). A receive whose request cannot be
 * had must not be posted: the failing rank then receives that very message
 * with a fresh MPI_Recv. */
enum { kHandles = 1500 };
static void handles(void) {
  static MPI_Request r[kHandles];
  static int in[kHandles];
  int lost = -1;
  CALL(MPI_Barrier(MPI_COMM_WORLD));
  for (int i = 0; i < kHandles; ++i) {
    if (armed && i == 1024) arm(arm_at); /* a new chunk of the pool */
    int e = MPI_Irecv(&in[i], 1, MPI_INT, peer, i, MPI_COMM_WORLD, &r[i]);
    if (e != MPI_SUCCESS) {
      int cls = -1, len = 0;
      char text[MPI_MAX_ERROR_STRING] = "";
      MPI_Error_class(e, &cls);
      MPI_Error_string(e, text, &len);
      if (!armed || cls != MPI_ERR_NO_MEM || lost >= 0) call_failed("MPI_Irecv", __LINE__, e);
      printf("ABSORBED %d MPI_Irecv %d: %s\n", rank, i, text);
      lost = i;
      r[i] = MPI_REQUEST_NULL;
    }
  }
  CALL(MPI_Barrier(MPI_COMM_WORLD));
  for (int i = 0; i < kHandles; ++i) {
    int v = rank * 100000 + i;
    CALL(MPI_Send(&v, 1, MPI_INT, peer, i, MPI_COMM_WORLD));
  }
  if (lost >= 0) {
    /* The abandoned receive took nothing: its message is still there. */
    CALL(MPI_Recv(&in[lost], 1, MPI_INT, peer, lost, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  }
  CALL(MPI_Waitall(kHandles, r, MPI_STATUSES_IGNORE));
  for (int i = 0; i < kHandles; ++i) EXPECT(in[i] == peer * 100000 + i);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (size != 2) {
    if (rank == 0) printf("WRONG: needs 2 ranks, not %d\n", size);
    MPI_Finalize();
    return 1;
  }
  peer = 1 - rank;
  if (getenv("NOMEM_PARTS")) parts = getenv("NOMEM_PARTS");
  arm = (void (*)(long))dlsym(RTLD_DEFAULT, "failalloc_arm");
  long (*count)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "failalloc_count");
  const char* at = getenv("FAILALLOC_AT");
  const char* who = getenv("FAILALLOC_RANK");
  armed = arm && at && who && atoi(who) == rank;
  CALL(MPI_Barrier(MPI_COMM_WORLD));
  if (armed) arm_at = atol(at);
  /* handles alone: armed at the allocation of interest (see handles()) */
  if (armed && strcmp(parts, "handles") != 0) arm(arm_at);
  if (part("p2p")) p2p();
  if (part("coll")) collectives();
  if (part("greq")) greq();
  if (part("rma")) rma();
  if (part("rmaops")) rmaops();
  if (part("tools")) tools();
  if (part("handles")) handles();
  if (armed) {
    printf("ALLOCS %ld\n", count());
    arm(0);
  }
  CALL(MPI_Barrier(MPI_COMM_WORLD));
  printf("DONE %d\n", rank);
  fflush(stdout);
  MPI_Finalize();
  return 0;
}
