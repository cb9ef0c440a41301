// Fortran handle and status conversion: handles are ints in both languages, so the
// conversions are the identity (as in MPICH).
#include <cstddef>
#include <cstring>

#include "mpi/api.hpp"

#define ADI3_CONVERT(Name, CType)                                                         \
  ADI3_MPI_API(MPI_Fint, Name##_c2f, (CType h), (h)) { return static_cast<MPI_Fint>(h); } \
  ADI3_MPI_API(CType, Name##_f2c, (MPI_Fint h), (h)) { return static_cast<CType>(h); }

ADI3_CONVERT(Comm, MPI_Comm)
ADI3_CONVERT(Type, MPI_Datatype)
ADI3_CONVERT(Group, MPI_Group)
ADI3_CONVERT(Info, MPI_Info)
ADI3_CONVERT(Op, MPI_Op)
ADI3_CONVERT(Request, MPI_Request)
ADI3_CONVERT(Errhandler, MPI_Errhandler)
ADI3_CONVERT(Message, MPI_Message)
ADI3_CONVERT(Win, MPI_Win)

// Statuses (MPI 3.1 17.2.5): a Fortran status is the C one's ints in the
// same order, hidden fields included, so a converted status answers
// get_count, get_elements and test_cancelled as the original does. Passing
// an ignore value is erroneous: it is reported, never dereferenced.
static_assert(sizeof(MPI_Status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint));
static_assert(offsetof(MPI_Status, MPI_SOURCE) == MPI_F_SOURCE * sizeof(MPI_Fint));
static_assert(offsetof(MPI_Status, MPI_TAG) == MPI_F_TAG * sizeof(MPI_Fint));
static_assert(offsetof(MPI_Status, MPI_ERROR) == MPI_F_ERROR * sizeof(MPI_Fint));

ADI3_MPI_API(int, Status_c2f, (const MPI_Status* c_status, MPI_Fint* f_status), (c_status, f_status)) {
  if (adi3::mpi::ignored(c_status))
    return adi3::mpi::world_error(
        adi3::mpi::raise(adi3::ErrorClass::Arg, "c_status is null or MPI_STATUS_IGNORE: there is no status to convert"),
        __func__);
  if (!f_status || f_status == MPI_F_STATUS_IGNORE)
    return adi3::mpi::world_error(
        adi3::mpi::raise(adi3::ErrorClass::Arg,
                         "f_status is null or MPI_F_STATUS_IGNORE: there is nowhere to convert to"),
        __func__);
  std::memcpy(f_status, c_status, sizeof(MPI_Status));
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Status_f2c, (const MPI_Fint* f_status, MPI_Status* c_status), (f_status, c_status)) {
  if (!f_status || f_status == MPI_F_STATUS_IGNORE)
    return adi3::mpi::world_error(
        adi3::mpi::raise(adi3::ErrorClass::Arg,
                         "f_status is null or MPI_F_STATUS_IGNORE: there is no status to convert"),
        __func__);
  if (adi3::mpi::ignored(c_status))
    return adi3::mpi::world_error(
        adi3::mpi::raise(adi3::ErrorClass::Arg,
                         "c_status is null or MPI_STATUS_IGNORE: there is nowhere to convert to"),
        __func__);
  std::memcpy(c_status, f_status, sizeof(MPI_Status));
  return MPI_SUCCESS;
}
