// fetch_and_op and compare_and_swap of one element into window memory
// reached by cross-memory attach (a window from create on shm) while the
// target does not poll, without the general path's machinery: the general
// path (check_op, route_op, native::run's read-combine-write) cost about
// 2,500 instructions at the origin around the two system calls.
// The same operation as acc_remote's: read, combine, write back under the
// element's stripe in the target's control block (none under our exclusive
// lock), the stripe every other path takes on that element, so it stays
// atomic with packets the target applies and other origins' copies.
#pragma once
#include <cstddef>

#include "coll/op.hpp"
#include "segment/datatype.hpp"

namespace adi3::rma {
class WindowState;
}

namespace adi3::rma::native {

// compare null: fetch_and_op with op (MPI_SUM on C integers and floating
// types, MPI_REPLACE, MPI_NO_OP); else compare_and_swap. Of one 4- or 8-byte
// predefined element t, to a target the window reaches by cross-memory
// attach only, in a native lock or plain fence epoch with nothing
// emulated in flight to it. 0 done, an MPI error code when the copy
// failed, -1 when this is not such a case (nothing done: the general path
// checks and routes it, and raises its errors).
int cma_atomic(WindowState& w, const void* origin, const void* compare, void* result, const Datatype* t, int target,
               std::ptrdiff_t disp, coll::OpKind op);

}  // namespace adi3::rma::native
