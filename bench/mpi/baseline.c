/* mpibench_baseline: what the hardware gives, measured in the same run as
 * the MPI figures so floors can be stated relative to it (run.sh --quick):
 *   memcpy 1048576 <MB/s>   copying 1 MiB (buffers reused, as the MPI
 *                           bandwidth benchmark does)
 *   cacheline 64 <us>       one-way time of a cache line between two
 *                           threads pinned to cores 0 and 1 (half of a
 *                           ping-pong round trip)
 * Each is the median of 7 timed batches. No MPI. */
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

int main(void) {
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  printf("# mpibench_baseline: %ld cores\n", ncpu);
  printf("memcpy %d %.6g MB/s\n", 1 << 20, memcpy_mbps());
  if (ncpu >= 2) printf("cacheline 64 %.6g us\n", cacheline_us());
  return 0;
}
