// Small MPI-4.1 calls: the status field accessors, MPI_Type_get_value_index
// and MPI_Get_hw_resource_info.
#include "mpi/api.hpp"

using namespace adi3;
using namespace adi3::mpi;

namespace {

// The status accessors work before MPI_Init and after MPI_Finalize too
// (they touch only the caller's status).
int status_arg(const MPI_Status* s, const char* fn) {
  if (s && s != MPI_STATUS_IGNORE) return 0;
  return world_error(raise(ErrorClass::Arg, "status is %s", s ? "MPI_STATUS_IGNORE" : "null"), fn);
}

}  // namespace

#define ADI3_STATUS_FIELD(Field, member)                                                      \
  ADI3_MPI_API(int, Status_get_##Field, (MPI_Status * status, int* Field), (status, Field)) { \
    if (int e = status_arg(status, __func__)) return e;                                       \
    if (!Field) return world_error(raise(ErrorClass::Arg, #Field " is null"), __func__);      \
    *Field = status->member;                                                                  \
    return MPI_SUCCESS;                                                                       \
  }                                                                                           \
  ADI3_MPI_API(int, Status_set_##Field, (MPI_Status * status, int Field), (status, Field)) {  \
    if (int e = status_arg(status, __func__)) return e;                                       \
    status->member = Field;                                                                   \
    return MPI_SUCCESS;                                                                       \
  }
ADI3_STATUS_FIELD(source, MPI_SOURCE)
ADI3_STATUS_FIELD(tag, MPI_TAG)
ADI3_STATUS_FIELD(error, MPI_ERROR)
#undef ADI3_STATUS_FIELD

// The predefined (value, index) pair type for MPI_MINLOC/MAXLOC, or
// MPI_DATATYPE_NULL when no predefined one exists.
ADI3_MPI_API(int, Type_get_value_index, (MPI_Datatype value_type, MPI_Datatype index_type, MPI_Datatype* pair_type),
             (value_type, index_type, pair_type)) {
  ADI3_MPI_ENTER();
  const Datatype* t = nullptr;
  if (int e = get_type(*rt, value_type, &t)) return world_error(e, __func__);
  if (int e = get_type(*rt, index_type, &t)) return world_error(e, __func__);
  if (!pair_type) return world_error(raise(ErrorClass::Arg, "pair_type is null"), __func__);
  static constexpr MPI_Datatype kPairs[][2] = {
      {MPI_FLOAT, MPI_FLOAT_INT}, {MPI_DOUBLE, MPI_DOUBLE_INT}, {MPI_LONG, MPI_LONG_INT},
      {MPI_INT, MPI_2INT},        {MPI_SHORT, MPI_SHORT_INT},   {MPI_LONG_DOUBLE, MPI_LONG_DOUBLE_INT},
  };
  *pair_type = MPI_DATATYPE_NULL;
  if (index_type != MPI_INT) return MPI_SUCCESS;
  for (const auto& p : kPairs) {
    if (p[0] == value_type) *pair_type = p[1];
  }
  return MPI_SUCCESS;
}

// The hardware resource types this process can name: the host (shared
// memory) is the one level known, as MPI_COMM_TYPE_HW_GUIDED accepts it.
ADI3_MPI_API(int, Get_hw_resource_info, (MPI_Info * hw_info), (hw_info)) {
  ADI3_MPI_ENTER();
  if (!hw_info) return world_error(raise(ErrorClass::Arg, "hw_info is null"), __func__);
  return world_error(add_info(*rt, {{"mpi_hw_resource_type", "mpi_shared_memory"}}, hw_info), __func__);
}
