/* MPI-IO files (MPI 3.1 13.2, 13.7): the error classes of bad opens and
 * accesses, sizes, amode, group, info, atomicity, seeks, APPEND, the
 * files' error handlers, views in "internal" (not "external32"), and
 * MPI_Register_datarep (left out) failing with MPI_ERR_UNSUPPORTED_OPERATION. */
#include <unistd.h>

#include "mpitest.h"

static int rank, size;
static char path[256];
static int handler_calls = 0, handler_class = -1;

static void count_errors(MPI_File* fh, int* code, ...) {
  (void)fh;
  ++handler_calls;
  MPI_Error_class(*code, &handler_class);
}

static int extent_fn(MPI_Datatype type, MPI_Aint* extent, void* state) {
  (void)state;
  MPI_Aint lb;
  return MPI_Type_get_extent(type, &lb, extent);
}

static void name_file(const char* tag) {
  if (rank == 0) {
    const char* dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/adi3_ioerr_%s_%ld", dir && *dir ? dir : "/tmp", tag, (long)getpid());
  }
  MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
}

static void test_open_errors(void) {
  name_file("open");
  MPI_File fh = MPI_FILE_NULL;
  CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), MPI_ERR_NO_SUCH_FILE);
  CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh),
              MPI_ERR_AMODE);
  CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh), MPI_ERR_AMODE);
  CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE, MPI_INFO_NULL, &fh), MPI_ERR_AMODE);
  CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL, &fh),
              MPI_ERR_AMODE);
  CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | (1 << 20), MPI_INFO_NULL, &fh), MPI_ERR_AMODE);
  CHECK_CLASS(
      MPI_File_open(MPI_COMM_WORLD, "/nonexistent_dir_adi3/x", MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh),
      MPI_ERR_NO_SUCH_FILE);
  CHECK_EQ(fh, MPI_FILE_NULL);
  CHECK_CLASS(MPI_File_delete(path, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE);

  CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL, MPI_INFO_NULL, &fh));
  CHECK_OK(MPI_File_close(&fh));
  CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL, MPI_INFO_NULL, &fh),
              MPI_ERR_FILE_EXISTS);
  /* Read-only: writes and size changes fail, reads of nothing succeed. */
  CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
  int v = rank;
  CHECK_CLASS(MPI_File_write_at(fh, 0, &v, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_READ_ONLY);
  CHECK_CLASS(MPI_File_set_size(fh, 10), MPI_ERR_READ_ONLY);
  MPI_Status st;
  CHECK_OK(MPI_File_read_at(fh, 0, &v, 1, MPI_INT, &st));
  int n = -1;
  MPI_Get_count(&st, MPI_INT, &n);
  CHECK_EQ(n, 0);
  CHECK_OK(MPI_File_close(&fh));
  CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
  CHECK_CLASS(MPI_File_read_at(fh, 0, &v, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_ACCESS);
  CHECK_OK(MPI_File_close(&fh));
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) CHECK_OK(MPI_File_delete(path, MPI_INFO_NULL));
  MPI_Barrier(MPI_COMM_WORLD);
}

/* A collective size change, its result, and a barrier before the next
 * change (a rank may start it while another still checks this one). */
static void size_step(MPI_File fh, int (*change)(MPI_File, MPI_Offset), MPI_Offset arg, MPI_Offset expect) {
  MPI_Offset sz = -1;
  CHECK_OK(change(fh, arg));
  CHECK_OK(MPI_File_get_size(fh, &sz));
  CHECK_EQ(sz, expect);
  MPI_Barrier(MPI_COMM_WORLD);
}

static void test_sizes_and_queries(void) {
  name_file("size");
  MPI_File fh;
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "access_style", "read_mostly");
  CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE, info, &fh));
  MPI_Info_free(&info);
  MPI_Offset sz = -1;
  CHECK_OK(MPI_File_get_size(fh, &sz));
  CHECK_EQ(sz, 0);
  MPI_Barrier(MPI_COMM_WORLD);
  size_step(fh, MPI_File_set_size, 1000, 1000);
  size_step(fh, MPI_File_preallocate, 500, 1000); /* never shrinks */
  size_step(fh, MPI_File_preallocate, 4096, 4096);
  size_step(fh, MPI_File_set_size, 100, 100);
  CHECK_CLASS(MPI_File_set_size(fh, -1), MPI_ERR_ARG);

  int amode = 0;
  CHECK_OK(MPI_File_get_amode(fh, &amode));
  CHECK_EQ(amode, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE);
  MPI_Group g, world;
  CHECK_OK(MPI_File_get_group(fh, &g));
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int cmp = -1;
  MPI_Group_compare(g, world, &cmp);
  CHECK_EQ(cmp, MPI_IDENT);
  MPI_Group_free(&g);
  MPI_Group_free(&world);
  MPI_Info used;
  CHECK_OK(MPI_File_get_info(fh, &used));
  char val[MPI_MAX_INFO_VAL];
  int flag = 0;
  MPI_Info_get(used, "access_style", MPI_MAX_INFO_VAL - 1, val, &flag);
  CHECK(flag && strcmp(val, "read_mostly") == 0);
  MPI_Info_free(&used);
  CHECK_OK(MPI_File_set_atomicity(fh, 1));
  CHECK_OK(MPI_File_get_atomicity(fh, &flag));
  CHECK_EQ(flag, 1);

  /* Seeks with the default view count bytes. */
  MPI_Offset pos = -1;
  CHECK_OK(MPI_File_seek(fh, 10, MPI_SEEK_SET));
  CHECK_OK(MPI_File_seek(fh, 5, MPI_SEEK_CUR));
  CHECK_OK(MPI_File_get_position(fh, &pos));
  CHECK_EQ(pos, 15);
  CHECK_OK(MPI_File_seek(fh, -20, MPI_SEEK_END));
  CHECK_OK(MPI_File_get_position(fh, &pos));
  CHECK_EQ(pos, 80);
  CHECK_CLASS(MPI_File_seek(fh, -1, MPI_SEEK_SET), MPI_ERR_ARG);
  CHECK_CLASS(MPI_File_seek(fh, 0, 12345), MPI_ERR_ARG);
  MPI_Aint ext = 0;
  CHECK_OK(MPI_File_get_type_extent(fh, MPI_DOUBLE, &ext));
  CHECK_EQ(ext, (MPI_Aint)sizeof(double));

  /* Views: "native" and "internal" (MPI 3.1 13.5.2 requires it; ours is the
   * native layout), not "external32"; the filetype must hold whole etypes. */
  CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL), MPI_ERR_UNSUPPORTED_DATAREP);
  CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "foreign", MPI_INFO_NULL), MPI_ERR_UNSUPPORTED_DATAREP);
  CHECK_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "internal", MPI_INFO_NULL));
  {
    MPI_Offset d = -1;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    CHECK_OK(MPI_File_get_view(fh, &d, &et, &ft, rep));
    CHECK(strcmp(rep, "internal") == 0);
    CHECK_EQ(d, 0);
    int w[2] = {11 + rank, 22}, r[2] = {0, 0};
    MPI_Status st;
    CHECK_OK(MPI_File_write_at(fh, 2 * rank, w, 2, MPI_INT, &st));
    CHECK_OK(MPI_File_read_at(fh, 2 * rank, r, 2, MPI_INT, &st));
    CHECK_EQ(r[0], 11 + rank);
    CHECK_EQ(r[1], 22);
  }
  MPI_Datatype three;
  MPI_Type_contiguous(3, MPI_BYTE, &three);
  MPI_Type_commit(&three);
  CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_INT, three, "native", MPI_INFO_NULL), MPI_ERR_TYPE);
  CHECK_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
  int v = 0;
  CHECK_CLASS(MPI_File_write_at(fh, 0, &v, 1, three, MPI_STATUS_IGNORE), MPI_ERR_TYPE);
  MPI_Type_free(&three);
  CHECK_CLASS(MPI_File_set_view(fh, -5, MPI_INT, MPI_INT, "native", MPI_INFO_NULL), MPI_ERR_ARG);

  /* Not implemented: user data representations. */
  CHECK_CLASS(MPI_Register_datarep("mine", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, extent_fn, NULL),
              MPI_ERR_UNSUPPORTED_OPERATION);
  CHECK_CLASS(MPI_Register_datarep("native", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, extent_fn, NULL),
              MPI_ERR_DUP_DATAREP);
  /* The shared pointer of a file opened without APPEND starts at 0. */
  CHECK_OK(MPI_File_get_position_shared(fh, &pos));
  CHECK_EQ(pos, 0);
  CHECK_OK(MPI_File_close(&fh));
  CHECK_CLASS(MPI_File_get_size(fh, &sz), MPI_ERR_FILE);
  CHECK_CLASS(MPI_File_get_size((MPI_File)0x90000005, &sz), MPI_ERR_FILE);
}

static void test_append_and_handlers(void) {
  name_file("append");
  MPI_File fh;
  CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
  CHECK_OK(MPI_File_set_size(fh, 64));
  CHECK_OK(MPI_File_close(&fh));
  CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_APPEND | MPI_MODE_DELETE_ON_CLOSE,
                         MPI_INFO_NULL, &fh));
  MPI_Offset pos = -1;
  CHECK_OK(MPI_File_get_position(fh, &pos));
  CHECK_EQ(pos, 64);
  /* A file's handler starts as MPI_FILE_NULL's (MPI_ERRORS_RETURN) and is
   * its own once set. */
  MPI_Errhandler eh, got;
  CHECK_OK(MPI_File_get_errhandler(fh, &got));
  CHECK_EQ(got, MPI_ERRORS_RETURN);
  CHECK_OK(MPI_File_create_errhandler(count_errors, &eh));
  CHECK_OK(MPI_File_set_errhandler(fh, eh));
  int v = 0;
  MPI_File_seek(fh, 0, 999);
  CHECK_EQ(handler_calls, 1);
  CHECK_EQ(handler_class, MPI_ERR_ARG);
  CHECK_OK(MPI_File_call_errhandler(fh, MPI_ERR_IO));
  CHECK_EQ(handler_calls, 2);
  CHECK_EQ(handler_class, MPI_ERR_IO);
  CHECK_OK(MPI_File_get_errhandler(MPI_FILE_NULL, &got));
  CHECK_EQ(got, MPI_ERRORS_RETURN);
  CHECK_OK(MPI_File_write(fh, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
  CHECK_EQ(handler_calls, 2);
  MPI_Errhandler_free(&eh);
  CHECK_OK(MPI_File_close(&fh));
  CHECK_EQ(handler_calls, 2);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  test_open_errors();
  test_sizes_and_queries();
  test_append_and_handlers();
  return mt_finish();
}
