/* One-sided communication at the limits of sizes:
 *  - a target datatype whose description is far larger than one packet (an
 *    indexed type of 10,000 blocks): put, get, accumulate and
 *    get_accumulate with it under fence and lock, to every rank, natively
 *    (where it never travels) and emulated (where it goes in several
 *    packets and the target rebuilds and checks it);
 *  - windows and memory of an impossible size (2^50 bytes): MPI_ERR_NO_MEM
 *    on every rank, no hang, also when only one rank asks for it. */
#include "mpitest.h"

static int rank, size, right, left;

enum { BLOCKS = 10000, SPAN = 3 * BLOCKS }; /* block i: one int at 3i + i % 2 */

static MPI_Datatype big_indexed(void) {
  int* len = malloc(BLOCKS * sizeof(int));
  int* at = malloc(BLOCKS * sizeof(int));
  for (int i = 0; i < BLOCKS; ++i) len[i] = 1, at[i] = 3 * i + i % 2;
  MPI_Datatype t;
  CHECK_OK(MPI_Type_indexed(BLOCKS, len, at, MPI_INT, &t));
  CHECK_OK(MPI_Type_commit(&t));
  free(len);
  free(at);
  return t;
}

static void expect(const int* mem, int base_val, int step) {
  int bad = 0;
  for (int i = 0; i < BLOCKS && bad < 3; ++i) {
    const int at = 3 * i + i % 2;
    if (mem[at] != base_val + step * i) {
      CHECK_EQ(mem[at], base_val + step * i);
      ++bad;
    }
    if (mem[at + 1 - 2 * (i % 2)] != -1 && bad < 3) { /* the gap next to it is untouched */
      CHECK_EQ(mem[at + 1 - 2 * (i % 2)], -1);
      ++bad;
    }
  }
}

static void big_type(int flav) {
  MPI_Datatype t = big_indexed();
  int* mem;
  MPI_Win w;
  const MPI_Aint bytes = (SPAN + 2) * sizeof(int);
  if (flav == 0) {
    CHECK_OK(MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &w));
  } else {
    mem = malloc(bytes);
    CHECK_OK(MPI_Win_create(mem, bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w));
  }
  MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
  for (int i = 0; i < SPAN + 2; ++i) mem[i] = -1;
  int* src = malloc(BLOCKS * sizeof(int));
  int* got = malloc(BLOCKS * sizeof(int));
  for (int i = 0; i < BLOCKS; ++i) src[i] = rank * 100000 + i;
  /* fence: put to the right */
  CHECK_OK(MPI_Win_fence(0, w));
  CHECK_OK(MPI_Put(src, BLOCKS, MPI_INT, right, 0, 1, t, w));
  CHECK_OK(MPI_Win_fence(0, w));
  expect(mem, left * 100000, 1);
  /* fence: get it back from the right */
  for (int i = 0; i < BLOCKS; ++i) got[i] = -7;
  CHECK_OK(MPI_Get(got, BLOCKS, MPI_INT, right, 0, 1, t, w));
  CHECK_OK(MPI_Win_fence(0, w));
  int bad = 0;
  for (int i = 0; i < BLOCKS && bad < 3; ++i) {
    if (got[i] != rank * 100000 + i) {
      CHECK_EQ(got[i], rank * 100000 + i);
      ++bad;
    }
  }
  /* every rank adds 1 x (i) into rank 0's blocks under a shared lock, then
     get_accumulate(NO_OP) reads them under an exclusive one */
  for (int i = 0; i < BLOCKS; ++i) src[i] = i;
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w));
    for (int i = 0; i < SPAN + 2; ++i) mem[i] = -1;
    for (int i = 0; i < BLOCKS; ++i) mem[3 * i + i % 2] = 0;
    CHECK_OK(MPI_Win_unlock(0, w));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w));
  CHECK_OK(MPI_Accumulate(src, BLOCKS, MPI_INT, 0, 0, 1, t, MPI_SUM, w));
  CHECK_OK(MPI_Win_unlock(0, w));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w));
  for (int i = 0; i < BLOCKS; ++i) got[i] = -7;
  CHECK_OK(MPI_Get_accumulate(NULL, 0, MPI_INT, got, BLOCKS, MPI_INT, 0, 0, 1, t, MPI_NO_OP, w));
  CHECK_OK(MPI_Win_unlock(0, w));
  bad = 0;
  for (int i = 0; i < BLOCKS && bad < 3; ++i) {
    if (got[i] != size * i) {
      CHECK_EQ(got[i], size * i);
      ++bad;
    }
  }
  if (rank == 0) expect(mem, 0, size);
  /* the type at a displacement that puts its last block past the end */
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w));
  CHECK_CLASS(MPI_Put(src, BLOCKS, MPI_INT, right, 4, 1, t, w), MPI_ERR_RMA_RANGE);
  CHECK_OK(MPI_Win_unlock(right, w));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_free(&w));
  if (flav == 1) free(mem);
  free(src);
  free(got);
  MPI_Type_free(&t);
}

static void expect_no_mem(int rc, const char* what) {
  int cls = -1;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  if (cls != MPI_ERR_NO_MEM) {
    fprintf(stderr, "[rank %d] %s: class %d, not MPI_ERR_NO_MEM\n", rank, what, cls);
    CHECK_EQ(cls, MPI_ERR_NO_MEM);
  }
}

static void impossible_sizes(void) {
  const MPI_Aint huge = (MPI_Aint)1 << 50;
  MPI_Comm node;
  CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN);
  int nrank;
  MPI_Comm_rank(node, &nrank);
  MPI_Info nc;
  MPI_Info_create(&nc);
  MPI_Info_set(nc, "alloc_shared_noncontig", "true");
  /* shared windows work here (not with forced emulation over several ranks) */
  void* base = NULL;
  MPI_Win w;
  const int shared = MPI_Win_allocate_shared(64, 1, MPI_INFO_NULL, node, &base, &w) == MPI_SUCCESS;
  if (shared) CHECK_OK(MPI_Win_free(&w));
  /* every rank asks, then one rank only (the others ask 64 bytes) */
  for (int who = -1; who < 1; ++who) {
    const MPI_Aint mine = who < 0 || nrank == who ? huge : 64;
    for (int info = 0; info < 2 && shared; ++info) {
      w = MPI_WIN_NULL;
      expect_no_mem(MPI_Win_allocate_shared(mine, 1, info ? nc : MPI_INFO_NULL, node, &base, &w),
                    "Win_allocate_shared");
      CHECK(w == MPI_WIN_NULL);
    }
    w = MPI_WIN_NULL;
    const MPI_Aint wmine = who < 0 || rank == who ? huge : 64;
    expect_no_mem(MPI_Win_allocate(wmine, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w), "Win_allocate");
    CHECK(w == MPI_WIN_NULL);
  }
  void* p = NULL;
  expect_no_mem(MPI_Alloc_mem(huge, MPI_INFO_NULL, &p), "Alloc_mem");
  /* the library still works: windows of a sane size */
  if (shared) {
    CHECK_OK(MPI_Win_allocate_shared(64, 1, MPI_INFO_NULL, node, &base, &w));
    CHECK_OK(MPI_Win_free(&w));
  }
  CHECK_OK(MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w));
  CHECK_OK(MPI_Win_free(&w));
  MPI_Info_free(&nc);
  MPI_Comm_free(&node);
}

int main(int argc, char** argv) {
  mt_init_ring(&argc, &argv, &rank, &size, &right, &left);
  big_type(0);
  big_type(1);
  impossible_sizes();
  return mt_finish();
}
