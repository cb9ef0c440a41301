/* The shared-memory collectives' large-message paths (coll/shm_direct.hpp,
 * coll/shm_coll.cpp): allgather and alltoall blocks read straight from the
 * senders' buffers, and the 2-rank reduce, pipelined up to an area and read
 * directly past it, and bcast read straight from the root's buffer; checked exactly on the world and on
 * sub-communicators. Run again with the direct reads forced on and off, and over point-to-point (ADI3_COLL_SHM=0),
 * which must give the same results. */
#include <stdint.h>
#include <stdlib.h>

#include "coll_shm_affine.h"
#include "mpitest.h"

/* Blocks read straight from the senders' buffers (ADI3_COLL_SHM_DIRECT_MIN,
 * 16 KiB, where every rank has a core; alltoall from 16 KiB where ranks
 * outnumber the cores up to 4 a core): sizes on both sides of the old 128 KiB switch
 * (coll_shm_mid.c takes the new ones),
 * strided send types (offered packed) and receive types (unpacked), in-place
 * allgather (runs of calls past the probe runs: past_probe_runs). */
static unsigned char bval(int from, int to, long i, int it) {
  return (unsigned char)(from * 31 + to * 7 + i * 13 + it);
}

static void direct_blocks(MPI_Comm comm, int me, int p) {
  static const long sizes[] = {131071, 131072, 200001};
  for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; ++c) {
    const long n = sizes[c];
    const size_t all = (size_t)n * (size_t)p;
    unsigned char* sb = malloc(2 * all);
    unsigned char* rb = malloc(2 * all);
    MPI_Datatype strided;
    CHECK_OK(MPI_Type_vector((int)n, 1, 2, MPI_BYTE, &strided));
    CHECK_OK(MPI_Type_commit(&strided));
    MPI_Datatype one; /* a strided block resized to n bytes' extent... */
    CHECK_OK(MPI_Type_create_resized(strided, 0, 2 * n, &one));
    CHECK_OK(MPI_Type_commit(&one));
    for (int it = 0; it < 4; ++it) {
      /* it 0: dense; 1: strided sends; 2: strided receives; 3: in-place allgather */
      const int ssend = it == 1, srecv = it == 2;
      memset(sb, 0xee, 2 * all);
      memset(rb, 0xee, 2 * all);
      for (int j = 0; j < p; ++j) {
        for (long i = 0; i < n; ++i) {
          const size_t at = (size_t)j * (size_t)n + (size_t)i;
          sb[ssend ? 2 * at : at] = bval(me, j, i, it);
        }
      }
      if (it == 3) {
        for (long i = 0; i < n; ++i) rb[(size_t)me * (size_t)n + (size_t)i] = bval(me, me, i, it);
        CHECK_OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rb, (int)n, MPI_BYTE, comm));
      } else {
        CHECK_OK(MPI_Allgather(sb + (ssend ? 2 * (size_t)me * (size_t)n : (size_t)me * (size_t)n), ssend ? 1 : (int)n,
                               ssend ? one : MPI_BYTE, rb, srecv ? 1 : (int)n, srecv ? one : MPI_BYTE, comm));
      }
      for (int j = 0; j < p; ++j) {
        for (long i = 0; i < n; ++i) {
          const size_t at = (size_t)j * (size_t)n + (size_t)i;
          const unsigned char want = bval(j, j, i, it);
          if (rb[srecv ? 2 * at : at] != want) {
            mt_fail(__FILE__, __LINE__, "direct allgather", rb[srecv ? 2 * at : at], want);
            j = p;
            break;
          }
        }
      }
      if (it == 3) continue;
      memset(rb, 0xee, 2 * all);
      CHECK_OK(MPI_Alltoall(sb, ssend ? 1 : (int)n, ssend ? one : MPI_BYTE, rb, srecv ? 1 : (int)n,
                            srecv ? one : MPI_BYTE, comm));
      for (int j = 0; j < p; ++j) {
        for (long i = 0; i < n; ++i) {
          const size_t at = (size_t)j * (size_t)n + (size_t)i;
          if (rb[srecv ? 2 * at : at] != bval(j, me, i, it)) {
            mt_fail(__FILE__, __LINE__, "direct alltoall", rb[srecv ? 2 * at : at], bval(j, me, i, it));
            j = p;
            break;
          }
          if (srecv && rb[2 * at + 1] != 0xee) {
            mt_fail(__FILE__, __LINE__, "direct alltoall wrote a gap", rb[2 * at + 1], 0xee);
            j = p;
            break;
          }
        }
      }
    }
    MPI_Type_free(&one);
    MPI_Type_free(&strided);
    free(sb);
    free(rb);
  }
}

/* 2-rank reduce read straight from the other rank's input (ADI3_COLL_SHM_
 * DIRECT_REDUCE_MIN, 64 KiB, to 256 KiB and past 1 MiB): both sides of each
 * switch, every root, a commutative sum and the non-commutative op out of
 * place (direct at root 0 only) and in place (never direct). */
static void direct_reductions(MPI_Comm comm, int me, int p, MPI_Op affine) {
  /* One pipelined piece, several; direct from 64 KiB up to 256 KiB, then
   * pipelined up to a whole area (1 MiB), direct past it. */
  static const long counts[] = {1500, 8191, 8192, 8193, 32768, 32769, 70001, 131072, 131073};
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
    const long n = counts[c];
    if (n > 70001 && p != 2) continue; /* the paths past 1 MiB are 2-rank ones */
    uint64_t* su = malloc((size_t)n * sizeof(uint64_t));
    uint64_t* ru = malloc((size_t)n * sizeof(uint64_t));
    for (int root = 0; root < p; ++root) {
      for (long i = 0; i < n; ++i) su[i] = affine_of(me, i + root);
      for (int inplace = 0; inplace < 2; ++inplace) {
        for (long i = 0; i < n; ++i) ru[i] = me == root && inplace ? su[i] : 7;
        CHECK_OK(MPI_Reduce(me == root && inplace ? MPI_IN_PLACE : su, ru, (int)n, MPI_UINT64_T, MPI_SUM, root, comm));
        for (long i = 0; me == root && i < n; ++i) {
          uint64_t want = 0;
          for (int r = 0; r < p; ++r) want += affine_of(r, i + root);
          if (ru[i] != want) {
            mt_fail(__FILE__, __LINE__, "direct reduce sum", (long long)ru[i], (long long)want);
            break;
          }
        }
      }
      for (int inplace = 0; inplace < 2; ++inplace) {
        if (me == root && inplace) memcpy(ru, su, (size_t)n * sizeof(uint64_t));
        CHECK_OK(MPI_Reduce(me == root && inplace ? MPI_IN_PLACE : su, ru, (int)n, MPI_UINT64_T, affine, root, comm));
        if (me == root) check_affine(ru, n, p, root, "direct reduce non-commutative");
      }
    }
    free(su);
    free(ru);
  }
}

/* A 2-rank in-place reduce with the non-commutative op at root 0 moves each
 * run of the root's input aside into the root's own area: right after a long
 * bcast from root 0, whose pieces the other rank may still be reading from
 * that area, and with the bcast's data checked too. */
static void aside_after_bcast(MPI_Comm comm, int me, int p, MPI_Op affine) {
  const long n = 70001, nb = 300000;
  uint64_t* ru = malloc((size_t)n * sizeof(uint64_t));
  unsigned char* bb = malloc((size_t)nb);
  for (int it = 0; it < 12; ++it) {
    for (long i = 0; i < nb; ++i) bb[i] = me == 0 ? (unsigned char)(i * 13 + it) : 0;
    CHECK_OK(MPI_Bcast(bb, (int)nb, MPI_BYTE, 0, comm));
    for (long i = 0; i < n; ++i) ru[i] = affine_of(me, i + it);
    CHECK_OK(MPI_Reduce(me == 0 ? MPI_IN_PLACE : ru, ru, (int)n, MPI_UINT64_T, affine, 0, comm));
    if (me == 0) check_affine(ru, n, p, it, "in-place reduce after bcast");
    for (long i = 0; i < nb; ++i) {
      if (bb[i] != (unsigned char)(i * 13 + it)) {
        mt_fail(__FILE__, __LINE__, "bcast before in-place reduce", bb[i], (unsigned char)(i * 13 + it));
        break;
      }
    }
  }
  free(ru);
  free(bb);
}

/* Bcast read straight from the root's buffer (ADI3_COLL_SHM_DIRECT_BCAST_MIN,
 * 16 KiB, beyond a slot, where every rank has a core): sizes on both sides
 * of the slot and the threshold, odd ones, every root, fresh data each call,
 * a root whose buffer is strided (offered packed), strided receivers
 * (unpacked, gaps untouched), an odd count of ints; with 2 ranks both dense,
 * the root writes the first half into the receiver's buffer. */
static unsigned char cval(int root, long i, int it) { return (unsigned char)(root * 29 + i * 11 + it * 5 + 1); }

static void direct_bcasts(MPI_Comm comm, int me, int p) {
  static const long sizes[] = {8176, 8177, 16383, 16384, 65537, 262147, 1048583};
  for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; ++c) {
    const long n = sizes[c];
    unsigned char* b = malloc(2 * (size_t)n);
    MPI_Datatype strided;
    CHECK_OK(MPI_Type_vector((int)n, 1, 2, MPI_BYTE, &strided));
    CHECK_OK(MPI_Type_commit(&strided));
    for (int root = 0; root < p; ++root) {
      for (int kind = 0; kind < 4; ++kind) {
        /* 0: dense; 1: strided root; 2: strided receivers; 3: n / 4 ints */
        const int it = (int)c * 16 + root * 4 + kind;
        const int strided_me = (kind == 1 && me == root) || (kind == 2 && me != root);
        const long bytes = kind == 3 ? n / 4 * 4 : n;
        memset(b, 0xee, 2 * (size_t)n);
        for (long i = 0; me == root && i < bytes; ++i) b[strided_me ? 2 * i : i] = cval(root, i, it);
        if (kind == 3) {
          CHECK_OK(MPI_Bcast(b, (int)(n / 4), MPI_INT, root, comm));
        } else {
          CHECK_OK(MPI_Bcast(b, strided_me ? 1 : (int)n, strided_me ? strided : MPI_BYTE, root, comm));
        }
        for (long i = 0; i < bytes; ++i) {
          if (b[strided_me ? 2 * i : i] != cval(root, i, it)) {
            mt_fail(__FILE__, __LINE__, "direct bcast", b[strided_me ? 2 * i : i], cval(root, i, it));
            break;
          }
          if (strided_me && b[2 * i + 1] != 0xee) {
            mt_fail(__FILE__, __LINE__, "direct bcast wrote a gap", b[2 * i + 1], 0xee);
            break;
          }
        }
      }
    }
    MPI_Type_free(&strided);
    free(b);
  }
}

/* 140 calls with fresh data each, past two probe runs (the ranks switch
 * between direct reads and the segment with a slow verdict): an alltoall of
 * 128 KiB blocks (past ADI3_COLL_SHM_DIRECT_MIN), or a reduce of 64 KiB
 * (ADI3_COLL_SHM_DIRECT_REDUCE_MIN) at a root that moves. */
static int pval(int from, int to, long i, int it) { return from * 100003 + to * 7 + (int)i + it; }

static void past_probe_runs(MPI_Comm comm, int me, int p, int reduce) {
  const long n = reduce ? 16384 : 32768; /* ints per block */
  const long blocks = reduce ? 1 : p;
  const long step = reduce ? 1 : 97; /* the alltoall fills and checks a sample */
  int* sb = malloc((size_t)(n * blocks) * sizeof(int));
  int* rb = malloc((size_t)(n * blocks) * sizeof(int));
  for (int it = 0; it < 140; ++it) {
    const int root = it % p;
    for (long j = 0; j < blocks; ++j) {
      for (long i = 0; i < n; i += step) sb[j * n + i] = pval(me, reduce ? root : (int)j, i, it);
    }
    if (reduce) {
      CHECK_OK(MPI_Reduce(sb, rb, (int)n, MPI_INT, MPI_SUM, root, comm));
      if (me != root) continue;
    } else {
      CHECK_OK(MPI_Alltoall(sb, (int)n, MPI_INT, rb, (int)n, MPI_INT, comm));
    }
    for (long j = 0; j < blocks; ++j) {
      for (long i = 0; i < n; i += step) {
        const int want = reduce ? 100003 * (p * (p - 1) / 2) + p * (root * 7 + (int)i + it) : pval((int)j, me, i, it);
        if (rb[j * n + i] != want) {
          mt_fail(__FILE__, __LINE__, reduce ? "direct reduce run" : "direct alltoall run", rb[j * n + i], want);
          j = blocks;
          it = 140;
          break;
        }
      }
    }
  }
  free(sb);
  free(rb);
}

/* Every case on one communicator. */
static void all_cases(MPI_Comm comm, MPI_Op affine) {
  int me, p;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &p);
  direct_blocks(comm, me, p);
  direct_reductions(comm, me, p, affine);
  direct_bcasts(comm, me, p);
  past_probe_runs(comm, me, p, 0);
  past_probe_runs(comm, me, p, 1);
  aside_after_bcast(comm, me, p, affine);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Op affine;
  CHECK_OK(MPI_Op_create(affine_op, 0, &affine));

  all_cases(MPI_COMM_WORLD, affine);
  /* The same on sub-communicators, freed and made again. */
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int k = 1; k <= size; k = k < size / 2 ? size / 2 : k + (size + 1) / 2) {
    MPI_Comm sub;
    CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, rank < k ? 0 : 1, size - rank, &sub));
    all_cases(sub, affine);
    MPI_Comm_free(&sub);
  }

  MPI_Op_free(&affine);
  return mt_finish();
}
