/* Collectives on MPI_COMM_WORLD: time per call (slowest rank), 8 B to
 * 1 MiB. Reductions sum MPI_INT; a size is the bytes each rank
 * contributes (bcast, reduce, allreduce, allgather per rank, alltoall per
 * destination) or the whole vector (reduce_scatter, split evenly). */
#include <stdlib.h>

#include "mb.h"

enum op { BARRIER, BCAST, REDUCE, ALLREDUCE, ALLGATHER, ALLTOALL, REDUCE_SCATTER, NOPS };
static const char* const names[NOPS] = {"barrier",   "bcast",    "reduce",        "allreduce",
                                        "allgather", "alltoall", "reduce_scatter"};

struct coll {
  enum op op;
  size_t bytes;
  char *sbuf, *rbuf;
  int* counts;
};

static void call(void* p, long n) {
  struct coll* c = p;
  int ints = c->bytes / 4 ? (int)(c->bytes / 4) : 1;
  int bytes = (int)c->bytes;
  for (long i = 0; i < n; ++i) {
    switch (c->op) {
      case BARRIER:
        MPI_Barrier(MPI_COMM_WORLD);
        break;
      case BCAST:
        MPI_Bcast(c->sbuf, bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
        break;
      case REDUCE:
        MPI_Reduce(c->sbuf, c->rbuf, ints, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        break;
      case ALLREDUCE:
        MPI_Allreduce(c->sbuf, c->rbuf, ints, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        break;
      case ALLGATHER:
        MPI_Allgather(c->sbuf, bytes, MPI_BYTE, c->rbuf, bytes, MPI_BYTE, MPI_COMM_WORLD);
        break;
      case ALLTOALL:
        MPI_Alltoall(c->sbuf, bytes, MPI_BYTE, c->rbuf, bytes, MPI_BYTE, MPI_COMM_WORLD);
        break;
      case REDUCE_SCATTER:
        MPI_Reduce_scatter(c->sbuf, c->rbuf, c->counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        break;
      default:
        break;
    }
  }
}

void mb_collectives(void) {
  static const size_t quick[] = {8, 65536};
  size_t hi = mb_opt.max < ((size_t)1 << 20) ? mb_opt.max : ((size_t)1 << 20);
  size_t lo = mb_opt.min > 8 ? mb_opt.min : 8;
  struct coll c;
  c.sbuf = mb_alloc(hi * (size_t)mb_size);
  c.rbuf = mb_alloc(hi * (size_t)mb_size);
  c.counts = malloc(sizeof(int) * (size_t)mb_size);
  for (int op = 0; op < NOPS; ++op) {
    c.op = (enum op)op;
    if (op == BARRIER) {
      c.bytes = 0;
      mb_report(names[op], 0, mb_time(MPI_COMM_WORLD, call, &c) * 1e6, "us");
      continue;
    }
    size_t nq = sizeof quick / sizeof quick[0], qi = 0;
    for (size_t b = mb_opt.quick ? quick[0] : lo; b <= hi;) {
      c.bytes = b;
      int each = (int)(b / 4 / (size_t)mb_size);
      for (int r = 0; r < mb_size; ++r) c.counts[r] = each ? each : 1;
      mb_report(names[op], b, mb_time(MPI_COMM_WORLD, call, &c) * 1e6, "us");
      if (mb_opt.quick) {
        if (++qi == nq) break;
        b = quick[qi];
      } else {
        b = b < 16 ? 16 : b * 4; /* 8, 16, 64, ... 1 MiB */
      }
    }
  }
  free(c.counts);
  free(c.rbuf);
  free(c.sbuf);
}
