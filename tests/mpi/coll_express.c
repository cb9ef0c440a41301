/* The express path of the blocking barrier, bcast, reduce and allreduce
 * (mpi/coll_express.hpp): what it keeps per communicator (the shared
 * segment, the last predefined (type, op) pair and its kernel) must never
 * change an answer or hide an error:
 *  - pairs switching from call to call (each kernel, the cache replaced),
 *    user ops and derived types in between (the regular path), the _c forms;
 *  - MPI_IN_PLACE, aliased buffers, zero counts, bad ops, types and roots
 *    after the pair is cached: the regular path's results and errors;
 *  - a root bcasting predefined data to ranks receiving it as a derived type
 *    (one rank on the express path, the others on the regular one: the same
 *    protocol);
 *  - communicators freed and made again (a context comes back with other
 *    members), a duplicate beside its parent, every root;
 *  - folds in rank order, the same bits on every rank (rank_order).
 * Run again with ADI3_COLL_SHM=0 (no segment: never express), and as
 * "late" with the waits sleeping at once and for longer than the test's
 * timeout: each rank in turn enters barrier, allreduce, reduce, allgather
 * and alltoall long after the others, whose only way out is the wake the
 * late rank owes once it has seen their flags (a wake lost there hangs the
 * test). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpitest.h"

static int rank, size;

static void user_sum(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  for (int i = 0; i < *len; ++i) ((long*)inout)[i] += ((long*)in)[i];
}

static void pairs(MPI_Comm comm) {
  int me, p;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &p);
  MPI_Op usum;
  CHECK_OK(MPI_Op_create(user_sum, 1, &usum));
  MPI_Datatype two;
  CHECK_OK(MPI_Type_contiguous(2, MPI_LONG, &two));
  CHECK_OK(MPI_Type_commit(&two));
  const long tri = (long)p * (p + 1) / 2; /* sum of me + 1 */
  for (int round = 0; round < 50; ++round) {
    long l = me + 1, lo = -1;
    CHECK_OK(MPI_Allreduce(&l, &lo, 1, MPI_LONG, MPI_SUM, comm));
    CHECK_EQ(lo, tri);
    int i = me + 1, io = -1;
    CHECK_OK(MPI_Allreduce(&i, &io, 1, MPI_INT, MPI_MAX, comm));
    CHECK_EQ(io, p);
    CHECK_OK(MPI_Allreduce(&i, &io, 1, MPI_INT, MPI_MIN, comm));
    CHECK_EQ(io, 1);
    double d = 0.5 * (me + 1), dout = 0;
    CHECK_OK(MPI_Allreduce(&d, &dout, 1, MPI_DOUBLE, MPI_SUM, comm));
    CHECK(dout == 0.5 * (double)tri);
    unsigned char c = (unsigned char)(1u << (me % 8)), co = 0;
    CHECK_OK(MPI_Allreduce(&c, &co, 1, MPI_BYTE, MPI_BOR, comm));
    CHECK_EQ(co, p >= 8 ? 0xff : (1u << p) - 1);
    char ch = 1, cho = 0; /* MPI_CHAR with MPI_SUM, as the peers accept */
    CHECK_OK(MPI_Allreduce(&ch, &cho, 1, MPI_CHAR, MPI_SUM, comm));
    CHECK_EQ(cho, p);
    /* A vector, in place, then the _c form. */
    long v[33];
    for (int k = 0; k < 33; ++k) v[k] = k * (me + 1);
    CHECK_OK(MPI_Allreduce(MPI_IN_PLACE, v, 33, MPI_LONG, MPI_SUM, comm));
    for (int k = 0; k < 33; ++k) CHECK_EQ(v[k], k * tri);
    lo = -1;
    CHECK_OK(MPI_Allreduce_c(&l, &lo, (MPI_Count)1, MPI_LONG, MPI_PROD, comm));
    long fact = 1;
    for (int k = 1; k <= p; ++k) fact *= k;
    CHECK_EQ(lo, fact);
    /* A user op and a derived type between predefined pairs. */
    lo = -1;
    CHECK_OK(MPI_Allreduce(&l, &lo, 1, MPI_LONG, usum, comm));
    CHECK_EQ(lo, tri);
    long t2[2] = {l, 2 * l}, t2o[2] = {0, 0};
    CHECK_OK(MPI_Allreduce(t2, t2o, 1, two, MPI_SUM, comm));
    CHECK_EQ(t2o[0], tri);
    CHECK_EQ(t2o[1], 2 * tri);
    /* MAXLOC on a pair type (the regular path). */
    struct {
      double v;
      int i;
    } dl = {(double)(me / 2), me}, dlo = {0, -1};
    CHECK_OK(MPI_Allreduce(&dl, &dlo, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm));
    CHECK(dlo.v == (double)((p - 1) / 2));
    CHECK_EQ(dlo.i, (p - 1) / 2 * 2); /* ties keep the smaller index */
    /* Reduce to every root, in place at the root. */
    const int root = round % p;
    lo = -1;
    CHECK_OK(MPI_Reduce(&l, &lo, 1, MPI_LONG, MPI_SUM, root, comm));
    if (me == root) CHECK_EQ(lo, tri);
    if (me != root) CHECK_EQ(lo, -1);
    long inp = l;
    CHECK_OK(MPI_Reduce(me == root ? MPI_IN_PLACE : &l, me == root ? &inp : NULL, 1, MPI_LONG, MPI_SUM, root, comm));
    if (me == root) CHECK_EQ(inp, tri);
    /* Bcast from every root, several types. */
    long b = me == root ? 1000 + round : -1;
    CHECK_OK(MPI_Bcast(&b, 1, MPI_LONG, root, comm));
    CHECK_EQ(b, 1000 + round);
    short s[5];
    for (int k = 0; k < 5; ++k) s[k] = (short)(me == root ? k + round : -1);
    CHECK_OK(MPI_Bcast_c(s, (MPI_Count)5, MPI_SHORT, root, comm));
    for (int k = 0; k < 5; ++k) CHECK_EQ(s[k], k + round);
    /* The root sends two MPI_LONG, the others receive one `two`. */
    long bb[2] = {me == root ? round : -1, me == root ? -round : -1};
    CHECK_OK(MPI_Bcast(bb, me == root ? 2 : 1, me == root ? MPI_LONG : two, root, comm));
    CHECK_EQ(bb[0], round);
    CHECK_EQ(bb[1], -round);
    CHECK_OK(MPI_Barrier(comm));
  }
  MPI_Type_free(&two);
  MPI_Op_free(&usum);
}

/* Errors after the pair was cached: the regular path's checks. */
static void errors(MPI_Comm comm) {
  int me, p;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &p);
  CHECK_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
  long l = 1, lo = 0;
  CHECK_OK(MPI_Allreduce(&l, &lo, 1, MPI_LONG, MPI_SUM, comm));
  CHECK_CLASS(MPI_Allreduce(&l, &l, 1, MPI_LONG, MPI_SUM, comm), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Allreduce(&l, &lo, -1, MPI_LONG, MPI_SUM, comm), MPI_ERR_COUNT);
  CHECK_CLASS(MPI_Allreduce(&l, &lo, 1, MPI_LONG, MPI_OP_NULL, comm), MPI_ERR_OP);
  CHECK_CLASS(MPI_Allreduce(&l, &lo, 1, MPI_DATATYPE_NULL, MPI_SUM, comm), MPI_ERR_TYPE);
  CHECK_CLASS(MPI_Allreduce(&l, MPI_IN_PLACE, 1, MPI_LONG, MPI_SUM, comm), MPI_ERR_BUFFER);
  double d = 1;
  CHECK_CLASS(MPI_Allreduce(&d, &lo, 1, MPI_DOUBLE, MPI_BAND, comm), MPI_ERR_OP);
  CHECK_CLASS(MPI_Allreduce(&d, &lo, 1, MPI_DOUBLE, MPI_BAND, comm), MPI_ERR_OP); /* cached refusal */
  CHECK_CLASS(MPI_Reduce(&l, &lo, 1, MPI_LONG, MPI_SUM, p, comm), MPI_ERR_ROOT);
  CHECK_CLASS(MPI_Bcast(&l, 1, MPI_LONG, -1, comm), MPI_ERR_ROOT);
  CHECK_CLASS(MPI_Bcast(&l, -2, MPI_LONG, 0, comm), MPI_ERR_COUNT);
  /* Count zero: nothing moves, nothing is read. */
  lo = 7;
  CHECK_OK(MPI_Allreduce(&l, &lo, 0, MPI_LONG, MPI_SUM, comm));
  CHECK_EQ(lo, 7);
  CHECK_OK(MPI_Bcast(NULL, 0, MPI_LONG, 0, comm));
  /* Still in step afterwards. */
  CHECK_OK(MPI_Allreduce(&l, &lo, 1, MPI_LONG, MPI_SUM, comm));
  CHECK_EQ(lo, p);
  CHECK_OK(MPI_Barrier(comm));
}

/* Rank `late` enters each call 100 ms after the others, who are asleep by
 * then (the "late" run spins and yields only a few rounds). */
static void late_arrivals(MPI_Comm comm) {
  int me, p;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &p);
  for (int late = 0; late < p; ++late) {
    if (me == late) usleep(100 * 1000);
    CHECK_OK(MPI_Barrier(comm));
    long l = me + 1, lo = -1;
    if (me == late) usleep(100 * 1000);
    CHECK_OK(MPI_Allreduce(&l, &lo, 1, MPI_LONG, MPI_SUM, comm));
    CHECK_EQ(lo, (long)p * (p + 1) / 2);
    /* The late rank is the root: the others post and leave. */
    lo = -1;
    if (me == late) usleep(100 * 1000);
    CHECK_OK(MPI_Reduce(&l, &lo, 1, MPI_LONG, MPI_SUM, late, comm));
    if (me == late) CHECK_EQ(lo, (long)p * (p + 1) / 2);
    /* Allgather through the slots, alltoall through the areas (4096 longs
     * a block: more than a slot holds). */
    long* all = malloc(sizeof(long) * 4096 * p);
    long* got = malloc(sizeof(long) * 4096 * p);
    if (me == late) usleep(100 * 1000);
    CHECK_OK(MPI_Allgather(&l, 1, MPI_LONG, got, 1, MPI_LONG, comm));
    for (int j = 0; j < p; ++j) CHECK_EQ(got[j], j + 1);
    for (int i = 0; i < 4096 * p; ++i) all[i] = me * 100000 + i;
    if (me == late) usleep(100 * 1000);
    CHECK_OK(MPI_Alltoall(all, 4096, MPI_LONG, got, 4096, MPI_LONG, comm));
    for (int j = 0; j < p; ++j) CHECK_EQ(got[j * 4096 + 7], j * 100000 + me * 4096 + 7);
    free(all);
    free(got);
  }
}

/* Affine maps x -> m x + c as pairs of longs, composed in rank order:
 * associative, not commutative, so any fold out of rank order shows. */
static void compose(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  const long* a = in;
  long* b = inout;
  for (int i = 0; i + 1 < *len; i += 2) {
    b[i + 1] = a[i] * b[i + 1] + a[i + 1];
    b[i] *= a[i];
  }
}

/* A fold takes this rank's own term from its input, the others' from
 * their slots: the result must still be the rank-order fold, the same bits
 * on every rank, on the express path (doubles whose sum depends on the
 * order) and the regular one (a user op that does not commute), for
 * every root. */
static void rank_order(MPI_Comm comm) {
  int me, p;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &p);
  double d = me % 2 ? -1e16 : 1e16, want = 0;
  if (me == p - 1) d = 1.0 + me;
  for (int j = p - 1; j >= 0; --j) {
    const double x = j == p - 1 ? 1.0 + j : j % 2 ? -1e16 : 1e16;
    want = j == p - 1 ? x : x + want;
  }
  /* The segment's fold goes from the last rank down; point-to-point
   * algorithms may associate a commutative op's terms otherwise. */
  const char* env = getenv("ADI3_COLL_SHM");
  const int shm = !env || strcmp(env, "0") != 0;
  MPI_Op op;
  CHECK_OK(MPI_Op_create(compose, 0, &op));
  long mine[6], want6[6];
  for (int i = 0; i < 6; i += 2) {
    mine[i] = 2 + i, mine[i + 1] = me + 1 + i;
    long m = 1, c = 0; /* (m, c) = term 0 o term 1 o ... */
    for (int j = p - 1; j >= 0; --j) {
      c = (2 + i) * c + (j + 1 + i);
      m *= 2 + i;
    }
    want6[i] = m, want6[i + 1] = c;
  }
  for (int round = 0; round < 20; ++round) {
    double out = 0, first = 0;
    CHECK_OK(MPI_Allreduce(&d, &out, 1, MPI_DOUBLE, MPI_SUM, comm));
    if (shm) CHECK(memcmp(&out, &want, sizeof out) == 0);
    first = out; /* every rank the same bits */
    CHECK_OK(MPI_Bcast(&first, 1, MPI_DOUBLE, 0, comm));
    CHECK(memcmp(&out, &first, sizeof out) == 0);
    long got[6] = {0};
    CHECK_OK(MPI_Allreduce(mine, got, 6, MPI_LONG, op, comm));
    CHECK(memcmp(got, want6, sizeof got) == 0);
    const int root = round % p;
    out = 0;
    memset(got, 0, sizeof got);
    CHECK_OK(MPI_Reduce(&d, &out, 1, MPI_DOUBLE, MPI_SUM, root, comm));
    CHECK_OK(MPI_Reduce(mine, got, 6, MPI_LONG, op, root, comm));
    if (me == root) {
      if (shm) CHECK(memcmp(&out, &want, sizeof out) == 0);
      CHECK(memcmp(got, want6, sizeof got) == 0);
    }
  }
  CHECK_OK(MPI_Op_free(&op));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc > 1 && !strcmp(argv[1], "late")) {
    pairs(MPI_COMM_WORLD); /* the express state is made */
    late_arrivals(MPI_COMM_WORLD);
    return mt_finish();
  }
  pairs(MPI_COMM_WORLD);
  rank_order(MPI_COMM_WORLD);
  MPI_Comm dup;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  pairs(dup);
  errors(dup);
  pairs(MPI_COMM_WORLD); /* the parent's state is its own */
  CHECK_OK(MPI_Comm_free(&dup));
  /* Communicators freed and made again: a context comes back with other
   * members, whose segment and cache must be new. */
  for (int k = 1; k <= size; ++k) {
    MPI_Comm sub;
    CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, rank < k ? 0 : 1, size - rank, &sub));
    pairs(sub);
    CHECK_OK(MPI_Comm_free(&sub));
  }
  return mt_finish();
}
