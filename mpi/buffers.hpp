// Buffered mode's buffers as MPI sees them: the process buffer
// (MPI_Buffer_*), and MPI-4.1's communicator and session buffers
// (MPI_Comm_*_buffer, MPI_Session_*_buffer). One body per operation for the
// three owners and the int and MPI_Count forms; callers report errors
// through their owner's handler.
#pragma once
#include <climits>
#include <memory>

#include "mpi/api.hpp"

namespace adi3::mpi {

// buffer may be MPI_BUFFER_AUTOMATIC (size is then ignored).
int attach_buffer(Runtime& rt, BsendBuffer& b, void* buffer, MPI_Count size);
// Blocks until b's messages have left; gives back what attach got
// (MPI_BUFFER_AUTOMATIC and size 0 for an automatic buffer). max: the
// largest size the caller's type holds.
int detach_buffer(Runtime& rt, BsendBuffer& b, void* buffer_addr, MPI_Count* size, MPI_Count max);
template <class C>
int detach_buffer(Runtime& rt, BsendBuffer& b, void* buffer_addr, C* size) {
  if (!buffer_addr || !size) return raise(ErrorClass::Arg, "buffer_addr or size is null");
  MPI_Count n = 0;
  int e = detach_buffer(rt, b, buffer_addr, &n, sizeof(C) < sizeof(MPI_Count) ? INT_MAX : LLONG_MAX);
  if (!e) *size = static_cast<C>(n);
  return e;
}
// A request that completes once every message in b when it was called has
// left b (errors go to comm's handler).
int iflush_buffer(Runtime& rt, std::shared_ptr<BsendBuffer> b, MPI_Comm comm, MPI_Request* request);

}  // namespace adi3::mpi
