/* Allgather and alltoall blocks from a slot (8176 bytes) to past an area
 * (1 MiB) on the shared segment (coll/shm_gather.cpp, coll/shm_direct.hpp):
 * read straight from the senders' buffers from 16 KiB where every rank has a
 * core (ADI3_COLL_SHM_DIRECT_MIN), alltoall from 16 KiB where ranks
 * outnumber the cores up to 4 a core (ADI3_COLL_SHM_DIRECT_SHARED_MIN and
 * _CROWDING; variants `shared`, from 64 KiB, and `crowded`, 5 ranks at most
 * 2 a core: the segment), else through the segment. Checked exactly: sizes on both
 * sides of each switch and of the area, odd counts, strided send and
 * receive types (the gaps stay untouched), ranks of one call with and
 * without them, in place, and runs of calls in a row (past the direct reads'
 * probe runs) mixed with other collectives that use the areas. Variants:
 * `segment` (both thresholds 0: every block through the segment), `slow`
 * (a verdict no read meets: the segment but for the probe runs) and `p2p`
 * (ADI3_COLL_SHM=0) must agree. */
#include <stdint.h>
#include <stdlib.h>

#include "coll_shm_affine.h"
#include "mpitest.h"

static unsigned char val(int from, int to, long i, int it) {
  return (unsigned char)(from * 31 + to * 7 + i * 13 + (i >> 12) + it);
}

/* One call of allgather (alltoall == 0) or alltoall of n bytes a block;
 * form 0 dense, 1 strided sends, 2 strided receives, 3 in place, 4 mixed
 * (strided sends on odd ranks, a strided receive on rank 0: a direct call
 * where some ranks offer their buffer and others a packed copy). */
static void one(MPI_Comm comm, int me, int p, long n, int alltoall, int form, int it) {
  const size_t all = (size_t)n * (size_t)p;
  unsigned char* sb = malloc(2 * all + 1);
  unsigned char* rb = malloc(2 * all + 1);
  const int ssend = form == 1 || (form == 4 && me % 2), srecv = form == 2 || (form == 4 && me == 0);
  const int inplace = form == 3;
  MPI_Datatype strided, block;
  CHECK_OK(MPI_Type_vector((int)n, 1, 2, MPI_BYTE, &strided));
  CHECK_OK(MPI_Type_create_resized(strided, 0, 2 * n, &block));
  CHECK_OK(MPI_Type_commit(&block));
  memset(sb, 0xee, 2 * all + 1);
  memset(rb, 0xee, 2 * all + 1);
  for (int j = 0; j < p; ++j) {
    for (long i = 0; i < n; ++i) {
      const size_t at = (size_t)j * (size_t)n + (size_t)i;
      /* allgather sends block me (the others are never read) */
      sb[ssend ? 2 * at : at] = val(me, alltoall ? j : me, i, it);
    }
  }
  const MPI_Datatype st = ssend ? block : MPI_BYTE, rt = srecv ? block : MPI_BYTE;
  const int sc = ssend ? 1 : (int)n, rc = srecv ? 1 : (int)n;
  if (inplace) {
    memcpy(rb, sb, all);
    if (alltoall) {
      CHECK_OK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rb, rc, rt, comm));
    } else {
      CHECK_OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rb, rc, rt, comm));
    }
  } else if (alltoall) {
    CHECK_OK(MPI_Alltoall(sb, sc, st, rb, rc, rt, comm));
  } else {
    const size_t mine = (ssend ? 2 : 1) * (size_t)me * (size_t)n;
    CHECK_OK(MPI_Allgather(sb + mine, sc, st, rb, rc, rt, comm));
  }
  for (int j = 0; j < p; ++j) {
    for (long i = 0; i < n; ++i) {
      const size_t at = (size_t)j * (size_t)n + (size_t)i;
      const unsigned char want = val(j, alltoall ? me : j, i, it);
      const size_t got = srecv ? 2 * at : at;
      if (rb[got] != want) {
        mt_fail(__FILE__, __LINE__, alltoall ? "alltoall" : "allgather", rb[got], want);
        j = p;
        break;
      }
      if (srecv && rb[got + 1] != 0xee) {
        mt_fail(__FILE__, __LINE__, "strided receive wrote a gap", rb[got + 1], 0xee);
        j = p;
        break;
      }
    }
  }
  if (!srecv && !inplace && rb[all] != 0xee) mt_fail(__FILE__, __LINE__, "wrote past the receive", rb[all], 0xee);
  MPI_Type_free(&block);
  MPI_Type_free(&strided);
  free(sb);
  free(rb);
}

static void blocks(MPI_Comm comm) {
  int me, p;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &p);
  /* the slot, both direct thresholds and the old one (128 KiB), odd counts */
  static const long sizes[] = {8176, 8177, 12289, 16383, 16384, 65535, 65536, 65537, 131071, 131072, 262147};
  for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; ++c) {
    for (int form = 0; form < 5; ++form) {
      one(comm, me, p, sizes[c], 0, form, (int)c + form);
      one(comm, me, p, sizes[c], 1, form, (int)c + form + 1);
    }
  }
  /* The area's end (2 ranks: the alltoall's one block for the other rank) */
  if (p == 2) {
    for (int form = 0; form < 4; form += 3) {
      one(comm, me, p, 1048575, 0, form, 5);
      one(comm, me, p, 1048576, 1, form, 6);
      one(comm, me, p, 1048577, 0, form, 7);
    }
  }
  /* Runs of calls in a row, with a long reduction (which uses the areas)
   * and a long bcast (pieces of the root's area) in between; direct and
   * segment calls alternate (16 KiB and up, 8 KiB). */
  const long n = 20000;
  for (int it = 0; it < 40; ++it) {
    one(comm, me, p, it % 3 ? n + it : 8000 + it, it % 2, it % 4 == 3 ? 3 : 0, it);
    if (it % 10 == 9) long_between(comm, it, 200000);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  blocks(MPI_COMM_WORLD);
  /* A pair split out of a larger world (its ranks may have cores of their own). */
  if (p > 2) {
    MPI_Comm pair;
    CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, me < 2 ? 0 : 1, me, &pair));
    if (me < 2) blocks(pair);
    MPI_Comm_free(&pair);
  }
  return mt_finish();
}
