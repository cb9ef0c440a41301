// File views (MPI 3.1 13.3): displacement, etype and filetype, and the map
// from the view's data stream to file bytes, which the datatype engine
// gives: a Segment over the filetype at address 0 describes one tile's data
// as iovecs whose addresses are byte offsets.
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <sys/stat.h>

#include "mpi/io_file.hpp"
#include "segment/segment.hpp"

using namespace adi3;
using namespace adi3::mpi;

namespace {

constexpr std::size_t kIov = 64;

// Calls fn(file offset within the tile, length) for the data bytes
// [from, to) of one filetype tile, in order.
template <class Fn>
void tile_runs(const Datatype* ft, std::size_t from, std::size_t to, Fn fn) {
  Segment seg(nullptr, 1, ft);
  iovec iov[kIov];
  while (from < to) {
    std::size_t n = 0;
    const std::size_t got = seg.to_iov(from, to, iov, kIov, &n);
    for (std::size_t i = 0; i < n; ++i) {
      fn(static_cast<MPI_Offset>(reinterpret_cast<std::intptr_t>(iov[i].iov_base)),
         static_cast<MPI_Offset>(iov[i].iov_len));
    }
    if (got == 0) return;
    from += got;
  }
}

bool is_builtin_type(MPI_Datatype t) { return is_kind(t, Kind::Datatype, HandleClass::Builtin); }

// Our own handle for a view's type: a duplicate of a derived one.
int own_type(MPI_Datatype t, MPI_Datatype* out) {
  if (is_builtin_type(t)) {
    *out = t;
    return 0;
  }
  return PMPI_Type_dup(t, out);
}

void drop_type(MPI_Datatype* t) {
  if (!is_builtin_type(*t)) PMPI_Type_free(t);
}

}  // namespace

void adi3::mpi::drop_view_types(FileObj& f) {
  drop_type(&f.etype);
  drop_type(&f.filetype);
}

void adi3::mpi::view_ranges(const FileObj& f, MPI_Offset first, MPI_Offset n,
                            std::vector<std::pair<MPI_Offset, MPI_Offset>>* out) {
  out->clear();
  const Datatype* ft = f.filetype_obj;
  const auto tsize = static_cast<MPI_Offset>(ft->size());
  if (n <= 0 || tsize == 0) return;
  if (ft->is_contiguous()) {
    out->emplace_back(f.disp + ft->true_lb() + first, n);
    return;
  }
  MPI_Offset tile = first / tsize, within = first % tsize;
  while (n > 0) {
    const MPI_Offset last = std::min(tsize, within + n);
    const MPI_Offset base = f.disp + tile * ft->extent();
    tile_runs(ft, static_cast<std::size_t>(within), static_cast<std::size_t>(last), [&](MPI_Offset at, MPI_Offset len) {
      if (!out->empty() && out->back().first + out->back().second == base + at) {
        out->back().second += len;  // adjacent runs read or write as one
      } else {
        out->emplace_back(base + at, len);
      }
    });
    n -= last - within;
    within = 0;
    ++tile;
  }
}

MPI_Offset adi3::mpi::view_bytes_before(const FileObj& f, MPI_Offset end) {
  const Datatype* ft = f.filetype_obj;
  const MPI_Offset bytes = end - f.disp;
  if (bytes <= 0 || ft->size() == 0) return 0;
  if (ft->is_contiguous()) return std::max<MPI_Offset>(0, bytes - ft->true_lb());
  const MPI_Offset extent = ft->extent(), rem = bytes % extent;
  MPI_Offset data = bytes / extent * static_cast<MPI_Offset>(ft->size());
  tile_runs(ft, 0, ft->size(),
            [&](MPI_Offset at, MPI_Offset len) { data += std::clamp<MPI_Offset>(rem - at, 0, len); });
  return data;
}

ADI3_MPI_API(int, File_set_view,
             (MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char* datarep,
              MPI_Info info),
             (fh, disp, etype, filetype, datarep, info)) {
  ADI3_FILE_ENTER(fh);
  if (!datarep) return fail(raise(ErrorClass::Arg, "datarep is null"));
  // MPI 3.1 13.5.2: "internal" is the implementation's own choice; ours is
  // the native layout. "external32" is not implemented.
  const bool internal = std::strcmp(datarep, "internal") == 0;
  if (!internal && std::strcmp(datarep, "native") != 0) {
    return fail(raise(ErrorClass::UnsupportedDatarep,
                      "data representation \"%s\" (only \"native\" and \"internal\" are supported)", datarep));
  }
  if (disp == MPI_DISPLACEMENT_CURRENT) {
    if (!(f->amode & MPI_MODE_SEQUENTIAL)) {
      return fail(raise(ErrorClass::Arg, "MPI_DISPLACEMENT_CURRENT needs a file opened MPI_MODE_SEQUENTIAL"));
    }
    return fail(io_unsupported("MPI_File_set_view with MPI_DISPLACEMENT_CURRENT"));
  }
  if (disp < 0) return fail(raise(ErrorClass::Arg, "disp %lld is negative", disp));
  const Datatype *et = nullptr, *ft = nullptr;
  if (int e = get_comm_type(*rt, etype, &et)) return fail(e);
  if (int e = get_comm_type(*rt, filetype, &ft)) return fail(e);
  if (et->size() == 0) return fail(raise(ErrorClass::Type, "the etype holds no data"));
  if (ft->size() % et->size() != 0) {
    return fail(raise(ErrorClass::Type, "the filetype's %zu bytes are no whole number of etypes of %zu bytes",
                      ft->size(), et->size()));
  }
  if (ft->true_lb() < 0 || (ft->size() > 0 && ft->extent() <= 0)) {
    return fail(raise(ErrorClass::Type, "the filetype reaches before its start (true lb %td, extent %td)",
                      ft->true_lb(), ft->extent()));
  }
  std::vector<std::pair<std::string, std::string>> entries;
  if (int e = info_entries(*rt, info, &entries)) return fail(e);
  MPI_Datatype new_etype = MPI_DATATYPE_NULL, new_filetype = MPI_DATATYPE_NULL;
  if (int e = own_type(etype, &new_etype)) return fail(e);
  if (int e = own_type(filetype, &new_filetype)) {
    drop_type(&new_etype);
    return fail(e);
  }
  drop_view_types(*f);
  f->etype = new_etype;
  f->filetype = new_filetype;
  get_type(*rt, new_etype, &f->etype_obj);
  get_type(*rt, new_filetype, &f->filetype_obj);
  f->disp = disp;
  f->pos = 0;
  f->datarep = internal ? "internal" : "native";
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, File_get_view,
             (MPI_File fh, MPI_Offset* disp, MPI_Datatype* etype, MPI_Datatype* filetype, char* datarep),
             (fh, disp, etype, filetype, datarep)) {
  ADI3_FILE_ENTER(fh);
  if (!disp || !etype || !filetype || !datarep) {
    return fail(raise(ErrorClass::Arg, "an output argument of MPI_File_get_view is null"));
  }
  // Derived types come back as new handles the caller frees (MPI 3.1 13.3).
  if (int e = own_type(f->etype, etype)) return fail(e);
  if (int e = own_type(f->filetype, filetype)) {
    drop_type(etype);
    return fail(e);
  }
  *disp = f->disp;
  std::strcpy(datarep, f->datarep);
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, File_seek, (MPI_File fh, MPI_Offset offset, int whence), (fh, offset, whence)) {
  ADI3_FILE_ENTER(fh);
  if (f->amode & MPI_MODE_SEQUENTIAL) return fail(io_unsupported("MPI_File_seek on MPI_MODE_SEQUENTIAL"));
  MPI_Offset base = 0;
  if (whence == MPI_SEEK_CUR) {
    base = f->pos;
  } else if (whence == MPI_SEEK_END) {
    struct stat st {};
    if (fstat(f->fd, &st) != 0) return fail(io_errno(errno, "stat", f->path));
    base = view_bytes_before(*f, st.st_size) / static_cast<MPI_Offset>(f->etype_obj->size());
  } else if (whence != MPI_SEEK_SET) {
    return fail(raise(ErrorClass::Arg, "whence %d is none of MPI_SEEK_SET, _CUR and _END", whence));
  }
  if (base + offset < 0) {
    return fail(raise(ErrorClass::Arg, "seeking to offset %lld, before the view's start", base + offset));
  }
  f->pos = base + offset;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, File_get_position, (MPI_File fh, MPI_Offset* offset), (fh, offset)) {
  ADI3_FILE_ENTER(fh);
  if (!offset) return fail(raise(ErrorClass::Arg, "offset is null"));
  *offset = f->pos;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, File_get_byte_offset, (MPI_File fh, MPI_Offset offset, MPI_Offset* disp), (fh, offset, disp)) {
  ADI3_FILE_ENTER(fh);
  if (!disp) return fail(raise(ErrorClass::Arg, "disp is null"));
  if (offset < 0) return fail(raise(ErrorClass::Arg, "offset %lld is negative", offset));
  std::vector<std::pair<MPI_Offset, MPI_Offset>> ranges;
  view_ranges(*f, offset * static_cast<MPI_Offset>(f->etype_obj->size()), 1, &ranges);
  *disp = ranges.empty() ? f->disp : ranges.front().first;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, File_get_type_extent, (MPI_File fh, MPI_Datatype datatype, MPI_Aint* extent),
             (fh, datatype, extent)) {
  ADI3_FILE_ENTER(fh);
  if (!extent) return fail(raise(ErrorClass::Arg, "extent is null"));
  const Datatype* t = nullptr;
  if (int e = get_type(*rt, datatype, &t)) return fail(e);
  *extent = t->extent();  // "native": as in memory
  return MPI_SUCCESS;
}
