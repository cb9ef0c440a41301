/* The Sessions and World Models in one process (MPI-4.1 11.2-11.3): MPI_Init
 * after MPI_Session_init (default) or before it ("init_first"). Each model
 * works while the other runs; MPI_Initialized/MPI_Finalized report the World
 * Model only; MPI_Finalize with a session still open leaves the session
 * working, and the runtime ends with its last user. */
#include "mpitest.h"

static int errors_seen = 0;
#define EXPECT(c)                                                           \
  do {                                                                      \
    if (!(c)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
      ++errors_seen;                                                        \
    }                                                                       \
  } while (0)

/* A communicator over mpi://WORLD from the session; an allreduce on it. */
static int session_sum(MPI_Session s, const char* tag) {
  MPI_Group g;
  MPI_Comm c;
  int one = 1, sum = 0;
  EXPECT(MPI_Group_from_session_pset(s, "mpi://WORLD", &g) == MPI_SUCCESS);
  EXPECT(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c) == MPI_SUCCESS);
  EXPECT(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c) == MPI_SUCCESS);
  MPI_Comm_free(&c);
  MPI_Group_free(&g);
  return sum;
}

int main(int argc, char** argv) {
  int init_first = argc > 1 && strcmp(argv[1], "init_first") == 0;
  int flag = -1, size = 0, provided = -1, sum = 0;
  MPI_Session s = MPI_SESSION_NULL;
  if (init_first) {
    EXPECT(MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS);
    EXPECT(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s) == MPI_SUCCESS);
  } else {
    EXPECT(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s) == MPI_SUCCESS);
    MPI_Initialized(&flag);
    EXPECT(flag == 0);
    EXPECT(MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS);
    EXPECT(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE);
  }
  MPI_Initialized(&flag);
  EXPECT(flag == 1);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  EXPECT(MPI_Init(&argc, &argv) != MPI_SUCCESS); /* once only */
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  EXPECT(MPI_Allreduce(&size, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
  EXPECT(sum == size * size);
  EXPECT(session_sum(s, "adi3://test/both") == size);
  int total = 0;
  MPI_Allreduce(&errors_seen, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (init_first) {
    EXPECT(MPI_Session_finalize(&s) == MPI_SUCCESS);
    EXPECT(MPI_Allreduce(&size, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
    EXPECT(MPI_Finalize() == MPI_SUCCESS);
  } else {
    EXPECT(MPI_Finalize() == MPI_SUCCESS);
    MPI_Finalized(&flag);
    EXPECT(flag == 1);
    /* the session still works after the World Model ended */
    EXPECT(session_sum(s, "adi3://test/after") == size);
    EXPECT(MPI_Session_finalize(&s) == MPI_SUCCESS);
  }
  MPI_Finalized(&flag);
  EXPECT(flag == 1);
  total += errors_seen;
  if (rank == 0) printf(total ? " Found %d errors\n" : " No Errors\n", total);
  return errors_seen != 0;
}
