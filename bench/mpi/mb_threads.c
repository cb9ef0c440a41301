/* MPI_THREAD_MULTIPLE message rate: T threads on each rank of a pair,
 * thread t of the even rank streaming 8-byte messages (windows of 64,
 * tag t) to thread t of the odd rank. The figure is all threads' messages
 * per second; its "size" is T. */
#include <pthread.h>
#include <stdlib.h>

#include "mb.h"

#define WINDOW 64
#define MAXT 8

struct team {
  int nthreads, peer, sender, quit;
  long n;
  pthread_barrier_t start, end;
};

static void work(struct team* tm, int t) {
  MPI_Request reqs[WINDOW];
  char buf[8] = {0}, ack = 0;
  for (long i = 0; i < tm->n; ++i) {
    for (int k = 0; k < WINDOW; ++k) {
      if (tm->sender) {
        MPI_Isend(buf, 8, MPI_BYTE, tm->peer, t, MPI_COMM_WORLD, &reqs[k]);
      } else {
        MPI_Irecv(buf, 8, MPI_BYTE, tm->peer, t, MPI_COMM_WORLD, &reqs[k]);
      }
    }
    MPI_Waitall(WINDOW, reqs, MPI_STATUSES_IGNORE);
    if (tm->sender) {
      MPI_Recv(&ack, 1, MPI_BYTE, tm->peer, 1000 + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Send(&ack, 1, MPI_BYTE, tm->peer, 1000 + t, MPI_COMM_WORLD);
    }
  }
}

struct helper {
  struct team* tm;
  int t;
};

static void* helper_main(void* p) {
  struct helper* h = p;
  for (;;) {
    pthread_barrier_wait(&h->tm->start);
    if (h->tm->quit) return NULL;
    work(h->tm, h->t);
    pthread_barrier_wait(&h->tm->end);
  }
}

/* The calling thread is thread 0 and releases the helpers for each batch. */
static void batch(void* p, long n) {
  struct team* tm = p;
  tm->n = n;
  pthread_barrier_wait(&tm->start);
  work(tm, 0);
  pthread_barrier_wait(&tm->end);
}

static void rate(int nthreads) {
  struct team tm = {nthreads, mb_rank ^ 1, mb_rank % 2 == 0, 0, 0};
  pthread_t th[MAXT];
  struct helper hs[MAXT];
  pthread_barrier_init(&tm.start, NULL, (unsigned)nthreads);
  pthread_barrier_init(&tm.end, NULL, (unsigned)nthreads);
  for (int t = 1; t < nthreads; ++t) {
    hs[t].tm = &tm;
    hs[t].t = t;
    pthread_create(&th[t], NULL, helper_main, &hs[t]);
  }
  double s = mb_time(MPI_COMM_WORLD, batch, &tm);
  tm.quit = 1;
  pthread_barrier_wait(&tm.start);
  for (int t = 1; t < nthreads; ++t) pthread_join(th[t], NULL);
  pthread_barrier_destroy(&tm.start);
  pthread_barrier_destroy(&tm.end);
  mb_report("threads_msgrate", (size_t)nthreads, (double)(mb_size / 2) * nthreads * WINDOW / s / 1e6, "Mmsg/s");
}

void mb_threads(void) {
  if (mb_opt.threads > 0) {
    rate(mb_opt.threads > MAXT ? MAXT : mb_opt.threads);
    return;
  }
  for (int t = 1; t <= 4; t *= 2) rate(t);
}
