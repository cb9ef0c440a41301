// Filling a status from a query function (MPI-3.1 chapter 12.3). The core's
// Status counts bytes, so elements are stored as bytes of whole elements.
#include <cstdint>

#include "adi3/error.hpp"
#include "greq/greq.hpp"
#include "segment/datatype.hpp"

namespace adi3 {

int status_set_elements_x(Status& status, const Datatype* type, int64_t count) {
  if (!type) return error_code(ErrorClass::Type);
  if (count < 0) return error_code(ErrorClass::Count);
  std::size_t size = type->size();
  if (size && static_cast<uint64_t>(count) > SIZE_MAX / size) return error_code(ErrorClass::Count);
  status.bytes = static_cast<std::size_t>(count) * size;
  return 0;
}

int status_set_elements(Status& status, const Datatype* type, int count) {
  return status_set_elements_x(status, type, count);
}

int status_set_cancelled(Status& status, bool flag) {
  status.cancelled = flag;
  return 0;
}

}  // namespace adi3
