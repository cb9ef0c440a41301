/* Matching cost against queue depth, and datatype pack throughput. */
#include <stdlib.h>

#include "mb.h"

static const int depths[] = {0, 1, 4, 16, 64, 256, 1024};
static const int quick_depths[] = {0, 64};

struct pp {
  char buf[8];
  int peer, first;
};

static void pingpong8(void* p, long n) {
  struct pp* c = p;
  for (long i = 0; i < n; ++i) {
    if (c->first) {
      MPI_Send(c->buf, 8, MPI_BYTE, c->peer, 1, MPI_COMM_WORLD);
      MPI_Recv(c->buf, 8, MPI_BYTE, c->peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(c->buf, 8, MPI_BYTE, c->peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(c->buf, 8, MPI_BYTE, c->peer, 1, MPI_COMM_WORLD);
    }
  }
}

/* 8-byte ping-pong latency while `depth` other messages (tag 77) sit in
 * the posted-receive queue (posted) or the unexpected queue (!posted) of
 * both ranks, ahead of the ping-pong's in matching order. */
static double match_latency(int depth, int posted) {
  struct pp c = {{0}, mb_rank ^ 1, mb_rank % 2 == 0};
  char* parked = mb_alloc((size_t)depth * 8);
  MPI_Request* reqs = malloc(sizeof(MPI_Request) * (size_t)(2 * depth + 1));
  for (int i = 0; i < depth; ++i) {
    if (posted) {
      MPI_Irecv(parked + 8 * i, 8, MPI_BYTE, c.peer, 77, MPI_COMM_WORLD, &reqs[i]);
    } else {
      MPI_Isend(parked + 8 * i, 8, MPI_BYTE, c.peer, 77, MPI_COMM_WORLD, &reqs[i]);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD); /* the parked sends have arrived (eager) */
  double t = mb_time(MPI_COMM_WORLD, pingpong8, &c);
  char* other = mb_alloc((size_t)depth * 8);
  for (int i = 0; i < depth; ++i) {
    if (posted) {
      MPI_Isend(other + 8 * i, 8, MPI_BYTE, c.peer, 77, MPI_COMM_WORLD, &reqs[depth + i]);
    } else {
      MPI_Irecv(other + 8 * i, 8, MPI_BYTE, c.peer, 77, MPI_COMM_WORLD, &reqs[depth + i]);
    }
  }
  MPI_Waitall(2 * depth, reqs, MPI_STATUSES_IGNORE);
  free(other);
  free(reqs);
  free(parked);
  return t * 1e6 / 2;
}

void mb_match(void) {
  const int* d = mb_opt.quick ? quick_depths : depths;
  size_t n = mb_opt.quick ? sizeof quick_depths / sizeof *d : sizeof depths / sizeof *d;
  for (size_t i = 0; i < n; ++i) mb_report("match_posted", (size_t)d[i], match_latency(d[i], 1), "us");
  for (size_t i = 0; i < n; ++i) mb_report("match_unexpected", (size_t)d[i], match_latency(d[i], 0), "us");
}

struct pack {
  MPI_Datatype type;
  int count, outsize;
  char *in, *out;
};

static void pack_call(void* p, long n) {
  struct pack* c = p;
  for (long i = 0; i < n; ++i) {
    int pos = 0;
    MPI_Pack(c->in, c->count, c->type, c->out, c->outsize, &pos, MPI_COMM_SELF);
  }
}

/* MB/s of packed data; every rank packs on its own core, rank 0 reports. */
static void pack_one(const char* name, MPI_Datatype type, size_t bytes) {
  int tsize = 0;
  MPI_Aint lb = 0, extent = 0;
  MPI_Type_size(type, &tsize);
  MPI_Type_get_extent(type, &lb, &extent);
  struct pack c;
  c.type = type;
  c.count = (int)(bytes / (size_t)tsize);
  if (c.count < 1) c.count = 1;
  c.in = mb_alloc((size_t)extent * (size_t)c.count);
  MPI_Pack_size(c.count, type, MPI_COMM_SELF, &c.outsize);
  c.out = mb_alloc((size_t)c.outsize);
  double t = mb_time(MPI_COMM_SELF, pack_call, &c);
  mb_report(name, (size_t)tsize * (size_t)c.count, (double)tsize * c.count / t / 1e6, "MB/s");
  free(c.out);
  free(c.in);
}

void mb_pack(void) {
  static const size_t sizes[] = {1024, 65536, 1048576};
  /* {int, double} in 16 bytes: 12 of them packed */
  int lens[2] = {1, 1};
  MPI_Aint disps[2] = {0, 8};
  MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, pair, pair16;
  MPI_Type_create_struct(2, lens, disps, types, &pair);
  MPI_Type_create_resized(pair, 0, 16, &pair16);
  MPI_Type_commit(&pair16);
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; ++i) {
    if (mb_opt.quick && sizes[i] != 65536) continue;
    int doubles = (int)(sizes[i] / 8);
    MPI_Datatype every_other, blocks;
    MPI_Type_vector(doubles, 1, 2, MPI_DOUBLE, &every_other); /* one double of two */
    MPI_Type_commit(&every_other);
    MPI_Type_vector(doubles / 8, 8, 16, MPI_DOUBLE, &blocks); /* 64 B of every 128 B */
    MPI_Type_commit(&blocks);
    pack_one("pack_vector", every_other, sizes[i]);
    pack_one("pack_blocks", blocks, sizes[i]);
    pack_one("pack_struct", pair16, sizes[i]);
    MPI_Type_free(&blocks);
    MPI_Type_free(&every_other);
  }
  MPI_Type_free(&pair16);
  MPI_Type_free(&pair);
}
