/* One-sided operations: every synchronization mode x every operation x
 * contiguous and derived datatypes x window flavours (create, allocate,
 * dynamic). Every rank targets the next rank (itself with one rank); the
 * target checks its window and the origin checks what it fetched. */
#include "mpitest.h"

#define WIN_INTS 40 /* ints per window */
#define COUNT 8     /* elements per operation */
#define DISP 3      /* first target element */

enum { FENCE, PSCW, LOCK_EXCL, LOCK_SHARED, LOCK_FLUSH_LOCAL, LOCK_ALL_FLUSH, LOCK_ALL_FLUSH_ALL, NSYNC };
static const char* sync_name[] = {
    "fence", "pscw", "lock-exclusive", "lock-shared", "lock+flush_local", "lock_all+flush", "lock_all+flush_all"};
enum {
  PUT,
  GET,
  ACC_SUM,
  ACC_REPLACE,
  GACC_SUM,
  GACC_NOOP,
  FOP_SUM,
  FOP_NOOP,
  CAS_HIT,
  CAS_MISS,
  RPUT,
  RGET,
  RACC,
  RGACC,
  NOPS
};
static const char* op_name[] = {"put",          "get",     "acc-sum",  "acc-replace", "get_acc-sum",
                                "get_acc-noop", "fop-sum", "fop-noop", "cas-hit",     "cas-miss",
                                "rput",         "rget",    "racc",     "rget_acc"};
enum { CREATE, ALLOCATE, DYNAMIC, NFLAV };
static const char* flav_name[] = {"create", "allocate", "dynamic"};

static int rank, size, target, origin;
static int* winmem;        /* this rank's window memory */
static MPI_Aint tbase;     /* the target's base displacement (dynamic: its address) */
static MPI_Datatype o_vec; /* origin side: 4 blocks of 2 ints, stride 3 */
static MPI_Datatype t_vec; /* target side: 8 ints, stride 2 */
static int failures_before;

static int init_win(int r, int i) { return r * 1000 + i; }
static int src_val(int r, int i) { return (r + 1) * 100000 + i; }
/* element k of an operation, on the origin and the target side */
static int oidx(int derived, int k) { return derived ? (k / 2) * 3 + k % 2 : k; }
static int tidx(int derived, int k) { return DISP + (derived ? 2 * k : k); }

static int is_single(int op) { return op == FOP_SUM || op == FOP_NOOP || op == CAS_HIT || op == CAS_MISS; }
static int is_request(int op) { return op >= RPUT; }

static void reset_window(MPI_Win win) {
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
  for (int i = 0; i < WIN_INTS; ++i) winmem[i] = init_win(rank, i);
  MPI_Win_unlock(rank, win);
  MPI_Barrier(MPI_COMM_WORLD);
}

static void open_epoch(int sync, MPI_Win win, MPI_Group g_origin, MPI_Group g_target) {
  switch (sync) {
    case FENCE:
      CHECK_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
      break;
    case PSCW:
      CHECK_OK(MPI_Win_post(g_origin, 0, win));
      CHECK_OK(MPI_Win_start(g_target, 0, win));
      break;
    case LOCK_EXCL:
      CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
      break;
    case LOCK_SHARED:
    case LOCK_FLUSH_LOCAL:
      CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
      break;
    default:
      CHECK_OK(MPI_Win_lock_all(0, win));
      break;
  }
}

static void close_epoch(int sync, MPI_Win win) {
  switch (sync) {
    case FENCE:
      CHECK_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
      break;
    case PSCW:
      CHECK_OK(MPI_Win_complete(win));
      CHECK_OK(MPI_Win_wait(win));
      break;
    case LOCK_EXCL:
    case LOCK_SHARED:
      CHECK_OK(MPI_Win_unlock(target, win));
      break;
    case LOCK_FLUSH_LOCAL:
      CHECK_OK(MPI_Win_flush_local(target, win));
      CHECK_OK(MPI_Win_unlock(target, win));
      break;
    case LOCK_ALL_FLUSH:
      CHECK_OK(MPI_Win_flush(target, win));
      CHECK_OK(MPI_Win_unlock_all(win));
      break;
    default:
      CHECK_OK(MPI_Win_flush_local_all(win));
      CHECK_OK(MPI_Win_flush_all(win));
      CHECK_OK(MPI_Win_unlock_all(win));
      break;
  }
}

static void issue(int op, int derived, MPI_Win win, int* src, int* res, int* cmp) {
  MPI_Datatype ot = derived ? o_vec : MPI_INT, tt = derived ? t_vec : MPI_INT;
  int oc = derived ? 1 : COUNT, tc = derived ? 1 : COUNT;
  /* dynamic windows address bytes from the target's base address */
  MPI_Aint single = derived ? 5 : 0; /* fop/cas: which element */
  MPI_Aint td = tbase ? tbase + DISP * (MPI_Aint)sizeof(int) : DISP;
  MPI_Aint sd = tbase ? tbase + (DISP + single) * (MPI_Aint)sizeof(int) : DISP + single;
  MPI_Request req = MPI_REQUEST_NULL;
  switch (op) {
    case PUT:
      CHECK_OK(MPI_Put(src, oc, ot, target, td, tc, tt, win));
      break;
    case GET:
      CHECK_OK(MPI_Get(res, oc, ot, target, td, tc, tt, win));
      break;
    case ACC_SUM:
      CHECK_OK(MPI_Accumulate(src, oc, ot, target, td, tc, tt, MPI_SUM, win));
      break;
    case ACC_REPLACE:
      CHECK_OK(MPI_Accumulate(src, oc, ot, target, td, tc, tt, MPI_REPLACE, win));
      break;
    case GACC_SUM:
      CHECK_OK(MPI_Get_accumulate(src, oc, ot, res, oc, ot, target, td, tc, tt, MPI_SUM, win));
      break;
    case GACC_NOOP:
      CHECK_OK(MPI_Get_accumulate(NULL, 0, MPI_INT, res, oc, ot, target, td, tc, tt, MPI_NO_OP, win));
      break;
    case FOP_SUM:
      CHECK_OK(MPI_Fetch_and_op(src, res, MPI_INT, target, sd, MPI_SUM, win));
      break;
    case FOP_NOOP:
      CHECK_OK(MPI_Fetch_and_op(NULL, res, MPI_INT, target, sd, MPI_NO_OP, win));
      break;
    case CAS_HIT:
    case CAS_MISS:
      *cmp = init_win(target, DISP + (int)single) + (op == CAS_MISS ? 1 : 0);
      CHECK_OK(MPI_Compare_and_swap(src, cmp, res, MPI_INT, target, sd, win));
      break;
    case RPUT:
      CHECK_OK(MPI_Rput(src, oc, ot, target, td, tc, tt, win, &req));
      break;
    case RGET:
      CHECK_OK(MPI_Rget(res, oc, ot, target, td, tc, tt, win, &req));
      break;
    case RACC:
      CHECK_OK(MPI_Raccumulate(src, oc, ot, target, td, tc, tt, MPI_SUM, win, &req));
      break;
    case RGACC:
      CHECK_OK(MPI_Rget_accumulate(src, oc, ot, res, oc, ot, target, td, tc, tt, MPI_SUM, win, &req));
      break;
  }
  if (req != MPI_REQUEST_NULL) CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  CHECK(req == MPI_REQUEST_NULL);
}

/* The value element i of this rank's window must hold after origin's op. */
static int expected_target(int op, int derived, int i) {
  int before = init_win(rank, i);
  if (is_single(op)) {
    int at = DISP + (derived ? 5 : 0);
    if (i != at || op == FOP_NOOP || op == CAS_MISS) return before;
    return op == FOP_SUM ? before + src_val(origin, 0) : src_val(origin, 0);
  }
  for (int k = 0; k < COUNT; ++k) {
    if (tidx(derived, k) != i) continue;
    int v = src_val(origin, oidx(derived, k));
    switch (op) {
      case PUT:
      case RPUT:
      case ACC_REPLACE:
        return v;
      case ACC_SUM:
      case GACC_SUM:
      case RACC:
      case RGACC:
        return before + v;
      default:
        return before;
    }
  }
  return before;
}

static int fetches(int op) { return op == GET || op == RGET || op == GACC_SUM || op == GACC_NOOP || op == RGACC; }

static void run_case(int flav, int sync, int op, int derived, MPI_Win win, MPI_Group g_origin, MPI_Group g_target) {
  int src[3 * COUNT], res[3 * COUNT], cmp = 0;
  for (int i = 0; i < 3 * COUNT; ++i) {
    src[i] = src_val(rank, i);
    res[i] = -7;
  }
  reset_window(win);
  open_epoch(sync, win, g_origin, g_target);
  issue(op, derived, win, src, res, &cmp);
  close_epoch(sync, win);
  MPI_Barrier(MPI_COMM_WORLD);
  /* the origin's results */
  if (fetches(op)) {
    for (int k = 0; k < COUNT; ++k) CHECK_EQ(res[oidx(derived, k)], init_win(target, tidx(derived, k)));
    for (int i = 0; i < 3 * COUNT; ++i) {
      int used = 0;
      for (int k = 0; k < COUNT; ++k) used |= oidx(derived, k) == i;
      if (!used) CHECK_EQ(res[i], -7); /* the gaps of the origin type stay */
    }
  } else if (is_single(op)) {
    CHECK_EQ(res[0], init_win(target, DISP + (derived ? 5 : 0)));
    CHECK_EQ(res[1], -7);
  }
  /* the target's window */
  MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
  for (int i = 0; i < WIN_INTS; ++i) CHECK_EQ(winmem[i], expected_target(op, derived, i));
  MPI_Win_unlock(rank, win);
  MPI_Barrier(MPI_COMM_WORLD);
  if (mt_errors != failures_before) {
    fprintf(stderr, "[rank %d] ^ in case %s / %s / %s / %s\n", rank, flav_name[flav], sync_name[sync], op_name[op],
            derived ? "derived" : "contiguous");
    failures_before = mt_errors;
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  target = (rank + 1) % size;
  origin = (rank + size - 1) % size;
  MPI_Type_vector(4, 2, 3, MPI_INT, &o_vec);
  MPI_Type_commit(&o_vec);
  MPI_Type_vector(COUNT, 1, 2, MPI_INT, &t_vec);
  MPI_Type_commit(&t_vec);
  MPI_Group world, g_origin, g_target;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &origin, &g_origin);
  MPI_Group_incl(world, 1, &target, &g_target);

  for (int flav = 0; flav < NFLAV; ++flav) {
    MPI_Win win;
    int* created = NULL;
    tbase = 0;
    if (flav == CREATE) {
      MPI_Alloc_mem(WIN_INTS * sizeof(int), MPI_INFO_NULL, &created);
      CHECK_OK(MPI_Win_create(created, WIN_INTS * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
      winmem = created;
    } else if (flav == ALLOCATE) {
      CHECK_OK(MPI_Win_allocate(WIN_INTS * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &winmem, &win));
    } else {
      CHECK_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
      created = malloc(WIN_INTS * sizeof(int));
      CHECK_OK(MPI_Win_attach(win, created, WIN_INTS * sizeof(int)));
      winmem = created;
      MPI_Aint mine, all[64];
      MPI_Get_address(created, &mine);
      MPI_Allgather(&mine, 1, MPI_AINT, all, 1, MPI_AINT, MPI_COMM_WORLD);
      tbase = all[target];
    }
    for (int sync = 0; sync < NSYNC; ++sync) {
      for (int op = 0; op < NOPS; ++op) {
        /* request-based operations need a passive target epoch */
        if (is_request(op) && (sync == FENCE || sync == PSCW)) continue;
        for (int derived = 0; derived < 2; ++derived) run_case(flav, sync, op, derived, win, g_origin, g_target);
      }
    }
    if (flav == DYNAMIC) CHECK_OK(MPI_Win_detach(win, created));
    CHECK_OK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL);
    if (flav == CREATE) MPI_Free_mem(created);
    if (flav == DYNAMIC) free(created);
  }
  MPI_Group_free(&g_origin);
  MPI_Group_free(&g_target);
  MPI_Group_free(&world);
  MPI_Type_free(&o_vec);
  MPI_Type_free(&t_vec);
  return mt_finish();
}
