// The MPI-IO call left out (mpi/README.md): user data representations
// (MPI 3.1 13.5.3). It checks its arguments, then fails with
// MPI_ERR_UNSUPPORTED_OPERATION through MPI_FILE_NULL's error handler.
#include <cstring>

#include "mpi/io_file.hpp"

using namespace adi3;
using namespace adi3::mpi;

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
