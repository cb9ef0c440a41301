/* Reduce beyond a slot on the shared segment (coll/shm_coll.cpp,
 * coll/shm_reduce.cpp): where ranks outnumber the cores (3 and more on 2),
 * from ADI3_COLL_SHM_DIRECT_REDUCE_SHARED_MIN (64 KiB) up to 512 KiB each
 * rank reads its slice of every input straight and folds it, and the root
 * gathers the slices; elsewhere the long reduction or the 2-rank paths.
 * Checked exactly at every root: sizes on both sides of the slot, the
 * threshold and 512 KiB, odd counts (slices of unequal length), a
 * non-commutative user op (rank order) out of place and in place at the
 * root, MAXLOC on a pair type, a derived type (the scheduled path), calls
 * in a row with other collectives that use the areas in between, and a
 * sub-communicator of every other rank. Variants: `segment` (never read
 * directly), `from_slot` (read directly from just past the slot) and `p2p`
 * (ADI3_COLL_SHM=0) must agree. */
#include <stdint.h>
#include <stdlib.h>

#include "coll_shm_affine.h"
#include "mpitest.h"

static int ival(int r, long i, int it) { return (int)((r + 1) * 1000 + i % 997 + it); }

/* One size (bytes per rank) at one root: int SUM out of place, the affine
 * op out of place and in place, MAXLOC on MPI_2INT. */
static void one(MPI_Comm comm, MPI_Op affine, long bytes, int root, int it) {
  int me, p;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &p);
  const long ni = bytes / 4, nu = bytes / 8;
  int* si = malloc((size_t)ni * sizeof(int));
  int* ri = malloc(((size_t)ni + 1) * sizeof(int));
  uint64_t* su = malloc((size_t)nu * sizeof(uint64_t));
  uint64_t* ru = malloc((size_t)nu * sizeof(uint64_t));
  for (long i = 0; i < ni; ++i) si[i] = ival(me, i, it);
  for (long i = 0; i <= ni; ++i) ri[i] = -7;
  CHECK_OK(MPI_Reduce(si, me == root ? ri : NULL, (int)ni, MPI_INT, MPI_SUM, root, comm));
  if (me == root) {
    for (long i = 0; i < ni; ++i) {
      const int want = 1000 * p * (p + 1) / 2 + p * (int)(i % 997 + it);
      if (ri[i] != want) {
        mt_fail(__FILE__, __LINE__, "reduce sum", ri[i], want);
        break;
      }
    }
    if (ri[ni] != -7) mt_fail(__FILE__, __LINE__, "reduce wrote past the receive", ri[ni], -7);
  }
  for (long i = 0; i < nu; ++i) su[i] = affine_of(me, i + it);
  CHECK_OK(MPI_Reduce(su, ru, (int)nu, MPI_UINT64_T, affine, root, comm));
  if (me == root) check_affine(ru, nu, p, it, "reduce non-commutative");
  if (me == root) memcpy(ru, su, (size_t)nu * sizeof(uint64_t));
  CHECK_OK(
      MPI_Reduce(me == root ? MPI_IN_PLACE : su, me == root ? ru : NULL, (int)nu, MPI_UINT64_T, affine, root, comm));
  if (me == root) check_affine(ru, nu, p, it, "reduce non-commutative in place");
  /* MAXLOC: the value peaks at rank (i % p); ties keep the smaller index */
  int* pi = malloc((size_t)ni * sizeof(int));
  int* po = malloc((size_t)ni * sizeof(int));
  for (long i = 0; i < ni / 2; ++i) {
    pi[2 * i] = me == (int)(i % p) ? 100 : (int)(i % 5);
    pi[2 * i + 1] = me;
  }
  CHECK_OK(MPI_Reduce(pi, po, (int)(ni / 2), MPI_2INT, MPI_MAXLOC, root, comm));
  if (me == root) {
    for (long i = 0; i < ni / 2; ++i) {
      if (po[2 * i] != 100 || po[2 * i + 1] != (int)(i % p)) {
        mt_fail(__FILE__, __LINE__, "reduce maxloc", po[2 * i + 1], (int)(i % p));
        break;
      }
    }
  }
  free(pi);
  free(po);
  free(si);
  free(ri);
  free(su);
  free(ru);
}

/* A contiguous derived type of 3 ints: the scheduled path, same sums. */
static void derived(MPI_Comm comm, long n, int root) {
  int me, p;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &p);
  MPI_Datatype three;
  CHECK_OK(MPI_Type_contiguous(3, MPI_INT, &three));
  CHECK_OK(MPI_Type_commit(&three));
  int* s = malloc((size_t)n * 3 * sizeof(int));
  int* r = malloc((size_t)n * 3 * sizeof(int));
  for (long i = 0; i < 3 * n; ++i) s[i] = ival(me, i, 1);
  CHECK_OK(MPI_Reduce(s, r, (int)n, three, MPI_SUM, root, comm));
  if (me == root) {
    for (long i = 0; i < 3 * n; ++i) {
      const int want = 1000 * p * (p + 1) / 2 + p * (int)(i % 997 + 1);
      if (r[i] != want) {
        mt_fail(__FILE__, __LINE__, "reduce derived type", r[i], want);
        break;
      }
    }
  }
  free(s);
  free(r);
  MPI_Type_free(&three);
}

static void sizes(MPI_Comm comm, MPI_Op affine) {
  int me, p;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &p);
  /* the crowded slot (17392 bytes), 64 KiB, 512 KiB (the sliced path's
   * end), odd element counts, an area and beyond */
  static const long bytes[] = {17392, 17400, 65528, 65536, 65544, 98312, 524280, 524288, 524296, 1048584};
  for (size_t c = 0; c < sizeof bytes / sizeof bytes[0]; ++c) {
    const int roots = bytes[c] > 200000 ? 2 : p;
    for (int k = 0; k < roots; ++k) one(comm, affine, bytes[c], (k + (int)c) % p, (int)c + k);
  }
  derived(comm, 30001, p - 1);
  /* Calls in a row, roots rotating, an allreduce and a long bcast (both
   * use the areas) in between. */
  for (int it = 0; it < 24; ++it) {
    one(comm, affine, 65536 + 8 * (it % 5), it % p, it);
    if (it % 6 == 5) long_between(comm, it, 150000);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Op affine;
  CHECK_OK(MPI_Op_create(affine_op, 0, &affine));
  sizes(MPI_COMM_WORLD, affine);
  /* every other rank, numbered from the top: comm ranks differ from world ranks */
  if (p > 2) {
    MPI_Comm half;
    CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, me % 2, p - me, &half));
    sizes(half, affine);
    MPI_Comm_free(&half);
  }
  MPI_Op_free(&affine);
  return mt_finish();
}
