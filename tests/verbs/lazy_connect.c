/* Lazy queue pairs: a job where rank 0 talks only to rank 1 (messages
 * both ways, eager and rendezvous, and passive-target RMA on a window of
 * the two) and ranks 2 and 3 send to each other at the same moment (both
 * connect at once: the collision rule must leave one queue pair each).
 * Each rank reads the MPI_T counter channel_connections before
 * MPI_Finalize (whose barrier connects more) and must have made exactly one
 * queue pair. No collective spans the job before that; each rank's exit
 * status is its verdict. */
#include <unistd.h>

#include "../mpi/mpitest.h"

enum { kBig = 1 << 20 };

static void pair01(int rank) {
  static char big[kBig];
  int peer = 1 - rank, v = rank * 10;
  if (rank == 0) {
    CHECK_OK(MPI_Send(&v, 1, MPI_INT, peer, 1, MPI_COMM_WORLD));
    CHECK_OK(MPI_Recv(&v, 1, MPI_INT, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_EQ(v, 11);
    memset(big, 7, sizeof big);
    CHECK_OK(MPI_Send(big, kBig, MPI_CHAR, peer, 3, MPI_COMM_WORLD));
  } else {
    CHECK_OK(MPI_Recv(&v, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_EQ(v, 0);
    v = 11;
    CHECK_OK(MPI_Send(&v, 1, MPI_INT, peer, 2, MPI_COMM_WORLD));
    CHECK_OK(MPI_Recv(big, kBig, MPI_CHAR, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_EQ(big[kBig - 1], 7);
  }
  /* A communicator of the two, made by them alone (create_group). */
  MPI_Group world, two;
  int members[2] = {0, 1};
  MPI_Comm comm;
  CHECK_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
  CHECK_OK(MPI_Group_incl(world, 2, members, &two));
  CHECK_OK(MPI_Comm_create_group(MPI_COMM_WORLD, two, 5, &comm));
  /* Over memory zeroed before the window exists: no access to our own
   * window (that would be the loopback queue pair). */
  static long long mem[4];
  MPI_Win win;
  CHECK_OK(MPI_Win_create(mem, sizeof mem, sizeof(long long), MPI_INFO_NULL, comm, &win));
  long long one = 1, old = -1, put = 40 + rank, got = -1;
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win));
  CHECK_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG_LONG, peer, 0, MPI_SUM, win));
  CHECK_OK(MPI_Put(&put, 1, MPI_LONG_LONG, peer, 1 + rank, 1, MPI_LONG_LONG, win));
  CHECK_OK(MPI_Win_flush(peer, win));
  CHECK_OK(MPI_Get(&got, 1, MPI_LONG_LONG, peer, 1 + rank, 1, MPI_LONG_LONG, win));
  CHECK_OK(MPI_Win_unlock(peer, win));
  CHECK_EQ(old, 0);
  CHECK_EQ(got, 40 + rank);
  CHECK_OK(MPI_Barrier(comm));
  CHECK_OK(MPI_Win_free(&win));
  CHECK_EQ(mem[0], 1);
  CHECK_EQ(mem[1 + peer], 40 + peer);
  CHECK_OK(MPI_Comm_free(&comm));
  CHECK_OK(MPI_Group_free(&two));
  CHECK_OK(MPI_Group_free(&world));
}

/* Both send first, at once: both ask to connect. */
static void pair23(int rank) {
  int peer = rank == 2 ? 3 : 2, out = rank, in = -1;
  MPI_Request r[2];
  for (int round = 0; round < 20; ++round) {
    CHECK_OK(MPI_Isend(&out, 1, MPI_INT, peer, round, MPI_COMM_WORLD, &r[0]));
    CHECK_OK(MPI_Irecv(&in, 1, MPI_INT, peer, round, MPI_COMM_WORLD, &r[1]));
    CHECK_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    CHECK_EQ(in, peer);
  }
}

/* Every rank read its count before any enters MPI_Finalize (whose barrier
 * would connect it to others): a barrier of files, as MPI would connect. */
static void file_barrier(int rank, int size) {
  char path[256];
  snprintf(path, sizeof path, "/tmp/adi3_lazy_connect_%d_%d", (int)getppid(), rank);
  FILE* f = fopen(path, "w");
  CHECK(f != NULL);
  if (f) fclose(f);
  for (int r = 0; r < size; ++r) {
    snprintf(path, sizeof path, "/tmp/adi3_lazy_connect_%d_%d", (int)getppid(), r);
    for (int tries = 0; access(path, F_OK) != 0 && tries < 30000; ++tries) usleep(1000);
  }
}

/* The pvar channel_connections, read through MPI_T. */
static long long connections(void) {
  int n = 0, index = -1;
  CHECK_OK(MPI_T_pvar_get_num(&n));
  for (int i = 0; i < n && index < 0; ++i) {
    char name[128], desc[512];
    int name_len = sizeof name, desc_len = sizeof desc, verb, cls, bind, ro, cont, atom;
    MPI_Datatype dt;
    MPI_T_enum en;
    CHECK_OK(MPI_T_pvar_get_info(i, name, &name_len, &verb, &cls, &dt, &en, desc, &desc_len, &bind, &ro, &cont, &atom));
    if (strcmp(name, "channel_connections") == 0) index = i;
  }
  CHECK(index >= 0);
  if (index < 0) return -1;
  MPI_T_pvar_session session;
  MPI_T_pvar_handle handle;
  int count = 0;
  unsigned long long v = 0;
  CHECK_OK(MPI_T_pvar_session_create(&session));
  CHECK_OK(MPI_T_pvar_handle_alloc(session, index, NULL, &handle, &count));
  CHECK_OK(MPI_T_pvar_read(session, handle, &v));
  CHECK_OK(MPI_T_pvar_handle_free(session, &handle));
  CHECK_OK(MPI_T_pvar_session_free(&session));
  return (long long)v;
}

int main(int argc, char** argv) {
  int provided;
  MPI_Init(&argc, &argv);
  MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 4) {
    if (rank == 0) fprintf(stderr, "lazy_connect: run on 4 ranks\n");
    MPI_Finalize();
    return 2;
  }
  if (rank < 2)
    pair01(rank);
  else
    pair23(rank);
  long long made = connections();
  printf("rank %d: %lld queue pairs before MPI_Finalize\n", rank, made);
  CHECK_EQ(made, 1);
  file_barrier(rank, size);
  if (mt_errors == 0) printf("rank %d: passed\n", rank);
  MPI_T_finalize();
  char path[256];
  snprintf(path, sizeof path, "/tmp/adi3_lazy_connect_%d_%d", (int)getppid(), rank);
  MPI_Finalize();
  unlink(path);
  return mt_errors ? 1 : 0;
}
