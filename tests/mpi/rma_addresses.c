/* Buffers and displacements the other RMA programs do not take:
 *  - origin and result buffers at MPI_BOTTOM with datatypes of absolute
 *    addresses (struct, hindexed), small (one packet) and large (400 KB:
 *    a message on the emulated path), put, get, accumulate,
 *    get_accumulate, request-based forms; MPI_BOTTOM with a type whose
 *    true lower bound is 0 is a null buffer (MPI_ERR_BUFFER);
 *  - fetch_and_op and accumulate at odd byte displacements (misaligned
 *    elements, disp_unit 1) from every rank at once, exact;
 *  - compare_and_swap on MPI_BYTE: exactly one rank wins.
 * Allocate and create windows, natively and with ADI3_FORCE_EMULATION=1. */
#include "mpitest.h"

static int rank, size, right, left;
enum { BIG = 100000 };

static void small_and_misaligned(void) {
  for (int flav = 0; flav < 2; ++flav) {
    char* mem;
    MPI_Win w;
    if (flav == 0)
      CHECK_OK(MPI_Win_allocate(256, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &w));
    else {
      mem = malloc(256);
      CHECK_OK(MPI_Win_create(mem, 256, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w));
    }
    MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
    memset(mem, 0, 256);
    MPI_Barrier(MPI_COMM_WORLD);
    /* misaligned atomics: fop/cas/acc at odd byte offsets */
    CHECK_OK(MPI_Win_lock_all(0, w));
    for (int off = 1; off < 8; off += 2) {
      long long one = 1, old = -1;
      CHECK_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG_LONG, 0, 16 * off + off, MPI_SUM, w));
      CHECK_OK(MPI_Win_flush(0, w));
      int i1 = 1, iold;
      CHECK_OK(MPI_Fetch_and_op(&i1, &iold, MPI_INT, 0, 128 + 8 * off + off, MPI_SUM, w));
      CHECK_OK(MPI_Accumulate(&one, 1, MPI_LONG_LONG, 0, 200 + off, 1, MPI_LONG_LONG, MPI_SUM, w));
      CHECK_OK(MPI_Win_flush(0, w));
    }
    CHECK_OK(MPI_Win_unlock_all(w));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      for (int off = 1; off < 8; off += 2) {
        long long v;
        memcpy(&v, mem + 16 * off + off, 8);
        CHECK_EQ(v, size);
        int iv;
        memcpy(&iv, mem + 128 + 8 * off + off, 4);
        CHECK_EQ(iv, size);
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* CAS on bytes, fop NO_OP and REPLACE */
    memset(mem, 0, 256);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w));
    unsigned char want = 0, mine = (unsigned char)(rank + 1), was = 99;
    CHECK_OK(MPI_Compare_and_swap(&mine, &want, &was, MPI_BYTE, 0, 3, w));
    CHECK_OK(MPI_Win_unlock(0, w));
    int winner = was == 0, winners = 0;
    MPI_Allreduce(&winner, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK_EQ(winners, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    /* MPI_BOTTOM origin with absolute addresses */
    int a = rank + 10, b = rank + 20;
    MPI_Aint ad[2];
    int bl[2] = {1, 1};
    MPI_Datatype ty[2] = {MPI_INT, MPI_INT}, abs_t;
    MPI_Get_address(&a, &ad[0]);
    MPI_Get_address(&b, &ad[1]);
    MPI_Type_create_struct(2, bl, ad, ty, &abs_t);
    MPI_Type_commit(&abs_t);
    CHECK_OK(MPI_Win_fence(0, w));
    CHECK_OK(MPI_Put(MPI_BOTTOM, 1, abs_t, right, 40, 2, MPI_INT, w));
    CHECK_OK(MPI_Win_fence(0, w));
    int got[2];
    memcpy(got, mem + 40, 8);
    CHECK_EQ(got[0], left + 10);
    CHECK_EQ(got[1], left + 20);
    int back[2] = {0, 0};
    MPI_Aint bd[2];
    MPI_Get_address(&back[0], &bd[0]);
    MPI_Get_address(&back[1], &bd[1]);
    MPI_Datatype abs2;
    MPI_Type_create_hindexed(2, bl, bd, MPI_INT, &abs2);
    MPI_Type_commit(&abs2);
    CHECK_OK(MPI_Get(MPI_BOTTOM, 1, abs2, right, 40, 2, MPI_INT, w));
    CHECK_OK(MPI_Accumulate(MPI_BOTTOM, 1, abs_t, right, 48, 2, MPI_INT, MPI_SUM, w));
    CHECK_OK(MPI_Win_fence(0, w));
    CHECK_EQ(back[0], rank + 10);
    CHECK_EQ(back[1], rank + 20);
    memcpy(got, mem + 48, 8);
    CHECK_EQ(got[0], left + 10);
    CHECK_EQ(got[1], left + 20);
    MPI_Type_free(&abs_t);
    MPI_Type_free(&abs2);
    CHECK_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, w));
    CHECK_OK(MPI_Win_free(&w));
    if (flav) free(mem);
  }
}

static void large_bottom(void) {
  int* mem;
  MPI_Win w;
  CHECK_OK(MPI_Win_allocate(2 * BIG * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &w));
  MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
  for (int i = 0; i < 2 * BIG; ++i) mem[i] = 0;
  int* a = malloc(BIG * sizeof(int));
  int* b = malloc(BIG * sizeof(int));
  for (int i = 0; i < BIG; ++i) a[i] = rank * 1000000 + i, b[i] = -1;
  /* two blocks at absolute addresses: a[0..BIG/2) and a[BIG/2..BIG) */
  MPI_Aint ad[2];
  int bl[2] = {BIG / 2, BIG / 2};
  MPI_Datatype absa, absb;
  MPI_Get_address(a, &ad[0]);
  MPI_Get_address(a + BIG / 2, &ad[1]);
  MPI_Type_create_hindexed(2, bl, ad, MPI_INT, &absa);
  MPI_Type_commit(&absa);
  MPI_Get_address(b, &ad[0]);
  MPI_Get_address(b + BIG / 2, &ad[1]);
  MPI_Type_create_hindexed(2, bl, ad, MPI_INT, &absb);
  MPI_Type_commit(&absb);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, w));
  CHECK_OK(MPI_Put(MPI_BOTTOM, 1, absa, right, 0, BIG, MPI_INT, w));
  CHECK_OK(MPI_Win_flush(right, w));
  CHECK_OK(MPI_Get(MPI_BOTTOM, 1, absb, right, 0, BIG, MPI_INT, w));
  CHECK_OK(MPI_Win_flush(right, w));
  int bad = 0;
  for (int i = 0; i < BIG; ++i) bad += b[i] != rank * 1000000 + i;
  CHECK_EQ(bad, 0);
  for (int i = 0; i < BIG; ++i) b[i] = -1;
  CHECK_OK(MPI_Get_accumulate(MPI_BOTTOM, 1, absa, MPI_BOTTOM, 1, absb, right, BIG, BIG, MPI_INT, MPI_SUM, w));
  CHECK_OK(MPI_Win_flush(right, w));
  bad = 0;
  for (int i = 0; i < BIG; ++i) bad += b[i] != 0;
  CHECK_EQ(bad, 0);
  MPI_Request rq;
  CHECK_OK(MPI_Rget_accumulate(NULL, 0, MPI_INT, MPI_BOTTOM, 1, absb, right, BIG, BIG, MPI_INT, MPI_NO_OP, w, &rq));
  CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  bad = 0;
  for (int i = 0; i < BIG; ++i) bad += b[i] != rank * 1000000 + i;
  CHECK_EQ(bad, 0);
  CHECK_OK(MPI_Rput(MPI_BOTTOM, 1, absa, right, 0, BIG, MPI_INT, w, &rq));
  CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  CHECK_OK(MPI_Win_unlock(right, w));
  /* MPI_BOTTOM with a type whose true lb is 0 is a null buffer */
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w));
  CHECK_CLASS(MPI_Put(MPI_BOTTOM, 1, MPI_INT, right, 0, 1, MPI_INT, w), MPI_ERR_BUFFER);
  CHECK_OK(MPI_Win_unlock(right, w));
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Type_free(&absa);
  MPI_Type_free(&absb);
  CHECK_OK(MPI_Win_free(&w));
  free(a);
  free(b);
}

int main(int argc, char** argv) {
  mt_init_ring(&argc, &argv, &rank, &size, &right, &left);
  small_and_misaligned();
  large_bottom();
  return mt_finish();
}
