/* The MPI-3.1 calls of what adi3 does not implement (MPI-IO, dynamic
 * processes) link and behave as the standard says an implementation
 * without them must: MPI_FILE_NULL's error handler is the default of files
 * (MPI_ERRORS_RETURN until set, MPI 3.1 13.7) and can be set, read back
 * and called; every other file handle is MPI_ERR_FILE through it; a
 * communicator handler is refused on files and a file handler on
 * communicators. The dynamic-process calls check their arguments and fail
 * with their class (MPI_ERR_SPAWN, _PORT, _NAME, _SERVICE) on every rank
 * without hanging, through the communicator's handler. */
#include "mpitest.h"

static int rank, size;
static int file_calls = 0, last_code = 0;
static MPI_File last_file = 12345;

static void on_file_error(MPI_File* f, int* code, ...) {
  ++file_calls;
  last_file = *f;
  last_code = *code;
}
static int comm_calls = 0;
static void on_comm_error(MPI_Comm* c, int* code, ...) {
  (void)c, (void)code;
  ++comm_calls;
}

static void file_handlers(void) {
  MPI_Errhandler eh = MPI_ERRHANDLER_NULL, got = MPI_ERRHANDLER_NULL, ceh;
  CHECK_OK(MPI_File_get_errhandler(MPI_FILE_NULL, &got));
  CHECK_EQ(got, MPI_ERRORS_RETURN);
  /* the default returns: a bad file handle's error comes back */
  CHECK_CLASS(MPI_File_set_errhandler((MPI_File)0x1234, MPI_ERRORS_RETURN), MPI_ERR_FILE);
  CHECK_CLASS(MPI_File_get_errhandler((MPI_File)-1, &got), MPI_ERR_FILE);
  CHECK_OK(MPI_File_call_errhandler(MPI_FILE_NULL, MPI_ERR_IO));
  /* a user handler sees MPI_FILE_NULL and the code */
  CHECK_OK(MPI_File_create_errhandler(on_file_error, &eh));
  CHECK_OK(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
  CHECK_OK(MPI_File_get_errhandler(MPI_FILE_NULL, &got));
  CHECK_EQ(got, eh);
  CHECK_OK(MPI_Errhandler_free(&got));
  CHECK_OK(MPI_File_call_errhandler(MPI_FILE_NULL, MPI_ERR_ACCESS));
  CHECK_EQ(file_calls, 1);
  CHECK_EQ(last_file, MPI_FILE_NULL);
  CHECK_EQ(last_code, MPI_ERR_ACCESS);
  int cls = -1;
  int rc = MPI_File_call_errhandler((MPI_File)77, MPI_ERR_IO);
  MPI_Error_class(rc, &cls);
  CHECK_EQ(cls, MPI_ERR_FILE);
  CHECK_EQ(file_calls, 2);
  MPI_Error_class(last_code, &cls);
  CHECK_EQ(cls, MPI_ERR_FILE);
  /* freeing the handle leaves it set (a reference is held) */
  CHECK_OK(MPI_Errhandler_free(&eh));
  CHECK_EQ(eh, MPI_ERRHANDLER_NULL);
  CHECK_OK(MPI_File_call_errhandler(MPI_FILE_NULL, MPI_ERR_IO));
  CHECK_EQ(file_calls, 3);
  /* kinds do not mix; a file call's errors go to the file handler */
  CHECK_OK(MPI_Comm_create_errhandler(on_comm_error, &ceh));
  CHECK_CLASS(MPI_File_set_errhandler(MPI_FILE_NULL, ceh), MPI_ERR_ERRHANDLER);
  CHECK_EQ(file_calls, 4);
  CHECK_OK(MPI_File_create_errhandler(on_file_error, &eh));
  CHECK_CLASS(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh), MPI_ERR_ERRHANDLER);
  CHECK_CLASS(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRHANDLER_NULL), MPI_ERR_ERRHANDLER);
  CHECK_CLASS(MPI_File_create_errhandler(NULL, &got), MPI_ERR_ARG);
  CHECK_OK(MPI_Errhandler_free(&eh));
  CHECK_OK(MPI_Errhandler_free(&ceh));
  /* back to returning; Fortran handles of files */
  CHECK_OK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
  CHECK_OK(MPI_File_call_errhandler(MPI_FILE_NULL, MPI_ERR_IO));
  CHECK_EQ(file_calls, 5);
  CHECK_EQ(MPI_File_f2c(MPI_File_c2f(MPI_FILE_NULL)), MPI_FILE_NULL);
  CHECK_EQ(comm_calls, 0);
}

static void dynamic(void) {
  MPI_Comm ic = MPI_COMM_WORLD;
  int codes[3] = {0, 0, 0};
  char* args[] = {"x", NULL};
  CHECK_CLASS(MPI_Comm_spawn("./nothing", args, 3, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, codes), MPI_ERR_SPAWN);
  CHECK_EQ(ic, MPI_COMM_NULL);
  if (rank == 0) {
    int cls = -1;
    MPI_Error_class(codes[2], &cls);
    CHECK_EQ(cls, MPI_ERR_SPAWN);
  }
  CHECK_CLASS(MPI_Comm_spawn("./nothing", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE),
              MPI_ERR_SPAWN);
  CHECK_CLASS(MPI_Comm_spawn("./nothing", MPI_ARGV_NULL, 1, MPI_INFO_NULL, size, MPI_COMM_WORLD, &ic, codes),
              MPI_ERR_ROOT);
  CHECK_CLASS(MPI_Comm_spawn("./nothing", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_NULL, &ic, codes), MPI_ERR_COMM);
  if (rank == 0) {
    CHECK_CLASS(MPI_Comm_spawn(NULL, MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, codes), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Comm_spawn("./x", MPI_ARGV_NULL, -2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, codes), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Comm_spawn("./x", MPI_ARGV_NULL, 1, (MPI_Info)0x1234, 0, MPI_COMM_WORLD, &ic, codes), MPI_ERR_INFO);
  }
  char* cmds[2] = {"./a", "./b"};
  int maxp[2] = {1, 2};
  MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
  CHECK_CLASS(MPI_Comm_spawn_multiple(2, cmds, MPI_ARGVS_NULL, maxp, infos, 0, MPI_COMM_SELF, &ic, codes),
              MPI_ERR_SPAWN);
  char port[MPI_MAX_PORT_NAME];
  CHECK(MPI_Open_port(MPI_INFO_NULL, port) != MPI_SUCCESS);
  CHECK_CLASS(MPI_Close_port("tcp://nowhere"), MPI_ERR_PORT);
  CHECK_CLASS(MPI_Comm_accept("p", MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic), MPI_ERR_PORT);
  CHECK_EQ(ic, MPI_COMM_NULL);
  CHECK_CLASS(MPI_Comm_connect("p", MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic), MPI_ERR_PORT);
  CHECK_CLASS(MPI_Comm_connect("p", MPI_INFO_NULL, -1, MPI_COMM_SELF, &ic), MPI_ERR_ROOT);
  CHECK_CLASS(MPI_Publish_name("svc", MPI_INFO_NULL, "p"), MPI_ERR_PORT);
  CHECK_CLASS(MPI_Unpublish_name("svc", MPI_INFO_NULL, "p"), MPI_ERR_SERVICE);
  CHECK_CLASS(MPI_Lookup_name("svc", MPI_INFO_NULL, port), MPI_ERR_NAME);
  CHECK_CLASS(MPI_Lookup_name(NULL, MPI_INFO_NULL, port), MPI_ERR_ARG);
  CHECK(MPI_Comm_join(-1, &ic) != MPI_SUCCESS);
  CHECK_EQ(ic, MPI_COMM_NULL);
  MPI_Comm parent = MPI_COMM_WORLD;
  CHECK_OK(MPI_Comm_get_parent(&parent));
  CHECK_EQ(parent, MPI_COMM_NULL);
  /* everyone is still in step */
  MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  file_handlers();
  dynamic();
  return mt_finish();
}
