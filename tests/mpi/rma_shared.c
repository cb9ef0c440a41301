/* Shared-memory windows through the MPI binding: MPI_Win_allocate_shared
 * (contiguous by default, and with alloc_shared_noncontig), every rank's
 * part found with MPI_Win_shared_query (also MPI_PROC_NULL), plain loads
 * and stores from several ranks made visible by MPI_Win_sync + barrier,
 * atomics through the window on the same memory, and the read-only info
 * key adi3_passive_progress; the large-count forms MPI_Win_allocate_shared_c
 * and MPI_Win_shared_query_c; memory from MPI_Alloc_mem made a window by
 * MPI_Win_create and reached by every rank, then MPI_Free_mem. */
#include <string.h>

#include "mpitest.h"

static int rank, size;

static void run(int noncontig) {
  MPI_Info info = MPI_INFO_NULL;
  if (noncontig) {
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
  }
  MPI_Aint mine = (MPI_Aint)(sizeof(long long) * 8 * (rank + 1));
  long long* base = NULL;
  MPI_Win win;
  CHECK_OK(MPI_Win_allocate_shared(mine, sizeof(long long), info, MPI_COMM_WORLD, &base, &win));
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  long long* parts[64];
  for (int r = 0; r < size && r < 64; ++r) {
    MPI_Aint sz = -1;
    int unit = 0;
    CHECK_OK(MPI_Win_shared_query(win, r, &sz, &unit, &parts[r]));
    CHECK_EQ(sz, (long long)(sizeof(long long) * 8 * (r + 1)));
    CHECK_EQ(unit, (long long)sizeof(long long));
    CHECK(parts[r] != NULL);
    if (!noncontig && r > 0) CHECK((char*)parts[r] == (char*)parts[r - 1] + sizeof(long long) * 8 * r);
  }
  CHECK(parts[rank] == base);
  MPI_Aint sz = 0;
  int unit = 0;
  long long* first = NULL;
  CHECK_OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &sz, &unit, &first));
  CHECK(first == parts[0]);
  int flavor = 0, flag = 0;
  int* fp = NULL;
  CHECK_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &fp, &flag));
  if (flag) flavor = *fp;
  CHECK_EQ(flavor, MPI_WIN_FLAVOR_SHARED);

  CHECK_OK(MPI_Win_lock_all(0, win));
  for (int r = 0; r < size; ++r) parts[r][rank] = 1000 * rank + r;
  CHECK_OK(MPI_Win_sync(win));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_sync(win));
  for (int k = 0; k < size; ++k) CHECK_EQ(base[k], 1000LL * k + rank);
  long long one = 1, old = 0;
  CHECK_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG_LONG, 0, 7, MPI_SUM, win));
  CHECK_OK(MPI_Win_unlock_all(win));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_EQ(parts[0][7], size);

  MPI_Info used;
  CHECK_OK(MPI_Win_get_info(win, &used));
  char value[32] = "";
  int found = 0;
  CHECK_OK(MPI_Info_get(used, "adi3_passive_progress", sizeof value - 1, value, &found));
  CHECK(found && strcmp(value, "true") == 0);
  MPI_Info_free(&used);
  CHECK_OK(MPI_Win_free(&win));
}

static void large_count(void) {
  long long* base = NULL;
  MPI_Win win;
  CHECK_OK(MPI_Win_allocate_shared_c(64, (MPI_Aint)sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
  MPI_Aint sz = -1, unit = 0;
  long long* p = NULL;
  CHECK_OK(MPI_Win_shared_query_c(win, 0, &sz, &unit, &p));
  CHECK_EQ(sz, 64);
  CHECK_EQ(unit, (long long)sizeof(long long));
  CHECK(p != NULL);
  CHECK_OK(MPI_Win_free(&win));
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK_CLASS(MPI_Win_allocate_shared_c(64, (MPI_Aint)1 << 40, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win),
              MPI_ERR_DISP);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void alloc_mem_window(void) {
  enum { N = 16 };
  long long* mem = NULL;
  CHECK_OK(MPI_Alloc_mem(N * sizeof(long long), MPI_INFO_NULL, &mem));
  for (int i = 0; i < N; ++i) mem[i] = 0;
  MPI_Win win;
  CHECK_OK(MPI_Win_create(mem, N * sizeof(long long), sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  long long v = rank + 1, one = 1;
  CHECK_OK(MPI_Win_lock_all(0, win));
  for (int r = 0; r < size; ++r) {
    CHECK_OK(MPI_Put(&v, 1, MPI_LONG_LONG, r, rank % (N - 1), 1, MPI_LONG_LONG, win));
    CHECK_OK(MPI_Accumulate(&one, 1, MPI_LONG_LONG, r, N - 1, 1, MPI_LONG_LONG, MPI_SUM, win));
  }
  CHECK_OK(MPI_Win_unlock_all(win));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
  if (size < N) {
    for (int k = 0; k < size; ++k) CHECK_EQ(mem[k], k + 1);
  }
  CHECK_EQ(mem[N - 1], size);
  CHECK_OK(MPI_Win_unlock(rank, win));
  CHECK_OK(MPI_Win_free(&win));
  CHECK_OK(MPI_Free_mem(mem));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  run(0);
  run(1);
  large_count();
  alloc_mem_window();
  return mt_finish();
}
