/* Callbacks of a generalized request that stands for no data (MPI-4.1
 * 13.2): its status says nothing was received, nobody sent it and it was
 * not cancelled; freeing or cancelling it does nothing. Test programs that only need
 * a request to start and complete (tests/mpi, tests/fault) share them. */
#ifndef ADI3_GREQ_STUB_H
#define ADI3_GREQ_STUB_H
#include <mpi.h>

static inline int greq_stub_query(void* extra, MPI_Status* s) {
  (void)extra;
  MPI_Status_set_elements(s, MPI_BYTE, 0);
  MPI_Status_set_cancelled(s, 0);
  s->MPI_SOURCE = MPI_UNDEFINED;
  s->MPI_TAG = MPI_UNDEFINED;
  return MPI_SUCCESS;
}

static inline int greq_stub_free(void* extra) {
  (void)extra;
  return MPI_SUCCESS;
}

static inline int greq_stub_cancel(void* extra, int complete) {
  (void)extra;
  (void)complete;
  return MPI_SUCCESS;
}

#endif
