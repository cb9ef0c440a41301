/* soak: a random mix of point-to-point (every mode, wildcards, sizes from
 * 0 to 2 MiB), collectives (blocking and nonblocking), generalized
 * requests and one-sided communication (soak_rma.c) on every rank for a
 * given time, checking every byte received.
 * All ranks draw the same plan from a seeded generator, so each round is
 * a valid program. At the end each rank prints its memory high-water mark
 * (VmHWM) and how many operations and bytes it checked.
 *
 *   mpiexec -n 8 soak SECONDS [SEED]       (scripts/soak.sh runs it) */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "soak.h"

int rank, size;
uint64_t ops, bytes_checked;

static uint64_t rng_state;
uint64_t next_rand(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

void die(const char* what, int e) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(e, text, &len);
  fprintf(stderr, "soak rank %d: %s: %s\n", rank, what, text);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static unsigned char byte_at(size_t i, uint64_t seed) { return (unsigned char)((i * 2654435761u) >> 13 ^ seed); }
static void fill(unsigned char* b, size_t n, uint64_t seed) {
  for (size_t i = 0; i < n; ++i) b[i] = byte_at(i, seed);
}
static void check(const unsigned char* b, size_t n, uint64_t seed, const char* what) {
  for (size_t i = 0; i < n; ++i) {
    if (b[i] != byte_at(i, seed)) {
      fprintf(stderr, "soak rank %d: %s: byte %zu of %zu differs\n", rank, what, i, n);
      MPI_Abort(MPI_COMM_WORLD, 4);
    }
  }
  bytes_checked += n;
  ++ops;
}

static size_t pick_size(void) {
  static const size_t sizes[] = {0, 1, 100, 4096, 16384, 16385, 65536, 65537, 300000, 1 << 20, 2 << 20};
  return sizes[next_rand() % (sizeof sizes / sizeof sizes[0])];
}

/* Every rank sends to perm[rank] and receives from the rank that sends to it. */
static void p2p_round(uint64_t round) {
  int* perm = malloc(sizeof(int) * (size_t)size);
  for (int i = 0; i < size; ++i) perm[i] = i;
  for (int i = size - 1; i > 0; --i) {
    int j = (int)(next_rand() % (uint64_t)(i + 1)), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  int from = 0;
  for (int i = 0; i < size; ++i)
    if (perm[i] == rank) from = i;
  const size_t n = pick_size();
  const int mode = (int)(next_rand() % 4), wildcard = (int)(next_rand() % 2);
  /* A tag of its own per round: a wildcard receive must not take a later
   * round's message of a rank that is already ahead. */
  const int tag = (int)(round % 30000);
  unsigned char* out = malloc(n + 1);
  unsigned char* in = malloc(n + 1);
  fill(out, n, round * 131 + (uint64_t)rank);
  MPI_Request rr, sr;
  MPI_Status st;
  CALL(MPI_Irecv(in, (int)n, MPI_BYTE, wildcard ? MPI_ANY_SOURCE : from, tag, MPI_COMM_WORLD, &rr));
  switch (mode) {
    case 0:
      CALL(MPI_Send(out, (int)n, MPI_BYTE, perm[rank], tag, MPI_COMM_WORLD));
      break;
    case 1:
      CALL(MPI_Ssend(out, (int)n, MPI_BYTE, perm[rank], tag, MPI_COMM_WORLD));
      break;
    case 2:
      CALL(MPI_Isend(out, (int)n, MPI_BYTE, perm[rank], tag, MPI_COMM_WORLD, &sr));
      CALL(MPI_Wait(&sr, MPI_STATUS_IGNORE));
      break;
    default:
      CALL(MPI_Issend(out, (int)n, MPI_BYTE, perm[rank], tag, MPI_COMM_WORLD, &sr));
      CALL(MPI_Wait(&sr, MPI_STATUS_IGNORE));
  }
  CALL(MPI_Wait(&rr, &st));
  int count = 0;
  MPI_Get_count(&st, MPI_BYTE, &count);
  if (st.MPI_SOURCE != from || st.MPI_TAG != tag || (size_t)count != n) {
    fprintf(stderr, "soak rank %d: envelope (%d, %d, %d), want (%d, %d, %zu)\n", rank, st.MPI_SOURCE, st.MPI_TAG, count,
            from, tag, n);
    MPI_Abort(MPI_COMM_WORLD, 4);
  }
  check(in, n, round * 131 + (uint64_t)from, "point-to-point");
  free(out);
  free(in);
  free(perm);
}

static void allreduce_round(uint64_t round, int nonblocking) {
  const int n = (int)(next_rand() % 50000) + 1;
  long long* v = malloc(sizeof(long long) * (size_t)n);
  long long* s = malloc(sizeof(long long) * (size_t)n);
  for (int i = 0; i < n; ++i) v[i] = (long long)(rank + 1) * (i + (long long)round);
  if (nonblocking) {
    MPI_Request r;
    int flag = 0;
    CALL(MPI_Iallreduce(v, s, n, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, &r));
    while (!flag) CALL(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
  } else {
    CALL(MPI_Allreduce(v, s, n, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
  }
  const long long ranks = (long long)size * (size + 1) / 2;
  for (int i = 0; i < n; ++i) {
    if (s[i] != ranks * (i + (long long)round)) {
      fprintf(stderr, "soak rank %d: allreduce element %d wrong\n", rank, i);
      MPI_Abort(MPI_COMM_WORLD, 4);
    }
  }
  bytes_checked += sizeof(long long) * (size_t)n;
  ++ops;
  free(v);
  free(s);
}

static void bcast_round(uint64_t round) {
  const size_t n = pick_size();
  const int root = (int)(next_rand() % (uint64_t)size);
  unsigned char* b = malloc(n + 1);
  if (rank == root) fill(b, n, round);
  CALL(MPI_Bcast(b, (int)n, MPI_BYTE, root, MPI_COMM_WORLD));
  check(b, n, round, "bcast");
  free(b);
}

static int block(int from, int to, uint64_t round) {
  return (int)(((unsigned)from * 7919u + (unsigned)to * 31u + round) % 3000);
}

static void alltoallv_round(uint64_t round) {
  int *sc = malloc(sizeof(int) * (size_t)size), *sd = malloc(sizeof(int) * (size_t)size);
  int *rc = malloc(sizeof(int) * (size_t)size), *rd = malloc(sizeof(int) * (size_t)size);
  int st = 0, rt = 0;
  for (int j = 0; j < size; ++j) {
    sc[j] = block(rank, j, round);
    sd[j] = st;
    st += sc[j];
    rc[j] = block(j, rank, round);
    rd[j] = rt;
    rt += rc[j];
  }
  unsigned char* out = malloc((size_t)st + 1);
  unsigned char* in = malloc((size_t)rt + 1);
  for (int j = 0; j < size; ++j) fill(out + sd[j], (size_t)sc[j], round * 1000 + (uint64_t)rank * 64 + (uint64_t)j);
  CALL(MPI_Alltoallv(out, sc, sd, MPI_BYTE, in, rc, rd, MPI_BYTE, MPI_COMM_WORLD));
  for (int j = 0; j < size; ++j)
    check(in + rd[j], (size_t)rc[j], round * 1000 + (uint64_t)j * 64 + (uint64_t)rank, "alltoallv");
  free(out);
  free(in);
  free(sc);
  free(sd);
  free(rc);
  free(rd);
}

/* A generalized request completed by a helper thread once it received a
 * message from the left neighbour. */
struct helper {
  MPI_Request greq;
  size_t n;
  uint64_t seed;
  int error;
  unsigned char* buf;
};
static int q_fn(void* x, MPI_Status* s) {
  (void)x;
  MPI_Status_set_elements(s, MPI_BYTE, 0);
  MPI_Status_set_cancelled(s, 0);
  return MPI_SUCCESS;
}
static int f_fn(void* x) {
  (void)x;
  return MPI_SUCCESS;
}
static int c_fn(void* x, int c) {
  (void)x;
  (void)c;
  return MPI_SUCCESS;
}
static void* helper_main(void* p) {
  struct helper* h = p;
  int left = (rank + size - 1) % size;
  h->error = MPI_Recv(h->buf, (int)h->n, MPI_BYTE, left, 30001, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Grequest_complete(h->greq);
  return NULL;
}
static void greq_round(uint64_t round) {
  struct helper h = {MPI_REQUEST_NULL, pick_size(), round, 0, NULL};
  h.buf = malloc(h.n + 1);
  unsigned char* out = malloc(h.n + 1);
  fill(out, h.n, round + (uint64_t)rank);
  CALL(MPI_Grequest_start(q_fn, f_fn, c_fn, NULL, &h.greq));
  pthread_t t;
  pthread_create(&t, NULL, helper_main, &h);
  MPI_Request s;
  CALL(MPI_Isend(out, (int)h.n, MPI_BYTE, (rank + 1) % size, 30001, MPI_COMM_WORLD, &s));
  CALL(MPI_Wait(&h.greq, MPI_STATUS_IGNORE));
  pthread_join(t, NULL);
  CALL(MPI_Wait(&s, MPI_STATUS_IGNORE));
  if (h.error) die("MPI_Recv in a generalized request's helper", h.error);
  check(h.buf, h.n, round + (uint64_t)((rank + size - 1) % size), "generalized request");
  free(out);
  free(h.buf);
}

/* A line of /proc/self/status in KiB (VmHWM, VmRSS), -1 if absent. */
static long status_kib(const char* key) {
  FILE* f = fopen("/proc/self/status", "r");
  char line[256];
  long v = -1;
  const size_t n = strlen(key);
  while (f && fgets(line, sizeof line, f)) {
    if (strncmp(line, key, n) == 0 && line[n] == ':') v = strtol(line + n + 1, NULL, 10);
  }
  if (f) fclose(f);
  return v;
}
static long vm_hwm_kib(void) { return status_kib("VmHWM"); }

/* Heap bytes in use (malloc'd, not freed): what a leak grows, unlike VmHWM,
   which also counts the shared-memory segments a rank has touched. */
static long heap_kib(void) {
  struct mallinfo2 m = mallinfo2();
  return (long)((m.uordblks + m.hblkhd) / 1024);
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const double seconds = argc > 1 ? atof(argv[1]) : 10;
  const uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 12345;
  rma_setup();
  const double start = MPI_Wtime();
  uint64_t round = 0;
  long hwm_after_warmup = -1;
  /* heap in use at each quarter of the run and at the end, VmRSS at the
     first quarter: flat when nothing grows with the number of rounds */
  long heap_at[3] = {-1, -1, -1}, rss_quarter = -1;
  int quarters = 0;
  for (int go = 1; go; ++round) {
    rng_state = seed * 0x9e3779b97f4a7c15ull + round * 0xbf58476d1ce4e5b9ull + 1;
    switch (next_rand() % 7) {
      case 0:
        p2p_round(round);
        break;
      case 1:
        allreduce_round(round, 0);
        break;
      case 2:
        allreduce_round(round, 1);
        break;
      case 3:
        bcast_round(round);
        break;
      case 4:
        alltoallv_round(round);
        break;
      case 5:
        greq_round(round);
        break;
      default:
        rma_round(round);
        break;
    }
    if (round == 200) hwm_after_warmup = vm_hwm_kib();
    if (round % 16 == 15) {
      const double t = MPI_Wtime() - start;
      go = rank != 0 || t < seconds;
      if (rank == 0 && go && quarters < 3 && t >= seconds * (quarters + 1) / 4) go = 2; /* everyone samples now */
      CALL(MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD));
      if (go == 2) {
        heap_at[quarters] = heap_kib();
        if (quarters++ == 0) rss_quarter = status_kib("VmRSS");
      }
    }
  }
  const long heap_end = heap_kib(), rss_end = status_kib("VmRSS");
  rma_teardown();
  printf(
      "soak rank %d: %llu rounds, %llu checks (%llu RMA calls), %llu bytes checked, VmHWM %ld KiB (%ld KiB after 200 "
      "rounds); heap in use at 1/4, 1/2, 3/4 and the end %ld %ld %ld %ld KiB; VmRSS at 1/4 and the end %ld %ld KiB\n",
      rank, (unsigned long long)round, (unsigned long long)ops, (unsigned long long)rma_ops,
      (unsigned long long)bytes_checked, vm_hwm_kib(), hwm_after_warmup, heap_at[0], heap_at[1], heap_at[2], heap_end,
      rss_quarter, rss_end);
  fflush(stdout);
  MPI_Finalize();
  return 0;
}
