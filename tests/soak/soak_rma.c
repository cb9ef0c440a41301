/* The one-sided part of the soak: two windows (MPI_Win_create over malloc'd
 * memory and MPI_Win_allocate), and rounds in one of four synchronization
 * modes: fence, post-start-complete-wait, lock/unlock of single targets
 * with flushes, lock_all. Every round each rank, on one window:
 *   - puts a block into its target's window (a slot of its own there) and
 *     gets its target's published block;
 *   - accumulates (MPI_SUM) into counters of one rank that every rank adds
 *     into at once, and takes a ticket there with MPI_Fetch_and_op;
 *   - swaps its slot at its target with MPI_Compare_and_swap;
 *   - under a lock, flushes and reads its block back before unlocking.
 * Targets, sizes and modes come from the shared plan, so every rank knows
 * what every byte must be: each is checked after the epoch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "soak.h"

/* Window layout in ints: size slots written by their origin rank, the
 * rank's published block, accumulate counters, a ticket, swap slots. */
enum { kSlot = 4096, kCounters = 256 };
static int off_get, off_acc, off_ticket, off_cas, win_ints;

enum { kCreate, kAllocate, kWindows };
enum { kFence, kPscw, kLock, kLockAll, kModes };
static const char* const kModeName[kModes] = {"fence", "PSCW", "lock", "lock_all"};
static const char* const kWinName[kWindows] = {"create", "allocate"};

static MPI_Win win[kWindows];
static int* base[kWindows];
static int* created;
static long* tickets[kWindows]; /* every rank's ticket value, tracked by all */
static int* swapped[kWindows];  /* per target: what this rank last swapped into its slot there */
static int *out, *got, *back, *contrib;
uint64_t rma_ops;
static uint64_t rounds_of[kModes][kWindows];

static int value(uint64_t seed, int i) { return (int)(uint32_t)(seed * 2654435761u + (uint64_t)i * 40503u); }
static uint64_t put_seed(uint64_t round, int origin) { return round * 64 + (uint64_t)origin + 1; }
static uint64_t pub_seed(uint64_t round, int owner) { return round * 64 + (uint64_t)owner + 1000003; }

static void check_ints(const int* b, int n, uint64_t seed, const char* what, int w, int mode, uint64_t round) {
  for (int i = 0; i < n; ++i) {
    if (b[i] != value(seed, i)) {
      fprintf(stderr, "soak rank %d: RMA %s (%s window, %s, round %llu): element %d of %d is %d, want %d\n", rank, what,
              kWinName[w], kModeName[mode], (unsigned long long)round, i, n, b[i], value(seed, i));
      MPI_Abort(MPI_COMM_WORLD, 4);
    }
  }
  bytes_checked += (uint64_t)n * sizeof(int);
  ++ops;
}

static void expect(int ok, const char* what, int w, int mode, uint64_t round, long have, long want) {
  if (!ok) {
    fprintf(stderr, "soak rank %d: RMA %s (%s window, %s, round %llu): %ld, want %ld\n", rank, what, kWinName[w],
            kModeName[mode], (unsigned long long)round, have, want);
    MPI_Abort(MPI_COMM_WORLD, 4);
  }
  bytes_checked += sizeof(int);
  ++ops;
}

void rma_setup(void) {
  off_get = size * kSlot;
  off_acc = off_get + kSlot;
  off_ticket = off_acc + kCounters;
  off_cas = off_ticket + 1;
  win_ints = off_cas + size;
  const MPI_Aint bytes = (MPI_Aint)win_ints * (MPI_Aint)sizeof(int);
  created = calloc((size_t)win_ints, sizeof(int));
  CALL(MPI_Win_create(created, bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win[kCreate]));
  base[kCreate] = created;
  CALL(MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base[kAllocate], &win[kAllocate]));
  for (int w = 0; w < kWindows; ++w) {
    CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win[w]));
    memset(base[w], 0, (size_t)bytes);
    CALL(MPI_Win_unlock(rank, win[w]));
    tickets[w] = calloc((size_t)size, sizeof(long));
    swapped[w] = calloc((size_t)size, sizeof(int));
  }
  out = malloc(kSlot * sizeof(int));
  got = malloc(kSlot * sizeof(int));
  back = malloc(kSlot * sizeof(int));
  contrib = malloc(kCounters * sizeof(int));
  CALL(MPI_Barrier(MPI_COMM_WORLD));
}

void rma_teardown(void) {
  if (rank == 0) {
    printf("soak: RMA rounds (create/allocate window):");
    for (int m = 0; m < kModes; ++m)
      printf(" %s %llu/%llu", kModeName[m], (unsigned long long)rounds_of[m][kCreate],
             (unsigned long long)rounds_of[m][kAllocate]);
    printf("\n");
  }
  for (int w = 0; w < kWindows; ++w) {
    CALL(MPI_Win_free(&win[w]));
    free(tickets[w]);
    free(swapped[w]);
  }
  free(created);
  free(out);
  free(got);
  free(back);
  free(contrib);
}

/* A group of the listed world ranks (duplicates dropped). */
static MPI_Group group_of(const int* ranks, int n) {
  int* uniq = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
  int m = 0;
  for (int i = 0; i < n; ++i) {
    int seen = 0;
    for (int j = 0; j < m; ++j) seen |= uniq[j] == ranks[i];
    if (!seen) uniq[m++] = ranks[i];
  }
  MPI_Group world, g;
  CALL(MPI_Comm_group(MPI_COMM_WORLD, &world));
  CALL(MPI_Group_incl(world, m, uniq, &g));
  CALL(MPI_Group_free(&world));
  free(uniq);
  return g;
}

struct plan {
  int w, mode, n, k, acc, target, from, exclusive;
  uint64_t round;
  /* Origin and result buffers of the atomics: they must live until the
   * epoch completes them, not only through the call. */
  int one, ticket, cmp, swap, swapped_out;
};

/* The accumulate and the ticket, to p->acc (inside an epoch that allows them). */
static void acc_ops(struct plan* p) {
  p->one = 1;
  p->ticket = -1;
  CALL(MPI_Accumulate(contrib, p->k, MPI_INT, p->acc, off_acc, p->k, MPI_INT, MPI_SUM, win[p->w]));
  CALL(MPI_Fetch_and_op(&p->one, &p->ticket, MPI_INT, p->acc, off_ticket, MPI_SUM, win[p->w]));
  rma_ops += 2;
}

/* The put, the get and the swap, to p->target. */
static void target_ops(struct plan* p) {
  p->cmp = swapped[p->w][p->target];
  p->swap = (int)(p->round % 1000000) + 1;
  p->swapped_out = -1;
  CALL(MPI_Put(out, p->n, MPI_INT, p->target, rank * kSlot, p->n, MPI_INT, win[p->w]));
  CALL(MPI_Get(got, p->n, MPI_INT, p->target, off_get, p->n, MPI_INT, win[p->w]));
  CALL(MPI_Compare_and_swap(&p->swap, &p->cmp, &p->swapped_out, MPI_INT, p->target, off_cas + rank, win[p->w]));
  rma_ops += 3;
}

/* Under a lock: the block just put, flushed, reads back the same. */
static void read_back(const struct plan* p) {
  CALL(MPI_Win_flush(p->target, win[p->w]));
  CALL(MPI_Get(back, p->n, MPI_INT, p->target, rank * kSlot, p->n, MPI_INT, win[p->w]));
  CALL(MPI_Win_flush(p->target, win[p->w]));
  rma_ops += 1;
  check_ints(back, p->n, put_seed(p->round, rank), "block read back after a flush", p->w, p->mode, p->round);
}

void rma_round(uint64_t round) {
  struct plan p = {0};
  p.round = round;
  p.w = (int)(next_rand() % kWindows);
  p.mode = (int)(next_rand() % kModes);
  p.n = 1 + (int)(next_rand() % kSlot);
  p.k = 1 + (int)(next_rand() % kCounters);
  p.acc = (int)(next_rand() % (uint64_t)size);
  p.exclusive = (int)(next_rand() % 2);
  int* perm = calloc((size_t)size, sizeof(int));
  for (int i = 0; i < size; ++i) perm[i] = i;
  for (int i = size - 1; i > 0; --i) {
    int j = (int)(next_rand() % (uint64_t)(i + 1)), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  p.target = perm[rank];
  for (int i = 0; i < size; ++i)
    if (perm[i] == rank) p.from = i;
  free(perm);
  MPI_Win wn = win[p.w];
  int* b = base[p.w];

  /* Before the epoch: this rank's published block, the counters zeroed
   * where everyone accumulates, the outgoing data. */
  CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, wn));
  for (int i = 0; i < p.n; ++i) b[off_get + i] = value(pub_seed(round, rank), i);
  if (rank == p.acc) memset(b + off_acc, 0, (size_t)p.k * sizeof(int));
  CALL(MPI_Win_unlock(rank, wn));
  for (int i = 0; i < p.n; ++i) out[i] = value(put_seed(round, rank), i);
  for (int i = 0; i < p.k; ++i) contrib[i] = (rank + 1) * (i + 1) + (int)(round % 7);
  CALL(MPI_Barrier(MPI_COMM_WORLD));

  switch (p.mode) {
    case kFence:
      CALL(MPI_Win_fence(MPI_MODE_NOPRECEDE, wn));
      target_ops(&p);
      acc_ops(&p);
      CALL(MPI_Win_fence(MPI_MODE_NOSUCCEED, wn));
      break;
    case kPscw: {
      /* Exposed to the rank that targets this one, and to all when this
       * rank holds the counters; access to the target and the counters. */
      int* exp = malloc(sizeof(int) * (size_t)(size + 1));
      int ne = 0;
      exp[ne++] = p.from;
      if (rank == p.acc)
        for (int i = 0; i < size; ++i) exp[ne++] = i;
      int acc_group[2] = {p.target, p.acc};
      MPI_Group post = group_of(exp, ne), start = group_of(acc_group, 2);
      free(exp);
      CALL(MPI_Win_post(post, 0, wn));
      CALL(MPI_Win_start(start, 0, wn));
      target_ops(&p);
      acc_ops(&p);
      CALL(MPI_Win_complete(wn));
      CALL(MPI_Win_wait(wn));
      MPI_Group_free(&post);
      MPI_Group_free(&start);
      break;
    }
    case kLock:
      CALL(MPI_Win_lock(p.exclusive ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, p.target, 0, wn));
      target_ops(&p);
      read_back(&p);
      CALL(MPI_Win_unlock(p.target, wn));
      CALL(MPI_Win_lock(MPI_LOCK_SHARED, p.acc, 0, wn));
      acc_ops(&p);
      CALL(MPI_Win_flush(p.acc, wn));
      CALL(MPI_Win_unlock(p.acc, wn));
      break;
    default:
      CALL(MPI_Win_lock_all(0, wn));
      target_ops(&p);
      acc_ops(&p);
      read_back(&p);
      CALL(MPI_Win_flush_all(wn));
      CALL(MPI_Win_unlock_all(wn));
      break;
  }
  /* Every epoch of the round is over everywhere before the window is read. */
  CALL(MPI_Barrier(MPI_COMM_WORLD));

  check_ints(got, p.n, pub_seed(round, p.target), "get of the target's block", p.w, p.mode, round);
  ++rounds_of[p.mode][p.w];
  const int res = p.swapped_out;
  const long ticket = p.ticket;
  expect(res == swapped[p.w][p.target], "compare-and-swap result", p.w, p.mode, round, res, swapped[p.w][p.target]);
  swapped[p.w][p.target] = (int)(round % 1000000) + 1;
  const long t0 = tickets[p.w][p.acc];
  expect(ticket >= t0 && ticket < t0 + size, "fetch-and-op ticket", p.w, p.mode, round, ticket, t0);
  tickets[p.w][p.acc] = t0 + size;
  CALL(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, wn));
  check_ints(b + p.from * kSlot, p.n, put_seed(round, p.from), "block put by its origin", p.w, p.mode, round);
  expect(b[off_cas + p.from] == (int)(round % 1000000) + 1, "swapped slot", p.w, p.mode, round, b[off_cas + p.from],
         (long)(round % 1000000) + 1);
  if (rank == p.acc) {
    const int ranks = size * (size + 1) / 2;
    for (int i = 0; i < p.k; ++i) {
      const long want = (long)ranks * (i + 1) + (long)size * (int)(round % 7);
      expect(b[off_acc + i] == want, "accumulated counter", p.w, p.mode, round, b[off_acc + i], want);
    }
    expect(b[off_ticket] == tickets[p.w][rank], "ticket counter", p.w, p.mode, round, b[off_ticket],
           tickets[p.w][rank]);
  }
  CALL(MPI_Win_unlock(rank, wn));
}
