/* Point-to-point: ping-pong latency, streaming and bidirectional
 * bandwidth, message rate, and latency with every rank busy. Ranks pair
 * up as (0,1), (2,3), ...; with more pairs than one, all of them run at
 * once and a figure covers the slowest pair (mb_time). */
#include <stdlib.h>

#include "mb.h"

#define WINDOW 64

struct p2p {
  char* buf;
  size_t bytes;
  int peer, first;
  MPI_Request reqs[2 * WINDOW];
};

static const size_t quick_sizes[] = {8, 65536, 1048576};
#define NQUICK (sizeof quick_sizes / sizeof quick_sizes[0])

/* Calls f for every size in [lo, hi] (step 2 or 4), or the quick sizes. */
static void sweep(size_t lo, size_t hi, int step, void (*f)(struct p2p*)) {
  struct p2p c;
  c.peer = mb_rank ^ 1;
  c.first = mb_rank % 2 == 0;
  c.buf = mb_alloc(hi);
  if (mb_opt.quick) {
    for (size_t i = 0; i < NQUICK; ++i) {
      if (quick_sizes[i] < lo || quick_sizes[i] > hi) continue;
      c.bytes = quick_sizes[i];
      f(&c);
    }
  } else {
    for (size_t b = lo; b <= hi; b = mb_next(b, step)) {
      c.bytes = b;
      f(&c);
    }
  }
  free(c.buf);
}

static size_t lo(size_t floor) { return mb_opt.min > floor ? mb_opt.min : floor; }

static void pingpong(void* p, long n) {
  struct p2p* c = p;
  int count = (int)c->bytes;
  for (long i = 0; i < n; ++i) {
    if (c->first) {
      MPI_Send(c->buf, count, MPI_BYTE, c->peer, 1, MPI_COMM_WORLD);
      MPI_Recv(c->buf, count, MPI_BYTE, c->peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(c->buf, count, MPI_BYTE, c->peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(c->buf, count, MPI_BYTE, c->peer, 1, MPI_COMM_WORLD);
    }
  }
}

static void one_latency(struct p2p* c) {
  mb_report("latency", c->bytes, mb_time(MPI_COMM_WORLD, pingpong, c) * 1e6 / 2, "us");
}

void mb_latency(void) { sweep(mb_opt.min, mb_opt.max, 2, one_latency); }

/* Latency with every rank in a pair at once: at more ranks than cores it
 * shows how an implementation shares a core (yield or spin). */
static void one_busy(struct p2p* c) {
  mb_report("busy", c->bytes, mb_time(MPI_COMM_WORLD, pingpong, c) * 1e6 / 2, "us");
}

void mb_busy(void) { sweep(mb_opt.min, mb_opt.max < 4096 ? mb_opt.max : 4096, 8, one_busy); }

/* The receiver posts a window of receives (into one buffer, as the usual
 * suites do), the sender a window of sends; a short reply closes each
 * window. */
static void stream(void* p, long n) {
  struct p2p* c = p;
  int count = (int)c->bytes;
  char ack = 0;
  for (long i = 0; i < n; ++i) {
    for (int k = 0; k < WINDOW; ++k) {
      if (c->first) {
        MPI_Isend(c->buf, count, MPI_BYTE, c->peer, 2, MPI_COMM_WORLD, &c->reqs[k]);
      } else {
        MPI_Irecv(c->buf, count, MPI_BYTE, c->peer, 2, MPI_COMM_WORLD, &c->reqs[k]);
      }
    }
    MPI_Waitall(WINDOW, c->reqs, MPI_STATUSES_IGNORE);
    if (c->first) {
      MPI_Recv(&ack, 1, MPI_BYTE, c->peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Send(&ack, 1, MPI_BYTE, c->peer, 3, MPI_COMM_WORLD);
    }
  }
}

static void one_bandwidth(struct p2p* c) {
  double t = mb_time(MPI_COMM_WORLD, stream, c);
  mb_report("bw", c->bytes, (double)c->bytes * WINDOW / t / 1e6, "MB/s");
}

void mb_bandwidth(void) { sweep(lo(1), mb_opt.max, 2, one_bandwidth); }

/* Both sides post a window of receives and of sends. */
static void bistream(void* p, long n) {
  struct p2p* c = p;
  int count = (int)c->bytes;
  for (long i = 0; i < n; ++i) {
    for (int k = 0; k < WINDOW; ++k) {
      MPI_Irecv(c->buf, count, MPI_BYTE, c->peer, 4, MPI_COMM_WORLD, &c->reqs[k]);
    }
    for (int k = 0; k < WINDOW; ++k) {
      MPI_Isend(c->buf, count, MPI_BYTE, c->peer, 4, MPI_COMM_WORLD, &c->reqs[WINDOW + k]);
    }
    MPI_Waitall(2 * WINDOW, c->reqs, MPI_STATUSES_IGNORE);
  }
}

static void one_bibandwidth(struct p2p* c) {
  double t = mb_time(MPI_COMM_WORLD, bistream, c);
  mb_report("bibw", c->bytes, 2.0 * (double)c->bytes * WINDOW / t / 1e6, "MB/s");
}

void mb_bibandwidth(void) { sweep(lo(1), mb_opt.max, 4, one_bibandwidth); }

/* Messages per second over every pair together. */
static void one_msgrate(struct p2p* c) {
  double t = mb_time(MPI_COMM_WORLD, stream, c);
  mb_report("msgrate", c->bytes, (double)(mb_size / 2) * WINDOW / t / 1e6, "Mmsg/s");
}

void mb_msgrate(void) { sweep(lo(1), mb_opt.max < 4096 ? mb_opt.max : 4096, 8, one_msgrate); }
