// MPI-IO on POSIX files (MPI 3.1 chapter 13): an open file, its view and
// the helpers the io_*.cpp entry points share.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <mpi.h>

#include "mpi/api.hpp"

// First statement of the calls on one open file: binds rt and f (or
// reports), and fail(e), which reports e through f's handler.
#define ADI3_FILE_ENTER(fh)                        \
  ADI3_MPI_ENTER();                                \
  FileObj* f = nullptr;                            \
  if (int e_ = get_file(*rt, fh, &f)) [[unlikely]] \
    return file_error(*rt, nullptr, e_, __func__); \
  auto fail = [rt, &f, fn_ = __func__](int e) { return file_error(*rt, f, e, fn_); }

namespace adi3::mpi {

struct FileObj {
  int fd = -1;
  int handle = MPI_FILE_NULL;
  MPI_Comm comm = MPI_COMM_NULL;  // a duplicate of the opening communicator
  int amode = 0;
  std::string path;
  // The view (MPI 3.1 13.3): byte displacement, etype and filetype (our own
  // handles: duplicates of derived types, so the user may free theirs).
  MPI_Offset disp = 0;
  MPI_Datatype etype = MPI_BYTE, filetype = MPI_BYTE;
  const Datatype* etype_obj = nullptr;
  const Datatype* filetype_obj = nullptr;
  MPI_Offset pos = 0;              // the individual file pointer, in etypes of the view
  const char* datarep = "native";  // of the view: "native" or "internal" (the same bytes)
  // The shared file pointer (io_shared.cpp): rank 0's shared_pos, which
  // shared_win exposes to the group.
  MPI_Offset shared_pos = 0;
  MPI_Win shared_win = MPI_WIN_NULL;
  bool atomic = false;
  std::vector<std::pair<std::string, std::string>> info;
  ErrhandlerObj* errh = nullptr;
  int errh_builtin = MPI_ERRORS_RETURN;
  // A split collective begun and not yet ended (MPI 3.1 13.4.5).
  bool split_active = false;
  MPI_Status split_status{};
};

// The open file h names (0), or MPI_ERR_FILE naming h.
int get_file(Runtime& rt, MPI_File h, FileObj** out);
// Error-handler dispatch for files: f's handler, or MPI_FILE_NULL's when f
// is null (calls on no valid file). Returns code unless the handler is fatal.
int file_error(Runtime& rt, FileObj* f, int code, const char* fn);
// A code of class c for the POSIX error err, naming what failed.
int io_errno(int err, const char* what, const std::string& path);
// A code for the calls left out: MPI_ERR_UNSUPPORTED_OPERATION naming fn.
int io_unsupported(const char* fn);

// One data access: count elements of type at etype offset `offset` of the view.
struct Access {
  MPI_Offset offset;
  void* buf;
  int count;
  MPI_Datatype type;
  bool write;
};
// Moves a's data; *bytes is what moved (less than asked when a read met the
// end of the file). Checks the access mode and the arguments.
int access_file(Runtime& rt, FileObj& f, const Access& a, MPI_Offset* bytes);
// The status of an access of `bytes` bytes, as a receive of them sets it.
void io_status(MPI_Status* status, MPI_Offset bytes);
// At explicit `offset`, or the individual pointer (which then advances).
int do_access(Runtime& rt, FileObj& f, MPI_Offset offset, bool at_pointer, Access a, MPI_Status* status,
              const char* fn);
// A new request handle, complete already, whose status is st's.
int completed_request(const MPI_Status& st, MPI_Request* request);
// Makes f's shared file pointer (collective over f.comm), at start.
int open_shared_pointer(FileObj& f, int rank, MPI_Offset start);
// A split collective's _end: hands the status _begin kept.
int split_end(FileObj& f, MPI_Status* status, const char* fn);

// Bytes [first, first + n) of the view's data stream (first counted from
// the view's start) as file byte ranges, in order.
void view_ranges(const FileObj& f, MPI_Offset first, MPI_Offset n, std::vector<std::pair<MPI_Offset, MPI_Offset>>* out);
// Data bytes of the view that lie before file byte `end` (the file's size):
// how far MPI_SEEK_END counts from.
MPI_Offset view_bytes_before(const FileObj& f, MPI_Offset end);
// Frees the view's etype and filetype handles (those that are duplicates).
void drop_view_types(FileObj& f);

}  // namespace adi3::mpi
