// Fortran handle conversion: handles are ints in both languages, so the
// conversions are the identity (as in MPICH).
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
