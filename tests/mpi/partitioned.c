/* MPI-4 partitioned communication: send and receive sides with different
 * partition counts (equal total size), restarted runs, partial arrival seen
 * by MPI_Parrived before the sender readied the rest, Pready_range/list,
 * noncontiguous types on either side, pairs matched in init order even when
 * started in the other order, MPI_PROC_NULL, the errors the standard names,
 * and a ring where every rank sends and receives with several threads
 * calling MPI_Pready at once. */
#include <pthread.h>

#include "mpitest.h"

enum { kThreads = 4 };

/* Rank 0 sends `total` ints in sp partitions, rank 1 receives them in rp. */
static void pair(int rank, int sp, int rp, int total, int runs) {
  int* buf = calloc((size_t)total, sizeof(int));
  MPI_Request r;
  if (rank == 0) {
    CHECK_OK(MPI_Psend_init(buf, sp, total / sp, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
  } else {
    CHECK_OK(MPI_Precv_init(buf, rp, total / rp, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
  }
  for (int run = 0; run < runs; ++run) {
    CHECK_OK(MPI_Start(&r));
    if (rank == 0) {
      /* Backwards, in ones, a range and a list. */
      for (int p = sp - 1; p >= 0; --p) {
        for (int i = 0; i < total / sp; ++i) buf[p * (total / sp) + i] = run * 100000 + p * (total / sp) + i;
        if (p == sp - 1 || sp < 3) {
          CHECK_OK(MPI_Pready(p, r));
        } else if (p == 0) {
          int list[1] = {0};
          CHECK_OK(MPI_Pready_list(1, list, r));
        } else if (p == 1) {
          CHECK_OK(MPI_Pready_range(1, sp - 2, r));
        }
      }
    } else {
      /* Each partition as it arrives, in order. */
      for (int p = 0; p < rp; ++p) {
        int flag = 0;
        while (!flag) CHECK_OK(MPI_Parrived(r, p, &flag));
        int n = total / rp;
        CHECK_EQ(buf[p * n], run * 100000 + p * n);
        CHECK_EQ(buf[p * n + n - 1], run * 100000 + p * n + n - 1);
      }
    }
    MPI_Status st;
    CHECK_OK(MPI_Wait(&r, &st));
    if (rank == 1) {
      int n = -1;
      MPI_Get_count(&st, MPI_INT, &n);
      CHECK_EQ(n, total);
      CHECK_EQ(st.MPI_SOURCE, 0);
      CHECK_EQ(st.MPI_TAG, 5);
      CHECK_EQ(buf[total - 1], run * 100000 + total - 1);
    }
  }
  CHECK_OK(MPI_Request_free(&r));
  free(buf);
}

/* Partition 0 arrives while the sender still holds partition 1 back. */
static void partial(int rank) {
  int buf[64] = {0};
  MPI_Request r;
  if (rank == 0) {
    MPI_Psend_init(buf, 2, 32, MPI_INT, 1, 6, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    MPI_Start(&r);
    for (int i = 0; i < 64; ++i) buf[i] = i + 1;
    MPI_Pready(0, r);
    MPI_Recv(NULL, 0, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Pready(1, r);
  } else {
    MPI_Precv_init(buf, 4, 16, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    MPI_Start(&r);
    int flag = 0;
    while (!flag) MPI_Parrived(r, 1, &flag); /* covered by send partition 0 */
    CHECK_EQ(buf[31], 32);
    MPI_Parrived(r, 2, &flag);
    CHECK(!flag); /* send partition 1 is not ready yet */
    MPI_Send(NULL, 0, MPI_INT, 0, 7, MPI_COMM_WORLD);
  }
  CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  if (rank == 1) CHECK_EQ(buf[63], 64);
  int flag = 0;
  if (rank == 1) {
    CHECK_OK(MPI_Parrived(r, 3, &flag));
    CHECK(flag); /* inactive: everything is there */
  }
  MPI_Request_free(&r);
}

/* Every other int on one side, dense on the other. */
static void noncontiguous(int rank) {
  MPI_Datatype six, every_other; /* 6 ints with gaps, 12 ints apart */
  MPI_Type_vector(6, 1, 2, MPI_INT, &six);
  MPI_Type_create_resized(six, 0, 12 * sizeof(int), &every_other);
  MPI_Type_free(&six);
  MPI_Type_commit(&every_other);
  int sparse[4 * 12], dense[24];
  MPI_Request r;
  if (rank == 0) {
    for (int i = 0; i < 48; ++i) sparse[i] = i % 2 ? -1 : i / 2;
    MPI_Psend_init(sparse, 4, 1, every_other, 1, 8, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    MPI_Start(&r);
    MPI_Pready_range(0, 3, r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    for (int i = 0; i < 24; ++i) dense[i] = 100 + i;
    MPI_Send(dense, 24, MPI_INT, 1, 9, MPI_COMM_WORLD); /* and back the other way */
    MPI_Request_free(&r);
    for (int i = 0; i < 48; ++i) sparse[i] = -1;
    MPI_Precv_init(sparse, 2, 2, every_other, 1, 10, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    MPI_Start(&r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    for (int i = 0; i < 24; ++i) CHECK_EQ(sparse[2 * i], 200 + i);
    CHECK_EQ(sparse[47], -1); /* the gaps stay */
  } else {
    MPI_Precv_init(dense, 3, 8, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    MPI_Start(&r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    for (int i = 0; i < 24; ++i) CHECK_EQ(dense[i], i);
    MPI_Request_free(&r);
    MPI_Recv(dense, 24, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < 24; ++i) dense[i] = 200 + i;
    MPI_Psend_init(dense, 2, 12, MPI_INT, 0, 10, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    MPI_Start(&r);
    MPI_Pready(1, r);
    MPI_Pready(0, r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  }
  MPI_Request_free(&r);
  MPI_Type_free(&every_other);
}

/* Two pairs on one tag match in init order whatever order they start in. */
static void init_order(int rank) {
  int a = 0, b = 0;
  MPI_Request r[2];
  if (rank == 0) {
    a = 11;
    b = 22;
    MPI_Psend_init(&a, 1, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
    MPI_Psend_init(&b, 1, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
    MPI_Start(&r[1]);
    MPI_Pready(0, r[1]);
    MPI_Start(&r[0]);
    MPI_Pready(0, r[0]);
  } else {
    MPI_Precv_init(&a, 1, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
    MPI_Precv_init(&b, 1, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
    MPI_Startall(2, r);
  }
  MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  CHECK_EQ(a, 11);
  CHECK_EQ(b, 22);
  MPI_Request_free(&r[0]);
  MPI_Request_free(&r[1]);
}

static void errors(int rank, int size) {
  int buf[8];
  MPI_Request r, q;
  CHECK_CLASS(MPI_Precv_init(buf, 2, 4, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r), MPI_ERR_RANK);
  CHECK_CLASS(MPI_Precv_init(buf, 2, 4, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &r), MPI_ERR_TAG);
  CHECK_CLASS(MPI_Psend_init(buf, 0, 4, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r), MPI_ERR_ARG);
  CHECK_CLASS(MPI_Psend_init(buf, 2, 4, MPI_INT, size, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r), MPI_ERR_RANK);
  /* MPI_PROC_NULL: completes at once, partitions readied or not. */
  CHECK_OK(MPI_Psend_init(buf, 2, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
  CHECK_OK(MPI_Precv_init(buf, 2, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &q));
  CHECK_CLASS(MPI_Pready(0, r), MPI_ERR_REQUEST); /* inactive */
  CHECK_OK(MPI_Start(&r));
  CHECK_OK(MPI_Pready(1, r));
  CHECK_CLASS(MPI_Pready(1, r), MPI_ERR_ARG);     /* twice in one run */
  CHECK_CLASS(MPI_Pready(2, r), MPI_ERR_ARG);     /* no such partition */
  CHECK_CLASS(MPI_Pready(0, q), MPI_ERR_REQUEST); /* a receive */
  CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  CHECK_OK(MPI_Start(&q));
  int flag = 0;
  CHECK_OK(MPI_Parrived(q, 0, &flag));
  CHECK(flag);
  CHECK_CLASS(MPI_Parrived(r, 0, &flag), MPI_ERR_REQUEST); /* a send */
  CHECK_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
  MPI_Request_free(&r);
  MPI_Request_free(&q);
  /* Total sizes that differ: the receive reports it. */
  if (rank == 0) {
    MPI_Psend_init(buf, 2, 4, MPI_INT, 1, 12, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    MPI_Start(&r);
    MPI_Pready_range(0, 1, r);
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    MPI_Request_free(&r);
  } else if (rank == 1) {
    MPI_Precv_init(buf, 2, 3, MPI_INT, 0, 12, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    MPI_Start(&r);
    CHECK_CLASS(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_ERR_TRUNCATE);
    MPI_Request_free(&r);
    /* Its partitions were never taken: the tags stay the sender's own. */
    for (int i = 0; i < 2; ++i) {
      int f = 0;
      MPI_Iprobe(0, 12, MPI_COMM_WORLD, &f, MPI_STATUS_IGNORE);
      CHECK(!f); /* nothing leaks into point-to-point */
    }
  }
}

/* A ring: each rank sends to the next and receives from the previous, its
 * threads readying their own partitions concurrently. */
enum { kParts = 16, kPer = 1000 };
struct Ready {
  MPI_Request r;
  int first;
};
static void* ready_some(void* arg) {
  struct Ready* w = arg;
  for (int p = w->first; p < kParts; p += kThreads) MPI_Pready(p, w->r);
  return NULL;
}

static void threaded_ring(int rank, int size) {
  static int out[kParts * kPer], in[kParts * kPer];
  MPI_Request s, r;
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  MPI_Psend_init(out, kParts, kPer, MPI_INT, next, 20, MPI_COMM_WORLD, MPI_INFO_NULL, &s);
  MPI_Precv_init(in, kParts / 2, 2 * kPer, MPI_INT, prev, 20, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
  for (int run = 0; run < 3; ++run) {
    for (int i = 0; i < kParts * kPer; ++i) out[i] = rank * 1000000 + run * 100000 + i;
    MPI_Start(&r);
    MPI_Start(&s);
    pthread_t t[kThreads];
    struct Ready w[kThreads];
    for (int i = 0; i < kThreads; ++i) {
      w[i].r = s;
      w[i].first = i;
      pthread_create(&t[i], NULL, ready_some, &w[i]);
    }
    for (int i = 0; i < kThreads; ++i) pthread_join(t[i], NULL);
    MPI_Wait(&s, MPI_STATUS_IGNORE);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    int bad = 0;
    for (int i = 0; i < kParts * kPer; ++i) bad += in[i] != prev * 1000000 + run * 100000 + i;
    CHECK_EQ(bad, 0);
  }
  MPI_Request_free(&s);
  MPI_Request_free(&r);
}

int main(int argc, char** argv) {
  int provided = 0, rank, size;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  CHECK_EQ(provided, MPI_THREAD_MULTIPLE);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (size >= 2 && rank < 2) {
    pair(rank, 8, 4, 800, 3);     /* fewer receive partitions */
    pair(rank, 3, 12, 1200, 2);   /* more receive partitions */
    pair(rank, 2, 2, 1 << 18, 2); /* rendezvous-sized partitions */
    partial(rank);
    noncontiguous(rank);
    init_order(rank);
  }
  errors(rank, size);
  threaded_ring(rank, size);
  return mt_finish();
}
