/* Point-to-point and intercommunicator corners a conformance suite probes:
 * probes of MPI_PROC_NULL (MPI_Probe/Iprobe/Mprobe/Improbe, MPI_Mrecv of
 * MPI_MESSAGE_NO_PROC), MPI_Sendrecv_replace with derived types,
 * MPI_Get_elements / MPI_Get_count on a receive that filled part of its
 * type, MPI_ERR_TRUNCATE in statuses (MPI_ERR_IN_STATUS from MPI_Waitall),
 * and intercommunicator rooted collectives with MPI_ROOT / MPI_PROC_NULL. */
#include "mpitest.h"

static int rank, size;

static void check_null_status(const MPI_Status* st) {
  int count = -1;
  CHECK_EQ(st->MPI_SOURCE, MPI_PROC_NULL);
  CHECK_EQ(st->MPI_TAG, MPI_ANY_TAG);
  MPI_Get_count(st, MPI_INT, &count);
  CHECK_EQ(count, 0);
}

static void test_probe_proc_null(void) {
  MPI_Status st;
  int flag = 0, buf = 7;
  CHECK_OK(MPI_Probe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &st));
  check_null_status(&st);
  CHECK_OK(MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
  CHECK(flag);
  check_null_status(&st);
  MPI_Message msg = MPI_MESSAGE_NULL;
  CHECK_OK(MPI_Mprobe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &msg, &st));
  CHECK(msg == MPI_MESSAGE_NO_PROC);
  check_null_status(&st);
  CHECK_OK(MPI_Mrecv(&buf, 1, MPI_INT, &msg, &st));
  CHECK(msg == MPI_MESSAGE_NULL);
  check_null_status(&st);
  CHECK_EQ(buf, 7);
  flag = 0;
  msg = MPI_MESSAGE_NULL;
  CHECK_OK(MPI_Improbe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &flag, &msg, &st));
  CHECK(flag);
  CHECK(msg == MPI_MESSAGE_NO_PROC);
  MPI_Request rq;
  CHECK_OK(MPI_Imrecv(&buf, 1, MPI_INT, &msg, &rq));
  CHECK_OK(MPI_Wait(&rq, &st));
  check_null_status(&st);
  CHECK_EQ(buf, 7);
}

/* A ring shift of a strided vector in place. */
static void test_sendrecv_replace(void) {
  int a[12];
  for (int i = 0; i < 12; ++i) a[i] = rank * 100 + i;
  MPI_Datatype every_third;
  MPI_Type_vector(4, 1, 3, MPI_INT, &every_third);
  MPI_Type_commit(&every_third);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  MPI_Status st;
  CHECK_OK(MPI_Sendrecv_replace(a, 1, every_third, right, 3, left, 3, MPI_COMM_WORLD, &st));
  CHECK_EQ(st.MPI_SOURCE, left);
  CHECK_EQ(st.MPI_TAG, 3);
  int n = -1;
  MPI_Get_count(&st, every_third, &n);
  CHECK_EQ(n, 1);
  MPI_Get_elements(&st, every_third, &n);
  CHECK_EQ(n, 4);
  for (int i = 0; i < 12; ++i) CHECK_EQ(a[i], (i % 3 == 0 ? left : rank) * 100 + i);
  MPI_Type_free(&every_third);
}

/* 5 ints into pairs: 2 whole pairs and half of one. */
static void test_partial_elements(void) {
  if (size < 2) return;
  MPI_Datatype pair;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  int five[5] = {1, 2, 3, 4, 5}, got[6] = {0, 0, 0, 0, 0, 0};
  if (rank == 0) {
    CHECK_OK(MPI_Send(five, 5, MPI_INT, 1, 9, MPI_COMM_WORLD));
  } else if (rank == 1) {
    MPI_Status st;
    CHECK_OK(MPI_Recv(got, 3, pair, 0, 9, MPI_COMM_WORLD, &st));
    int n = -1;
    MPI_Get_count(&st, pair, &n);
    CHECK_EQ(n, MPI_UNDEFINED);
    MPI_Get_elements(&st, pair, &n);
    CHECK_EQ(n, 5);
    MPI_Count c = -1;
    MPI_Get_elements_x(&st, pair, &c);
    CHECK_EQ(c, 5);
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK_EQ(n, 5);
    for (int i = 0; i < 5; ++i) CHECK_EQ(got[i], i + 1);
    CHECK_EQ(got[5], 0);
  }
  MPI_Type_free(&pair);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* 10 ints into room for 4: MPI_ERR_TRUNCATE, in the return code and the
   status; through MPI_Waitall it is MPI_ERR_IN_STATUS. */
static void test_truncate(void) {
  if (size < 2) return;
  int ten[10], four[4];
  for (int i = 0; i < 10; ++i) ten[i] = i;
  if (rank == 0) {
    CHECK_OK(MPI_Send(ten, 10, MPI_INT, 1, 11, MPI_COMM_WORLD));
    CHECK_OK(MPI_Send(ten, 10, MPI_INT, 1, 12, MPI_COMM_WORLD));
    CHECK_OK(MPI_Send(ten, 2, MPI_INT, 1, 13, MPI_COMM_WORLD));
  } else if (rank == 1) {
    MPI_Status st;
    CHECK_CLASS(MPI_Recv(four, 4, MPI_INT, 0, 11, MPI_COMM_WORLD, &st), MPI_ERR_TRUNCATE);
    CHECK_EQ(st.MPI_SOURCE, 0);
    CHECK_EQ(st.MPI_TAG, 11);
    MPI_Request rq[2];
    MPI_Status sts[2];
    int two[2];
    CHECK_OK(MPI_Irecv(four, 4, MPI_INT, 0, 12, MPI_COMM_WORLD, &rq[0]));
    CHECK_OK(MPI_Irecv(two, 2, MPI_INT, 0, 13, MPI_COMM_WORLD, &rq[1]));
    CHECK_CLASS(MPI_Waitall(2, rq, sts), MPI_ERR_IN_STATUS);
    int c0 = -1, c1 = -1;
    MPI_Error_class(sts[0].MPI_ERROR, &c0);
    MPI_Error_class(sts[1].MPI_ERROR, &c1);
    CHECK_EQ(c0, MPI_ERR_TRUNCATE);
    CHECK_EQ(c1, MPI_SUCCESS);
    CHECK_EQ(sts[0].MPI_TAG, 12);
    CHECK_EQ(two[0], 0);
    CHECK_EQ(two[1], 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* Two groups (even and odd ranks); rooted collectives from group A's rank 0
   (MPI_ROOT there, MPI_PROC_NULL for the rest of A) to group B. */
static void test_intercomm_rooted(void) {
  if (size < 2) return;
  MPI_Comm half, inter;
  const int color = rank % 2;
  MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
  CHECK_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color == 0 ? 1 : 0, 21, &inter));
  int hr, remote;
  MPI_Comm_rank(half, &hr);
  MPI_Comm_remote_size(inter, &remote);
  const int root = color == 0 ? (hr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  int v = color == 0 && hr == 0 ? 4242 : -1;
  CHECK_OK(MPI_Bcast(&v, 1, MPI_INT, root, inter));
  if (color == 1) CHECK_EQ(v, 4242);
  if (color == 0 && hr != 0) CHECK_EQ(v, -1); /* MPI_PROC_NULL: untouched */
  /* gather to A's root from every rank of B */
  int* all = malloc(sizeof(int) * (size_t)(remote > 0 ? remote : 1));
  for (int i = 0; i < remote; ++i) all[i] = -1;
  int mine = 1000 + rank;
  CHECK_OK(MPI_Gather(&mine, 1, MPI_INT, all, 1, MPI_INT, root, inter));
  if (root == MPI_ROOT)
    for (int i = 0; i < remote; ++i) CHECK_EQ(all[i], 1000 + 2 * i + 1);
  /* reduce to A's root */
  int sum = -1;
  CHECK_OK(MPI_Reduce(&mine, &sum, 1, MPI_INT, MPI_SUM, root, inter));
  if (root == MPI_ROOT) {
    int want = 0;
    for (int i = 0; i < remote; ++i) want += 1000 + 2 * i + 1;
    CHECK_EQ(sum, want);
  } else if (root == MPI_PROC_NULL) {
    CHECK_EQ(sum, -1);
  }
  /* scatter from A's root */
  for (int i = 0; i < remote; ++i) all[i] = 500 + i;
  int part = -1;
  CHECK_OK(MPI_Scatter(all, 1, MPI_INT, &part, 1, MPI_INT, root, inter));
  if (color == 1) CHECK_EQ(part, 500 + hr);
  free(all);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  test_probe_proc_null();
  test_sendrecv_replace();
  test_partial_elements();
  test_truncate();
  test_intercomm_rooted();
  return mt_finish();
}
