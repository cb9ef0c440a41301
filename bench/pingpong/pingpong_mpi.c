/* The MPI twin of pingpong.cpp: same pairs, sizes, iteration counts,
 * warm-up, window and output, so run_vs_peers.sh can compare adi3 with
 * MPICH and Open MPI line by line.
 *
 *   mpiexec -n 2 pingpong_mpi [--min B] [--max B] [--lat-only|--bw-only] [--no-pin] [--iters N]
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WINDOW 64

struct options {
  size_t min, max;
  int bw, lat, pin;
  long iters;
};

static long iterations(const struct options* o, size_t bytes) {
  if (o->iters) return o->iters;
  if (bytes <= 4096) return 20000;
  if (bytes <= 65536) return 5000;
  if (bytes <= (1u << 20)) return 500;
  return 100;
}

static double latency(int peer, int first, char* buf, size_t bytes, long iters) {
  long warm = iters / 10 > 10 ? iters / 10 : 10;
  double t0 = 0;
  for (long i = -warm; i < iters; ++i) {
    if (i == 0) t0 = MPI_Wtime();
    if (first) {
      MPI_Send(buf, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
      MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD); /* until every pair is done, as pingpong.cpp */
  return (MPI_Wtime() - t0) * 1e6 / (2.0 * (double)iters);
}

static double bandwidth(int peer, int sender, char* buf, size_t bytes, long iters) {
  MPI_Request reqs[WINDOW];
  long rounds = iters / WINDOW > 4 ? iters / WINDOW : 4;
  char ack = 0;
  double t0 = 0;
  for (long r = -2; r < rounds; ++r) {
    if (r == 0) t0 = MPI_Wtime();
    for (int k = 0; k < WINDOW; ++k) {
      if (sender) {
        MPI_Isend(buf, (int)bytes, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &reqs[k]);
      } else {
        MPI_Irecv(buf, (int)bytes, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &reqs[k]);
      }
    }
    MPI_Waitall(WINDOW, reqs, MPI_STATUSES_IGNORE);
    if (sender) {
      MPI_Recv(&ack, 1, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Send(&ack, 1, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
    }
  }
  return (double)bytes * WINDOW * (double)rounds / (MPI_Wtime() - t0) / 1e6;
}

int main(int argc, char** argv) {
  struct options o = {0, (size_t)4 << 20, 1, 1, 1, 0};
  MPI_Init(&argc, &argv);
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    unsigned long long v = i + 1 < argc ? strtoull(argv[i + 1], NULL, 0) : 0;
    if (!strcmp(a, "--min")) {
      o.min = v;
      ++i;
    } else if (!strcmp(a, "--max")) {
      o.max = v;
      ++i;
    } else if (!strcmp(a, "--iters")) {
      o.iters = (long)v;
      ++i;
    } else if (!strcmp(a, "--bw-only"))
      o.lat = 0;
    else if (!strcmp(a, "--lat-only"))
      o.bw = 0;
    else if (!strcmp(a, "--no-pin"))
      o.pin = 0;
    else {
      fprintf(stderr, "usage: pingpong_mpi [--min B] [--max B] [--lat-only|--bw-only] [--no-pin] [--iters N]\n");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2 || size % 2) {
    if (rank == 0) fprintf(stderr, "pingpong_mpi: needs an even number of ranks (got %d)\n", size);
    MPI_Finalize();
    return 2;
  }
  if (o.pin) {
    cpu_set_t set;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    CPU_ZERO(&set);
    CPU_SET(rank % (ncpu > 0 ? ncpu : 1), &set);
    sched_setaffinity(0, sizeof set, &set);
  }
  int peer = rank ^ 1, first = rank % 2 == 0;
  char* buf = malloc(o.max ? o.max : 1);
  memset(buf, 'x', o.max ? o.max : 1);
  if (rank == 0) {
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    char* nl = strchr(lib, '\n');
    if (nl) *nl = 0;
    printf("# MPI pingpong: %d ranks, %s\n", size, lib);
    printf("%12s %14s %14s\n", "bytes", "latency_us", "bw_MBps");
  }
  for (size_t bytes = o.min; bytes <= o.max; bytes = bytes ? bytes * 2 : 1) {
    long iters = iterations(&o, bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    double lat = o.lat ? latency(peer, first, buf, bytes, iters) : 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double bw = o.bw && bytes ? bandwidth(peer, first, buf, bytes, iters) : 0;
    if (rank == 0) {
      printf("%12zu %14.3f %14.1f\n", bytes, lat, bw);
      fflush(stdout);
    }
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
