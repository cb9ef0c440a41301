// Data access (MPI 3.1 13.4) with explicit offsets and the individual file
// pointer: blocking, collective (each process accesses on its own: POSIX
// keeps the file consistent), nonblocking (done at once; the request comes
// back complete) and split collective. Memory data is packed through the
// datatype engine and moved with pread/pwrite over the view's byte ranges.
#include <cerrno>
#include <unistd.h>

#include "mpi/io_file.hpp"
#include "segment/segment.hpp"

using namespace adi3;
using namespace adi3::mpi;

namespace {

// One pread or pwrite of a whole range: short transfers continue; a read
// stops at the end of the file. Returns the bytes moved, or -errno.
ssize_t transfer(int fd, char* mem, MPI_Offset len, MPI_Offset at, bool write) {
  MPI_Offset done = 0;
  while (done < len) {
    const auto n = static_cast<std::size_t>(len - done);
    const ssize_t r = write ? pwrite(fd, mem + done, n, at + done) : pread(fd, mem + done, n, at + done);
    if (r < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (r == 0) break;  // end of file (reads only)
    done += r;
  }
  return done;
}

}  // namespace

int adi3::mpi::access_file(Runtime& rt, FileObj& f, const Access& a, MPI_Offset* bytes) {
  *bytes = 0;
  if (a.write && (f.amode & MPI_MODE_RDONLY)) {
    return raise(ErrorClass::ReadOnly, "writing to %s, opened MPI_MODE_RDONLY", f.path.c_str());
  }
  if (!a.write && (f.amode & MPI_MODE_WRONLY)) {
    return raise(ErrorClass::Access, "reading from %s, opened MPI_MODE_WRONLY", f.path.c_str());
  }
  if (a.offset < 0) return raise(ErrorClass::Arg, "offset %lld is negative", a.offset);
  if (int e = check_count(a.count)) return e;
  const Datatype* t = nullptr;
  if (int e = get_comm_type(rt, a.type, &t)) return e;
  if (int e = check_buffer(a.buf, a.count, t)) return e;
  const auto esize = static_cast<MPI_Offset>(f.etype_obj->size());
  const auto total = static_cast<MPI_Offset>(t->size()) * a.count;
  if (t->size() % f.etype_obj->size() != 0) {
    return raise(ErrorClass::Type, "the datatype's %zu bytes are no whole number of etypes of %lld bytes", t->size(),
                 esize);
  }
  if (total == 0) return 0;
  if (f.filetype_obj->size() == 0) return raise(ErrorClass::Io, "the view's filetype holds no data");
  std::vector<std::pair<MPI_Offset, MPI_Offset>> ranges;
  view_ranges(f, a.offset * esize, total, &ranges);
  // Contiguous memory moves in place; any other is packed first.
  std::vector<char> staging;
  char* mem = static_cast<char*>(a.buf) + t->true_lb();
  Segment seg;
  if (!t->is_contiguous()) {
    staging.resize(static_cast<std::size_t>(total));
    mem = staging.data();
    seg = Segment(a.buf, static_cast<std::size_t>(a.count), t);
    if (a.write) seg.pack(0, staging.size(), mem);
  }
  MPI_Offset done = 0;
  for (const auto& [at, len] : ranges) {
    const ssize_t r = transfer(f.fd, mem + done, len, at, a.write);
    if (r < 0) return io_errno(static_cast<int>(-r), a.write ? "write" : "read", f.path);
    done += r;
    if (r < len) break;
  }
  if (!a.write && !staging.empty()) seg.unpack(0, static_cast<std::size_t>(done), mem);
  *bytes = done;
  return 0;
}

void adi3::mpi::io_status(MPI_Status* status, MPI_Offset bytes) {
  if (ignored(status)) return;
  empty_status(status, false);
  set_status_bytes(status, static_cast<std::size_t>(bytes));
}

static int check_explicit(const FileObj& f, const char* fn) {
  return (f.amode & MPI_MODE_SEQUENTIAL)
             ? raise(ErrorClass::UnsupportedOperation, "%s: explicit offsets on a file opened MPI_MODE_SEQUENTIAL", fn)
             : 0;
}

// At an explicit offset (offset >= 0) or the individual pointer (offset < 0,
// which then advances by the etypes moved).
int adi3::mpi::do_access(Runtime& rt, FileObj& f, MPI_Offset offset, bool at_pointer, Access a, MPI_Status* status,
                         const char* fn) {
  if (at_pointer) {
    if (f.amode & MPI_MODE_SEQUENTIAL) {
      return raise(ErrorClass::UnsupportedOperation, "%s: the individual pointer on a file opened MPI_MODE_SEQUENTIAL",
                   fn);
    }
    a.offset = f.pos;
  } else {
    if (int e = check_explicit(f, fn)) return e;
    a.offset = offset;
  }
  MPI_Offset bytes = 0;
  if (int e = access_file(rt, f, a, &bytes)) return e;
  if (at_pointer) f.pos += bytes / static_cast<MPI_Offset>(f.etype_obj->size());
  io_status(status, bytes);
  return 0;
}

// A request that is complete already, whose status says `bytes`.
static int query_done(void* state, MPI_Status* status) {
  MPI_Status_set_elements_x(status, MPI_BYTE, *static_cast<MPI_Count*>(state));
  MPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_ANY_SOURCE;  // as the blocking calls' (io_status)
  status->MPI_TAG = MPI_ANY_TAG;
  return MPI_SUCCESS;
}
static int free_done(void* state) {
  delete static_cast<MPI_Count*>(state);
  return MPI_SUCCESS;
}
static int cancel_done(void*, int) { return MPI_SUCCESS; }

int adi3::mpi::completed_request(const MPI_Status& st, MPI_Request* request) {
  auto* bytes = new MPI_Count(static_cast<MPI_Count>(status_bytes(&st)));
  if (int e = PMPI_Grequest_start(query_done, free_done, cancel_done, bytes, request)) {
    delete bytes;
    return e;
  }
  return PMPI_Grequest_complete(*request);
}

static int do_iaccess(Runtime& rt, FileObj& f, MPI_Offset offset, bool at_pointer, const Access& a,
                      MPI_Request* request, const char* fn) {
  if (!request) return raise(ErrorClass::Arg, "request is null");
  MPI_Status st{};
  if (int e = do_access(rt, f, offset, at_pointer, a, &st, fn)) return e;
  return completed_request(st, request);
}

static int split_begin(Runtime& rt, FileObj& f, MPI_Offset offset, bool at_pointer, const Access& a, const char* fn) {
  if (f.split_active) return raise(ErrorClass::Other, "%s: a split collective is active on this file already", fn);
  f.split_status = MPI_Status{};
  if (int e = do_access(rt, f, offset, at_pointer, a, &f.split_status, fn)) return e;
  f.split_active = true;
  return 0;
}

int adi3::mpi::split_end(FileObj& f, MPI_Status* status, const char* fn) {
  if (!f.split_active) return raise(ErrorClass::Other, "%s: no split collective was begun", fn);
  f.split_active = false;
  if (!ignored(status)) *status = f.split_status;
  return 0;
}

// The blocking (Out = MPI_Status*, do_access) and nonblocking (MPI_Request*,
// do_iaccess) calls at an explicit offset (AT) or the individual pointer (PTR).
#define ADI3_IO_AT(name, write, Out, doer)                                                                          \
  ADI3_MPI_API(int, File_##name,                                                                                    \
               (MPI_File fh, MPI_Offset offset, ADI3_IO_BUF(write) buf, int count, MPI_Datatype datatype, Out out), \
               (fh, offset, buf, count, datatype, out)) {                                                           \
    ADI3_FILE_ENTER(fh);                                                                                            \
    return fail(doer(*rt, *f, offset, false, {0, const_cast<void*>(buf), count, datatype, write}, out, __func__));  \
  }
#define ADI3_IO_PTR(name, write, Out, doer)                                                                        \
  ADI3_MPI_API(int, File_##name, (MPI_File fh, ADI3_IO_BUF(write) buf, int count, MPI_Datatype datatype, Out out), \
               (fh, buf, count, datatype, out)) {                                                                  \
    ADI3_FILE_ENTER(fh);                                                                                           \
    return fail(doer(*rt, *f, 0, true, {0, const_cast<void*>(buf), count, datatype, write}, out, __func__));       \
  }
#define ADI3_IO_BUF(write) ADI3_IO_BUF_##write
#define ADI3_IO_BUF_false void*
#define ADI3_IO_BUF_true const void*

ADI3_IO_AT(read_at, false, MPI_Status*, do_access)
ADI3_IO_AT(read_at_all, false, MPI_Status*, do_access)
ADI3_IO_AT(write_at, true, MPI_Status*, do_access)
ADI3_IO_AT(write_at_all, true, MPI_Status*, do_access)
ADI3_IO_PTR(read, false, MPI_Status*, do_access)
ADI3_IO_PTR(read_all, false, MPI_Status*, do_access)
ADI3_IO_PTR(write, true, MPI_Status*, do_access)
ADI3_IO_PTR(write_all, true, MPI_Status*, do_access)
ADI3_IO_AT(iread_at, false, MPI_Request*, do_iaccess)
ADI3_IO_AT(iread_at_all, false, MPI_Request*, do_iaccess)
ADI3_IO_AT(iwrite_at, true, MPI_Request*, do_iaccess)
ADI3_IO_AT(iwrite_at_all, true, MPI_Request*, do_iaccess)
ADI3_IO_PTR(iread, false, MPI_Request*, do_iaccess)
ADI3_IO_PTR(iread_all, false, MPI_Request*, do_iaccess)
ADI3_IO_PTR(iwrite, true, MPI_Request*, do_iaccess)
ADI3_IO_PTR(iwrite_all, true, MPI_Request*, do_iaccess)

// Split collectives: the access happens in _begin, _end hands its status.
ADI3_MPI_API(int, File_read_at_all_begin, (MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype datatype),
             (fh, offset, buf, count, datatype)) {
  ADI3_FILE_ENTER(fh);
  return fail(split_begin(*rt, *f, offset, false, {0, buf, count, datatype, false}, __func__));
}
ADI3_MPI_API(int, File_write_at_all_begin,
             (MPI_File fh, MPI_Offset offset, const void* buf, int count, MPI_Datatype datatype),
             (fh, offset, buf, count, datatype)) {
  ADI3_FILE_ENTER(fh);
  return fail(split_begin(*rt, *f, offset, false, {0, const_cast<void*>(buf), count, datatype, true}, __func__));
}
ADI3_MPI_API(int, File_read_all_begin, (MPI_File fh, void* buf, int count, MPI_Datatype datatype),
             (fh, buf, count, datatype)) {
  ADI3_FILE_ENTER(fh);
  return fail(split_begin(*rt, *f, 0, true, {0, buf, count, datatype, false}, __func__));
}
ADI3_MPI_API(int, File_write_all_begin, (MPI_File fh, const void* buf, int count, MPI_Datatype datatype),
             (fh, buf, count, datatype)) {
  ADI3_FILE_ENTER(fh);
  return fail(split_begin(*rt, *f, 0, true, {0, const_cast<void*>(buf), count, datatype, true}, __func__));
}
#define ADI3_IO_END(name, constness)                                                                          \
  ADI3_MPI_API(int, File_##name, (MPI_File fh, constness void* buf, MPI_Status* status), (fh, buf, status)) { \
    ADI3_FILE_ENTER(fh);                                                                                      \
    (void)buf;                                                                                                \
    return fail(split_end(*f, status, __func__));                                                             \
  }
ADI3_IO_END(read_at_all_end, )
ADI3_IO_END(write_at_all_end, const)
ADI3_IO_END(read_all_end, )
ADI3_IO_END(write_all_end, const)
