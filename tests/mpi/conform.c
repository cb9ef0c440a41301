/* Conformance points an external MPI test suite found (issue 16), each
 * checked against what the standard says: balanced MPI_Dims_create, empty
 * strings of user error classes, exact MPI_ERR_IN_STATUS, basic elements in
 * MPI_Status_set_elements, the external32 size table, struct types with
 * empty members, reductions MPICH and Open MPI accept on MPI_CHAR and the
 * multi-language integers, generalized requests freed before completion, and
 * neighbourhood alltoall on periodic grids where a rank is its own neighbour. */
#include "mpitest.h"

static int rank, size;

/* ---- MPI_Dims_create against a brute-force reference ---- */

/* Every non-increasing k-tuple of factors of n; keeps the one with the
 * smallest (largest - smallest), ties to the lexicographically smallest. */
static void ref_search(int n, int k, int pos, int cap, int* cur, int* best, int* best_spread, int* found) {
  if (pos == k) {
    if (n != 1) return;
    int spread = cur[0] - cur[k - 1];
    int better = !*found || spread < *best_spread;
    if (!better && spread == *best_spread) {
      for (int i = 0; i < k; ++i) {
        if (cur[i] != best[i]) {
          better = cur[i] < best[i];
          break;
        }
      }
    }
    if (better) {
      memcpy(best, cur, sizeof(int) * (size_t)k);
      *best_spread = spread;
      *found = 1;
    }
    return;
  }
  for (int d = 1; d <= cap && d <= n; ++d) {
    if (n % d) continue;
    cur[pos] = d;
    ref_search(n / d, k, pos + 1, d, cur, best, best_spread, found);
  }
}

static void test_dims(void) {
  /* The cases the suite reported, and a cube. */
  int a[2] = {0, 0}, b[2] = {0, 0}, c[3] = {0, 0, 0};
  CHECK_OK(MPI_Dims_create(72, 2, a));
  CHECK(a[0] == 9 && a[1] == 8);
  CHECK_OK(MPI_Dims_create(180, 2, b));
  CHECK(b[0] == 15 && b[1] == 12);
  CHECK_OK(MPI_Dims_create(1000 * 1000 * 1000, 3, c));
  CHECK(c[0] == 1000 && c[1] == 1000 && c[2] == 1000);
  int e[2] = {0, 0};
  CHECK_OK(MPI_Dims_create(1323, 2, e));
  CHECK(e[0] == 49 && e[1] == 27);
  /* Fixed entries stay; the rest is balanced: 72 = 3 * 24 = 3 * 6 * 4. */
  int f[3] = {0, 3, 0};
  CHECK_OK(MPI_Dims_create(72, 3, f));
  CHECK(f[0] == 6 && f[1] == 3 && f[2] == 4);
  /* Many sizes and dimension counts against the reference. */
  int bad = 0;
  for (int k = 1; k <= 4; ++k) {
    for (int n = 1; n <= (k == 4 ? 256 : 600); ++n) {
      int got[4] = {0, 0, 0, 0}, cur[4], want[4], spread = 0, found = 0;
      ref_search(n, k, 0, n, cur, want, &spread, &found);
      CHECK_OK(MPI_Dims_create(n, k, got));
      if (memcmp(got, want, sizeof(int) * (size_t)k) != 0 && bad++ < 5) {
        fprintf(stderr, "Dims_create(%d, %d): got %d %d %d %d, want %d %d %d %d\n", n, k, got[0], k > 1 ? got[1] : 0,
                k > 2 ? got[2] : 0, k > 3 ? got[3] : 0, want[0], k > 1 ? want[1] : 0, k > 2 ? want[2] : 0,
                k > 3 ? want[3] : 0);
      }
    }
  }
  CHECK_EQ(bad, 0);
}

/* ---- error strings of user classes and codes ---- */

static void test_error_strings(void) {
  int cls, code, len = -1;
  char text[MPI_MAX_ERROR_STRING];
  CHECK_OK(MPI_Add_error_class(&cls));
  CHECK_OK(MPI_Add_error_code(cls, &code));
  text[0] = 'x';
  CHECK_OK(MPI_Error_string(cls, text, &len));
  CHECK_EQ(len, 0);
  CHECK_EQ(text[0], '\0');
  len = -1;
  CHECK_OK(MPI_Error_string(code, text, &len));
  CHECK_EQ(len, 0);
  CHECK_OK(MPI_Add_error_string(cls, "a class of mine"));
  CHECK_OK(MPI_Error_string(cls, text, &len));
  CHECK(strcmp(text, "a class of mine") == 0);
  CHECK_EQ(len, (int)strlen("a class of mine"));
}

/* ---- MPI_ERR_IN_STATUS itself from the multiple-completion calls ---- */

static void truncating_pair(MPI_Request* r, int* small, int* big, int tag) {
  MPI_Irecv(small, 1, MPI_INT, rank, tag, MPI_COMM_WORLD, &r[0]);
  MPI_Isend(big, 4, MPI_INT, rank, tag, MPI_COMM_WORLD, &r[1]);
}

static void test_err_in_status(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int small[1], big[4] = {1, 2, 3, 4}, cls = -1, flag = 0, outcount = 0, idx[2];
  MPI_Request r[2];
  MPI_Status st[2];
  truncating_pair(r, small, big, 11);
  CHECK_EQ(MPI_Waitall(2, r, st), MPI_ERR_IN_STATUS);
  MPI_Error_class(st[0].MPI_ERROR, &cls);
  CHECK_EQ(cls, MPI_ERR_TRUNCATE);

  truncating_pair(r, small, big, 12);
  int rc = MPI_SUCCESS;
  for (int i = 0; i < 100000 && !flag; ++i) rc = MPI_Testall(2, r, &flag, st);
  CHECK(flag);
  CHECK_EQ(rc, MPI_ERR_IN_STATUS);

  /* Waitsome/Testsome: the receive fails; the send may finish alongside. */
  truncating_pair(r, small, big, 13);
  int done = 0, saw = 0;
  while (done < 2) {
    rc = MPI_Waitsome(2, r, &outcount, idx, st);
    for (int k = 0; k < outcount; ++k) {
      if (idx[k] == 0) {
        saw = 1;
        CHECK_EQ(rc, MPI_ERR_IN_STATUS);
      }
    }
    done += outcount;
  }
  CHECK(saw);
  truncating_pair(r, small, big, 14);
  done = saw = 0;
  for (int i = 0; i < 1000000 && done < 2; ++i) {
    rc = MPI_Testsome(2, r, &outcount, idx, st);
    for (int k = 0; k < outcount; ++k) {
      if (idx[k] == 0) {
        saw = 1;
        CHECK_EQ(rc, MPI_ERR_IN_STATUS);
      }
    }
    done += outcount;
  }
  CHECK(saw);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* ---- MPI_Status_set_elements counts basic elements ---- */

static void test_set_elements(void) {
  MPI_Datatype four, mixed;
  MPI_Type_contiguous(4, MPI_INT, &four);
  MPI_Type_commit(&four);
  MPI_Status st;
  int n = -1;
  MPI_Count nx = -1;
  CHECK_OK(MPI_Status_set_elements(&st, four, 4));
  MPI_Get_elements(&st, four, &n);
  CHECK_EQ(n, 4);
  MPI_Get_count(&st, four, &n);
  CHECK_EQ(n, 1);
  CHECK_OK(MPI_Status_set_elements(&st, four, 6));
  MPI_Get_elements(&st, four, &n);
  CHECK_EQ(n, 6);
  MPI_Get_count(&st, four, &n);
  CHECK_EQ(n, MPI_UNDEFINED);
  MPI_Get_elements(&st, MPI_INT, &n);
  CHECK_EQ(n, 6);
  CHECK_OK(MPI_Status_set_elements_x(&st, four, 8));
  MPI_Get_elements_x(&st, four, &nx);
  CHECK_EQ(nx, 8);
  MPI_Get_count(&st, four, &n);
  CHECK_EQ(n, 2);
  /* Mixed element sizes: {int, double, double}. */
  int bl[2] = {1, 2};
  MPI_Aint d[2] = {0, 8};
  MPI_Datatype ts[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Type_create_struct(2, bl, d, ts, &mixed);
  MPI_Type_commit(&mixed);
  for (int k = 0; k <= 7; ++k) {
    CHECK_OK(MPI_Status_set_elements(&st, mixed, k));
    MPI_Get_elements(&st, mixed, &n);
    CHECK_EQ(n, k);
    MPI_Get_count(&st, mixed, &n);
    CHECK_EQ(n, k % 3 ? MPI_UNDEFINED : k / 3);
  }
  MPI_Type_free(&four);
  MPI_Type_free(&mixed);
}

/* ---- external32 sizes (MPI-4.1's table) ---- */

static void test_external32(void) {
  struct {
    MPI_Datatype t;
    MPI_Aint bytes;
  } table[] = {{MPI_CHAR, 1},   {MPI_WCHAR, 2},         {MPI_SHORT, 2},     {MPI_INT, 4},
               {MPI_LONG, 4},   {MPI_UNSIGNED_LONG, 4}, {MPI_LONG_LONG, 8}, {MPI_FLOAT, 4},
               {MPI_DOUBLE, 8}, {MPI_LONG_DOUBLE, 16},  {MPI_C_BOOL, 1},    {MPI_AINT, 8},
               {MPI_OFFSET, 8}, {MPI_COUNT, 8},         {MPI_LONG_INT, 8},  {MPI_C_DOUBLE_COMPLEX, 16}};
  for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i) {
    MPI_Aint got = -1;
    CHECK_OK(MPI_Pack_external_size("external32", 3, table[i].t, &got));
    CHECK_EQ(got, 3 * table[i].bytes);
  }
  long v[2] = {-3, 0x01020304L}, back[2] = {0, 0};
  unsigned char buf[8];
  MPI_Aint pos = 0;
  CHECK_OK(MPI_Pack_external("external32", v, 2, MPI_LONG, buf, sizeof buf, &pos));
  CHECK_EQ(pos, 8);
  CHECK(buf[0] == 0xff && buf[3] == 0xfd && buf[4] == 1 && buf[7] == 4);
  pos = 0;
  CHECK_OK(MPI_Unpack_external("external32", buf, sizeof buf, &pos, back, 2, MPI_LONG));
  CHECK(back[0] == -3 && back[1] == 0x01020304L);
}

/* ---- struct types with empty members (used to crash) ---- */

static void test_struct_zeros(void) {
  int bl[3] = {1, 0, 2};
  MPI_Aint d[3] = {0, 8, 16};
  MPI_Datatype ts[3] = {MPI_INT, MPI_DOUBLE, MPI_INT}, t, empty, none, outer, zvec, withz;
  CHECK_OK(MPI_Type_create_struct(3, bl, d, ts, &t));
  CHECK_OK(MPI_Type_commit(&t));
  int sz = -1;
  MPI_Type_size(t, &sz);
  CHECK_EQ(sz, 12);
  int buf[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8] = {0};
  CHECK_OK(MPI_Sendrecv(buf, 1, t, rank, 5, out, 1, t, rank, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CHECK(out[0] == 1 && out[1] == 0 && out[4] == 5 && out[5] == 6);
  /* count 0, then all-zero blocklengths, then those inside another struct */
  CHECK_OK(MPI_Type_create_struct(0, bl, d, ts, &none));
  CHECK_OK(MPI_Type_commit(&none));
  MPI_Type_size(none, &sz);
  CHECK_EQ(sz, 0);
  int zeros[2] = {0, 0};
  CHECK_OK(MPI_Type_create_struct(2, zeros, d, ts, &empty));
  CHECK_OK(MPI_Type_commit(&empty));
  MPI_Datatype ts2[3] = {empty, MPI_INT, none};
  int ones[3] = {1, 1, 3};
  CHECK_OK(MPI_Type_create_struct(3, ones, d, ts2, &outer));
  CHECK_OK(MPI_Type_commit(&outer));
  MPI_Type_size(outer, &sz);
  CHECK_EQ(sz, 4);
  memset(out, 0, sizeof out);
  CHECK_OK(MPI_Sendrecv(buf, 1, outer, rank, 6, out, 1, outer, rank, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CHECK(out[2] == 3 && out[0] == 0);
  /* a member whose type has count 0 */
  CHECK_OK(MPI_Type_vector(0, 1, 2, MPI_INT, &zvec));
  MPI_Datatype ts3[2] = {MPI_INT, zvec};
  int bl3[2] = {1, 2};
  CHECK_OK(MPI_Type_create_struct(2, bl3, d, ts3, &withz));
  CHECK_OK(MPI_Type_commit(&withz));
  memset(out, 0, sizeof out);
  CHECK_OK(MPI_Sendrecv(buf, 2, withz, rank, 7, out, 2, withz, rank, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CHECK_EQ(out[0], 1);
  MPI_Datatype all[6] = {t, none, empty, outer, zvec, withz};
  for (int i = 0; i < 6; ++i) MPI_Type_free(&all[i]);
}

/* ---- reductions MPICH and Open MPI accept ---- */

static void test_reductions(void) {
  char c = (char)(rank + 1), csum = 0;
  CHECK_OK(MPI_Allreduce(&c, &csum, 1, MPI_CHAR, MPI_SUM, MPI_COMM_WORLD));
  CHECK_EQ(csum, (char)(size * (size + 1) / 2));
  char cmax = 0;
  CHECK_OK(MPI_Allreduce(&c, &cmax, 1, MPI_CHAR, MPI_MAX, MPI_COMM_WORLD));
  CHECK_EQ(cmax, size);
  signed char s = (signed char)-rank, smin = 0;
  CHECK_OK(MPI_Allreduce(&s, &smin, 1, MPI_SIGNED_CHAR, MPI_MIN, MPI_COMM_WORLD));
  CHECK_EQ(smin, -(size - 1));
  MPI_Datatype ml[3] = {MPI_AINT, MPI_OFFSET, MPI_COUNT};
  for (int i = 0; i < 3; ++i) {
    long long one = rank == 0, any = -1, all = -1, x = -1; /* 8-byte types */
    CHECK_OK(MPI_Allreduce(&one, &any, 1, ml[i], MPI_LOR, MPI_COMM_WORLD));
    CHECK_OK(MPI_Allreduce(&one, &all, 1, ml[i], MPI_LAND, MPI_COMM_WORLD));
    CHECK_OK(MPI_Allreduce(&one, &x, 1, ml[i], MPI_LXOR, MPI_COMM_WORLD));
    CHECK_EQ(any, 1);
    CHECK_EQ(all, size == 1);
    CHECK_EQ(x, 1);
  }
}

/* ---- generalized request freed before MPI_Grequest_complete ---- */

static int queries, frees;
static int g_query(void* extra, MPI_Status* s) {
  (void)extra;
  ++queries;
  MPI_Status_set_elements(s, MPI_BYTE, 0);
  MPI_Status_set_cancelled(s, 0);
  return MPI_SUCCESS;
}
static int g_free(void* extra) {
  ++*(int*)extra;
  ++frees;
  return MPI_SUCCESS;
}
static int g_cancel(void* extra, int complete) {
  (void)extra;
  (void)complete;
  return MPI_SUCCESS;
}

static void test_greq_freed_first(void) {
  int mine = 0;
  MPI_Request r, copy;
  queries = frees = 0;
  CHECK_OK(MPI_Grequest_start(g_query, g_free, g_cancel, &mine, &r));
  copy = r;
  CHECK_OK(MPI_Request_free(&r));
  CHECK(r == MPI_REQUEST_NULL);
  CHECK_EQ(frees, 0); /* not before the operation completes */
  CHECK_OK(MPI_Grequest_complete(copy));
  CHECK_EQ(frees, 1);
  CHECK_EQ(mine, 1);
  CHECK_EQ(queries, 0); /* nothing asks for the status */
}

/* ---- neighbourhood alltoall on periodic grids with 1 or 2 ranks along a
 * dimension: blocks pair by direction (MPI-4.1 8.6: negative, then
 * positive, per dimension), not by posting order ---- */

static void check_cart_alltoall(int ndims, const int* dims) {
  int periods[3] = {1, 1, 1};
  MPI_Comm cart;
  CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 0, &cart));
  if (cart == MPI_COMM_NULL) return;
  int r;
  MPI_Comm_rank(cart, &r);
  int n = 2 * ndims, send[6], recv[6], sendw[6], recvw[6], recvv[6];
  /* Block 2k goes to the negative neighbour along k, 2k+1 to the positive:
   * the value names the sender and the direction it was sent in. */
  for (int i = 0; i < n; ++i) send[i] = 100 * r + i;
  CHECK_OK(MPI_Neighbor_alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, cart));
  int counts[6], displs[6], one[6];
  MPI_Aint bdispls[6];
  MPI_Datatype types[6];
  for (int i = 0; i < n; ++i) {
    counts[i] = one[i] = 1;
    displs[i] = i;
    bdispls[i] = (MPI_Aint)(i * sizeof(int));
    types[i] = MPI_INT;
  }
  CHECK_OK(MPI_Neighbor_alltoallv(send, counts, displs, MPI_INT, recvv, counts, displs, MPI_INT, cart));
  for (int i = 0; i < n; ++i) sendw[i] = send[i];
  CHECK_OK(MPI_Neighbor_alltoallw(sendw, one, bdispls, types, recvw, one, bdispls, types, cart));
  MPI_Request req;
  int recvi[6];
  CHECK_OK(MPI_Ineighbor_alltoall(send, 1, MPI_INT, recvi, 1, MPI_INT, cart, &req));
  CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  for (int k = 0; k < ndims; ++k) {
    int src_neg, src_pos;
    MPI_Cart_shift(cart, k, 1, &src_neg, &src_pos);
    /* From the negative neighbour: what it sent in its positive direction. */
    int want_neg = 100 * src_neg + 2 * k + 1, want_pos = 100 * src_pos + 2 * k;
    CHECK_EQ(recv[2 * k], want_neg);
    CHECK_EQ(recv[2 * k + 1], want_pos);
    CHECK_EQ(recvv[2 * k], want_neg);
    CHECK_EQ(recvv[2 * k + 1], want_pos);
    CHECK_EQ(recvw[2 * k], want_neg);
    CHECK_EQ(recvw[2 * k + 1], want_pos);
    CHECK_EQ(recvi[2 * k], want_neg);
    CHECK_EQ(recvi[2 * k + 1], want_pos);
  }
  MPI_Comm_free(&cart);
}

static void test_periodic_neighbours(void) {
  int d1[1] = {size};
  check_cart_alltoall(1, d1);
  int d2[2] = {1, size};
  check_cart_alltoall(2, d2);
  if (size >= 2) {
    int d3[2] = {2, size / 2};
    check_cart_alltoall(2, d3);
    int d4[3] = {size / 2, 1, 2};
    check_cart_alltoall(3, d4);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  test_dims();
  test_error_strings();
  test_err_in_status();
  test_set_elements();
  test_external32();
  test_struct_zeros();
  test_reductions();
  test_greq_freed_first();
  test_periodic_neighbours();
  return mt_finish();
}
