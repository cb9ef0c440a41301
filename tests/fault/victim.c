/* fault_victim: an MPI job that runs one kind of traffic forever, checking
 * every byte, until tests/fault/kill_test.sh kills one of its ranks with
 * SIGKILL. Modes:
 *   eager   ring exchange of 1 KiB messages (eager protocol)
 *   rndv    ring exchange of 1 MiB messages (rendezvous)
 *   coll    allreduce and bcast rounds
 *   greq    the main thread waits on a generalized request that a helper
 *           thread completes after each message from the left neighbour
 *   fence   active-target RMA epochs: put a block into the right
 *           neighbour's window and get one from the left's, between fences
 *   lock    passive-target RMA epochs: lock every other rank's window in
 *           turn, put a block, get it back, add to a counter there, unlock
 *   pscw    post-start-complete-wait epochs: expose to the left neighbour,
 *           access the right one: put a block and accumulate a counter
 *   flush   one lock_all epoch held open: put, flush, get back, flush,
 *           fetch-and-add, again and again (the kill lands mid-flush)
 *   token   a token passed round the ring: every rank but its holder
 *           waits in a blocking MPI_Recv (the kill lands mid-Recv)
 *   cfence, clock   fence and lock on a window from MPI_Win_create (user
 *           memory: the target's own progress serves the epochs)
 *   io      collective MPI_File_write_at_all of a block per rank to one
 *           shared file, MPI_File_sync (collective), then each reads its
 *           right neighbour's block back
 * Every rank prints "READY <rank>" after its first round (rank 0 also
 * "JOB <PMI_JOBID>"); a failed call prints "DETECTED <rank> at <wall-clock
 * ms>: <error>" and exits 3. Errors return (MPI_ERRORS_RETURN) so each rank reports its own. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../mpi/greq_stub.h"

static int rank, size;

static void fail(const char* what, int err) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  MPI_Error_string(err, text, &len);
  printf("DETECTED %d at %lld: %s: %s\n", rank, (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000, what, text);
  fflush(stdout);
  exit(3);
}

static void fill(unsigned char* b, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; ++i) b[i] = (unsigned char)(i * 31u + seed * 7u);
}
static void check(const unsigned char* b, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; ++i) {
    if (b[i] != (unsigned char)(i * 31u + seed * 7u)) {
      printf("CORRUPT %d: byte %zu of a message with seed %u\n", rank, i, seed);
      fflush(stdout);
      exit(4);
    }
  }
}

static void ready(long round) {
  if (round == 0) {
    printf("READY %d\n", rank);
    fflush(stdout);
  }
}

static void ring(size_t n) {
  unsigned char* out = malloc(n);
  unsigned char* in = malloc(n);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  for (long round = 0;; ++round) {
    fill(out, n, (unsigned)(rank + round));
    int e =
        MPI_Sendrecv(out, (int)n, MPI_BYTE, right, 1, in, (int)n, MPI_BYTE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (e) fail("MPI_Sendrecv", e);
    check(in, n, (unsigned)(left + round));
    ready(round);
  }
}

static void coll(void) {
  int v[1000], sum[1000];
  for (long round = 0;; ++round) {
    for (int i = 0; i < 1000; ++i) v[i] = rank + i + (int)round;
    int e = MPI_Allreduce(v, sum, 1000, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (e) fail("MPI_Allreduce", e);
    for (int i = 0; i < 1000; ++i) {
      if (sum[i] != size * (i + (int)round) + size * (size - 1) / 2) {
        printf("CORRUPT %d: allreduce element %d\n", rank, i);
        exit(4);
      }
    }
    e = MPI_Bcast(v, 1000, MPI_INT, (int)(round % size), MPI_COMM_WORLD);
    if (e) fail("MPI_Bcast", e);
    ready(round);
  }
}

struct helper {
  MPI_Request greq;
  int error;
};

/* Receives one message from the left neighbour, then completes the request. */
static void* helper_main(void* p) {
  struct helper* h = p;
  int left = (rank + size - 1) % size;
  int v = 0;
  h->error = MPI_Recv(&v, 1, MPI_INT, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Grequest_complete(h->greq);
  return NULL;
}

static void greq(void) {
  int right = (rank + 1) % size;
  for (long round = 0;; ++round) {
    struct helper h = {MPI_REQUEST_NULL, 0};
    int e = MPI_Grequest_start(greq_stub_query, greq_stub_free, greq_stub_cancel, NULL, &h.greq);
    if (e) fail("MPI_Grequest_start", e);
    pthread_t t;
    pthread_create(&t, NULL, helper_main, &h);
    int v = (int)round;
    e = MPI_Send(&v, 1, MPI_INT, right, 2, MPI_COMM_WORLD);
    if (e) fail("MPI_Send", e);
    e = MPI_Wait(&h.greq, MPI_STATUS_IGNORE);
    pthread_join(t, NULL);
    if (e) fail("MPI_Wait on a generalized request", e);
    if (h.error) fail("MPI_Recv completing a generalized request", h.error);
    ready(round);
  }
}

/* Every rank but the token's holder waits in MPI_Recv; the holder sleeps a
 * little (so the kill usually lands while every other rank receives) and
 * passes the token, which counts the passes, to the right. */
static void token(void) {
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int tok = 0;
  for (long round = 0;; ++round) {
    if (rank != 0 || round > 0) {
      int e = MPI_Recv(&tok, 1, MPI_INT, left, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (e) fail("MPI_Recv", e);
      if (tok != (int)(round * size + rank)) {
        printf("CORRUPT %d: token %d in round %ld\n", rank, tok, round);
        fflush(stdout);
        exit(4);
      }
    }
    ready(round);
    struct timespec nap = {0, 2000000};
    nanosleep(&nap, NULL);
    tok = (int)(round * size + rank + 1);
    int e = MPI_Send(&tok, 1, MPI_INT, right, 4, MPI_COMM_WORLD);
    if (e) fail("MPI_Send", e);
  }
}

/* Every round each rank writes its block of one shared file collectively,
 * syncs (which makes the writes visible to all, and is where ranks talk:
 * the writes themselves are independent), reads the right neighbour's block
 * and waits at a barrier before the next round overwrites it. */
static void io(void) {
  enum { kBlock = 1 << 16 };
  char name[64];
  const char* job = getenv("PMI_JOBID");
  snprintf(name, sizeof name, "/tmp/adi3-fault-io-%s", job ? job : "0");
  MPI_File fh;
  int e = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                        &fh);
  if (e) fail("MPI_File_open", e);
  MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
  unsigned char* out = malloc(kBlock);
  unsigned char* in = malloc(kBlock);
  for (long round = 0;; ++round) {
    fill(out, kBlock, (unsigned)(rank + round));
    e = MPI_File_write_at_all(fh, (MPI_Offset)rank * kBlock, out, kBlock, MPI_BYTE, MPI_STATUS_IGNORE);
    if (e) fail("MPI_File_write_at_all", e);
    e = MPI_File_sync(fh);
    if (e) fail("MPI_File_sync", e);
    const int right = (rank + 1) % size;
    e = MPI_File_read_at(fh, (MPI_Offset)right * kBlock, in, kBlock, MPI_BYTE, MPI_STATUS_IGNORE);
    if (e) fail("MPI_File_read_at", e);
    e = MPI_Barrier(MPI_COMM_WORLD);
    if (e) fail("MPI_Barrier", e);
    check(in, kBlock, (unsigned)(right + round));
    ready(round);
  }
}

enum { kWinInts = 4096 };
static int create_windows; /* cfence, clock: MPI_Win_create over malloc'ed memory */

static void win_fail(MPI_Win win, const char* what, int err) {
  (void)win;
  fail(what, err);
}

static MPI_Win new_window(int** base) {
  MPI_Win win;
  /* the blocks, then one counter per origin */
  const MPI_Aint bytes = (MPI_Aint)(kWinInts + size) * (MPI_Aint)sizeof(int);
  int e;
  if (create_windows) {
    *base = malloc((size_t)bytes);
    e = MPI_Win_create(*base, bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  } else {
    e = MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, base, &win);
  }
  if (e) fail(create_windows ? "MPI_Win_create" : "MPI_Win_allocate", e);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  memset(*base, 0, (size_t)(kWinInts + size) * sizeof(int));
  e = MPI_Barrier(MPI_COMM_WORLD); /* zeroed everywhere before any access */
  if (e) fail("MPI_Barrier", e);
  return win;
}

/* Every round: between two fences, put a block into the right neighbour's
 * window and get the left neighbour's own block from its window; after the
 * closing fence both are checked. */
static void fence(void) {
  int* base = NULL;
  MPI_Win win = new_window(&base);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int* out = malloc(kWinInts / 2 * sizeof(int));
  int* got = malloc(kWinInts / 2 * sizeof(int));
  for (long round = 0;; ++round) {
    for (int i = 0; i < kWinInts / 2; ++i) {
      out[i] = (int)(rank * 7919 + round * 31 + i);
      base[kWinInts / 2 + i] = (int)(rank * 104729 + round + i); /* my own block, read by the right */
    }
    int e = MPI_Win_fence(0, win);
    if (e) win_fail(win, "MPI_Win_fence (open)", e);
    e = MPI_Put(out, kWinInts / 2, MPI_INT, right, 0, kWinInts / 2, MPI_INT, win);
    if (e) win_fail(win, "MPI_Put", e);
    e = MPI_Get(got, kWinInts / 2, MPI_INT, left, kWinInts / 2, kWinInts / 2, MPI_INT, win);
    if (e) win_fail(win, "MPI_Get", e);
    e = MPI_Win_fence(0, win);
    if (e) win_fail(win, "MPI_Win_fence (close)", e);
    for (int i = 0; i < kWinInts / 2; ++i) {
      if (base[i] != (int)(left * 7919 + round * 31 + i) || got[i] != (int)(left * 104729 + round + i)) {
        printf("CORRUPT %d: element %d of round %ld\n", rank, i, round);
        fflush(stdout);
        exit(4);
      }
    }
    ready(round);
  }
}

/* Every round: exposed to the left neighbour, accessing the right one, put
 * a block there and add one to its counter; after the wait, the block from
 * the left is checked and the counter counts the rounds. */
static void pscw(void) {
  int* base = NULL;
  MPI_Win win = new_window(&base);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  MPI_Group world, to_left, to_right;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &left, &to_left);
  MPI_Group_incl(world, 1, &right, &to_right);
  int* out = malloc(kWinInts * sizeof(int));
  for (long round = 0;; ++round) {
    for (int i = 0; i < kWinInts; ++i) out[i] = (int)(rank * 7919 + round * 31 + i);
    int e = MPI_Win_post(to_left, 0, win);
    if (e) win_fail(win, "MPI_Win_post", e);
    e = MPI_Win_start(to_right, 0, win);
    if (e) win_fail(win, "MPI_Win_start", e);
    e = MPI_Put(out, kWinInts, MPI_INT, right, 0, kWinInts, MPI_INT, win);
    if (e) win_fail(win, "MPI_Put", e);
    int one = 1;
    e = MPI_Accumulate(&one, 1, MPI_INT, right, kWinInts, 1, MPI_INT, MPI_SUM, win);
    if (e) win_fail(win, "MPI_Accumulate", e);
    e = MPI_Win_complete(win);
    if (e) win_fail(win, "MPI_Win_complete", e);
    e = MPI_Win_wait(win);
    if (e) win_fail(win, "MPI_Win_wait", e);
    for (int i = 0; i < kWinInts; ++i) {
      if (base[i] != (int)(left * 7919 + round * 31 + i) || base[kWinInts] != (int)round + 1) {
        printf("CORRUPT %d: element %d of round %ld (counter %d)\n", rank, i, round, base[kWinInts]);
        fflush(stdout);
        exit(4);
      }
    }
    ready(round);
  }
}

/* Passive target. lock: every round an exclusive lock on the window of the
 * next other rank in turn (so every rank soon needs a dead one), a put, a
 * flush, a get of the same block, a fetch-and-add on our counter there,
 * unlock. flush (held = 1): one lock_all epoch on every rank, never closed,
 * the same round to the right neighbour ended by a flush_all. The block
 * read back must be the one written, the counter count our rounds there. */
static void passive(int held) {
  int* base = NULL;
  MPI_Win win = new_window(&base);
  int right = (rank + 1) % size;
  int* out = malloc(kWinInts * sizeof(int));
  int* got = malloc(kWinInts * sizeof(int));
  int e = held ? MPI_Win_lock_all(0, win) : 0;
  if (e) win_fail(win, "MPI_Win_lock_all", e);
  const int others = size > 1 ? size - 1 : 1;
  for (long round = 0;; ++round) {
    for (int i = 0; i < kWinInts; ++i) out[i] = (int)(rank * 7919 + round * 31 + i);
    if (!held) right = (rank + 1 + (int)(round % others)) % size;
    const int expect = held ? (int)round : (int)(round / others); /* our earlier rounds at this target */
    e = held ? 0 : MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
    if (e) win_fail(win, "MPI_Win_lock", e);
    e = MPI_Put(out, kWinInts, MPI_INT, right, 0, kWinInts, MPI_INT, win);
    if (e) win_fail(win, "MPI_Put", e);
    e = MPI_Win_flush(right, win);
    if (e) win_fail(win, "MPI_Win_flush", e);
    e = MPI_Get(got, kWinInts, MPI_INT, right, 0, kWinInts, MPI_INT, win);
    if (e) win_fail(win, "MPI_Get", e);
    int one = 1, old = 0;
    e = MPI_Fetch_and_op(&one, &old, MPI_INT, right, kWinInts + rank, MPI_SUM, win);
    if (e) win_fail(win, "MPI_Fetch_and_op", e);
    e = held ? MPI_Win_flush_all(win) : MPI_Win_unlock(right, win);
    if (e) win_fail(win, held ? "MPI_Win_flush_all" : "MPI_Win_unlock", e);
    if (memcmp(out, got, kWinInts * sizeof(int)) != 0 || old != expect) {
      printf("CORRUPT %d: round %ld read back other data (counter %d)\n", rank, round, old);
      fflush(stdout);
      exit(4);
    }
    ready(round);
  }
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  int provided = 0;
  MPI_Init_thread(&argc, &argv, strcmp(mode, "greq") == 0 ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (rank == 0) {
    const char* job = getenv("PMI_JOBID");
    printf("JOB %s\n", job ? job : "?");
    fflush(stdout);
  }
  if (strcmp(mode, "eager") == 0) {
    ring(1024);
  } else if (strcmp(mode, "rndv") == 0) {
    ring(1 << 20);
  } else if (strcmp(mode, "coll") == 0) {
    coll();
  } else if (strcmp(mode, "greq") == 0) {
    greq();
  } else if (strcmp(mode, "fence") == 0) {
    fence();
  } else if (strcmp(mode, "lock") == 0) {
    passive(0);
  } else if (strcmp(mode, "pscw") == 0) {
    pscw();
  } else if (strcmp(mode, "flush") == 0) {
    passive(1);
  } else if (strcmp(mode, "token") == 0) {
    token();
  } else if (strcmp(mode, "cfence") == 0) {
    create_windows = 1;
    fence();
  } else if (strcmp(mode, "clock") == 0) {
    create_windows = 1;
    passive(0);
  } else if (strcmp(mode, "io") == 0) {
    io();
  } else {
    fprintf(stderr, "usage: fault_victim eager|rndv|coll|greq|fence|lock|pscw|flush|token|cfence|clock|io\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  return 0;
}
