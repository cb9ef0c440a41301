/* MPI-4 Sessions: a session started before (and instead of) MPI_Init, its
 * process sets mpi://WORLD and mpi://SELF, a communicator built from a set's
 * group with a string tag, session info and error handlers. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int errors = 0;
#define CHECK(c)                                                            \
  do {                                                                      \
    if (!(c)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
      ++errors;                                                             \
    }                                                                       \
  } while (0)

static int called = 0;
static void on_error(MPI_Session* s, int* code, ...) {
  (void)s;
  (void)code;
  ++called;
}

int main(void) {
  MPI_Session session;
  MPI_Info info;
  int flag = 0;
  MPI_Info_create(&info);
  MPI_Info_set(info, "thread_level", "MPI_THREAD_SINGLE");
  CHECK(MPI_Session_init(info, MPI_ERRORS_RETURN, &session) == MPI_SUCCESS);
  MPI_Info_free(&info);
  MPI_Initialized(&flag);
  CHECK(!flag); /* MPI_Initialized speaks of the World Model only */

  int n = 0;
  CHECK(MPI_Session_get_num_psets(session, MPI_INFO_NULL, &n) == MPI_SUCCESS);
  CHECK(n == 2);
  char name[MPI_MAX_PSET_NAME_LEN];
  int len = 0;
  CHECK(MPI_Session_get_nth_pset(session, MPI_INFO_NULL, 0, &len, NULL) == MPI_SUCCESS);
  CHECK(len == (int)strlen("mpi://WORLD") + 1);
  len = sizeof name;
  CHECK(MPI_Session_get_nth_pset(session, MPI_INFO_NULL, 0, &len, name) == MPI_SUCCESS);
  CHECK(strcmp(name, "mpi://WORLD") == 0);
  len = sizeof name;
  CHECK(MPI_Session_get_nth_pset(session, MPI_INFO_NULL, 1, &len, name) == MPI_SUCCESS);
  CHECK(strcmp(name, "mpi://SELF") == 0);

  MPI_Info pinfo;
  char value[MPI_MAX_INFO_VAL + 1];
  CHECK(MPI_Session_get_pset_info(session, "mpi://WORLD", &pinfo) == MPI_SUCCESS);
  CHECK(MPI_Info_get(pinfo, "mpi_size", MPI_MAX_INFO_VAL, value, &flag) == MPI_SUCCESS && flag);
  MPI_Info_free(&pinfo);

  MPI_Group world_group, self_group;
  MPI_Comm comm, self;
  CHECK(MPI_Group_from_session_pset(session, "mpi://WORLD", &world_group) == MPI_SUCCESS);
  CHECK(MPI_Comm_create_from_group(world_group, "org.adi3.test", MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm) ==
        MPI_SUCCESS);
  int rank = -1, size = 0, gsize = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MPI_Group_size(world_group, &gsize);
  CHECK(size == gsize && atoi(value) == size);
  int sum = 0;
  CHECK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm) == MPI_SUCCESS);
  CHECK(sum == size * (size - 1) / 2);
  CHECK(MPI_Group_from_session_pset(session, "mpi://SELF", &self_group) == MPI_SUCCESS);
  CHECK(MPI_Comm_create_from_group(self_group, "org.adi3.self", MPI_INFO_NULL, MPI_ERRORS_RETURN, &self) ==
        MPI_SUCCESS);
  MPI_Comm_size(self, &size);
  CHECK(size == 1);

  /* errors: MPI_ERRORS_RETURN, then a user handler, then call_errhandler */
  MPI_Group g;
  CHECK(MPI_Group_from_session_pset(session, "mpi://NOWHERE", &g) != MPI_SUCCESS);
  MPI_Errhandler eh, got;
  CHECK(MPI_Session_create_errhandler(on_error, &eh) == MPI_SUCCESS);
  CHECK(MPI_Session_set_errhandler(session, eh) == MPI_SUCCESS);
  CHECK(MPI_Session_get_errhandler(session, &got) == MPI_SUCCESS);
  CHECK(got == eh);
  MPI_Errhandler_free(&got);
  MPI_Errhandler_free(&eh);
  CHECK(MPI_Group_from_session_pset(session, "mpi://NOWHERE", &g) != MPI_SUCCESS);
  CHECK(called == 1);
  CHECK(MPI_Session_call_errhandler(session, MPI_ERR_OTHER) == MPI_SUCCESS);
  CHECK(called == 2);
  MPI_Info used;
  CHECK(MPI_Session_get_info(session, &used) == MPI_SUCCESS);
  MPI_Info_free(&used);

  /* MPI-4.0 MPI_Intercomm_create_from_groups: even ranks against odd ones. */
  if (gsize >= 2) {
    int wr = -1;
    MPI_Group_rank(world_group, &wr);
    int evens[16], odds[16], ne = 0, no = 0;
    for (int r = 0; r < gsize && r < 16; ++r) {
      if (r % 2)
        odds[no++] = r;
      else
        evens[ne++] = r;
    }
    MPI_Group even_g, odd_g;
    MPI_Group_incl(world_group, ne, evens, &even_g);
    MPI_Group_incl(world_group, no, odds, &odd_g);
    MPI_Comm inter;
    int mine_even = wr % 2 == 0;
    CHECK(MPI_Intercomm_create_from_groups(mine_even ? even_g : odd_g, 0, mine_even ? odd_g : even_g, 0,
                                           "org.adi3.inter", MPI_INFO_NULL, MPI_ERRORS_RETURN, &inter) == MPI_SUCCESS);
    int is_inter = 0, rsize = 0, lsize = 0, got = -1;
    MPI_Comm_test_inter(inter, &is_inter);
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm_size(inter, &lsize);
    CHECK(is_inter && rsize == (mine_even ? no : ne) && lsize == (mine_even ? ne : no));
    /* The other group's sum of world ranks. */
    CHECK(MPI_Allreduce(&wr, &got, 1, MPI_INT, MPI_SUM, inter) == MPI_SUCCESS);
    int want = 0;
    for (int k = 0; k < (mine_even ? no : ne); ++k) want += mine_even ? odds[k] : evens[k];
    CHECK(got == want);
    MPI_Comm_free(&inter);
    MPI_Group_free(&even_g);
    MPI_Group_free(&odd_g);
  }

  MPI_Group_free(&world_group);
  MPI_Group_free(&self_group);
  MPI_Comm_free(&self);
  int total = 0;
  MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, comm);
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_free(&comm);
  if (rank == 0) printf(total ? " Found %d errors\n" : " No Errors\n", total);
  fflush(stdout);
  CHECK(MPI_Session_finalize(&session) == MPI_SUCCESS);
  CHECK(session == MPI_SESSION_NULL);
  MPI_Finalized(&flag);
  CHECK(!flag); /* the World Model was never initialized, so never finalized */
  return total != 0 || errors != 0;
}
