/* libadi3_failalloc.so: a malloc interposer (LD_PRELOAD) that makes one
 * allocation of the process fail, for the out-of-memory tests.
 *
 * The program arms it with failalloc_arm(n) (found with dlsym, so the
 * program also runs without the interposer): the nth allocation from then
 * on (malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign, and
 * so operator new) returns NULL with errno ENOMEM, once; failalloc_arm(0)
 * disarms it. failalloc_count() says how many allocations were made since
 * the last arming. Environment:
 *   FAILALLOC_RANK=r  only the process whose PMI_RANK is r fails (the
 *                     others count nothing); default every process.
 * Allocations of every thread count, in the order they happen. Under
 * AddressSanitizer (ASAN_OPTIONS=verify_asan_link_order=0) operator new
 * does not go through malloc: failalloc_new.cpp counts it there. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static void* (*real_malloc)(size_t);
static void* (*real_calloc)(size_t, size_t);
static void* (*real_realloc)(void*, size_t);
static int (*real_posix_memalign)(void**, size_t, size_t);
static void* (*real_aligned_alloc)(size_t, size_t);
static void* (*real_memalign)(size_t, size_t);
static void (*real_free)(void*);

static atomic_long target;  /* the allocation (counted from arming) that fails; 0: none */
static atomic_long counted; /* allocations since arming */
static int applies = -1;    /* this process is the one FAILALLOC_RANK names (-1: not known yet) */

/* dlsym may allocate before calloc is resolved: serve it from here. */
static _Alignas(16) char boot[8192];
static size_t boot_used;
static int resolving;

static int in_boot(const void* p) { return (const char*)p >= boot && (const char*)p < boot + sizeof boot; }

static void* boot_alloc(size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (boot_used + n > sizeof boot) return NULL;
  void* p = boot + boot_used;
  boot_used += n;
  return p;
}

static int under_asan; /* set by resolve() */

static void resolve(void) {
  if (real_malloc || resolving) return;
  resolving = 1;
  real_calloc = (void* (*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
  real_realloc = (void* (*)(void*, size_t))dlsym(RTLD_NEXT, "realloc");
  real_posix_memalign = (int (*)(void**, size_t, size_t))dlsym(RTLD_NEXT, "posix_memalign");
  real_aligned_alloc = (void* (*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
  real_memalign = (void* (*)(size_t, size_t))dlsym(RTLD_NEXT, "memalign");
  real_free = (void (*)(void*))dlsym(RTLD_NEXT, "free");
  real_malloc = (void* (*)(size_t))dlsym(RTLD_NEXT, "malloc");
  under_asan = dlsym(RTLD_DEFAULT, "__asan_init") != NULL; /* its allocations, if any, are not failed */
  resolving = 0;
}

/* Whether this allocation is the one to fail (failalloc_new.cpp asks too). */
int failalloc_fail_now(void);
/* Under AddressSanitizer malloc is left alone: the sanitizer's own threads
 * and stacks take memory through it and cannot survive a refusal. */
static int fail_now(void) { return under_asan ? 0 : failalloc_fail_now(); }
__attribute__((visibility("default"))) int failalloc_fail_now(void) {
  long t = atomic_load_explicit(&target, memory_order_relaxed);
  if (t == 0) return 0;
  if (applies < 0) {
    const char* want = getenv("FAILALLOC_RANK");
    const char* me = getenv("PMI_RANK");
    applies = !want || (me && strcmp(want, me) == 0);
  }
  if (!applies) return 0;
  if (atomic_fetch_add_explicit(&counted, 1, memory_order_relaxed) + 1 != t) return 0;
  errno = ENOMEM;
  return 1;
}

__attribute__((visibility("default"))) void failalloc_arm(long n) {
  atomic_store(&counted, 0);
  atomic_store(&target, n);
}
__attribute__((visibility("default"))) long failalloc_count(void) { return atomic_load(&counted); }

void* malloc(size_t n) {
  resolve();
  if (!real_malloc) return boot_alloc(n);
  return fail_now() ? NULL : real_malloc(n);
}

void* calloc(size_t a, size_t b) {
  resolve();
  if (!real_calloc) {
    if (b && a > (size_t)-1 / b) return NULL;
    return boot_alloc(a * b); /* static: already zero */
  }
  return fail_now() ? NULL : real_calloc(a, b);
}

void* realloc(void* p, size_t n) {
  resolve();
  if (in_boot(p)) {
    void* q = malloc(n);
    const size_t held = (size_t)(boot + sizeof boot - (char*)p); /* at least what p held */
    if (q) memcpy(q, p, n < held ? n : held);
    return q;
  }
  return fail_now() ? NULL : real_realloc(p, n);
}

int posix_memalign(void** out, size_t align, size_t n) {
  resolve();
  if (fail_now()) return ENOMEM;
  return real_posix_memalign(out, align, n);
}

void* aligned_alloc(size_t align, size_t n) {
  resolve();
  return fail_now() ? NULL : real_aligned_alloc(align, n);
}

void* memalign(size_t align, size_t n) {
  resolve();
  return fail_now() ? NULL : real_memalign(align, n);
}

void free(void* p) {
  if (!p || in_boot(p)) return;
  resolve();
  real_free(p);
}
