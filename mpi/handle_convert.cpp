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
ADI3_CONVERT(File, MPI_File)

// Statuses (MPI 3.1 17.2.5): a Fortran status is the C one's ints in the
// same order, hidden fields included, so a converted status answers
// get_count, get_elements and test_cancelled as the original does. Passing
// an ignore value is erroneous: it is reported, never dereferenced.
static_assert(sizeof(MPI_Status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint));
static_assert(offsetof(MPI_Status, MPI_SOURCE) == MPI_F_SOURCE * sizeof(MPI_Fint));
static_assert(offsetof(MPI_Status, MPI_TAG) == MPI_F_TAG * sizeof(MPI_Fint));
static_assert(offsetof(MPI_Status, MPI_ERROR) == MPI_F_ERROR * sizeof(MPI_Fint));

namespace {
// One status copy of either direction: `from` and `to` name the sides
// ("c_status", "f_status") in the error, which says which one was missing.
int convert_status(const void* src, bool src_ok, const char* from, void* dst, bool dst_ok, const char* to,
                   const char* fn) {
  using namespace adi3::mpi;
  if (!src_ok)
    return world_error(raise(adi3::ErrorClass::Arg, "%s is null or an ignore value: no status to convert", from), fn);
  if (!dst_ok)
    return world_error(raise(adi3::ErrorClass::Arg, "%s is null or an ignore value: nowhere to convert to", to), fn);
  std::memcpy(dst, src, sizeof(MPI_Status));
  return MPI_SUCCESS;
}
bool fortran_ok(const MPI_Fint* f) { return f && f != MPI_F_STATUS_IGNORE; }
}  // namespace

ADI3_MPI_API(int, Status_c2f, (const MPI_Status* c_status, MPI_Fint* f_status), (c_status, f_status)) {
  return convert_status(c_status, !adi3::mpi::ignored(c_status), "c_status", f_status, fortran_ok(f_status), "f_status",
                        __func__);
}

ADI3_MPI_API(int, Status_f2c, (const MPI_Fint* f_status, MPI_Status* c_status), (f_status, c_status)) {
  return convert_status(f_status, fortran_ok(f_status), "f_status", c_status, !adi3::mpi::ignored(c_status), "c_status",
                        __func__);
}
