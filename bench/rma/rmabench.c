/* rmabench: one-sided communication micro-benchmarks against the standard
 * MPI interface only, so one source builds with adi3's mpicc, mpicc.mpich
 * and mpicc.openmpi and the three are compared line by line (run.sh here,
 * or bench/mpi/run.sh as job "rma").
 *
 * Two ranks: rank 0 is the origin, rank 1 the target, which waits in
 * MPI_Barrier while passive-target figures are taken (fence figures need
 * it in every fence). For windows from MPI_Win_create ("create") and
 * MPI_Win_allocate ("alloc"):
 *   latency (us per operation, 8 bytes): put, get, accumulate (MPI_SUM on
 *     doubles), fetch_and_op (MPI_SUM, long), compare_and_swap (long) with
 *     flush (one MPI_Win_flush after each operation inside lock_all),
 *     lock (MPI_Win_lock shared / op / MPI_Win_unlock each time) and fence
 *     (op then MPI_Win_fence each time);
 *   bandwidth (MB/s): put and get of 1 KiB, 64 KiB and 1 MiB (--sizes),
 *     16 per flush;
 *   accumulate of 4 MiB under lock/unlock (us).
 * Each figure is one line "name size value unit" (lines starting with '#'
 * are comments), e.g. "put_flush_alloc 8 0.41 us".
 *
 * Options: --target S (seconds one timed batch lasts, default 0.02),
 * --quick (latencies only), --sizes LIST (the bandwidth sizes in bytes,
 * comma-separated, each 1 to 4 MiB), --only RE (figures whose name matches the
 * extended regular expression RE; given more than once, every one of
 * them), --no-pin (by default rank r runs on
 * core r % ncpu, set before any window exists), --busy-target (also the
 * flush latencies with the target computing outside the library instead
 * of waiting in MPI_Barrier: "<op>_flush_busy_<flavor>"; it computes
 * until the origin's put of a stop word lands in its window memory, or
 * for 1 s at most, so a library that applies operations only inside the
 * target's calls shows that stall). */
#define _GNU_SOURCE
#include <mpi.h>
#include <regex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum op { PUT, GET, ACC, FOP, CAS };
enum sync { FLUSH, LOCK, FENCE };
static const char* op_name[] = {"put", "get", "acc", "fop", "cas"};
static const char* sync_name[] = {"flush", "lock", "fence"};

#define WIN_BYTES (4L << 20)

static double opt_target = 0.02;
static int opt_quick = 0, opt_pin = 1, opt_busy = 0, rank;
#define MAX_SIZES 16
static int opt_sizes[MAX_SIZES] = {1024, 65536, 1 << 20}, n_sizes = 3;
static regex_t opt_only[4]; /* figures whose name matches every one (default: all) */
static int have_only = 0;

static int wanted(const char* name) {
  for (int i = 0; i < have_only; ++i)
    if (regexec(&opt_only[i], name, 0, NULL, 0) != 0) return 0;
  return 1;
}

struct bench {
  MPI_Win win;
  enum op op;
  enum sync sync;
  int bytes; /* per operation */
  int burst; /* operations per synchronization */
  char *buf, *res;
  volatile long* stop; /* busy target: the stop word in rank 1's window memory, else NULL */
};

/* The stop word's displacement: the window's last cache line. */
#define STOP_DISP (WIN_BYTES - 64)
#define BUSY_MAX_S 1.0

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static volatile double busy_sink;

/* Rank 1, busy target: arithmetic with no MPI call until the origin's put
 * sets the stop word (or BUSY_MAX_S pass). */
static void compute_until(volatile long* stop) {
  const double t0 = now_s();
  double x = 1.0;
  while (!*stop) {
    for (int i = 0; i < 200; ++i) x = x * 1.0000001 + 1e-9;
    if (now_s() - t0 > BUSY_MAX_S) break;
  }
  busy_sink = x;
}

static void issue(struct bench* b) {
  long one = 1, cmp = 0;
  switch (b->op) {
    case PUT:
      MPI_Put(b->buf, b->bytes, MPI_BYTE, 1, 0, b->bytes, MPI_BYTE, b->win);
      break;
    case GET:
      MPI_Get(b->res, b->bytes, MPI_BYTE, 1, 0, b->bytes, MPI_BYTE, b->win);
      break;
    case ACC:
      MPI_Accumulate(b->buf, b->bytes / 8, MPI_DOUBLE, 1, 0, b->bytes / 8, MPI_DOUBLE, MPI_SUM, b->win);
      break;
    case FOP:
      MPI_Fetch_and_op(&one, b->res, MPI_LONG, 1, 0, MPI_SUM, b->win);
      break;
    case CAS:
      MPI_Compare_and_swap(&one, &cmp, b->res, MPI_LONG, 1, 0, b->win);
      break;
  }
}

/* n synchronizations of b->burst operations each. */
static void body(struct bench* b, long n) {
  for (long i = 0; i < n; ++i) {
    switch (b->sync) {
      case FLUSH: /* inside lock_all (set up by measure) */
        if (rank == 0) {
          for (int k = 0; k < b->burst; ++k) issue(b);
          MPI_Win_flush(1, b->win);
        }
        break;
      case LOCK:
        if (rank == 0) {
          MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, b->win);
          for (int k = 0; k < b->burst; ++k) issue(b);
          MPI_Win_unlock(1, b->win);
        }
        break;
      case FENCE:
        if (rank == 0)
          for (int k = 0; k < b->burst; ++k) issue(b);
        MPI_Win_fence(0, b->win);
        break;
    }
  }
}

/* --sizes LIST: 1 to MAX_SIZES sizes of 1 byte to the window's size; false
 * for anything else. */
static int parse_sizes(const char* list) {
  int n = 0;
  for (const char* p = list; *p;) {
    char* end;
    long v = strtol(p, &end, 0);
    if (end == p || v < 1 || v > WIN_BYTES || n == MAX_SIZES || (*end && *end != ',')) return 0;
    opt_sizes[n++] = (int)v;
    p = *end ? end + 1 : end;
  }
  n_sizes = n;
  return n > 0;
}

/* One batch of n synchronizations; rank 0's seconds, known to both. */
static double batch(struct bench* b, long n) {
  MPI_Bcast(&n, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  if (b->stop && rank == 1)
    compute_until(b->stop);
  else
    body(b, n);
  double t = MPI_Wtime() - t0;
  if (b->stop && rank == 0) { /* inside lock_all: end the target's computation */
    long one = 1;
    MPI_Put(&one, 1, MPI_LONG, 1, STOP_DISP, 1, MPI_LONG, b->win);
    MPI_Win_flush(1, b->win);
  }
  MPI_Barrier(MPI_COMM_WORLD);            /* the target waits here */
  if (b->stop && rank == 1) *b->stop = 0; /* the put landed before rank 0's flush returned */
  MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return t;
}

/* Seconds per synchronization: batches grow until one lasts opt_target
 * and holds at least 8 synchronizations (the warm-up), then the best of
 * three batches of that size (a loaded machine only ever adds time). */
static double measure(struct bench* b) {
  if (b->sync == FLUSH && rank == 0) MPI_Win_lock_all(0, b->win);
  if (b->sync == FENCE) MPI_Win_fence(MPI_MODE_NOPRECEDE, b->win);
  long n = 1;
  for (;;) {
    double t = batch(b, n);
    if ((t >= opt_target && n >= 8) || n >= (1L << 30)) break;
    double want = t > 0 ? 1.25 * opt_target / t * (double)n : 16.0 * (double)n;
    n = want > 16.0 * (double)n ? 16 * n : (long)want + 1;
    if (n < 8) n = 8;
  }
  double best = batch(b, n);
  for (int i = 0; i < 2; ++i) {
    double t = batch(b, n);
    if (t < best) best = t;
  }
  if (b->sync == FENCE) MPI_Win_fence(MPI_MODE_NOSUCCEED, b->win);
  if (b->sync == FLUSH && rank == 0) MPI_Win_unlock_all(b->win);
  return best / (double)n;
}

static void report(const char* name, long size, double value, const char* unit) {
  if (rank != 0) return;
  printf("%s %ld %.4g %s\n", name, size, value, unit);
  fflush(stdout);
}

static void pin(void) {
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  if (ncpu < 1) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET((int)(rank % ncpu), &set);
  sched_setaffinity(0, sizeof set, &set);
}

static void run_window(const char* flavor, MPI_Win win, char* base, char* buf, char* res) {
  char name[64];
  struct bench b = {win, PUT, FLUSH, 8, 1, buf, res, NULL};
  for (int s = FLUSH; s <= FENCE; ++s) {
    for (int o = PUT; o <= CAS; ++o) {
      b.op = (enum op)o;
      b.sync = (enum sync)s;
      b.bytes = 8;
      b.burst = 1;
      snprintf(name, sizeof name, "%s_%s_%s", op_name[o], sync_name[s], flavor);
      if (wanted(name)) report(name, 8, 1e6 * measure(&b), "us");
    }
  }
  for (int o = PUT; opt_busy && o <= CAS; ++o) {
    b.op = (enum op)o;
    b.sync = FLUSH;
    b.stop = (volatile long*)(base + STOP_DISP);
    snprintf(name, sizeof name, "%s_flush_busy_%s", op_name[o], flavor);
    if (wanted(name)) report(name, 8, 1e6 * measure(&b), "us");
    b.stop = NULL;
  }
  if (opt_quick) return;
  for (int o = PUT; o <= GET; ++o) {
    for (int i = 0; i < n_sizes; ++i) {
      b.op = (enum op)o;
      b.sync = FLUSH;
      b.bytes = opt_sizes[i];
      b.burst = 16;
      snprintf(name, sizeof name, "%s_bw_flush_%s", op_name[o], flavor);
      if (wanted(name)) report(name, b.bytes, (double)b.bytes * b.burst / measure(&b) / 1e6, "MB/s");
    }
  }
  b.op = ACC;
  b.sync = LOCK;
  b.bytes = (int)WIN_BYTES;
  b.burst = 1;
  snprintf(name, sizeof name, "acc_lock_%s", flavor);
  if (wanted(name)) report(name, WIN_BYTES, 1e6 * measure(&b), "us");
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--target") && i + 1 < argc)
      opt_target = atof(argv[++i]);
    else if (!strcmp(argv[i], "--quick"))
      opt_quick = 1;
    else if (!strcmp(argv[i], "--no-pin"))
      opt_pin = 0;
    else if (!strcmp(argv[i], "--busy-target"))
      opt_busy = 1;
    else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
      if (!parse_sizes(argv[++i])) {
        if (rank == 0)
          fprintf(stderr, "rmabench: --sizes takes 1 to %d comma-separated sizes of 1 to %ld bytes\n", MAX_SIZES,
                  WIN_BYTES);
        MPI_Finalize();
        return 2;
      }
    } else if (!strcmp(argv[i], "--only") && i + 1 < argc)
      have_only += have_only < 4 && regcomp(&opt_only[have_only], argv[++i], REG_EXTENDED | REG_NOSUB) == 0;
  }
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "rmabench: run with 2 ranks (got %d)\n", size);
    MPI_Finalize();
    return 2;
  }
  if (opt_pin) pin();
  char* buf = malloc(WIN_BYTES);
  char* res = malloc(WIN_BYTES);
  memset(buf, 1, WIN_BYTES);
  memset(res, 0, WIN_BYTES);
  if (rank == 0) printf("# rmabench: name size value unit (origin rank 0, target rank 1)\n");

  char* mem = malloc(WIN_BYTES);
  memset(mem, 0, WIN_BYTES);
  MPI_Win win;
  MPI_Win_create(mem, WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  run_window("create", win, mem, buf, res);
  MPI_Win_free(&win);
  free(mem);

  MPI_Win_allocate(WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
  memset(mem, 0, WIN_BYTES);
  MPI_Barrier(MPI_COMM_WORLD);
  run_window("alloc", win, mem, buf, res);
  MPI_Win_free(&win);

  free(buf);
  free(res);
  MPI_Finalize();
  return 0;
}
