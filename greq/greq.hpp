// Generalized requests (MPI-3.1 chapter 12.2): nonblocking operations that
// the user carries out and the device only tracks. A generalized request is
// an ordinary Request, so it mixes with every other request in every wait
// and test call.
//
// Beyond the standard, MPICH-style classes add a poll function (the device's
// progress engine calls it, so no user thread is needed) and a wait function
// (wait and waitall hand their requests of one class to it).
//
// The callbacks have the shape of MPI's C callbacks with adi3::Status in
// place of MPI_Status, so the MPI binding can wrap them one to one.
#pragma once
#include <cstdint>

#include "adi3/request.hpp"
#include "adi3/types.hpp"

namespace adi3 {

class Device;
class Datatype;

// MPI_Grequest_query_function: fills *status (never null, even when the
// caller passed STATUS_IGNORE). Must not set status->error.
using GreqQueryFn = int(void* extra_state, Status* status);
// MPI_Grequest_free_function: releases the user's resources.
using GreqFreeFn = int(void* extra_state);
// MPI_Grequest_cancel_function: complete is nonzero when grequest_complete
// was already called.
using GreqCancelFn = int(void* extra_state, int complete);
// MPIX_Grequest_poll_function: checks the operation and calls
// grequest_complete when it is done. status is scratch space.
using GreqPollFn = int(void* extra_state, Status* status);
// MPIX_Grequest_wait_function: blocks until the count operations are done
// (each calls grequest_complete) or timeout seconds pass; the device passes
// +infinity. status is scratch space.
using GreqWaitFn = int(int count, void** extra_states, double timeout, Status* status);

// ---- the standard interface ----

// MPI_Grequest_start. Null callbacks do nothing and return success. Out of
// requests (ADI3_MAX_REQUESTS): ERR_NO_MEM, *out null, no callback called
// (the caller still owns extra_state); so for every start below.
int grequest_start(Device& dev, GreqQueryFn* query, GreqFreeFn* free, GreqCancelFn* cancel, void* extra_state,
                   Request** out);
// MPI_Grequest_complete. May be called from any thread. Returns free_fn's
// code when free_fn runs here (the request was freed before completion).
int grequest_complete(Request* r);

// ---- MPICH-style extensions (MPIX_Grequest_*) ----

class GreqClass;  // opaque; shared by the requests allocated from it

// MPIX_Grequest_class_create. poll and wait may be null.
int grequest_class_create(GreqQueryFn* query, GreqFreeFn* free, GreqCancelFn* cancel, GreqPollFn* poll,
                          GreqWaitFn* wait, GreqClass** out);
// Drops the caller's handle to the class; the class lives on while requests
// allocated from it do. Sets *cls to null.
int grequest_class_free(GreqClass** cls);
// MPIX_Grequest_class_allocate: starts a request of the class.
int grequest_class_allocate(Device& dev, GreqClass* cls, void* extra_state, Request** out);
// MPIX_Grequest_start: grequest_start with a poll and a wait function (a
// class of its own, so waitall never batches it with other requests).
int grequest_start_polled(Device& dev, GreqQueryFn* query, GreqFreeFn* free, GreqCancelFn* cancel, GreqPollFn* poll,
                          GreqWaitFn* wait, void* extra_state, Request** out);

// ---- filling a status (MPI-3.1 chapter 12.3), for query functions ----

// MPI_Status_set_elements / _x: get_elements with the same type will
// report count. Elements are whole elements of type (see docs/greq.md).
int status_set_elements(Status& status, const Datatype* type, int count);
int status_set_elements_x(Status& status, const Datatype* type, int64_t count);
// MPI_Status_set_cancelled.
int status_set_cancelled(Status& status, bool flag);

}  // namespace adi3
