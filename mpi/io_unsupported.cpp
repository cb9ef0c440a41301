// The MPI-IO calls left out (mpi/README.md): the shared file pointer and
// what is built on it (ordered access), and user data representations.
// Each checks its file handle, then fails with MPI_ERR_UNSUPPORTED_OPERATION
// through the file's error handler.
#include <cstring>

#include "mpi/io_file.hpp"

using namespace adi3;
using namespace adi3::mpi;

#define ADI3_IO_UNSUPPORTED(name, params, args)  \
  ADI3_MPI_API(int, File_##name, params, args) { \
    ADI3_FILE_ENTER(fh);                         \
    (void)f;                                     \
    [](const auto&...) {} args; /* unused */     \
    return fail(io_unsupported(__func__));       \
  }

ADI3_IO_UNSUPPORTED(read_shared, (MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Status* status),
                    (fh, buf, count, datatype, status))
ADI3_IO_UNSUPPORTED(write_shared, (MPI_File fh, const void* buf, int count, MPI_Datatype datatype, MPI_Status* status),
                    (fh, buf, count, datatype, status))
ADI3_IO_UNSUPPORTED(iread_shared, (MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Request* request),
                    (fh, buf, count, datatype, request))
ADI3_IO_UNSUPPORTED(iwrite_shared,
                    (MPI_File fh, const void* buf, int count, MPI_Datatype datatype, MPI_Request* request),
                    (fh, buf, count, datatype, request))
ADI3_IO_UNSUPPORTED(read_ordered, (MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Status* status),
                    (fh, buf, count, datatype, status))
ADI3_IO_UNSUPPORTED(write_ordered, (MPI_File fh, const void* buf, int count, MPI_Datatype datatype, MPI_Status* status),
                    (fh, buf, count, datatype, status))
ADI3_IO_UNSUPPORTED(seek_shared, (MPI_File fh, MPI_Offset offset, int whence), (fh, offset, whence))
ADI3_IO_UNSUPPORTED(get_position_shared, (MPI_File fh, MPI_Offset* offset), (fh, offset))
ADI3_IO_UNSUPPORTED(read_ordered_begin, (MPI_File fh, void* buf, int count, MPI_Datatype datatype),
                    (fh, buf, count, datatype))
ADI3_IO_UNSUPPORTED(read_ordered_end, (MPI_File fh, void* buf, MPI_Status* status), (fh, buf, status))
ADI3_IO_UNSUPPORTED(write_ordered_begin, (MPI_File fh, const void* buf, int count, MPI_Datatype datatype),
                    (fh, buf, count, datatype))
ADI3_IO_UNSUPPORTED(write_ordered_end, (MPI_File fh, const void* buf, MPI_Status* status), (fh, buf, status))

ADI3_MPI_API(int, Register_datarep,
             (const char* datarep, MPI_Datarep_conversion_function* read_conversion_fn,
              MPI_Datarep_conversion_function* write_conversion_fn, MPI_Datarep_extent_function* dtype_file_extent_fn,
              void* extra_state),
             (datarep, read_conversion_fn, write_conversion_fn, dtype_file_extent_fn, extra_state)) {
  ADI3_MPI_ENTER();
  (void)read_conversion_fn, (void)write_conversion_fn, (void)extra_state;
  int e = 0;
  if (!datarep || !dtype_file_extent_fn) {
    e = raise(ErrorClass::Arg, "%s is null", datarep ? "dtype_file_extent_fn" : "datarep");
  } else if (std::strlen(datarep) >= MPI_MAX_DATAREP_STRING) {
    e = raise(ErrorClass::Arg, "datarep is longer than MPI_MAX_DATAREP_STRING - 1");
  } else if (!std::strcmp(datarep, "native") || !std::strcmp(datarep, "internal") ||
             !std::strcmp(datarep, "external32")) {
    e = raise(ErrorClass::DupDatarep, "data representation \"%s\" is predefined", datarep);
  } else {
    e = io_unsupported(__func__);
  }
  return file_error(*rt, nullptr, e, __func__);
}
