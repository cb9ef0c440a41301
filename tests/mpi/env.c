/* Environment and info objects: versions, processor name, clocks, memory,
 * thread level queries, MPI_INFO_ENV and every info call. Also runs as a
 * singleton (without mpiexec). */
#include "mpitest.h"

static void test_before_init(void) {
  int flag = 1, v = 0, sv = 0, len = 0;
  CHECK_OK(MPI_Initialized(&flag));
  CHECK_EQ(flag, 0);
  CHECK_OK(MPI_Finalized(&flag));
  CHECK_EQ(flag, 0);
  CHECK_OK(MPI_Get_version(&v, &sv));
  CHECK_EQ(v, 4);
  CHECK_EQ(sv, 1);
  CHECK_EQ(MPI_VERSION, 4);
  CHECK_EQ(MPI_SUBVERSION, 1);
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  CHECK_OK(MPI_Get_library_version(lib, &len));
  CHECK(len > 0 && strstr(lib, "adi3") != NULL && strstr(lib, "MPI 4.1") != NULL);
}

static void test_env(void) {
  int flag = 0, len = 0;
  CHECK_OK(MPI_Initialized(&flag));
  CHECK_EQ(flag, 1);
  char name[MPI_MAX_PROCESSOR_NAME];
  CHECK_OK(MPI_Get_processor_name(name, &len));
  CHECK(len > 0 && (int)strlen(name) == len);
  double t0 = MPI_Wtime(), tick = MPI_Wtick();
  CHECK(tick > 0 && tick < 0.01);
  double t1 = MPI_Wtime();
  CHECK(t1 >= t0);
  int provided = -1;
  CHECK_OK(MPI_Query_thread(&provided));
  CHECK_EQ(provided, MPI_THREAD_SINGLE);
  CHECK_OK(MPI_Is_thread_main(&flag));
  CHECK_EQ(flag, 1);
  double* mem = NULL;
  CHECK_OK(MPI_Alloc_mem(1000 * sizeof(double), MPI_INFO_NULL, &mem));
  CHECK(mem != NULL);
  mem[999] = 1.0;
  CHECK_OK(MPI_Free_mem(mem));
  CHECK_OK(MPI_Pcontrol(1));
  /* MPI_BOTTOM, MPI_IN_PLACE and friends have their documented values */
  CHECK(MPI_BOTTOM == (void*)0);
  CHECK(MPI_IN_PLACE == (void*)-1);
  CHECK_EQ(MPI_UNDEFINED, -32766);
  CHECK_EQ(MPI_ANY_SOURCE, -2);
  CHECK_EQ(MPI_PROC_NULL, -1);
  CHECK_EQ(MPI_ANY_TAG, -1);
  CHECK_EQ(sizeof(MPI_Aint), sizeof(void*));
  CHECK_EQ(sizeof(MPI_Offset), 8);
  CHECK_EQ(sizeof(MPI_Count), 8);
  CHECK_EQ(MPI_BSEND_OVERHEAD, 64);
}

static void test_info(void) {
  MPI_Info info, dup;
  int n = -1, flag = 0, vlen = 0;
  char value[64], key[MPI_MAX_INFO_KEY + 1];
  CHECK_OK(MPI_Info_create(&info));
  CHECK_OK(MPI_Info_get_nkeys(info, &n));
  CHECK_EQ(n, 0);
  CHECK_OK(MPI_Info_set(info, "alpha", "1"));
  CHECK_OK(MPI_Info_set(info, "beta", "two"));
  CHECK_OK(MPI_Info_set(info, "alpha", "one")); /* replaces */
  CHECK_OK(MPI_Info_get_nkeys(info, &n));
  CHECK_EQ(n, 2);
  CHECK_OK(MPI_Info_get_nthkey(info, 0, key));
  CHECK(strcmp(key, "alpha") == 0);
  CHECK_OK(MPI_Info_get_nthkey(info, 1, key));
  CHECK(strcmp(key, "beta") == 0);
  CHECK_OK(MPI_Info_get(info, "alpha", sizeof value - 1, value, &flag));
  CHECK(flag && strcmp(value, "one") == 0);
  CHECK_OK(MPI_Info_get(info, "beta", 1, value, &flag)); /* truncated to 1 char */
  CHECK(flag && strcmp(value, "t") == 0);
  CHECK_OK(MPI_Info_get(info, "gamma", sizeof value - 1, value, &flag));
  CHECK_EQ(flag, 0);
  CHECK_OK(MPI_Info_get_valuelen(info, "beta", &vlen, &flag));
  CHECK(flag && vlen == 3);
  int buflen = sizeof value;
  CHECK_OK(MPI_Info_get_string(info, "beta", &buflen, value, &flag));
  CHECK(flag && buflen == 4 && strcmp(value, "two") == 0);
  CHECK_OK(MPI_Info_dup(info, &dup));
  CHECK_OK(MPI_Info_delete(info, "alpha"));
  CHECK_OK(MPI_Info_get_nkeys(info, &n));
  CHECK_EQ(n, 1);
  CHECK_OK(MPI_Info_get_nkeys(dup, &n));
  CHECK_EQ(n, 2);
  CHECK_OK(MPI_Info_free(&info));
  CHECK(info == MPI_INFO_NULL);
  CHECK_OK(MPI_Info_free(&dup));
  /* MPI_INFO_ENV is readable */
  CHECK_OK(MPI_Info_get_nkeys(MPI_INFO_ENV, &n));
  CHECK(n >= 1);
  CHECK_OK(MPI_Info_get(MPI_INFO_ENV, "command", sizeof value - 1, value, &flag));
  CHECK(flag && strstr(value, "env") != NULL);
}

int main(int argc, char** argv) {
  test_before_init();
  MPI_Init(&argc, &argv);
  test_env();
  test_info();
  int rc = mt_finish();
  int flag = 0;
  MPI_Finalized(&flag);
  if (!flag) return 1;
  MPI_Initialized(&flag);
  if (!flag) return 1; /* stays true after finalize */
  return rc;
}
