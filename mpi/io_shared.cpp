// The shared file pointer (MPI 3.1 13.4.4): an MPI_Offset (etypes of the
// view) in rank 0's FileObj, exposed by a window the open made. Independent
// calls move it with one fetch-and-add under an exclusive lock; the ordered
// and collective ones agree on their places with a scan.
#include <cerrno>
#include <sys/stat.h>

#include "mpi/io_file.hpp"

using namespace adi3;
using namespace adi3::mpi;

namespace {

int fetch_op(FileObj& f, MPI_Offset value, MPI_Op op, MPI_Offset* old) {
  if (int e = PMPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, f.shared_win)) return e;
  const int e = PMPI_Fetch_and_op(&value, old, MPI_OFFSET, 0, 0, op, f.shared_win);
  const int u = PMPI_Win_unlock(0, f.shared_win);
  return e ? e : u;
}

// The etypes a's data spans, once its datatype is known good.
int etypes_of(Runtime& rt, const FileObj& f, const Access& a, MPI_Offset* n) {
  if (int e = check_count(a.count)) return e;
  const Datatype* t = nullptr;
  if (int e = get_comm_type(rt, a.type, &t)) return e;
  if (t->size() % f.etype_obj->size() != 0) {
    return raise(ErrorClass::Type, "the datatype's %zu bytes are no whole number of etypes of %zu bytes", t->size(),
                 f.etype_obj->size());
  }
  *n = static_cast<MPI_Offset>(t->size() / f.etype_obj->size()) * a.count;
  return 0;
}

int shared_access(Runtime& rt, FileObj& f, Access a, MPI_Status* status) {
  MPI_Offset n = 0, bytes = 0;
  if (int e = etypes_of(rt, f, a, &n)) return e;
  if (int e = fetch_op(f, n, MPI_SUM, &a.offset)) return e;
  if (int e = access_file(rt, f, a, &bytes)) return e;
  io_status(status, bytes);
  return 0;
}

// Collective, in rank order: each rank's place is the pointer plus what the
// ranks before it move; the pointer then passes all of it.
int ordered_access(Runtime& rt, FileObj& f, Access a, MPI_Status* status) {
  MPI_Offset n = 0, before = 0, total = 0, base = 0, bytes = 0;
  int mine = etypes_of(rt, f, a, &n);
  if (mine) n = 0;  // the others still go on
  int rank = 0;
  PMPI_Comm_rank(f.comm, &rank);
  if (int e = PMPI_Exscan(&n, &before, 1, MPI_OFFSET, MPI_SUM, f.comm)) return e;
  if (rank == 0) before = 0;
  if (int e = PMPI_Allreduce(&n, &total, 1, MPI_OFFSET, MPI_SUM, f.comm)) return e;
  if (rank == 0) {
    if (int e = fetch_op(f, total, MPI_SUM, &base)) return e;
  }
  if (int e = PMPI_Bcast(&base, 1, MPI_OFFSET, 0, f.comm)) return e;
  if (mine) return mine;
  a.offset = base + before;
  if (int e = access_file(rt, f, a, &bytes)) return e;
  io_status(status, bytes);
  return 0;
}

}  // namespace

int adi3::mpi::open_shared_pointer(FileObj& f, int rank, MPI_Offset start) {
  f.shared_pos = start;
  return PMPI_Win_create(rank == 0 ? &f.shared_pos : nullptr, rank == 0 ? sizeof f.shared_pos : 0, 1, MPI_INFO_NULL,
                         f.comm, &f.shared_win);
}

#define ADI3_IO_SHARED(name, write, how)                                                                     \
  ADI3_MPI_API(int, File_##name,                                                                             \
               (MPI_File fh, ADI3_IO_SBUF(write) buf, int count, MPI_Datatype datatype, MPI_Status* status), \
               (fh, buf, count, datatype, status)) {                                                         \
    ADI3_FILE_ENTER(fh);                                                                                     \
    return fail(how(*rt, *f, {0, const_cast<void*>(buf), count, datatype, write}, status));                  \
  }
#define ADI3_IO_ISHARED(name, write)                                                                              \
  ADI3_MPI_API(int, File_##name,                                                                                  \
               (MPI_File fh, ADI3_IO_SBUF(write) buf, int count, MPI_Datatype datatype, MPI_Request* request),    \
               (fh, buf, count, datatype, request)) {                                                             \
    ADI3_FILE_ENTER(fh);                                                                                          \
    if (!request) return fail(raise(ErrorClass::Arg, "request is null"));                                         \
    MPI_Status st{};                                                                                              \
    if (int e = shared_access(*rt, *f, {0, const_cast<void*>(buf), count, datatype, write}, &st)) return fail(e); \
    return fail(completed_request(st, request));                                                                  \
  }
#define ADI3_IO_SBUF(write) ADI3_IO_SBUF_##write
#define ADI3_IO_SBUF_false void*
#define ADI3_IO_SBUF_true const void*

ADI3_IO_SHARED(read_shared, false, shared_access)
ADI3_IO_SHARED(write_shared, true, shared_access)
ADI3_IO_SHARED(read_ordered, false, ordered_access)
ADI3_IO_SHARED(write_ordered, true, ordered_access)
ADI3_IO_ISHARED(iread_shared, false)
ADI3_IO_ISHARED(iwrite_shared, true)

// Split ordered access: the work happens in _begin, _end hands its status.
#define ADI3_IO_ORDERED_BEGIN(name, write)                                                                            \
  ADI3_MPI_API(int, File_##name, (MPI_File fh, ADI3_IO_SBUF(write) buf, int count, MPI_Datatype datatype),            \
               (fh, buf, count, datatype)) {                                                                          \
    ADI3_FILE_ENTER(fh);                                                                                              \
    if (f->split_active) return fail(raise(ErrorClass::Other, "%s: a split collective is active already", __func__)); \
    f->split_status = MPI_Status{};                                                                                   \
    if (int e = ordered_access(*rt, *f, {0, const_cast<void*>(buf), count, datatype, write}, &f->split_status))       \
      return fail(e);                                                                                                 \
    f->split_active = true;                                                                                           \
    return MPI_SUCCESS;                                                                                               \
  }
ADI3_IO_ORDERED_BEGIN(read_ordered_begin, false)
ADI3_IO_ORDERED_BEGIN(write_ordered_begin, true)
ADI3_MPI_API(int, File_read_ordered_end, (MPI_File fh, void* buf, MPI_Status* status), (fh, buf, status)) {
  ADI3_FILE_ENTER(fh);
  (void)buf;
  return fail(split_end(*f, status, __func__));
}
ADI3_MPI_API(int, File_write_ordered_end, (MPI_File fh, const void* buf, MPI_Status* status), (fh, buf, status)) {
  ADI3_FILE_ENTER(fh);
  (void)buf;
  return fail(split_end(*f, status, __func__));
}

ADI3_MPI_API(int, File_get_position_shared, (MPI_File fh, MPI_Offset* offset), (fh, offset)) {
  ADI3_FILE_ENTER(fh);
  if (!offset) return fail(raise(ErrorClass::Arg, "offset is null"));
  return fail(fetch_op(*f, 0, MPI_NO_OP, offset));
}

// Collective: rank 0 moves the pointer; the others learn whether it could.
ADI3_MPI_API(int, File_seek_shared, (MPI_File fh, MPI_Offset offset, int whence), (fh, offset, whence)) {
  ADI3_FILE_ENTER(fh);
  int rank = 0;
  PMPI_Comm_rank(f->comm, &rank);
  int cls = 0;
  if (rank == 0) {
    MPI_Offset base = 0, old = 0;
    int e = 0;
    if (whence == MPI_SEEK_CUR) {
      e = fetch_op(*f, 0, MPI_NO_OP, &base);
    } else if (whence == MPI_SEEK_END) {
      struct stat st {};
      if (fstat(f->fd, &st) != 0) e = io_errno(errno, "stat", f->path);
      base = view_bytes_before(*f, st.st_size) / static_cast<MPI_Offset>(f->etype_obj->size());
    } else if (whence != MPI_SEEK_SET) {
      e = raise(ErrorClass::Arg, "whence %d is none of MPI_SEEK_SET, _CUR and _END", whence);
    }
    if (e == 0 && base + offset < 0)
      e = raise(ErrorClass::Arg, "seeking to %lld, before the view's start", base + offset);
    if (e == 0) e = fetch_op(*f, base + offset, MPI_REPLACE, &old);
    if (e) PMPI_Error_class(e, &cls);
    if (int b = PMPI_Bcast(&cls, 1, MPI_INT, 0, f->comm)) return fail(b);
    return fail(e);
  }
  if (int b = PMPI_Bcast(&cls, 1, MPI_INT, 0, f->comm)) return fail(b);
  if (cls <= 0 || cls > MPI_ERR_LASTCODE) cls = cls ? MPI_ERR_IO : 0;  // rank 0's word, checked
  return fail(cls ? raise(static_cast<ErrorClass>(cls), "MPI_File_seek_shared failed on rank 0") : 0);
}
