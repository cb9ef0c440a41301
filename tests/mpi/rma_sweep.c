/* Window corners from the public RMA suites (MPICH test/mpi/rma and the
 * like), written here from their descriptions:
 *  - many windows alive at once (100, every flavour), used in turn;
 *  - create/free in a loop: no descriptor, shared-memory mapping or
 *    memory left behind;
 *  - windows over MPI_COMM_SELF and over split communicators (ranks of the
 *    window are not those of MPI_COMM_WORLD);
 *  - MPI_Win_allocate_shared with alloc_shared_noncontig: every rank's part
 *    through MPI_Win_shared_query, loads and stores across ranks;
 *  - MPI_Win_flush_local on request-based puts (the origin buffer is
 *    reusable after it), MPI_Win_flush_local_all;
 *  - PSCW with overlapping groups (everyone exposes to everyone) and
 *    MPI_MODE_NOCHECK. */
#include <fcntl.h>

#include "mpitest.h"

static int rank, size, right, left;

/* Descriptors and /dev/shm mappings of this process. */
static int count_fds(void) {
  int n = 0;
  for (int fd = 0; fd < 4096; ++fd) {
    if (fcntl(fd, F_GETFD) != -1) ++n;
  }
  return n;
}

static int count_shm_maps(void) {
  FILE* f = fopen("/proc/self/maps", "r");
  if (!f) return -1;
  char line[512];
  int n = 0;
  while (fgets(line, sizeof line, f)) {
    if (strstr(line, "/dev/shm/")) ++n;
  }
  fclose(f);
  return n;
}

static void make_win(int flav, MPI_Comm comm, int n, int** mem, MPI_Win* w) {
  const MPI_Aint bytes = n * sizeof(int);
  switch (flav) {
    case 0:
      CHECK_OK(MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, comm, mem, w));
      break;
    case 1:
      *mem = malloc(bytes);
      CHECK_OK(MPI_Win_create(*mem, bytes, sizeof(int), MPI_INFO_NULL, comm, w));
      break;
    default: {
      /* allocate_shared where the ranks share memory, else allocate */
      MPI_Info info;
      MPI_Info_create(&info);
      MPI_Info_set(info, "alloc_shared_noncontig", "true");
      if (MPI_Win_allocate_shared(bytes, sizeof(int), info, comm, mem, w) != MPI_SUCCESS) {
        CHECK_OK(MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, comm, mem, w));
      }
      MPI_Info_free(&info);
    }
  }
  MPI_Win_set_errhandler(*w, MPI_ERRORS_RETURN);
}

static void free_win(int flav, int* mem, MPI_Win* w) {
  CHECK_OK(MPI_Win_free(w));
  CHECK(*w == MPI_WIN_NULL);
  if (flav == 1) free(mem);
}

static void many_windows(void) {
  enum { N = 100 };
  MPI_Win w[N];
  int* mem[N];
  for (int i = 0; i < N; ++i) {
    make_win(i % 3, MPI_COMM_WORLD, 4, &mem[i], &w[i]);
    for (int k = 0; k < 4; ++k) mem[i][k] = -1;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  /* each window once, in a scrambled order, every synchronization kind */
  for (int j = 0; j < N; ++j) {
    const int i = (j * 37) % N;
    int v = rank * 1000 + i;
    switch (j % 3) {
      case 0:
        CHECK_OK(MPI_Win_fence(0, w[i]));
        CHECK_OK(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, w[i]));
        CHECK_OK(MPI_Win_fence(0, w[i]));
        break;
      case 1:
        CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, w[i]));
        CHECK_OK(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, w[i]));
        CHECK_OK(MPI_Win_unlock(right, w[i]));
        break;
      default:
        CHECK_OK(MPI_Win_lock_all(0, w[i]));
        CHECK_OK(MPI_Accumulate(&v, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_REPLACE, w[i]));
        CHECK_OK(MPI_Win_unlock_all(w[i]));
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < N; ++i) {
    CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w[i]));
    CHECK_EQ(mem[i][0], left * 1000 + i);
    CHECK_EQ(mem[i][1], -1);
    CHECK_OK(MPI_Win_unlock(rank, w[i]));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  /* freed in another order than created */
  for (int i = N - 1; i >= 0; --i) free_win(i % 3, mem[i], &w[i]);
}

static void create_free_loop(void) {
  /* one round first: whatever is created once per process stays */
  for (int flav = 0; flav < 3; ++flav) {
    int* mem;
    MPI_Win w;
    make_win(flav, MPI_COMM_WORLD, 16, &mem, &w);
    free_win(flav, mem, &w);
  }
  MPI_Win dw;
  CHECK_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dw));
  CHECK_OK(MPI_Win_free(&dw));
  const int fds = count_fds(), maps = count_shm_maps();
  for (int round = 0; round < 150; ++round) {
    const int flav = round % 4;
    if (flav == 3) {
      int* m = malloc(64);
      CHECK_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dw));
      CHECK_OK(MPI_Win_attach(dw, m, 64));
      CHECK_OK(MPI_Win_fence(0, dw));
      CHECK_OK(MPI_Win_fence(0, dw));
      CHECK_OK(MPI_Win_detach(dw, m));
      CHECK_OK(MPI_Win_free(&dw));
      free(m);
      continue;
    }
    int* mem;
    MPI_Win w;
    make_win(flav, MPI_COMM_WORLD, 16 + round, &mem, &w);
    int v = round;
    CHECK_OK(MPI_Win_fence(0, w));
    CHECK_OK(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, w));
    CHECK_OK(MPI_Win_fence(0, w));
    CHECK_EQ(mem[0], round);
    free_win(flav, mem, &w);
    void* am = NULL;
    CHECK_OK(MPI_Alloc_mem(4096 + round, MPI_INFO_NULL, &am));
    CHECK_OK(MPI_Free_mem(am));
  }
  CHECK_EQ(count_fds(), fds);
  CHECK_EQ(count_shm_maps(), maps);
}

/* Windows whose ranks are not MPI_COMM_WORLD's. */
static void other_comms(void) {
  /* MPI_COMM_SELF: every synchronization on oneself */
  for (int flav = 0; flav < 3; ++flav) {
    int* mem;
    MPI_Win w;
    make_win(flav, MPI_COMM_SELF, 8, &mem, &w);
    for (int i = 0; i < 8; ++i) mem[i] = 0;
    int v[2] = {rank + 1, rank + 2}, got[2] = {0, 0};
    CHECK_OK(MPI_Win_fence(0, w));
    CHECK_OK(MPI_Put(v, 2, MPI_INT, 0, 1, 2, MPI_INT, w));
    CHECK_OK(MPI_Win_fence(0, w));
    CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w));
    CHECK_OK(MPI_Accumulate(v, 2, MPI_INT, 0, 1, 2, MPI_INT, MPI_SUM, w));
    CHECK_OK(MPI_Get(got, 2, MPI_INT, 0, 1, 2, MPI_INT, w));
    CHECK_OK(MPI_Win_unlock(0, w));
    CHECK_EQ(got[0], 2 * (rank + 1));
    CHECK_EQ(got[1], 2 * (rank + 2));
    MPI_Group g;
    CHECK_OK(MPI_Win_get_group(w, &g));
    CHECK_OK(MPI_Win_post(g, 0, w));
    CHECK_OK(MPI_Win_start(g, 0, w));
    CHECK_OK(MPI_Put(v, 1, MPI_INT, 0, 0, 1, MPI_INT, w));
    CHECK_OK(MPI_Win_complete(w));
    CHECK_OK(MPI_Win_wait(w));
    CHECK_EQ(mem[0], rank + 1);
    MPI_Group_free(&g);
    free_win(flav, mem, &w);
  }
  /* split: odd and even world ranks, window ranks in reverse order */
  MPI_Comm half;
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half));
  int hr, hs;
  MPI_Comm_rank(half, &hr);
  MPI_Comm_size(half, &hs);
  for (int flav = 0; flav < 3; ++flav) {
    int* mem;
    MPI_Win w;
    make_win(flav, half, 4, &mem, &w);
    mem[0] = mem[1] = 0;
    MPI_Barrier(half);
    const int to = (hr + 1) % hs;
    int world_rank = rank;
    CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, to, 0, w));
    CHECK_OK(MPI_Put(&world_rank, 1, MPI_INT, to, 0, 1, MPI_INT, w));
    CHECK_OK(MPI_Accumulate(&world_rank, 1, MPI_INT, to, 1, 1, MPI_INT, MPI_SUM, w));
    CHECK_OK(MPI_Win_unlock(to, w));
    MPI_Barrier(half);
    int from_world = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, to, 5, &from_world, 1, MPI_INT, (hr + hs - 1) % hs, 5, half, MPI_STATUS_IGNORE);
    CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, hr, 0, w));
    CHECK_EQ(mem[0], from_world);
    CHECK_EQ(mem[1], from_world);
    CHECK_OK(MPI_Win_unlock(hr, w));
    MPI_Group g, wg;
    CHECK_OK(MPI_Win_get_group(w, &g));
    MPI_Comm_group(half, &wg);
    int cmp = -1;
    MPI_Group_compare(g, wg, &cmp);
    CHECK_EQ(cmp, MPI_IDENT);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    MPI_Barrier(half);
    free_win(flav, mem, &w);
  }
  MPI_Comm_free(&half);
}

/* Noncontiguous shared windows: each rank's part through shared_query. */
static void shared_noncontig(void) {
  MPI_Comm node;
  CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  int nr, ns;
  MPI_Comm_rank(node, &nr);
  MPI_Comm_size(node, &ns);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shared_noncontig", "true");
  int* mine = NULL;
  MPI_Win w;
  /* parts of different sizes, one of them empty */
  const MPI_Aint part = nr == 1 ? 0 : (nr + 1) * 1000 * sizeof(int);
  if (MPI_Win_allocate_shared(part, sizeof(int), info, node, &mine, &w) != MPI_SUCCESS) {
    MPI_Info_free(&info);
    MPI_Comm_free(&node);
    return; /* no shared memory between these ranks (forced emulation) */
  }
  MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
  MPI_Info got;
  CHECK_OK(MPI_Win_get_info(w, &got));
  char val[MPI_MAX_INFO_VAL];
  int flag = 0;
  MPI_Info_get(got, "alloc_shared_noncontig", MPI_MAX_INFO_VAL, val, &flag);
  if (flag) CHECK(strcmp(val, "true") == 0);
  MPI_Info_free(&got);
  CHECK_OK(MPI_Win_lock_all(0, w));
  for (MPI_Aint i = 0; i < part / (MPI_Aint)sizeof(int); ++i) mine[i] = nr * 100000 + (int)i;
  CHECK_OK(MPI_Win_sync(w));
  MPI_Barrier(node);
  CHECK_OK(MPI_Win_sync(w));
  for (int r = 0; r < ns; ++r) {
    MPI_Aint sz = -1;
    int du = 0;
    int* p = NULL;
    CHECK_OK(MPI_Win_shared_query(w, r, &sz, &du, &p));
    CHECK_EQ(du, sizeof(int));
    CHECK_EQ(sz, r == 1 ? 0 : (r + 1) * 1000 * (MPI_Aint)sizeof(int));
    if (sz > 0) {
      CHECK(p != NULL);
      CHECK_EQ(p[0], r * 100000);
      CHECK_EQ(p[sz / sizeof(int) - 1], r * 100000 + (int)(sz / sizeof(int)) - 1);
    }
  }
  MPI_Barrier(node); /* everyone read before anyone stores again */
  /* a store into the next rank's part, seen there after sync + barrier */
  const int to = (nr + 1) % ns;
  MPI_Aint sz;
  int du;
  int* p;
  CHECK_OK(MPI_Win_shared_query(w, to, &sz, &du, &p));
  if (sz > 0) p[0] = -nr - 1;
  CHECK_OK(MPI_Win_sync(w));
  MPI_Barrier(node);
  CHECK_OK(MPI_Win_sync(w));
  if (part > 0) CHECK_EQ(mine[0], -((nr + ns - 1) % ns) - 1);
  CHECK_OK(MPI_Win_unlock_all(w));
  /* MPI_PROC_NULL: the first rank whose part is not empty */
  MPI_Aint sz0;
  int* p0;
  CHECK_OK(MPI_Win_shared_query(w, MPI_PROC_NULL, &sz0, &du, &p0));
  CHECK_EQ(sz0, 1000 * (MPI_Aint)sizeof(int));
  CHECK_OK(MPI_Win_free(&w));
  MPI_Info_free(&info);
  MPI_Comm_free(&node);
}

/* Request-based puts completed locally by flush_local: the origin buffer
   is rewritten at once, the target holds the values that were put. */
static void flush_local_rput(void) {
  enum { N = 64 };
  int* mem;
  MPI_Win w;
  make_win(0, MPI_COMM_WORLD, 2 * N, &mem, &w);
  for (int i = 0; i < 2 * N; ++i) mem[i] = -1;
  MPI_Barrier(MPI_COMM_WORLD);
  int buf[N];
  MPI_Request rq[N];
  CHECK_OK(MPI_Win_lock_all(0, w));
  for (int i = 0; i < N; ++i) {
    buf[i] = rank * 1000 + i;
    CHECK_OK(MPI_Rput(&buf[i], 1, MPI_INT, right, i, 1, MPI_INT, w, &rq[i]));
    if (i % 2) {
      CHECK_OK(MPI_Win_flush_local(right, w));
      buf[i] = -5; /* the put already took its value */
    }
  }
  CHECK_OK(MPI_Win_flush_local_all(w));
  for (int i = 0; i < N; ++i) buf[i] = -6;
  CHECK_OK(MPI_Waitall(N, rq, MPI_STATUSES_IGNORE));
  /* a large one (a message on the emulated path) */
  int* big = malloc(N * 1024 * sizeof(int));
  for (int i = 0; i < N * 1024; ++i) big[i] = i;
  int* bigwin;
  MPI_Win bw;
  CHECK_OK(MPI_Win_unlock_all(w));
  make_win(0, MPI_COMM_WORLD, N * 1024, &bigwin, &bw);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, bw));
  MPI_Request r1;
  CHECK_OK(MPI_Rput(big, N * 1024, MPI_INT, right, 0, N * 1024, MPI_INT, bw, &r1));
  CHECK_OK(MPI_Win_flush_local(right, bw));
  int done = 0;
  CHECK_OK(MPI_Test(&r1, &done, MPI_STATUS_IGNORE));
  CHECK(done);
  for (int i = 0; i < N * 1024; ++i) big[i] = -1;
  CHECK_OK(MPI_Win_unlock(right, bw));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w));
  for (int i = 0; i < N; ++i) CHECK_EQ(mem[i], left * 1000 + i);
  CHECK_OK(MPI_Win_unlock(rank, w));
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, bw));
  int bad = 0;
  for (int i = 0; i < N * 1024 && bad < 3; ++i) {
    if (bigwin[i] != i) {
      CHECK_EQ(bigwin[i], i);
      ++bad;
    }
  }
  CHECK_OK(MPI_Win_unlock(rank, bw));
  MPI_Barrier(MPI_COMM_WORLD);
  free(big);
  free_win(0, bigwin, &bw);
  free_win(0, mem, &w);
}

/* PSCW where every rank exposes to and accesses every rank at once (the
   groups overlap), then the same with MPI_MODE_NOCHECK after a barrier. */
static void pscw_overlap(void) {
  int* mem;
  MPI_Win w;
  make_win(1, MPI_COMM_WORLD, size, &mem, &w);
  for (int i = 0; i < size; ++i) mem[i] = 0;
  MPI_Group all;
  CHECK_OK(MPI_Win_get_group(w, &all));
  for (int round = 0; round < 10; ++round) {
    const int nocheck = round % 2 ? MPI_MODE_NOCHECK : 0;
    if (nocheck) MPI_Barrier(MPI_COMM_WORLD); /* every post is done before a NOCHECK start */
    CHECK_OK(MPI_Win_post(all, nocheck, w));
    if (nocheck) MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(MPI_Win_start(all, nocheck, w));
    int one = 1;
    for (int t = 0; t < size; ++t) CHECK_OK(MPI_Accumulate(&one, 1, MPI_INT, t, rank, 1, MPI_INT, MPI_SUM, w));
    CHECK_OK(MPI_Win_complete(w));
    CHECK_OK(MPI_Win_wait(w));
    for (int i = 0; i < size; ++i) CHECK_EQ(mem[i], round + 1);
  }
  MPI_Group_free(&all);
  MPI_Barrier(MPI_COMM_WORLD);
  free_win(1, mem, &w);
}

int main(int argc, char** argv) {
  mt_init_ring(&argc, &argv, &rank, &size, &right, &left);
  many_windows();
  create_free_loop();
  other_comms();
  shared_noncontig();
  flush_local_rput();
  pscw_overlap();
  return mt_finish();
}
