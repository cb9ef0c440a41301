// Reading and filling statuses: counts, elements, the cancelled flag.
#include <climits>

#include "mpi/api.hpp"
#include "segment/type_query.hpp"

using namespace adi3;
using namespace adi3::mpi;

namespace {

int status_type(Runtime& rt, const MPI_Status* status, MPI_Datatype dt, const Datatype** t) {
  if (ignored(status)) return raise(ErrorClass::Arg, "status is null or MPI_STATUS_IGNORE");
  return get_type(rt, dt, t);
}

int elements(const MPI_Status* status, const Datatype* t, long long* n) {
  if (ErrorClass c = type_get_elements(t, status_bytes(status), n); c != ErrorClass::Success) {
    return raise(c, "cannot count elements of the datatype in the status");
  }
  return 0;
}

int set_elements(const char* fn, MPI_Status* status, MPI_Datatype dt, long long count) {
  Runtime* rt = g_runtime;
  if (!rt) return not_initialized(fn);
  const Datatype* t = nullptr;
  if (int e = status_type(*rt, status, dt, &t)) return world_error(e, fn);
  if (count < 0) return world_error(raise(ErrorClass::Count, "invalid count %lld: must be non-negative", count), fn);
  // `count` basic elements (MPI-4.1 13.3): get_elements then returns count
  // and get_count whole instances, or MPI_UNDEFINED for a partial one.
  std::size_t bytes = 0;
  if (ErrorClass c = type_elements_bytes(t, count, &bytes); c != ErrorClass::Success)
    return world_error(raise(c, "cannot place %lld elements of the datatype in the status", count), fn);
  set_status_bytes(status, bytes);
  return MPI_SUCCESS;
}

}  // namespace

ADI3_MPI_API(int, Get_count, (const MPI_Status* status, MPI_Datatype dt, int* count), (status, dt, count)) {
  ADI3_MPI_ENTER();
  const Datatype* t = nullptr;
  if (int e = status_type(*rt, status, dt, &t)) return world_error(e, __func__);
  if (!count) return world_error(raise(ErrorClass::Arg, "count is null"), __func__);
  long long n = 0;
  if (ErrorClass c = type_get_count(t, status_bytes(status), &n); c != ErrorClass::Success) {
    return world_error(raise(c, "cannot count the datatype in the status"), __func__);
  }
  *count = n > INT_MAX ? MPI_UNDEFINED : static_cast<int>(n);
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Get_elements, (const MPI_Status* status, MPI_Datatype dt, int* count), (status, dt, count)) {
  ADI3_MPI_ENTER();
  const Datatype* t = nullptr;
  if (int e = status_type(*rt, status, dt, &t)) return world_error(e, __func__);
  if (!count) return world_error(raise(ErrorClass::Arg, "count is null"), __func__);
  long long n = 0;
  if (int e = elements(status, t, &n)) return world_error(e, __func__);
  *count = n > INT_MAX ? MPI_UNDEFINED : static_cast<int>(n);
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Get_elements_x, (const MPI_Status* status, MPI_Datatype dt, MPI_Count* count), (status, dt, count)) {
  ADI3_MPI_ENTER();
  const Datatype* t = nullptr;
  if (int e = status_type(*rt, status, dt, &t)) return world_error(e, __func__);
  if (!count) return world_error(raise(ErrorClass::Arg, "count is null"), __func__);
  long long n = 0;
  if (int e = elements(status, t, &n)) return world_error(e, __func__);
  *count = n;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Status_set_elements, (MPI_Status * status, MPI_Datatype dt, int count), (status, dt, count)) {
  return set_elements(__func__, status, dt, count);
}

ADI3_MPI_API(int, Status_set_elements_x, (MPI_Status * status, MPI_Datatype dt, MPI_Count count), (status, dt, count)) {
  return set_elements(__func__, status, dt, count);
}

ADI3_MPI_API(int, Status_set_cancelled, (MPI_Status * status, int flag), (status, flag)) {
  ADI3_MPI_ENTER();
  if (ignored(status)) return world_error(raise(ErrorClass::Arg, "status is null or MPI_STATUS_IGNORE"), __func__);
  status->adi3_cancelled = flag ? 1 : 0;
  return MPI_SUCCESS;
}
