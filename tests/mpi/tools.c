/* MPI_T, the tools information interface: used before MPI_Init (a control
 * variable written then is what the device reads), every control variable
 * enumerated and read (the ADI3_* settings), categories covering them all,
 * performance variables that follow real queue depths (unexpected messages
 * waiting, receives posted), counter reset, and the errors the standard
 * gives for continuous and read-only variables, enumerations, events and
 * finalized use. */
#include "mpitest.h"

static int find_pvar(const char* name, int cls) {
  int i = -1;
  CHECK_OK(MPI_T_pvar_get_index(name, cls, &i));
  return i;
}

static unsigned long long read_pvar(MPI_T_pvar_session s, MPI_T_pvar_handle h) {
  unsigned long long v = 0;
  CHECK_OK(MPI_T_pvar_read(s, h, &v));
  return v;
}

int main(int argc, char** argv) {
  int provided = -1, n = 0, idx = -1, count = 0;
  CHECK_EQ(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
  CHECK_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
  CHECK_EQ(provided, MPI_THREAD_SINGLE);
  CHECK_OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided)); /* nested */

  /* Before MPI_Init: the setting the device will read. */
  MPI_T_cvar_handle spin;
  char value[256];
  CHECK_OK(MPI_T_cvar_get_index("ADI3_SPIN_COUNT", &idx));
  CHECK_OK(MPI_T_cvar_handle_alloc(idx, NULL, &spin, &count));
  CHECK(count >= (int)sizeof "1000");
  CHECK_OK(MPI_T_cvar_write(spin, "1500"));
  CHECK_OK(MPI_T_cvar_read(spin, value));
  CHECK(strcmp(value, "1500") == 0);
  CHECK_EQ(MPI_T_cvar_get_index("ADI3_NO_SUCH_SETTING", &idx), MPI_T_ERR_INVALID_NAME);

  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(getenv("ADI3_SPIN_COUNT") && strcmp(getenv("ADI3_SPIN_COUNT"), "1500") == 0);
  CHECK_EQ(MPI_T_cvar_write(spin, "10"), MPI_T_ERR_CVAR_SET_NOT_NOW); /* read at start */
  CHECK_OK(MPI_T_cvar_handle_free(&spin));
  CHECK(spin == MPI_T_CVAR_HANDLE_NULL);

  /* Every control variable: an ADI3_* name, a string value, a category. */
  CHECK_OK(MPI_T_cvar_get_num(&n));
  CHECK(n >= 10);
  for (int i = 0; i < n; ++i) {
    char name[128], desc[512];
    int name_len = sizeof name, desc_len = sizeof desc, verbosity, bind, scope;
    MPI_Datatype dt;
    MPI_T_enum et;
    CHECK_OK(MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &dt, &et, desc, &desc_len, &bind, &scope));
    CHECK(strncmp(name, "ADI3_", 5) == 0);
    CHECK_EQ(name_len, (int)strlen(name) + 1);
    CHECK(dt == MPI_CHAR && et == MPI_T_ENUM_NULL && bind == MPI_T_BIND_NO_OBJECT);
    MPI_T_cvar_handle h;
    CHECK_OK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
    CHECK_OK(MPI_T_cvar_read(h, value));
    CHECK(strlen(value) < (size_t)count);
    MPI_T_cvar_handle_free(&h);
  }
  int short_len = 4;
  char small[4];
  CHECK_OK(MPI_T_cvar_get_info(0, small, &short_len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  CHECK_EQ((int)strlen(small), 3); /* truncated, terminated */
  CHECK(short_len > 4);            /* the full length */
  CHECK_EQ(MPI_T_cvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);

  /* Categories: their control variables add up to all of them. */
  int ncat = 0, in_cats = 0, npv = 0;
  CHECK_OK(MPI_T_category_get_num(&ncat));
  CHECK_OK(MPI_T_pvar_get_num(&npv));
  int pv_in_cats = 0;
  for (int c = 0; c < ncat; ++c) {
    int nc = 0, np = 0, nsub = 0, ne = -1;
    CHECK_OK(MPI_T_category_get_info(c, NULL, NULL, NULL, NULL, &nc, &np, &nsub));
    CHECK_OK(MPI_T_category_get_num_events(c, &ne));
    CHECK_EQ(ne, 0);
    int list[256];
    CHECK_OK(MPI_T_category_get_cvars(c, nc, list));
    for (int k = 0; k < nc; ++k) CHECK(list[k] >= 0 && list[k] < n);
    CHECK_OK(MPI_T_category_get_categories(c, nsub, list));
    for (int k = 0; k < nsub; ++k) CHECK(list[k] >= 0 && list[k] < ncat && list[k] != c);
    in_cats += nc;
    pv_in_cats += np;
  }
  CHECK_EQ(in_cats, n);
  CHECK_EQ(pv_in_cats, npv);
  CHECK_OK(MPI_T_category_get_index("adi3_queues", &idx));

  /* Performance variables follow the queues. */
  MPI_T_pvar_session s;
  MPI_T_pvar_handle unexp, posted, refused;
  CHECK_OK(MPI_T_pvar_session_create(&s));
  CHECK_OK(
      MPI_T_pvar_handle_alloc(s, find_pvar("unexpected_queue_length", MPI_T_PVAR_CLASS_LEVEL), NULL, &unexp, &count));
  CHECK_EQ(count, 1);
  CHECK_OK(MPI_T_pvar_handle_alloc(s, find_pvar("posted_queue_length", MPI_T_PVAR_CLASS_LEVEL), NULL, &posted, &count));
  CHECK_OK(MPI_T_pvar_handle_alloc(s, find_pvar("refused_packets", MPI_T_PVAR_CLASS_COUNTER), NULL, &refused, &count));
  CHECK_EQ(MPI_T_pvar_start(s, unexp), MPI_T_ERR_PVAR_NO_STARTSTOP); /* continuous */
  CHECK_OK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
  CHECK_EQ(MPI_T_pvar_write(s, unexp, &(unsigned long long){0}), MPI_T_ERR_PVAR_NO_WRITE);
  CHECK_EQ(MPI_T_pvar_reset(s, posted), MPI_T_ERR_PVAR_NO_WRITE);
  CHECK_OK(MPI_T_pvar_reset(s, refused));
  CHECK_EQ(read_pvar(s, refused), 0);
  CHECK_OK(MPI_T_pvar_write(s, refused, &(unsigned long long){5}));
  CHECK_EQ(read_pvar(s, refused), 5);
  if (size >= 2 && rank <= 1) {
    int x = 7;
    if (rank == 1) {
      MPI_Recv(&x, 1, MPI_INT, 0, 49, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      for (int t = 0; t < 3; ++t) MPI_Send(&x, 1, MPI_INT, 0, 50 + t, MPI_COMM_WORLD);
      MPI_Send(&x, 1, MPI_INT, 0, 60, MPI_COMM_WORLD); /* after the three */
      /* Until rank 0 has counted, send it nothing (mt_finish's collective would be unexpected too). */
      MPI_Recv(&x, 1, MPI_INT, 0, 61, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      /* (the runtime's own traffic may hold entries: count from here) */
      unsigned long long base = read_pvar(s, unexp);
      MPI_Send(&x, 1, MPI_INT, 1, 49, MPI_COMM_WORLD);
      MPI_Recv(&x, 1, MPI_INT, 1, 60, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* the three wait unexpected */
      CHECK_EQ(read_pvar(s, unexp), base + 3);
      for (int t = 0; t < 3; ++t) MPI_Recv(&x, 1, MPI_INT, 1, 50 + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      CHECK_EQ(read_pvar(s, unexp), base);
      MPI_Request r[2];
      unsigned long long before = read_pvar(s, posted);
      MPI_Irecv(&x, 1, MPI_INT, 1, 70, MPI_COMM_WORLD, &r[0]);
      MPI_Irecv(&x, 1, MPI_INT, 1, 71, MPI_COMM_WORLD, &r[1]);
      CHECK_EQ(read_pvar(s, posted), before + 2);
      MPI_Cancel(&r[0]);
      MPI_Cancel(&r[1]);
      MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
      CHECK_EQ(read_pvar(s, posted), before);
      MPI_Send(&x, 1, MPI_INT, 1, 61, MPI_COMM_WORLD);
    }
  }
  MPI_T_pvar_session other;
  CHECK_OK(MPI_T_pvar_session_create(&other));
  unsigned long long v;
  CHECK_EQ(MPI_T_pvar_read(other, unexp, &v), MPI_T_ERR_INVALID_HANDLE); /* another session's */
  CHECK_OK(MPI_T_pvar_session_free(&other));
  CHECK_OK(MPI_T_pvar_handle_free(s, &unexp));
  CHECK_OK(MPI_T_pvar_session_free(&s)); /* frees the rest */

  /* No enumerations, no events; one clock source. */
  int num = 0;
  CHECK_EQ(MPI_T_enum_get_info(MPI_T_ENUM_NULL, &num, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
  CHECK_OK(MPI_T_event_get_num(&num));
  CHECK_EQ(num, 0);
  CHECK_EQ(MPI_T_event_get_index("anything", &idx), MPI_T_ERR_INVALID_NAME);
  MPI_T_event_registration reg;
  CHECK_EQ(MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, &reg), MPI_T_ERR_INVALID_INDEX);
  CHECK_OK(MPI_T_source_get_num(&num));
  CHECK_EQ(num, 1);
  MPI_Count t0 = 0, t1 = 0;
  CHECK_OK(MPI_T_source_get_timestamp(0, &t0));
  CHECK_OK(MPI_T_source_get_timestamp(0, &t1));
  CHECK(t1 >= t0 && t0 > 0);
  char text[MPI_MAX_ERROR_STRING];
  int len = 0, cls = -1;
  CHECK_OK(MPI_Error_class(MPI_T_ERR_INVALID_HANDLE, &cls));
  CHECK_EQ(cls, MPI_T_ERR_INVALID_HANDLE);
  CHECK_OK(MPI_Error_string(MPI_T_ERR_PVAR_NO_WRITE, text, &len));
  CHECK(len > 0);

  CHECK_OK(MPI_T_finalize());
  CHECK_OK(MPI_T_finalize());
  CHECK_EQ(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
  CHECK_EQ(MPI_T_pvar_get_num(&num), MPI_T_ERR_NOT_INITIALIZED);
  return mt_finish();
}
