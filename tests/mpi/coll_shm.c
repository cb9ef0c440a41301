/* The shared-memory collectives (coll/shm_coll.hpp): barrier, bcast, reduce
 * and allreduce on communicators whose members share this host, checked
 * exactly: integer and exactly representable data, every root, MPI_IN_PLACE,
 * a non-commutative user op, reduce_scatter(_block), allgather and alltoall (in place too, with
 * strided receive types), sizes on both sides of each slot tier (1 KiB
 * and 8 KiB less the 16-byte stamp; 17 KiB when ranks outnumber cores) and
 * of a round (allgather 256 KiB; alltoall and the reductions 1 MiB areas), many calls
 * in a row with nothing else in between (the rotating slots), sub-communicators and
 * freed ones whose context comes back. Run again with ADI3_COLL_SHM=0 (point-to-point), which must give
 * the same results. The large blocks read straight from the senders' buffers and the 2-rank pipelined
 * and direct reduce are coll_shm_direct.c's. */
#include <stdint.h>
#include <time.h>

#include "coll_shm_affine.h"
#include "mpitest.h"

static int rank, size;

static double now(void) { return MPI_Wtime(); }

static void barrier_waits(MPI_Comm comm) {
  int me, p;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &p);
  if (p < 2) return;
  /* The last rank arrives late; nobody may leave before it arrived (the
   * clock is the host's monotonic one, the same in every process). */
  CHECK_OK(MPI_Barrier(comm));
  double arrived = 0;
  if (me == p - 1) {
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    arrived = now();
  }
  CHECK_OK(MPI_Barrier(comm));
  double left = now();
  CHECK_OK(MPI_Bcast(&arrived, 1, MPI_DOUBLE, p - 1, comm));
  if (left < arrived) mt_fail(__FILE__, __LINE__, "barrier returned before the last rank arrived", 0, 0);
  for (int i = 0; i < 200; ++i) CHECK_OK(MPI_Barrier(comm));
}

static void bcasts(MPI_Comm comm, int full) {
  int me, p;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &p);
  static const int counts[] = {1, 2, 7, 100, 2044, 2045, 2049, 4348, 4349, 5000};
  int buf[5000];
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
    int n = counts[c];
    /* Same root many times in a row: the root never waits for readers. */
    for (int it = 0; it < 2 * p + 8; ++it) {
      int root = it < 8 ? 0 : it % p;
      for (int i = 0; i < n; ++i) buf[i] = me == root ? it * 100000 + i * 3 + root : -1;
      CHECK_OK(MPI_Bcast(buf, n, MPI_INT, root, comm));
      for (int i = 0; i < n; ++i) {
        if (buf[i] != it * 100000 + i * 3 + root) {
          mt_fail(__FILE__, __LINE__, "bcast int", buf[i], it * 100000 + i * 3 + root);
          break;
        }
      }
    }
  }
  /* Beyond a slot: streamed in pieces, the same root again and again. */
  static const int longs[] = {2050, 16384 + 3, 300001};
  int* big = malloc(300001 * sizeof(int));
  for (size_t c = 0; c < (full ? sizeof longs / sizeof longs[0] : 1); ++c) {
    int n = longs[c];
    for (int it = 0; it < (n > 100000 ? p + 1 : p + 4); ++it) {
      int root = it < 4 ? p - 1 : it % p;
      for (int i = 0; i < n; ++i) big[i] = me == root ? it * 7 + i + root : -1;
      CHECK_OK(MPI_Bcast(big, n, MPI_INT, root, comm));
      for (int i = 0; i < n; ++i) {
        if (big[i] != it * 7 + i + root) {
          mt_fail(__FILE__, __LINE__, "long bcast", big[i], it * 7 + i + root);
          break;
        }
      }
    }
  }
  free(big);
  /* A strided type on the root, bytes elsewhere (equal signatures). */
  MPI_Datatype vec;
  CHECK_OK(MPI_Type_vector(50, 1, 3, MPI_INT, &vec));
  CHECK_OK(MPI_Type_commit(&vec));
  for (int root = 0; root < p; ++root) {
    int sparse[150], dense[50];
    for (int i = 0; i < 150; ++i) sparse[i] = i;
    if (me == root) {
      CHECK_OK(MPI_Bcast(sparse, 1, vec, root, comm));
    } else {
      CHECK_OK(MPI_Bcast(dense, 50, MPI_INT, root, comm));
      for (int i = 0; i < 50; ++i) CHECK_EQ(dense[i], 3 * i);
    }
  }
  MPI_Type_free(&vec);
  if (!full) return;
  /* ... and long: 3 * 40000 ints strided on the root, dense elsewhere */
  MPI_Datatype lvec;
  CHECK_OK(MPI_Type_vector(40000, 1, 3, MPI_INT, &lvec));
  CHECK_OK(MPI_Type_commit(&lvec));
  int* sp = malloc(120000 * sizeof(int));
  for (int root = 0; root < p; ++root) {
    for (int i = 0; i < 120000; ++i) sp[i] = me == root ? i + root : -1;
    if (me == root) {
      CHECK_OK(MPI_Bcast(sp, 1, lvec, root, comm));
    } else {
      CHECK_OK(MPI_Bcast(sp, 40000, MPI_INT, root, comm));
      for (int i = 0; i < 40000; ++i) {
        if (sp[i] != 3 * i + root) {
          mt_fail(__FILE__, __LINE__, "long strided bcast", sp[i], 3 * i + root);
          break;
        }
      }
    }
  }
  free(sp);
  MPI_Type_free(&lvec);
}

/* Rooted calls back to back, several times round the deep ring of small
 * slots (64 sets) with calls on the 8 KiB tier in between, on both sides
 * of the small slot (1 KiB less its stamp): a bcast root and the leaves of
 * a reduce run ahead, each rewriting a set only once every rank is done
 * with the call that last used it. */
static void runs_ahead(MPI_Comm comm) {
  int me, p;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &p);
  static int buf[1500], out[1500];
  for (int it = 0; it < 300; ++it) {
    int n = it % 7 == 3 ? 1500 : it % 11 == 5 ? 252 + it % 2 : 1 + it % 200;
    for (int i = 0; i < n; ++i) buf[i] = me == 0 ? it * 1000 + i : -1;
    CHECK_OK(MPI_Bcast(buf, n, MPI_INT, 0, comm));
    for (int i = 0; i < n; ++i) {
      if (buf[i] != it * 1000 + i) {
        mt_fail(__FILE__, __LINE__, "bcast running ahead", buf[i], it * 1000 + i);
        break;
      }
    }
  }
  for (int it = 0; it < 300; ++it) {
    int n = it % 7 == 3 ? 1500 : it % 11 == 5 ? 252 + it % 2 : 1 + it % 200;
    for (int i = 0; i < n; ++i) buf[i] = (me + 1) * (it + i);
    CHECK_OK(MPI_Reduce(buf, out, n, MPI_INT, MPI_SUM, p - 1, comm));
    if (me != p - 1) continue;
    for (int i = 0; i < n; ++i) {
      if (out[i] != p * (p + 1) / 2 * (it + i)) {
        mt_fail(__FILE__, __LINE__, "reduce running ahead", out[i], p * (p + 1) / 2 * (it + i));
        break;
      }
    }
  }
}

static void reductions(MPI_Comm comm, MPI_Op affine) {
  int me, p;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &p);
  /* 8192/8193 ints and 4096/4097 doubles: 2 ranks reduce up to 32 KiB over
   * point-to-point, above it through the segment again. */
  static const long counts[] = {1, 3, 2044, 2045, 2048, 4096, 4097, 4348, 4349, 8192, 8193, 32768 + 7, 131072 + 5};
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
    const long n = counts[c];
    int* si = malloc((size_t)n * sizeof(int));
    int* ri = malloc((size_t)n * sizeof(int));
    double* sd = malloc((size_t)n * sizeof(double));
    double* rd = malloc((size_t)n * sizeof(double));
    uint64_t* su = malloc((size_t)n * sizeof(uint64_t));
    uint64_t* ru = malloc((size_t)n * sizeof(uint64_t));
    for (int rep = 0; rep < (n > 10000 ? 1 : 3); ++rep) {
      const int root = (int)((c + (size_t)rep) % (size_t)p);
      for (long i = 0; i < n; ++i) {
        si[i] = me * 1000 + (int)(i % 977) + rep;
        sd[i] = (double)(me + 1) * 0.5 + (double)(i % 64);
        su[i] = affine_of(me, i + rep);
      }
      /* allreduce SUM int, out of place and in place */
      CHECK_OK(MPI_Allreduce(si, ri, (int)n, MPI_INT, MPI_SUM, comm));
      for (long i = 0; i < n; ++i) {
        int want = 1000 * (p * (p - 1) / 2) + p * ((int)(i % 977) + rep);
        if (ri[i] != want) {
          mt_fail(__FILE__, __LINE__, "allreduce sum", ri[i], want);
          break;
        }
      }
      memcpy(rd, sd, (size_t)n * sizeof(double));
      CHECK_OK(MPI_Allreduce(MPI_IN_PLACE, rd, (int)n, MPI_DOUBLE, MPI_MAX, comm));
      for (long i = 0; i < n; ++i) {
        double want = (double)p * 0.5 + (double)(i % 64);
        if (rd[i] != want) {
          mt_fail(__FILE__, __LINE__, "allreduce in place max", (long long)(rd[i] * 2), (long long)(want * 2));
          break;
        }
      }
      /* non-commutative: rank order exactly */
      CHECK_OK(MPI_Allreduce(su, ru, (int)n, MPI_UINT64_T, affine, comm));
      check_affine(ru, n, p, rep, "allreduce non-commutative");
      /* reduce to a rotating root: sum of doubles (exact), then the affine op in place */
      for (long i = 0; i < n; ++i) rd[i] = -1;
      CHECK_OK(MPI_Reduce(sd, rd, (int)n, MPI_DOUBLE, MPI_SUM, root, comm));
      if (me == root) {
        for (long i = 0; i < n; ++i) {
          double want = 0.5 * p * (p + 1) / 2 + (double)p * (double)(i % 64);
          if (rd[i] != want) {
            mt_fail(__FILE__, __LINE__, "reduce sum", (long long)(rd[i] * 2), (long long)(want * 2));
            break;
          }
        }
      }
      if (me == root) memcpy(ru, su, (size_t)n * sizeof(uint64_t));
      CHECK_OK(
          MPI_Reduce(me == root ? MPI_IN_PLACE : su, me == root ? ru : NULL, (int)n, MPI_UINT64_T, affine, root, comm));
      if (me == root) check_affine(ru, n, p, rep, "reduce non-commutative in place");
    }
    free(si);
    free(ri);
    free(sd);
    free(rd);
    free(su);
    free(ru);
  }
  /* MAXLOC on a pair type (extent beyond its size) and MPI_CHAR sums */
  struct {
    double v;
    int i;
  } in[3], out[3];
  for (int k = 0; k < 3; ++k) {
    in[k].v = (double)((me + k) % p);
    in[k].i = me;
  }
  CHECK_OK(MPI_Allreduce(in, out, 3, MPI_DOUBLE_INT, MPI_MAXLOC, comm));
  for (int k = 0; k < 3; ++k) {
    CHECK_EQ((long long)out[k].v, p - 1);
    CHECK_EQ(out[k].i, (p - 1 - k + p) % p);
  }
  char cs = 1, cr = 0;
  CHECK_OK(MPI_Allreduce(&cs, &cr, 1, MPI_CHAR, MPI_SUM, comm));
  CHECK_EQ(cr, p);
}

/* Reduce_scatter with uneven counts (rank 1 gets none), in place, the
 * non-commutative op, and reduce_scatter_block; through either slot tier
 * (the whole vector fits a slot) and over rounds. */
static void scatters(MPI_Comm comm, MPI_Op affine, int full) {
  int me, p;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &p);
  static const int base[] = {1, 5, 150, 3000, 50000};
  int* counts = malloc((size_t)p * sizeof(int));
  for (size_t c = 0; c < (full ? 5u : 3u); ++c) {
    long total = 0, before = 0;
    for (int r = 0; r < p; ++r) {
      counts[r] = r == 1 ? 0 : base[c] + r;
      if (r < me) before += counts[r];
      total += counts[r];
    }
    int* si = malloc((size_t)total * sizeof(int));
    int* ri = malloc((size_t)total * sizeof(int));
    uint64_t* su = malloc((size_t)total * sizeof(uint64_t));
    uint64_t* ru = malloc((size_t)total * sizeof(uint64_t));
    for (long i = 0; i < total; ++i) {
      si[i] = me * 100 + (int)(i % 1013);
      su[i] = affine_of(me, i);
    }
    for (int inplace = 0; inplace < 2; ++inplace) {
      if (inplace) {
        memcpy(ri, si, (size_t)total * sizeof(int));
        CHECK_OK(MPI_Reduce_scatter(MPI_IN_PLACE, ri, counts, MPI_INT, MPI_SUM, comm));
      } else {
        for (long i = 0; i < total; ++i) ri[i] = -1;
        CHECK_OK(MPI_Reduce_scatter(si, ri, counts, MPI_INT, MPI_SUM, comm));
      }
      for (long i = 0; i < counts[me]; ++i) {
        int want = 100 * (p * (p - 1) / 2) + p * (int)((before + i) % 1013);
        if (ri[i] != want) {
          mt_fail(__FILE__, __LINE__, inplace ? "reduce_scatter in place" : "reduce_scatter", ri[i], want);
          break;
        }
      }
    }
    CHECK_OK(MPI_Reduce_scatter(su, ru, counts, MPI_UINT64_T, affine, comm));
    for (long i = 0; i < counts[me]; ++i) {
      uint64_t want = affine_of(0, before + i);
      for (int r = 1; r < p; ++r) want = affine_then(want, affine_of(r, before + i));
      if (ru[i] != want) {
        mt_fail(__FILE__, __LINE__, "reduce_scatter non-commutative", (long long)ru[i], (long long)want);
        break;
      }
    }
    /* block: base[c] each */
    const int each = base[c];
    for (long i = 0; i < (long)each * p && i < total; ++i) ri[i] = -1;
    if ((long)each * p <= total) {
      CHECK_OK(MPI_Reduce_scatter_block(si, ri, each, MPI_INT, MPI_SUM, comm));
      for (long i = 0; i < each; ++i) {
        int want = 100 * (p * (p - 1) / 2) + p * (int)(((long)me * each + i) % 1013);
        if (ri[i] != want) {
          mt_fail(__FILE__, __LINE__, "reduce_scatter_block", ri[i], want);
          break;
        }
      }
    }
    free(si);
    free(ri);
    free(su);
    free(ru);
  }
  free(counts);
}

static int gval(int r, long i, int it) { return r * 1000003 + (int)i * 7 + it; }
static int aval(int from, int to, long i) { return from * 1000003 + to * 10007 + (int)i; }

static void gathers(MPI_Comm comm, int full) {
  int me, p;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &p);
  /* Per-rank counts: one slot (8 KiB) holds the whole small exchange
   * (2044 ints its last, 2045 past it); copies into a slot from 2 KiB on
   * (512 ints, not 511) take the stores the node's chooser times, which
   * starts after 64 calls and times one copy in 32: 1024 ints run 100
   * times; 70000 ints per block is two rounds of allgather's 256 KiB, and
   * from 4 ranks on two or more of alltoall's share of the 1 MiB areas.
   * Then alltoall's p - 1 blocks on both sides of a slot: 8176 data bytes
   * with a core per rank, 17392 with more ranks than cores. */
  const long q = p > 1 ? p - 1 : 1;
  const long counts[] = {
      1, 7, 511, 512, 1000, 1024, 2044, 2045, 70000, 8176 / 4 / q, 8176 / 4 / q + 1, 17392 / 4 / q, 17392 / 4 / q + 1};
  const size_t nc = full ? sizeof counts / sizeof counts[0] : 4;
  for (size_t c = 0; c < nc; ++c) {
    const long n = counts[c];
    int* sb = malloc((size_t)n * (size_t)p * sizeof(int));
    int* rb = malloc((size_t)n * (size_t)p * sizeof(int));
    for (int it = 0; it < (n == 1024 ? 100 : 3); ++it) {
      /* allgather, out of place (it 0, 2) and in place (it 1) */
      for (long i = 0; i < n; ++i) sb[i] = gval(me, i, it);
      for (long i = 0; i < n * p; ++i) rb[i] = -1;
      if (it == 1) {
        memcpy(rb + (size_t)me * (size_t)n, sb, (size_t)n * sizeof(int));
        CHECK_OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rb, (int)n, MPI_INT, comm));
      } else {
        CHECK_OK(MPI_Allgather(sb, (int)n, MPI_INT, rb, (int)n, MPI_INT, comm));
      }
      for (long i = 0; i < n * p; ++i) {
        if (rb[i] != gval((int)(i / n), i % n, it)) {
          mt_fail(__FILE__, __LINE__, "allgather", rb[i], gval((int)(i / n), i % n, it));
          break;
        }
      }
      /* alltoall: block j of rank r goes to rank j */
      for (int j = 0; j < p; ++j) {
        for (long i = 0; i < n; ++i) sb[(size_t)j * (size_t)n + (size_t)i] = aval(me, j, i + it);
      }
      if (it == 1) {
        memcpy(rb, sb, (size_t)n * (size_t)p * sizeof(int));
        CHECK_OK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rb, (int)n, MPI_INT, comm));
      } else {
        for (long i = 0; i < n * p; ++i) rb[i] = -1;
        CHECK_OK(MPI_Alltoall(sb, (int)n, MPI_INT, rb, (int)n, MPI_INT, comm));
      }
      for (long i = 0; i < n * p; ++i) {
        if (rb[i] != aval((int)(i / n), me, i % n + it)) {
          mt_fail(__FILE__, __LINE__, "alltoall", rb[i], aval((int)(i / n), me, i % n + it));
          break;
        }
      }
    }
    free(sb);
    free(rb);
  }
  /* Strided receive blocks (every other int), dense sends: small and long. */
  const int scounts[] = {5, 40000, (int)(8176 / 4 / q), (int)(8176 / 4 / q + 1)};
  for (size_t c = 0; c < (full ? 4u : 1u); ++c) {
    const int n = scounts[c];
    MPI_Datatype strided;
    CHECK_OK(MPI_Type_vector(n, 1, 2, MPI_INT, &strided));
    CHECK_OK(MPI_Type_commit(&strided));
    const size_t span = (size_t)(2 * n - 1) * (size_t)p;
    int* sb = malloc((size_t)n * (size_t)p * sizeof(int));
    int* rb = malloc(span * sizeof(int));
    for (long i = 0; i < n; ++i) sb[i] = gval(me, i, 9);
    for (size_t i = 0; i < span; ++i) rb[i] = -1;
    CHECK_OK(MPI_Allgather(sb, n, MPI_INT, rb, 1, strided, comm));
    for (int j = 0; j < p; ++j) {
      for (long i = 0; i < n; ++i) {
        int got = rb[(size_t)j * (size_t)(2 * n - 1) + 2 * (size_t)i];
        if (got != gval(j, i, 9)) {
          mt_fail(__FILE__, __LINE__, "strided allgather", got, gval(j, i, 9));
          j = p;
          break;
        }
      }
    }
    for (int j = 0; j < p; ++j) {
      for (long i = 0; i < n; ++i) sb[(size_t)j * (size_t)n + (size_t)i] = aval(me, j, i);
    }
    for (size_t i = 0; i < span; ++i) rb[i] = -1;
    CHECK_OK(MPI_Alltoall(sb, n, MPI_INT, rb, 1, strided, comm));
    for (int j = 0; j < p; ++j) {
      for (long i = 0; i < n; ++i) {
        int got = rb[(size_t)j * (size_t)(2 * n - 1) + 2 * (size_t)i];
        if (got != aval(j, me, i)) {
          mt_fail(__FILE__, __LINE__, "strided alltoall", got, aval(j, me, i));
          j = p;
          break;
        }
        if (i + 1 < n && rb[(size_t)j * (size_t)(2 * n - 1) + 2 * (size_t)i + 1] != -1) {
          mt_fail(__FILE__, __LINE__, "strided alltoall wrote a gap", 0, -1);
          j = p;
          break;
        }
      }
    }
    free(sb);
    free(rb);
    MPI_Type_free(&strided);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Op affine;
  CHECK_OK(MPI_Op_create(affine_op, 0, &affine));

  barrier_waits(MPI_COMM_WORLD);
  bcasts(MPI_COMM_WORLD, 1);
  runs_ahead(MPI_COMM_WORLD);
  reductions(MPI_COMM_WORLD, affine);
  gathers(MPI_COMM_WORLD, 1);
  scatters(MPI_COMM_WORLD, affine, 1);

  /* Sub-communicators, freed and made again (contexts come back with other
   * members), mixed with the world's collectives. */
  for (int k = 1; k <= size; k = k < size / 2 ? size / 2 : k + (size + 1) / 2) {
    MPI_Comm sub;
    CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, rank < k ? 0 : 1, size - rank, &sub));
    barrier_waits(sub);
    bcasts(sub, 0);
    runs_ahead(sub);
    gathers(sub, 0);
    scatters(sub, affine, 0);
    int one = 1, total = 0;
    CHECK_OK(MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, sub));
    CHECK_EQ(total, rank < k ? k : size - k);
    CHECK_OK(MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK_EQ(total, size);
    MPI_Comm_free(&sub);
  }
  MPI_Comm dup;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  reductions(dup, affine);
  MPI_Comm_free(&dup);

  MPI_Op_free(&affine);
  return mt_finish();
}
