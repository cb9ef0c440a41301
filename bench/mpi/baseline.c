/* mpibench_baseline: what the hardware gives, measured in the same run as
 * the MPI figures so floors can be stated relative to it (run.sh --quick):
 *   memcpy 1048576 <MB/s>   copying 1 MiB (buffers reused, as the MPI
 *                           bandwidth benchmark does)
 *   cacheline 64 <us>       one-way time of a cache line between two
 *                           threads pinned to cores 0 and 1 (half of a
 *                           ping-pong round trip)
 *   barrier2 0 <us>         the least a 2-rank barrier costs here: the
 *                           same two threads each store an epoch in a
 *                           line of their own and spin on the other's
 *   allreduce2 8 <us>       the least an 8-byte 2-rank allreduce costs:
 *                           each stores its value and a stamp in one line
 *                           of a ring of 64 (as coll/shm_node.hpp's small
 *                           slots), spins on the other's and adds it to
 *                           its own (not read back from its slot)
 * memcpy and cacheline are the median of 7 timed batches, barrier2 and
 * allreduce2 the 10th percentile of short ones (see exchange()). No MPI. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BATCHES 7

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median(double* v) {
  qsort(v, BATCHES, sizeof *v, cmp);
  return v[BATCHES / 2];
}

static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof set, &set);
}

static double memcpy_mbps(void) {
  size_t n = (size_t)1 << 20;
  char *a = malloc(n), *b = malloc(n);
  memset(a, 1, n);
  memset(b, 2, n);
  double v[BATCHES];
  for (int k = 0; k < BATCHES; ++k) {
    int reps = 200;
    double t0 = now();
    for (int i = 0; i < reps; ++i) {
      memcpy(b, a, n);
      __asm__ volatile("" ::"r"(b) : "memory");
    }
    v[k] = (double)n * reps / (now() - t0) / 1e6;
  }
  free(a);
  free(b);
  return median(v);
}

/* One cache line; the threads take turns incrementing it. */
static _Alignas(64) atomic_long line;
#define ROUNDS 100000

static void* bounce(void* arg) {
  long me = (long)arg;
  pin((int)me);
  for (long i = 0; i < ROUNDS; ++i) {
    long want = 2 * i + me;
    while (atomic_load_explicit(&line, memory_order_acquire) != want) {
    }
    atomic_store_explicit(&line, want + 1, memory_order_release);
  }
  return NULL;
}

static double cacheline_us(void) {
  double v[BATCHES];
  for (int k = 0; k < BATCHES; ++k) {
    atomic_store(&line, 0);
    pthread_t t;
    pthread_create(&t, NULL, bounce, (void*)1L);
    double t0 = now();
    bounce((void*)0L);
    pthread_join(t, NULL);
    /* 2 * ROUNDS one-way trips */
    v[k] = (now() - t0) * 1e6 / (2.0 * ROUNDS);
  }
  return median(v);
}

/* The floors of a 2-rank barrier and 8-byte allreduce: the protocol of
 * coll/shm_node.hpp (epoch flags, stamped slots) without the library.
 * Short batches started together, bounded in number and time: the
 * threads spin, so under load most batches wait for the scheduler; the
 * figure is the 10th percentile of the batches (what the protocol costs
 * when both run). */
#define RING 64
#define FLOOR_ROUNDS 1000
#define FLOOR_BATCHES 64
#define FLOOR_BUDGET 0.3 /* seconds */
static _Alignas(128) atomic_long flags[2][16];
static _Alignas(128) long slots[RING][2][16]; /* stamp, value; 128 B apart */
static _Alignas(128) atomic_int gate, stop;
static int floor_mode; /* 0 barrier, 1 allreduce */
static double floor_us[FLOOR_BATCHES];
static int floor_n;

static void* exchange(void* arg) {
  long me = (long)arg, other = 1 - me, sum = 0, i = 0;
  pin((int)me);
  double start = now();
  for (int b = 0; b < FLOOR_BATCHES; ++b) {
    if (me == 0 && now() - start > FLOOR_BUDGET) atomic_store(&stop, 1);
    atomic_fetch_add(&gate, 1);
    while (atomic_load(&gate) < 2 * (b + 1)) {
    }
    if (atomic_load(&stop)) break;
    double t0 = now();
    for (int k = 0; k < FLOOR_ROUNDS; ++k) {
      ++i;
      if (floor_mode == 0) {
        atomic_store_explicit(&flags[me][0], i, memory_order_release);
        while (atomic_load_explicit(&flags[other][0], memory_order_acquire) < i) {
        }
        continue;
      }
      long* mine = slots[i % RING][me];
      long* theirs = slots[i % RING][other];
      mine[1] = i + me;
      atomic_store_explicit((atomic_long*)mine, i, memory_order_release);
      while (atomic_load_explicit((atomic_long*)theirs, memory_order_acquire) < i) {
      }
      sum += i + me + theirs[1]; /* its own term from a register: see own_term */
    }
    if (me == 0) floor_us[floor_n++] = (now() - t0) * 1e6 / FLOOR_ROUNDS;
  }
  return (void*)sum;
}

static double exchange_us(int mode) {
  floor_mode = mode;
  floor_n = 0;
  memset(flags, 0, sizeof flags);
  memset(slots, 0, sizeof slots);
  atomic_store(&gate, 0);
  atomic_store(&stop, 0);
  pthread_t t;
  pthread_create(&t, NULL, exchange, (void*)1L);
  exchange((void*)0L);
  pthread_join(t, NULL);
  qsort(floor_us, (size_t)floor_n, sizeof *floor_us, cmp);
  return floor_n ? floor_us[floor_n / 10] : 0;
}

int main(void) {
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  printf("# mpibench_baseline: %ld cores\n", ncpu);
  printf("memcpy %d %.6g MB/s\n", 1 << 20, memcpy_mbps());
  if (ncpu >= 2) {
    printf("cacheline 64 %.6g us\n", cacheline_us());
    printf("barrier2 0 %.6g us\n", exchange_us(0));
    printf("allreduce2 8 %.6g us\n", exchange_us(1));
  }
  return 0;
}
