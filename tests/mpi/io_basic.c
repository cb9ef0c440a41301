/* MPI-IO data access (MPI 3.1 13.3-13.4) on one shared file: every rank
 * writes its blocks through a view whose filetype is a vector (the ranks'
 * blocks interleave), reads them back through the view and as plain bytes,
 * with explicit offsets, the individual pointer, collectives, nonblocking
 * and split collective calls, and a strided memory type; the shared file
 * pointer (independent and ordered); statuses count what moved. */
#include <stdint.h>
#include <unistd.h>

#include "mpitest.h"

enum { kBlock = 4, kBlocks = 8 }; /* ints per block, blocks per rank */

static int rank, size;
static char path[256];

/* The value rank r writes as its i-th int. */
static int value(int r, int i) { return r * 100000 + i + 1; }

static void shared_name(const char* tag) {
  if (rank == 0) {
    const char* dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/adi3_io_%s_%ld", dir && *dir ? dir : "/tmp", tag, (long)getpid());
  }
  MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
}

/* A view of rank's blocks: kBlock ints every size * kBlock ints, from
 * rank's first block. */
static void set_block_view(MPI_File fh, MPI_Datatype* filetype) {
  MPI_Type_vector(kBlocks, kBlock, kBlock * size, MPI_INT, filetype);
  MPI_Datatype resized;
  MPI_Type_create_resized(*filetype, 0, (MPI_Aint)sizeof(int) * kBlock * size * kBlocks, &resized);
  MPI_Type_free(filetype);
  *filetype = resized;
  MPI_Type_commit(filetype);
  CHECK_OK(MPI_File_set_view(fh, (MPI_Offset)sizeof(int) * kBlock * rank, MPI_INT, *filetype, "native", MPI_INFO_NULL));
}

static void check_file_bytes(MPI_File fh) {
  /* Every rank reads the whole file through the default view. */
  const int total = kBlock * kBlocks * size;
  int* all = malloc(sizeof(int) * (size_t)total);
  MPI_Status st;
  CHECK_OK(MPI_File_read_at(fh, 0, all, total, MPI_INT, &st));
  int n = -1;
  MPI_Get_count(&st, MPI_INT, &n);
  CHECK_EQ(n, total);
  for (int k = 0; k < total; ++k) {
    const int blk = k / kBlock, owner = blk % size, i = (blk / size) * kBlock + k % kBlock;
    if (all[k] != value(owner, i)) {
      CHECK_EQ(all[k], value(owner, i));
      break;
    }
  }
  free(all);
}

static void test_view_write_read(void) {
  shared_name("view");
  MPI_File fh;
  CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                         MPI_INFO_NULL, &fh));
  MPI_Datatype ft;
  set_block_view(fh, &ft);
  int out[kBlock * kBlocks], in[kBlock * kBlocks];
  for (int i = 0; i < kBlock * kBlocks; ++i) out[i] = value(rank, i);
  /* First half with the individual pointer, second at an explicit offset. */
  MPI_Status st;
  const int half = kBlock * kBlocks / 2;
  CHECK_OK(MPI_File_write(fh, out, half, MPI_INT, &st));
  int n = -1;
  MPI_Get_count(&st, MPI_INT, &n);
  CHECK_EQ(n, half);
  MPI_Offset pos = -1;
  CHECK_OK(MPI_File_get_position(fh, &pos));
  CHECK_EQ(pos, half);
  CHECK_OK(MPI_File_write_at_all(fh, half, out + half, half, MPI_INT, MPI_STATUS_IGNORE));
  MPI_Offset byte = -1;
  CHECK_OK(MPI_File_get_byte_offset(fh, kBlock, &byte));
  CHECK_EQ(byte, (MPI_Offset)sizeof(int) * kBlock * (size + rank));
  CHECK_OK(MPI_File_sync(fh));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_File_sync(fh));

  MPI_Offset fsize = -1;
  CHECK_OK(MPI_File_get_size(fh, &fsize));
  CHECK_EQ(fsize, (MPI_Offset)sizeof(int) * kBlock * kBlocks * size);

  /* Back through the view, collectively from the start. */
  memset(in, 0, sizeof in);
  CHECK_OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
  CHECK_OK(MPI_File_read_all(fh, in, kBlock * kBlocks, MPI_INT, &st));
  MPI_Get_count(&st, MPI_INT, &n);
  CHECK_EQ(n, kBlock * kBlocks);
  CHECK_EQ(memcmp(in, out, sizeof in), 0);
  /* MPI_SEEK_END counts the view's data before the end: all of ours. */
  CHECK_OK(MPI_File_seek(fh, -1, MPI_SEEK_END));
  CHECK_OK(MPI_File_get_position(fh, &pos));
  CHECK_EQ(pos, kBlock * kBlocks - 1);
  int last = 0;
  CHECK_OK(MPI_File_read(fh, &last, 1, MPI_INT, &st));
  CHECK_EQ(last, out[kBlock * kBlocks - 1]);
  /* Past the end: nothing read, count 0. */
  CHECK_OK(MPI_File_read(fh, &last, 1, MPI_INT, &st));
  MPI_Get_count(&st, MPI_INT, &n);
  CHECK_EQ(n, 0);

  /* Nonblocking, and a strided memory type (every other int). */
  int wide[2 * kBlock * kBlocks];
  memset(wide, 0, sizeof wide);
  MPI_Datatype every_other;
  MPI_Type_vector(kBlock * kBlocks, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  MPI_Request req;
  CHECK_OK(MPI_File_iread_at(fh, 0, wide, 1, every_other, &req));
  CHECK_OK(MPI_Wait(&req, &st));
  MPI_Get_count(&st, every_other, &n);
  CHECK_EQ(n, 1);
  MPI_Get_elements(&st, MPI_INT, &n);
  CHECK_EQ(n, kBlock * kBlocks);
  for (int i = 0; i < kBlock * kBlocks; ++i) {
    CHECK_EQ(wide[2 * i], out[i]);
    CHECK_EQ(wide[2 * i + 1], 0);
  }
  MPI_Type_free(&every_other);

  /* The view comes back as set. */
  MPI_Offset disp;
  MPI_Datatype et, ft2;
  char rep[MPI_MAX_DATAREP_STRING];
  CHECK_OK(MPI_File_get_view(fh, &disp, &et, &ft2, rep));
  CHECK_EQ(disp, (MPI_Offset)sizeof(int) * kBlock * rank);
  CHECK_EQ(et, MPI_INT);
  CHECK_EQ(strcmp(rep, "native"), 0);
  MPI_Aint lb, ext;
  MPI_Type_get_extent(ft2, &lb, &ext);
  CHECK_EQ(ext, (MPI_Aint)sizeof(int) * kBlock * size * kBlocks);
  MPI_Type_free(&ft2);
  MPI_Type_free(&ft);

  /* The whole file as bytes, every rank. */
  CHECK_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
  check_file_bytes(fh);
  CHECK_OK(MPI_File_close(&fh));
  CHECK_EQ(fh, MPI_FILE_NULL);
  /* MPI_MODE_DELETE_ON_CLOSE removed it. */
  CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), MPI_ERR_NO_SUCH_FILE);
}

static void test_split_and_nonblocking_writes(void) {
  shared_name("split");
  MPI_File fh;
  CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
  int v[kBlock];
  for (int i = 0; i < kBlock; ++i) v[i] = value(rank, i);
  const MPI_Offset at = (MPI_Offset)sizeof v * rank;
  MPI_Request req;
  CHECK_OK(MPI_File_iwrite_at(fh, at, v, kBlock / 2, MPI_INT, &req));
  CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  CHECK_OK(MPI_File_write_at_all_begin(fh, at + (MPI_Offset)sizeof(int) * (kBlock / 2), v + kBlock / 2, kBlock / 2,
                                       MPI_INT));
  MPI_Status st;
  CHECK_OK(MPI_File_write_at_all_end(fh, v + kBlock / 2, &st));
  int n = -1;
  MPI_Get_count(&st, MPI_INT, &n);
  CHECK_EQ(n, kBlock / 2);
  /* An end without a begin. */
  CHECK_CLASS(MPI_File_write_at_all_end(fh, v, &st), MPI_ERR_OTHER);
  CHECK_OK(MPI_File_close(&fh));
  MPI_Barrier(MPI_COMM_WORLD);

  CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
  int back[kBlock];
  CHECK_OK(MPI_File_read_at_all_begin(fh, at, back, kBlock, MPI_INT));
  CHECK_OK(MPI_File_read_at_all_end(fh, back, MPI_STATUS_IGNORE));
  CHECK_EQ(memcmp(back, v, sizeof v), 0);
  CHECK_OK(MPI_File_close(&fh));
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) CHECK_OK(MPI_File_delete(path, MPI_INFO_NULL));
}

/* The shared pointer: one int per rank in any order, then ordered blocks
 * in rank order, read back in order and with independent shared reads. */
static void test_shared_pointer(void) {
  shared_name("shared");
  MPI_File fh;
  CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                         MPI_INFO_NULL, &fh));
  CHECK_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
  int mine = value(rank, 0);
  MPI_Status st;
  CHECK_OK(MPI_File_write_shared(fh, &mine, 1, MPI_INT, &st));
  int n = -1;
  MPI_Get_count(&st, MPI_INT, &n);
  CHECK_EQ(n, 1);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Offset pos = -1;
  CHECK_OK(MPI_File_get_position_shared(fh, &pos));
  CHECK_EQ(pos, size);
  /* Rank r writes r + 1 ints after the first size. */
  int block[16];
  for (int i = 0; i <= rank; ++i) block[i] = value(rank, i + 1);
  CHECK_OK(MPI_File_write_ordered(fh, block, rank + 1, MPI_INT, &st));
  MPI_Get_count(&st, MPI_INT, &n);
  CHECK_EQ(n, rank + 1);
  CHECK_OK(MPI_File_get_position_shared(fh, &pos));
  CHECK_EQ(pos, size + size * (size + 1) / 2);
  CHECK_OK(MPI_File_sync(fh));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_File_sync(fh));

  /* Each rank's int once among the first size. */
  int first[16], seen = 0;
  CHECK_OK(MPI_File_read_at(fh, 0, first, size, MPI_INT, MPI_STATUS_IGNORE));
  for (int i = 0; i < size; ++i) {
    for (int r = 0; r < size; ++r) {
      if (first[i] == value(r, 0)) seen |= 1 << r;
    }
  }
  CHECK_EQ(seen, (1 << size) - 1);
  CHECK_OK(MPI_File_seek_shared(fh, size, MPI_SEEK_SET));
  int back[16];
  memset(back, 0, sizeof back);
  CHECK_OK(MPI_File_read_ordered_begin(fh, back, rank + 1, MPI_INT));
  CHECK_OK(MPI_File_read_ordered_end(fh, back, &st));
  MPI_Get_count(&st, MPI_INT, &n);
  CHECK_EQ(n, rank + 1);
  CHECK_EQ(memcmp(back, block, sizeof(int) * (size_t)(rank + 1)), 0);
  /* At the end: a shared read finds nothing. */
  CHECK_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_END));
  MPI_Request req;
  CHECK_OK(MPI_File_iread_shared(fh, back, 1, MPI_INT, &req));
  CHECK_OK(MPI_Wait(&req, &st));
  MPI_Get_count(&st, MPI_INT, &n);
  CHECK_EQ(n, 0);
  CHECK_CLASS(MPI_File_seek_shared(fh, -1, MPI_SEEK_SET), MPI_ERR_ARG);
  CHECK_OK(MPI_File_close(&fh));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  test_view_write_read();
  test_split_and_nonblocking_writes();
  test_shared_pointer();
  return mt_finish();
}
