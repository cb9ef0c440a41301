/* Generalized requests from C: the standard's form completed by another
 * thread, and MPICH's MPIX classes whose poll function the progress engine
 * calls (no user thread), with a wait function handed a whole waitall. */
#include <pthread.h>

#include "mpitest.h"

/* ---- MPI_Grequest_start, completed by a thread ---- */

typedef struct {
  MPI_Request req;
  int value;
  int freed;
} Job;

static int job_query(void* extra, MPI_Status* status) {
  Job* j = (Job*)extra;
  MPI_Status_set_elements(status, MPI_INT, 1);
  MPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = j->value;
  return MPI_SUCCESS;
}
static int job_free(void* extra) {
  ((Job*)extra)->freed = 1;
  return MPI_SUCCESS;
}
static int job_cancel(void* extra, int complete) {
  (void)extra;
  (void)complete;
  return MPI_SUCCESS;
}
static void* job_thread(void* arg) {
  Job* j = (Job*)arg;
  j->value = 42;
  MPI_Grequest_complete(j->req);
  return NULL;
}

static void test_thread_completed(void) {
  Job j = {MPI_REQUEST_NULL, 0, 0};
  pthread_t t;
  MPI_Status st;
  int count = -1;
  CHECK_OK(MPI_Grequest_start(job_query, job_free, job_cancel, &j, &j.req));
  MPI_Request r = j.req;
  pthread_create(&t, NULL, job_thread, &j);
  CHECK_OK(MPI_Wait(&r, &st));
  pthread_join(t, NULL);
  CHECK_EQ(r, MPI_REQUEST_NULL);
  CHECK_EQ(st.MPI_TAG, 42);
  MPI_Get_count(&st, MPI_INT, &count);
  CHECK_EQ(count, 1);
  CHECK_EQ(j.freed, 1);
}

/* ---- MPIX classes: a countdown advanced only by the progress engine ---- */

typedef struct {
  int left;
  int polls;
  MPI_Request self;
} Countdown;

static int cd_query(void* extra, MPI_Status* status) {
  MPI_Status_set_elements(status, MPI_BYTE, ((Countdown*)extra)->polls);
  return MPI_SUCCESS;
}
static int cd_free(void* extra) {
  (void)extra;
  return MPI_SUCCESS;
}
static int cd_poll(void* extra, MPI_Status* status) {
  Countdown* c = (Countdown*)extra;
  (void)status;
  ++c->polls;
  if (--c->left == 0) MPI_Grequest_complete(c->self);
  return MPI_SUCCESS;
}
static int wait_calls = 0;
static int cd_wait(int count, void** states, double timeout, MPI_Status* status) {
  (void)timeout;
  (void)status;
  ++wait_calls;
  for (int i = 0; i < count; ++i) {
    Countdown* c = (Countdown*)states[i];
    while (c->left > 0) cd_poll(c, NULL);
  }
  return MPI_SUCCESS;
}

static void test_classes(void) {
  MPIX_Grequest_class cls;
  CHECK_OK(MPIX_Grequest_class_create(cd_query, cd_free, job_cancel, cd_poll, NULL, &cls));
  Countdown c[3] = {{3, 0, MPI_REQUEST_NULL}, {5, 0, MPI_REQUEST_NULL}, {1, 0, MPI_REQUEST_NULL}};
  MPI_Request r[3];
  for (int i = 0; i < 3; ++i) {
    CHECK_OK(MPIX_Grequest_class_allocate(cls, &c[i], &r[i]));
    c[i].self = r[i];
  }
  MPI_Status st[3];
  CHECK_OK(MPI_Waitall(3, r, st)); /* finishes with no thread: the engine polls */
  for (int i = 0; i < 3; ++i) {
    int n = -1;
    CHECK_EQ(c[i].left, 0);
    MPI_Get_count(&st[i], MPI_BYTE, &n);
    CHECK_EQ(n, c[i].polls);
  }

  /* A class with a wait function gets the whole waitall at once. */
  MPIX_Grequest_class wcls;
  CHECK_OK(MPIX_Grequest_class_create(cd_query, cd_free, job_cancel, NULL, cd_wait, &wcls));
  Countdown w[2] = {{4, 0, MPI_REQUEST_NULL}, {2, 0, MPI_REQUEST_NULL}};
  MPI_Request wr[2];
  for (int i = 0; i < 2; ++i) {
    CHECK_OK(MPIX_Grequest_class_allocate(wcls, &w[i], &wr[i]));
    w[i].self = wr[i];
  }
  CHECK_OK(MPI_Waitall(2, wr, MPI_STATUSES_IGNORE));
  CHECK_EQ(wait_calls, 1);

  /* MPIX_Grequest_start: a one-request class. */
  Countdown one = {2, 0, MPI_REQUEST_NULL};
  MPI_Request q;
  CHECK_OK(MPIX_Grequest_start(cd_query, cd_free, job_cancel, cd_poll, NULL, &one, &q));
  one.self = q;
  CHECK_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
  CHECK_EQ(one.left, 0);
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  CHECK_EQ(provided, MPI_THREAD_MULTIPLE);
  test_thread_completed();
  test_classes();
  return mt_finish();
}
