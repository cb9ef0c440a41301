/* Bad arguments on ONE rank of a collective call, with MPI_ERRORS_RETURN
 * (the last rank is the bad one). argv[1] picks the call.
 * Carried (every rank must get an error back, then all finish cleanly):
 *   dup, dupinfo   MPI_Comm_dup(_with_info) with a null newcomm / bad info
 *   file           MPI_File_open with a bad amode (files return errors by default)
 *   dist           MPI_Dist_graph_create with a bad destination rank
 *   win            MPI_Win_create with disp_unit 0
 * Stuck (the others wait in the call; the bad rank reaches MPI_Finalize,
 * which must end the job with a message after ADI3_FINALIZE_TIMEOUT):
 *   cgtag   MPI_Comm_create_group with a negative tag
 *   comm    MPI_Barrier on an invalid communicator handle
 *   bcast   MPI_Bcast with a negative count
 *   send    MPI_Send with an invalid tag (the peer waits in MPI_Recv)
 * Not stuck: quiet   a local call fails on one rank, and the others reach
 *   MPI_Finalize a second later: the job ends normally. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  const char* m = argc > 1 ? argv[1] : "";
  int rank, size, e = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int bad = rank == size - 1;
  int carried = 0;
  if (!strcmp(m, "dup")) {
    MPI_Comm c = MPI_COMM_NULL;
    e = MPI_Comm_dup(MPI_COMM_WORLD, bad ? NULL : &c);
    carried = 1;
  } else if (!strcmp(m, "dupinfo")) {
    MPI_Comm c = MPI_COMM_NULL;
    e = MPI_Comm_dup_with_info(MPI_COMM_WORLD, bad ? (MPI_Info)0x1234 : MPI_INFO_NULL, &c);
    carried = 1;
  } else if (!strcmp(m, "file")) {
    MPI_File f;
    char name[64];
    snprintf(name, sizeof name, "/tmp/adi3-one-bad-%d", (int)getppid());
    e = MPI_File_open(
        MPI_COMM_WORLD, name,
        bad ? (MPI_MODE_RDONLY | MPI_MODE_WRONLY) : (MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE),
        MPI_INFO_NULL, &f);
    if (e == 0) MPI_File_close(&f);
    carried = 1;
  } else if (!strcmp(m, "dist")) {
    MPI_Comm g;
    int src = rank, deg = 1, dst = bad ? size + 3 : (rank + 1) % size;
    e = MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &src, &deg, &dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g);
    if (e == 0) MPI_Comm_free(&g);
    carried = 1;
  } else if (!strcmp(m, "win")) {
    static int buf[16];
    MPI_Win w;
    e = MPI_Win_create(buf, sizeof buf, bad ? 0 : 4, MPI_INFO_NULL, MPI_COMM_WORLD, &w);
    if (e == 0) MPI_Win_free(&w);
    carried = 1;
  } else if (!strcmp(m, "cgtag")) {
    MPI_Group g;
    MPI_Comm c;
    MPI_Comm_group(MPI_COMM_WORLD, &g);
    e = MPI_Comm_create_group(MPI_COMM_WORLD, g, bad ? -3 : 5, &c);
  } else if (!strcmp(m, "comm")) {
    e = MPI_Barrier(bad ? (MPI_Comm)0x7777 : MPI_COMM_WORLD);
  } else if (!strcmp(m, "bcast")) {
    int x[4] = {0};
    e = MPI_Bcast(x, bad ? -1 : 4, MPI_INT, 0, MPI_COMM_WORLD);
  } else if (!strcmp(m, "send")) {
    int x = 0;
    if (bad) e = MPI_Send(&x, 1, MPI_INT, 0, -5, MPI_COMM_WORLD);
    if (rank == 0 && !bad) e = MPI_Recv(&x, 1, MPI_INT, size - 1, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else if (!strcmp(m, "quiet")) {
    if (bad)
      e = MPI_Type_size(MPI_INT, NULL);
    else
      sleep(1);
  } else {
    fprintf(stderr, "one_bad: unknown mode '%s'\n", m);
    return 2;
  }
  printf("rank %d: %s returned %s\n", rank, m, e ? "an error" : "success");
  fflush(stdout);
  if (carried) {
    int mine = e != 0, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf(all == size ? "every rank got an error\n" : "only %d of %d ranks got an error\n", all, size);
  }
  MPI_Finalize();
  if (rank == 0) printf("No Errors\n");
  return 0;
}
