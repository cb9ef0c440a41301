/* MPI-4 lets a program use info objects before MPI_Init and after
 * MPI_Finalize; objects made before initialization stay usable inside it. */
#include "mpitest.h"

int main(int argc, char** argv) {
  MPI_Info info, dup;
  char value[MPI_MAX_INFO_VAL + 1], key[MPI_MAX_INFO_KEY + 1];
  int flag = 0, nkeys = -1, len = 0;
  CHECK_OK(MPI_Info_create(&info));
  CHECK_OK(MPI_Info_set(info, "color", "blue"));
  CHECK_OK(MPI_Info_set(info, "shape", "round"));
  CHECK_OK(MPI_Info_delete(info, "shape"));
  CHECK_OK(MPI_Info_get_nkeys(info, &nkeys));
  CHECK_EQ(nkeys, 1);
  CHECK_OK(MPI_Info_get_nthkey(info, 0, key));
  CHECK(strcmp(key, "color") == 0);
  len = (int)sizeof value;
  CHECK_OK(MPI_Info_get_string(info, "color", &len, value, &flag));
  CHECK(flag && strcmp(value, "blue") == 0);
  CHECK_OK(MPI_Info_get_valuelen(info, "color", &len, &flag));
  CHECK(flag && len == 4);
  CHECK_OK(MPI_Info_dup(info, &dup));
  MPI_Init(&argc, &argv);
  /* Still there inside, usable by every call that takes an info. */
  CHECK_OK(MPI_Info_get(dup, "color", MPI_MAX_INFO_VAL, value, &flag));
  CHECK(flag && strcmp(value, "blue") == 0);
  MPI_Comm c;
  CHECK_OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &c));
  MPI_Comm_free(&c);
  CHECK_OK(MPI_Info_free(&dup));
  CHECK(dup == MPI_INFO_NULL);
  int errs = mt_errors;
  int rank = 0, total = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Allreduce(&errs, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  /* And after finalization. */
  CHECK_OK(MPI_Info_set(info, "after", "yes"));
  CHECK_OK(MPI_Info_get_nkeys(info, &nkeys));
  CHECK_EQ(nkeys, 2);
  CHECK_OK(MPI_Info_free(&info));
  total += mt_errors - errs;
  if (rank == 0) printf(total ? " Found %d errors\n" : " No Errors\n", total);
  return total != 0;
}
