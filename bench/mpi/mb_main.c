/* mpibench GROUP... [options]: runs the named benchmark groups in order.
 *
 *   groups:  latency bw bibw msgrate busy coll match pack threads
 *            (p2p = latency bw bibw msgrate)
 *   options: --target S   seconds per timed batch (default 0.02)
 *            --min B --max B   message sizes (default 0 .. 4 MiB)
 *            --quick      a few sizes per group (CI)
 *            --no-pin     leave placement to the OS (default: rank r on
 *                         core r % ncpu when there are at most ncpu ranks)
 *            --threads T  THREAD_MULTIPLE rate with T threads only
 *
 * MPI_THREAD_MULTIPLE is requested only when "threads" is among the
 * groups, so the other figures are those of a single-threaded program.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mb.h"

struct mb_options mb_opt = {0.02, 0, (size_t)4 << 20, 0, 1, 0};
int mb_rank, mb_size;

static const struct {
  const char* name;
  void (*run)(void);
} groups[] = {
    {"latency", mb_latency}, {"bw", mb_bandwidth}, {"bibw", mb_bibandwidth},
    {"msgrate", mb_msgrate}, {"busy", mb_busy},    {"coll", mb_collectives},
    {"match", mb_match},     {"pack", mb_pack},    {"threads", mb_threads},
};
#define NGROUPS (sizeof groups / sizeof groups[0])

static void usage(void) {
  fprintf(stderr,
          "usage: mpibench GROUP... [--target S] [--min B] [--max B] [--quick] [--no-pin] [--threads T]\n"
          "groups: p2p latency bw bibw msgrate busy coll match pack threads\n");
}

/* Pins when the ranks fit on the cores, else lets every rank run anywhere
 * (an MPI launcher may have bound it: undo that so all are treated alike). */
static void place(void) {
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  if (ncpu < 1) ncpu = 1;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (mb_opt.pin && mb_size <= ncpu) {
    CPU_SET(mb_rank % ncpu, &set);
  } else {
    for (long c = 0; c < ncpu && c < CPU_SETSIZE; ++c) CPU_SET(c, &set);
  }
  sched_setaffinity(0, sizeof set, &set);
}

int main(int argc, char** argv) {
  int run[NGROUPS] = {0}, any = 0, bad = 0;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--target") && v) {
      mb_opt.target = atof(v);
      ++i;
    } else if (!strcmp(a, "--min") && v) {
      mb_opt.min = strtoull(v, NULL, 0);
      ++i;
    } else if (!strcmp(a, "--max") && v) {
      mb_opt.max = strtoull(v, NULL, 0);
      ++i;
    } else if (!strcmp(a, "--threads") && v) {
      mb_opt.threads = atoi(v);
      ++i;
    } else if (!strcmp(a, "--quick")) {
      mb_opt.quick = 1;
    } else if (!strcmp(a, "--no-pin")) {
      mb_opt.pin = 0;
    } else if (!strcmp(a, "p2p")) {
      run[0] = run[1] = run[2] = run[3] = any = 1;
    } else {
      size_t g = 0;
      while (g < NGROUPS && strcmp(a, groups[g].name)) ++g;
      if (g == NGROUPS) {
        fprintf(stderr, "mpibench: unknown argument '%s'\n", a);
        bad = 1;
      } else {
        run[g] = any = 1;
      }
    }
  }
  if (bad || !any || mb_opt.target <= 0 || mb_opt.min > mb_opt.max) {
    usage();
    return 2;
  }
  int provided = MPI_THREAD_SINGLE;
  if (run[NGROUPS - 1]) {
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  } else {
    MPI_Init(&argc, &argv);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &mb_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &mb_size);
  place();
  if (mb_rank == 0) {
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    char* nl = strchr(lib, '\n');
    if (nl) *nl = 0;
    printf("# mpibench: %d ranks, %s\n", mb_size, lib);
    fflush(stdout);
  }
  if (run[NGROUPS - 1] && provided < MPI_THREAD_MULTIPLE) {
    if (mb_rank == 0) printf("# no MPI_THREAD_MULTIPLE (provided %d): threads skipped\n", provided);
    run[NGROUPS - 1] = 0;
  }
  for (size_t g = 0; g < NGROUPS; ++g) {
    if (!run[g]) continue;
    MPI_Barrier(MPI_COMM_WORLD);
    groups[g].run();
  }
  MPI_Finalize();
  return 0;
}
