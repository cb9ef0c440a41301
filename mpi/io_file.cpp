// MPI-IO files (MPI 3.1 13.2): open, close, delete, size, group, amode,
// info, atomicity and sync, on POSIX files. Every process of the group opens
// the file itself; the collective calls agree on their outcome.
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpi/agree.hpp"
#include "mpi/io_file.hpp"

using namespace adi3;
using namespace adi3::mpi;

namespace {

constexpr int kAccessModes = MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR;
constexpr int kAllModes = kAccessModes | MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_DELETE_ON_CLOSE |
                          MPI_MODE_UNIQUE_OPEN | MPI_MODE_SEQUENTIAL | MPI_MODE_APPEND;

int check_amode(int amode) {
  if (amode & ~kAllModes) return raise(ErrorClass::Amode, "amode 0x%x has bits that are no MPI_MODE_*", amode);
  const int access = amode & kAccessModes;
  if (access != MPI_MODE_RDONLY && access != MPI_MODE_WRONLY && access != MPI_MODE_RDWR) {
    return raise(ErrorClass::Amode, "amode 0x%x must hold exactly one of MPI_MODE_RDONLY, _WRONLY and _RDWR", amode);
  }
  if (access == MPI_MODE_RDONLY && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL))) {
    return raise(ErrorClass::Amode, "MPI_MODE_RDONLY with MPI_MODE_CREATE or MPI_MODE_EXCL (amode 0x%x)", amode);
  }
  if (access == MPI_MODE_RDWR && (amode & MPI_MODE_SEQUENTIAL)) {
    return raise(ErrorClass::Amode, "MPI_MODE_RDWR with MPI_MODE_SEQUENTIAL (amode 0x%x)", amode);
  }
  return 0;
}

// The POSIX name of an MPI file name: a "ufs:" or "nfs:" prefix (ROMIO's
// file system names) says nothing to us.
std::string posix_path(const char* name) {
  std::string p(name);
  if (p.rfind("ufs:", 0) == 0 || p.rfind("nfs:", 0) == 0) p.erase(0, 4);
  return p;
}

int open_flags(int amode) {
  int flags = O_CLOEXEC;
  if (amode & MPI_MODE_RDONLY) flags |= O_RDONLY;
  if (amode & MPI_MODE_WRONLY) flags |= O_WRONLY;
  if (amode & MPI_MODE_RDWR) flags |= O_RDWR;
  if (amode & MPI_MODE_CREATE) flags |= O_CREAT;
  if (amode & MPI_MODE_EXCL) flags |= O_EXCL;
  return flags;
}

// Rank 0 opens first (it alone creates, so MPI_MODE_EXCL fails only when the
// file existed before), then the others; all learn whether everyone could.
// *end is the file's size when it opened (MPI_MODE_APPEND's start), read
// before anyone can write.
int open_everywhere(MPI_Comm comm, int rank, const std::string& path, int amode, int* fd, MPI_Offset* end) {
  int err = 0;
  if (rank == 0) {
    *fd = open(path.c_str(), open_flags(amode), 0666);
    if (*fd < 0) err = errno;
  }
  int first = err;
  if (int e = PMPI_Bcast(&first, 1, MPI_INT, 0, comm)) return e;
  if (first) return no_peer_waits(io_errno(first, "open", path));
  if (rank != 0) {
    *fd = open(path.c_str(), open_flags(amode) & ~(O_CREAT | O_EXCL));
    if (*fd < 0) err = errno;
  }
  struct stat st {};
  if (err == 0 && fstat(*fd, &st) != 0) err = errno;
  *end = st.st_size;
  int any = err;
  if (int e = PMPI_Allreduce(&err, &any, 1, MPI_INT, MPI_MAX, comm)) return e;
  if (any == 0) return 0;
  if (*fd >= 0) close(*fd);
  *fd = -1;
  if (err) return no_peer_waits(io_errno(err, "open", path));
  return no_peer_waits(raise(ErrorClass::Io, "another process could not open %s", path.c_str()));
}

int check_writable(const FileObj& f) {
  if (f.amode & MPI_MODE_RDONLY) return raise(ErrorClass::ReadOnly, "%s was opened MPI_MODE_RDONLY", f.path.c_str());
  return 0;
}

// The end of a collective call that changed the file: every process waits
// for the others, and learns whether any failed.
int agree(const FileObj& f, int mine) {
  int local = mine ? 1 : 0, any = 0;
  if (int e = PMPI_Allreduce(&local, &any, 1, MPI_INT, MPI_MAX, f.comm)) return e;
  if (mine) return no_peer_waits(mine);
  return any ? no_peer_waits(raise(ErrorClass::Io, "the call failed on another process of %s", f.path.c_str())) : 0;
}

}  // namespace

int adi3::mpi::io_errno(int err, const char* what, const std::string& path) {
  static constexpr std::pair<int, ErrorClass> kClasses[] = {
      {ENOENT, ErrorClass::NoSuchFile}, {EEXIST, ErrorClass::FileExists},    {EACCES, ErrorClass::Access},
      {EPERM, ErrorClass::Access},      {EROFS, ErrorClass::ReadOnly},       {ENOSPC, ErrorClass::NoSpace},
      {EDQUOT, ErrorClass::Quota},      {ENAMETOOLONG, ErrorClass::BadFile}, {EISDIR, ErrorClass::BadFile},
      {ENOTDIR, ErrorClass::BadFile},   {ELOOP, ErrorClass::BadFile},        {ETXTBSY, ErrorClass::FileInUse}};
  ErrorClass c = ErrorClass::Io;
  for (const auto& [e, cls] : kClasses) {
    if (e == err) c = cls;
  }
  return raise(c, "%s %s: %s", what, path.c_str(), std::strerror(err));
}

int adi3::mpi::io_unsupported(const char* fn) {
  return raise(ErrorClass::UnsupportedOperation, "%s is not implemented (mpi/README.md, MPI-IO)", fn);
}

int adi3::mpi::get_file(Runtime& rt, MPI_File h, FileObj** out) {
  FileObj** p = is_kind(h, Kind::File, HandleClass::User) ? rt.files.get(handle_index(h)) : nullptr;
  if (!p) {
    return raise(ErrorClass::File, "0x%x is not an open file%s", h, h == MPI_FILE_NULL ? " (MPI_FILE_NULL)" : "");
  }
  *out = *p;
  return 0;
}

int adi3::mpi::file_error(Runtime& rt, FileObj* f, int code, const char* fn) {
  if (code == 0) return 0;
  // (with no file: MPI_File_open, whose errors after its checks are agreed)
  int size = 2;
  if (f) PMPI_Comm_size(f->comm, &size);
  if (size > 1) note_returned(code, fn);
  ErrhandlerObj* errh = f ? f->errh : rt.file_default.errh;
  const int builtin = f ? f->errh_builtin : rt.file_default.errh_builtin;
  if (errh) {
    MPI_File h = f ? f->handle : MPI_FILE_NULL;
    reinterpret_cast<MPI_File_errhandler_function*>(errh->fn)(&h, &code);
    return code;
  }
  if (builtin == MPI_ERRORS_RETURN) return code;
  fatal(code, fn);
}

ADI3_MPI_API(int, File_open, (MPI_Comm comm, const char* filename, int amode, MPI_Info info, MPI_File* fh),
             (comm, filename, amode, info, fh)) {
  ADI3_MPI_ENTER();
  auto fail = [rt, fn_ = __func__](int e) { return file_error(*rt, nullptr, e, fn_); };
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return fail(e);
  if (int e = need_intra(*c, "MPI_File_open")) return fail(e);
  // Bad arguments fail the dup's agreement below at every rank.
  std::vector<std::pair<std::string, std::string>> entries;
  int bad = !filename || !fh ? raise(ErrorClass::Arg, "%s is null", filename ? "fh" : "filename") : check_amode(amode);
  if (!bad) bad = info_entries(*rt, info, &entries);
  if (bad) return fail(fail_agreement(*rt, c->internal, bad));
  MPI_Comm dup = MPI_COMM_NULL;
  if (int e = PMPI_Comm_dup(comm, &dup)) return fail(e);
  auto* f = new FileObj;
  f->comm = dup;
  f->amode = amode;
  f->path = posix_path(filename);
  f->info = std::move(entries);
  // Undoes what the open made so far, and reports e.
  auto abandon = [&](int e) {
    if (f->shared_win != MPI_WIN_NULL) PMPI_Win_free(&f->shared_win);
    if (f->fd >= 0) close(f->fd);
    PMPI_Comm_free(&dup);
    delete f;
    return fail(e);
  };
  MPI_Offset end = 0;
  if (int e = open_everywhere(dup, c->rank(), f->path, amode, &f->fd, &end)) return abandon(e);
  if (!(amode & MPI_MODE_APPEND)) end = 0;
  f->pos = end;  // the default view counts bytes
  if (int e = open_shared_pointer(*f, c->rank(), end)) return abandon(e);
  get_type(*rt, MPI_BYTE, &f->etype_obj);
  f->filetype_obj = f->etype_obj;
  const int idx = rt->files.add(f);
  if (idx < 0) return abandon(raise(ErrorClass::NoMem, "no file handles left"));
  set_errhandler(*rt, *f, rt->file_default.errh, rt->file_default.errh_builtin);
  f->handle = make_handle(HandleClass::User, Kind::File, idx);
  *fh = f->handle;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, File_close, (MPI_File * fh), (fh)) {
  ADI3_MPI_ENTER();
  if (!fh) return file_error(*rt, nullptr, raise(ErrorClass::Arg, "fh is null"), __func__);
  FileObj* f = nullptr;
  if (int e = get_file(*rt, *fh, &f)) return file_error(*rt, nullptr, e, __func__);
  int err = close(f->fd) == 0 ? 0 : errno;
  f->fd = -1;
  int rank = 0;
  PMPI_Comm_rank(f->comm, &rank);
  // Everyone has closed before the file goes.
  int e = agree(*f, err ? io_errno(err, "close", f->path) : 0);
  if (e == 0 && (f->amode & MPI_MODE_DELETE_ON_CLOSE) && rank == 0 && unlink(f->path.c_str()) != 0) {
    e = io_errno(errno, "delete (MPI_MODE_DELETE_ON_CLOSE)", f->path);
  }
  drop_view_types(*f);
  PMPI_Win_free(&f->shared_win);
  PMPI_Comm_free(&f->comm);
  rt->files.remove(handle_index(f->handle));
  *fh = MPI_FILE_NULL;
  // Errors of a closed file go to MPI_FILE_NULL's handler.
  if (f->errh) release_errhandler(*rt, f->errh);
  delete f;
  return file_error(*rt, nullptr, e, __func__);
}

ADI3_MPI_API(int, File_delete, (const char* filename, MPI_Info info), (filename, info)) {
  ADI3_MPI_ENTER();
  if (!filename) return file_error(*rt, nullptr, raise(ErrorClass::Arg, "filename is null"), __func__);
  std::vector<std::pair<std::string, std::string>> entries;
  if (int e = info_entries(*rt, info, &entries)) return file_error(*rt, nullptr, e, __func__);
  const std::string path = posix_path(filename);
  if (unlink(path.c_str()) != 0) return file_error(*rt, nullptr, io_errno(errno, "delete", path), __func__);
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, File_set_size, (MPI_File fh, MPI_Offset size), (fh, size)) {
  ADI3_FILE_ENTER(fh);
  if (size < 0) return fail(raise(ErrorClass::Arg, "size %lld is negative", size));
  if (f->amode & MPI_MODE_SEQUENTIAL) return fail(io_unsupported("MPI_File_set_size on MPI_MODE_SEQUENTIAL"));
  int e = check_writable(*f);
  if (e == 0 && ftruncate(f->fd, size) != 0) e = io_errno(errno, "truncate", f->path);
  return fail(agree(*f, e));
}

ADI3_MPI_API(int, File_preallocate, (MPI_File fh, MPI_Offset size), (fh, size)) {
  ADI3_FILE_ENTER(fh);
  if (size < 0) return fail(raise(ErrorClass::Arg, "size %lld is negative", size));
  if (f->amode & MPI_MODE_SEQUENTIAL) return fail(io_unsupported("MPI_File_preallocate on MPI_MODE_SEQUENTIAL"));
  int e = check_writable(*f);
  int rank = 0;
  PMPI_Comm_rank(f->comm, &rank);
  if (e == 0 && rank == 0 && size > 0) {
    // posix_fallocate never shrinks the file, as MPI wants.
    if (int err = posix_fallocate(f->fd, 0, size)) e = io_errno(err, "preallocate", f->path);
  }
  return fail(agree(*f, e));
}

ADI3_MPI_API(int, File_get_size, (MPI_File fh, MPI_Offset* size), (fh, size)) {
  ADI3_FILE_ENTER(fh);
  if (!size) return fail(raise(ErrorClass::Arg, "size is null"));
  struct stat st {};
  if (fstat(f->fd, &st) != 0) return fail(io_errno(errno, "stat", f->path));
  *size = st.st_size;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, File_get_group, (MPI_File fh, MPI_Group* group), (fh, group)) {
  ADI3_FILE_ENTER(fh);
  if (!group) return fail(raise(ErrorClass::Arg, "group is null"));
  return fail(PMPI_Comm_group(f->comm, group));
}

ADI3_MPI_API(int, File_get_amode, (MPI_File fh, int* amode), (fh, amode)) {
  ADI3_FILE_ENTER(fh);
  if (!amode) return fail(raise(ErrorClass::Arg, "amode is null"));
  *amode = f->amode;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, File_set_info, (MPI_File fh, MPI_Info info), (fh, info)) {
  ADI3_FILE_ENTER(fh);
  std::vector<std::pair<std::string, std::string>> entries;
  if (int e = info_entries(*rt, info, &entries)) return fail(e);
  for (auto& kv : entries) {
    bool found = false;
    for (auto& old : f->info) {
      if (old.first == kv.first) {
        old.second = kv.second;
        found = true;
      }
    }
    if (!found) f->info.push_back(std::move(kv));
  }
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, File_get_info, (MPI_File fh, MPI_Info* info_used), (fh, info_used)) {
  ADI3_FILE_ENTER(fh);
  if (!info_used) return fail(raise(ErrorClass::Arg, "info_used is null"));
  return fail(add_info(*rt, f->info, info_used));
}

ADI3_MPI_API(int, File_set_atomicity, (MPI_File fh, int flag), (fh, flag)) {
  ADI3_FILE_ENTER(fh);
  // Each access is one pread/pwrite per contiguous range, which POSIX makes
  // atomic on one file system node; the flag is kept for get_atomicity.
  f->atomic = flag != 0;
  return fail(agree(*f, 0));
}

ADI3_MPI_API(int, File_get_atomicity, (MPI_File fh, int* flag), (fh, flag)) {
  ADI3_FILE_ENTER(fh);
  if (!flag) return fail(raise(ErrorClass::Arg, "flag is null"));
  *flag = f->atomic ? 1 : 0;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, File_sync, (MPI_File fh), (fh)) {
  ADI3_FILE_ENTER(fh);
  int e = 0;
  if (fsync(f->fd) != 0 && errno != EINVAL) e = io_errno(errno, "sync", f->path);
  return fail(agree(*f, e));
}
