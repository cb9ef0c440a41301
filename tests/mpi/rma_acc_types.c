/* Accumulates on every predefined type with every predefined op the type
 * takes (MPI-3.1 5.9.2 and 11.3.4): MPI_Accumulate under fence,
 * MPI_Get_accumulate under fence, MPI_Fetch_and_op under an exclusive
 * lock and MPI_Compare_and_swap under lock_all, each checked against
 * MPI_Reduce_local on the same values; ops a type does not take refused
 * with MPI_ERR_OP; MAXLOC/MINLOC on the pair types and concurrent
 * accumulates from every rank to one location exact. Windows from
 * MPI_Win_create and MPI_Win_allocate. */
#include <complex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mpitest.h"

#define NE 3     /* elements per accumulate */
#define ESZ 32   /* room per element (long double int is 32 bytes) */
#define SLOTS 65 /* one slot per origin rank, and one more */

enum {
  OP_MAX,
  OP_MIN,
  OP_SUM,
  OP_PROD,
  OP_LAND,
  OP_LOR,
  OP_LXOR,
  OP_BAND,
  OP_BOR,
  OP_BXOR,
  OP_MAXLOC,
  OP_MINLOC,
  NOPS
};
static MPI_Op op_of(int o) {
  static const MPI_Op ops[NOPS] = {MPI_MAX,  MPI_MIN,  MPI_SUM, MPI_PROD, MPI_LAND,   MPI_LOR,
                                   MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC};
  return ops[o];
}
static const char* op_name[NOPS] = {"MAX",  "MIN",  "SUM", "PROD", "LAND",   "LOR",
                                    "LXOR", "BAND", "BOR", "BXOR", "MAXLOC", "MINLOC"};
#define B(o) (1u << (o))
#define INT_OPS                                                                                                    \
  (B(OP_MAX) | B(OP_MIN) | B(OP_SUM) | B(OP_PROD) | B(OP_LAND) | B(OP_LOR) | B(OP_LXOR) | B(OP_BAND) | B(OP_BOR) | \
   B(OP_BXOR))
/* MPI-3.1 5.9.2 gives the multi-language types no logical ops; this
   library takes them as the C integers they are (as MPI_Reduce does) */
#define MULTI_OPS INT_OPS
#define FLOAT_OPS (B(OP_MAX) | B(OP_MIN) | B(OP_SUM) | B(OP_PROD))
#define BOOL_OPS (B(OP_LAND) | B(OP_LOR) | B(OP_LXOR))
#define CPLX_OPS (B(OP_SUM) | B(OP_PROD))
#define BYTE_OPS (B(OP_BAND) | B(OP_BOR) | B(OP_BXOR))
#define PAIR_OPS (B(OP_MAXLOC) | B(OP_MINLOC))

typedef struct {
  MPI_Datatype t;
  const char* name;
  size_t sz;
  unsigned ops; /* predefined ops the type takes (besides REPLACE and NO_OP) */
  int cas;      /* compare_and_swap takes it */
  void (*set)(void*, int);
  int (*eq)(const void*, const void*);
} TypeCase;

#define SCALAR(ctype, fn)                                         \
  static void set_##fn(void* p, int v) { *(ctype*)p = (ctype)v; } \
  static int eq_##fn(const void* a, const void* b) { return *(const ctype*)a == *(const ctype*)b; }
SCALAR(int, int)
SCALAR(long, long)
SCALAR(short, short)
SCALAR(unsigned short, ushort)
SCALAR(unsigned, uint)
SCALAR(unsigned long, ulong)
SCALAR(long long, ll)
SCALAR(unsigned long long, ull)
SCALAR(signed char, schar)
SCALAR(unsigned char, uchar)
SCALAR(int8_t, i8)
SCALAR(int16_t, i16)
SCALAR(int32_t, i32)
SCALAR(int64_t, i64)
SCALAR(uint8_t, u8)
SCALAR(uint16_t, u16)
SCALAR(uint32_t, u32)
SCALAR(uint64_t, u64)
SCALAR(MPI_Aint, aint)
SCALAR(MPI_Offset, offset)
SCALAR(MPI_Count, count)
SCALAR(float, float)
SCALAR(double, double)
SCALAR(long double, ldouble)
SCALAR(char, char)
static void set_bool(void* p, int v) { *(bool*)p = (v % 3) != 0; }
static int eq_bool(const void* a, const void* b) { return *(const bool*)a == *(const bool*)b; }
static void set_byte(void* p, int v) { *(unsigned char*)p = (unsigned char)(v * 37 + 11); }
static int eq_byte(const void* a, const void* b) { return *(const unsigned char*)a == *(const unsigned char*)b; }
#define CPLX(ctype, fn)                                                                            \
  static void set_##fn(void* p, int v) { *(ctype*)p = (ctype)(v % 4) + (ctype)((v / 4) % 3) * I; } \
  static int eq_##fn(const void* a, const void* b) { return *(const ctype*)a == *(const ctype*)b; }
CPLX(float _Complex, cf)
CPLX(double _Complex, cd)
CPLX(long double _Complex, cld)
#define PAIR(vtype, fn)                                                                                      \
  typedef struct {                                                                                           \
    vtype v;                                                                                                 \
    int i;                                                                                                   \
  } fn##_t;                                                                                                  \
  static void set_##fn(void* p, int v) {                                                                     \
    ((fn##_t*)p)->v = (vtype)(v % 5);                                                                        \
    ((fn##_t*)p)->i = v % 7;                                                                                 \
  }                                                                                                          \
  static int eq_##fn(const void* a, const void* b) {                                                         \
    return ((const fn##_t*)a)->v == ((const fn##_t*)b)->v && ((const fn##_t*)a)->i == ((const fn##_t*)b)->i; \
  }
PAIR(int, p2int)
PAIR(float, pfloat)
PAIR(double, pdouble)
PAIR(long, plong)
PAIR(short, pshort)
PAIR(long double, pldouble)

#define T(mt, fn, ctype, ops, cas) \
  { mt, #mt, sizeof(ctype), ops, cas, set_##fn, eq_##fn }
static const TypeCase types[] = {
    T(MPI_INT, int, int, INT_OPS, 1),
    T(MPI_LONG, long, long, INT_OPS, 1),
    T(MPI_SHORT, short, short, INT_OPS, 1),
    T(MPI_UNSIGNED_SHORT, ushort, unsigned short, INT_OPS, 1),
    T(MPI_UNSIGNED, uint, unsigned, INT_OPS, 1),
    T(MPI_UNSIGNED_LONG, ulong, unsigned long, INT_OPS, 1),
    T(MPI_LONG_LONG, ll, long long, INT_OPS, 1),
    T(MPI_LONG_LONG_INT, ll, long long, INT_OPS, 1),
    T(MPI_UNSIGNED_LONG_LONG, ull, unsigned long long, INT_OPS, 1),
    T(MPI_SIGNED_CHAR, schar, signed char, INT_OPS, 1),
    T(MPI_UNSIGNED_CHAR, uchar, unsigned char, INT_OPS, 1),
    T(MPI_INT8_T, i8, int8_t, INT_OPS, 1),
    T(MPI_INT16_T, i16, int16_t, INT_OPS, 1),
    T(MPI_INT32_T, i32, int32_t, INT_OPS, 1),
    T(MPI_INT64_T, i64, int64_t, INT_OPS, 1),
    T(MPI_UINT8_T, u8, uint8_t, INT_OPS, 1),
    T(MPI_UINT16_T, u16, uint16_t, INT_OPS, 1),
    T(MPI_UINT32_T, u32, uint32_t, INT_OPS, 1),
    T(MPI_UINT64_T, u64, uint64_t, INT_OPS, 1),
    T(MPI_AINT, aint, MPI_Aint, MULTI_OPS, 1),
    T(MPI_OFFSET, offset, MPI_Offset, MULTI_OPS, 1),
    T(MPI_COUNT, count, MPI_Count, MULTI_OPS, 1),
    T(MPI_FLOAT, float, float, FLOAT_OPS, 0),
    T(MPI_DOUBLE, double, double, FLOAT_OPS, 0),
    T(MPI_LONG_DOUBLE, ldouble, long double, FLOAT_OPS, 0),
    T(MPI_C_BOOL, bool, bool, BOOL_OPS, 1),
    T(MPI_C_FLOAT_COMPLEX, cf, float _Complex, CPLX_OPS, 0),
    T(MPI_C_DOUBLE_COMPLEX, cd, double _Complex, CPLX_OPS, 0),
    T(MPI_C_LONG_DOUBLE_COMPLEX, cld, long double _Complex, CPLX_OPS, 0),
    T(MPI_BYTE, byte, unsigned char, BYTE_OPS, 1),
    T(MPI_2INT, p2int, p2int_t, PAIR_OPS, 0),
    T(MPI_FLOAT_INT, pfloat, pfloat_t, PAIR_OPS, 0),
    T(MPI_DOUBLE_INT, pdouble, pdouble_t, PAIR_OPS, 0),
    T(MPI_LONG_INT, plong, plong_t, PAIR_OPS, 0),
    T(MPI_SHORT_INT, pshort, pshort_t, PAIR_OPS, 0),
    T(MPI_LONG_DOUBLE_INT, pldouble, pldouble_t, PAIR_OPS, 0),
    T(MPI_CHAR, char, char, INT_OPS, 1), /* not an integer type in MPI; taken as one (MPICH does) */
};
#define NTYPES ((int)(sizeof types / sizeof types[0]))

static int rank, size, right, left;

static int oval(int r, int k) { return r * 7 + k * 3 + 1; }
static int tval(int r, int slot, int k) { return r * 5 + slot * 3 + k + 2; }

static void fill(const TypeCase* tc, unsigned char* p, int n, int (*val)(int, int), int r) {
  memset(p, 0, (size_t)n * tc->sz);
  for (int k = 0; k < n; ++k) tc->set(p + (size_t)k * tc->sz, val(r, k));
}
/* this rank's window: slot s holds tval(rank, s, k) */
static void fill_window(const TypeCase* tc, unsigned char* win) {
  memset(win, 0, SLOTS * NE * ESZ);
  for (int s = 0; s <= size; ++s)
    for (int k = 0; k < NE + 1; ++k) tc->set(win + ((size_t)s * (NE + 1) + k) * tc->sz, tval(rank, s, k));
}
static unsigned char* slot_of(const TypeCase* tc, unsigned char* win, int s) {
  return win + (size_t)s * (NE + 1) * tc->sz;
}

static int same(const TypeCase* tc, const unsigned char* got, const unsigned char* want, int n, const char* what,
                const char* op) {
  for (int k = 0; k < n; ++k) {
    if (!tc->eq(got + (size_t)k * tc->sz, want + (size_t)k * tc->sz)) {
      fprintf(stderr, "[rank %d] %s %s %s: element %d differs\n", rank, tc->name, op, what, k);
      ++mt_errors;
      return 0;
    }
  }
  return 1;
}

/* The value a target element holds after `op` with origin values from rank
   r into the slot s of rank t (REPLACE: the origin's values). */
static void expect(const TypeCase* tc, MPI_Op op, int t, int r, int n, unsigned char* out) {
  unsigned char src[NE * ESZ], init[NE * ESZ];
  fill(tc, src, n, oval, r);
  memset(init, 0, sizeof init);
  for (int k = 0; k < n; ++k) tc->set(init + (size_t)k * tc->sz, tval(t, r, k));
  if (op == MPI_REPLACE) {
    memcpy(out, src, (size_t)n * tc->sz);
  } else if (op == MPI_NO_OP) {
    memcpy(out, init, (size_t)n * tc->sz);
  } else {
    MPI_Reduce_local(src, init, n, tc->t, op);
    memcpy(out, init, (size_t)n * tc->sz);
  }
}

static void run_type(const TypeCase* tc, unsigned char* win, MPI_Win w) {
  unsigned char src[NE * ESZ], res[NE * ESZ], want[NE * ESZ], want_res[NE * ESZ];
  const MPI_Aint my_slot = (MPI_Aint)rank * (NE + 1); /* in elements: disp_unit is the element size */
  /* put and get of NE elements under fence (pairs: with their padding) */
  fill_window(tc, win);
  fill(tc, src, NE, oval, rank);
  memset(res, 0, sizeof res);
  CHECK_OK(MPI_Win_fence(0, w));
  CHECK_OK(MPI_Put(src, NE, tc->t, right, my_slot, NE, tc->t, w));
  CHECK_OK(MPI_Get(res, NE, tc->t, right, (MPI_Aint)size * (NE + 1), NE, tc->t, w));
  CHECK_OK(MPI_Win_fence(0, w));
  expect(tc, MPI_REPLACE, rank, left, NE, want);
  same(tc, slot_of(tc, win, left), want, NE, "put", "-");
  expect(tc, MPI_NO_OP, right, size, NE, want_res);
  same(tc, res, want_res, NE, "get", "-");
  CHECK_OK(MPI_Win_fence(0, w));
  for (int o = -1; o <= NOPS; ++o) {
    MPI_Op op = o < 0 ? MPI_REPLACE : o == NOPS ? MPI_NO_OP : op_of(o);
    const char* oname = o < 0 ? "REPLACE" : o == NOPS ? "NO_OP" : op_name[o];
    int takes = o < 0 || o == NOPS || (tc->ops & B(o));
    fill(tc, src, NE, oval, rank);
    if (!takes) {
      CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w));
      int rc = MPI_Accumulate(src, NE, tc->t, right, my_slot, NE, tc->t, op, w);
      int cls = -1;
      if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
      if (cls != MPI_ERR_OP && cls != MPI_ERR_TYPE) {
        fprintf(stderr, "[rank %d] accumulate %s on %s: rc %d class %d, want MPI_ERR_OP\n", rank, oname, tc->name, rc,
                cls);
        ++mt_errors;
      }
      CHECK_OK(MPI_Win_unlock(right, w));
      continue;
    }
    /* accumulate (not NO_OP) under fence */
    if (op != MPI_NO_OP) {
      fill_window(tc, win);
      CHECK_OK(MPI_Win_fence(0, w));
      CHECK_OK(MPI_Accumulate(src, NE, tc->t, right, my_slot, NE, tc->t, op, w));
      CHECK_OK(MPI_Win_fence(0, w));
      expect(tc, op, rank, left, NE, want);
      same(tc, slot_of(tc, win, left), want, NE, "accumulate", oname);
    }
    /* get_accumulate under fence: the old values come back */
    fill_window(tc, win);
    memset(res, 0xee, sizeof res);
    CHECK_OK(MPI_Win_fence(0, w));
    CHECK_OK(MPI_Get_accumulate(src, NE, tc->t, res, NE, tc->t, right, my_slot, NE, tc->t, op, w));
    CHECK_OK(MPI_Win_fence(0, w));
    expect(tc, op, rank, left, NE, want);
    same(tc, slot_of(tc, win, left), want, NE, "get_accumulate target", oname);
    expect(tc, MPI_NO_OP, right, rank, NE, want_res);
    same(tc, res, want_res, NE, "get_accumulate result", oname);
    /* fetch_and_op under an exclusive lock, on the slot's last element */
    MPI_Barrier(MPI_COMM_WORLD);
    fill_window(tc, win);
    MPI_Barrier(MPI_COMM_WORLD);
    memset(res, 0xee, sizeof res);
    CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, w));
    CHECK_OK(MPI_Fetch_and_op(src, res, tc->t, right, my_slot + NE, op, w));
    CHECK_OK(MPI_Win_unlock(right, w));
    MPI_Barrier(MPI_COMM_WORLD);
    {
      unsigned char s1[ESZ], t1[ESZ];
      memset(s1, 0, sizeof s1);
      memset(t1, 0, sizeof t1);
      tc->set(s1, oval(left, 0));
      tc->set(t1, tval(rank, left, NE));
      unsigned char old[ESZ];
      memcpy(old, t1, sizeof old);
      if (op == MPI_REPLACE)
        memcpy(t1, s1, tc->sz);
      else if (op != MPI_NO_OP)
        MPI_Reduce_local(s1, t1, 1, tc->t, op);
      MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w);
      same(tc, slot_of(tc, win, left) + (size_t)NE * tc->sz, t1, 1, "fetch_and_op target", oname);
      MPI_Win_unlock(rank, w);
      unsigned char oldr[ESZ];
      memset(oldr, 0, sizeof oldr);
      tc->set(oldr, tval(right, rank, NE));
      same(tc, res, oldr, 1, "fetch_and_op result", oname);
      (void)old;
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  /* compare_and_swap: a hit on element 0, a miss on element 1 */
  MPI_Barrier(MPI_COMM_WORLD);
  fill_window(tc, win);
  MPI_Barrier(MPI_COMM_WORLD);
  unsigned char cmp[ESZ], nv[ESZ], r0[ESZ], r1[ESZ];
  memset(cmp, 0, sizeof cmp);
  memset(nv, 0, sizeof nv);
  tc->set(cmp, tval(right, rank, 0));
  tc->set(nv, oval(rank, 5));
  CHECK_OK(MPI_Win_lock_all(0, w));
  if (tc->cas) {
    CHECK_OK(MPI_Compare_and_swap(nv, cmp, r0, tc->t, right, my_slot, w));
    unsigned char miss[ESZ];
    memset(miss, 0, sizeof miss);
    tc->set(miss, tval(right, rank, 1) + 1); /* differs from the target (bool: maybe equal; checked below) */
    CHECK_OK(MPI_Compare_and_swap(nv, miss, r1, tc->t, right, my_slot + 1, w));
    CHECK_OK(MPI_Win_unlock_all(w));
    MPI_Barrier(MPI_COMM_WORLD);
    unsigned char t0[ESZ], t1[ESZ], nl[ESZ];
    memset(t0, 0, sizeof t0);
    memset(t1, 0, sizeof t1);
    memset(nl, 0, sizeof nl);
    tc->set(t0, tval(rank, left, 0));
    tc->set(t1, tval(rank, left, 1));
    tc->set(nl, oval(left, 5));
    unsigned char missl[ESZ];
    memset(missl, 0, sizeof missl);
    tc->set(missl, tval(rank, left, 1) + 1);
    int hit1 = tc->eq(missl, t1);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w);
    same(tc, slot_of(tc, win, left), nl, 1, "compare_and_swap hit", "CAS");
    same(tc, slot_of(tc, win, left) + tc->sz, hit1 ? nl : t1, 1, "compare_and_swap miss", "CAS");
    MPI_Win_unlock(rank, w);
    unsigned char w0[ESZ], w1[ESZ];
    memset(w0, 0, sizeof w0);
    memset(w1, 0, sizeof w1);
    tc->set(w0, tval(right, rank, 0));
    tc->set(w1, tval(right, rank, 1));
    same(tc, r0, w0, 1, "compare_and_swap hit result", "CAS");
    same(tc, r1, w1, 1, "compare_and_swap miss result", "CAS");
  } else {
    int rc = MPI_Compare_and_swap(nv, cmp, r0, tc->t, right, my_slot, w), cls = -1;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    if (cls != MPI_ERR_TYPE) {
      fprintf(stderr, "[rank %d] compare_and_swap on %s: rc %d class %d, want MPI_ERR_TYPE\n", rank, tc->name, rc, cls);
      ++mt_errors;
    }
    CHECK_OK(MPI_Win_unlock_all(w));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* Every rank accumulates into the same elements of rank 0 at once. */
static void test_overlap(int flav) {
  long long* ll;
  MPI_Win w;
  struct {
    double v;
    int i;
  } * pair;
  MPI_Aint bytes = 4 * sizeof(long long) + 2 * 16;
  char* mem;
  if (flav == 0) {
    mem = calloc(1, (size_t)bytes);
    CHECK_OK(MPI_Win_create(mem, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w));
  } else {
    CHECK_OK(MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &w));
    memset(mem, 0, (size_t)bytes);
  }
  ll = (long long*)mem;
  pair = (void*)(mem + 4 * sizeof(long long));
  pair[0].v = -1;
  pair[0].i = 99;
  pair[1].v = 1e9;
  pair[1].i = 99;
  ll[1] = 1;
  MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
  enum { rounds = 50 };
  /* The buffers live until the unlock: an operation may read its origin and
     write its result after the call returns (until a flush completes it). */
  long long olds[rounds];
  long long one = rank + 1, two = 2, bit = 1LL << rank;
  struct {
    double v;
    int i;
  } mine = {(double)(rank % 2), rank};
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_lock_all(0, w));
  for (int i = 0; i < rounds; ++i) {
    CHECK_OK(MPI_Accumulate(&one, 1, MPI_LONG_LONG, 0, 0, 1, MPI_LONG_LONG, MPI_SUM, w));
    if (i < 8) CHECK_OK(MPI_Accumulate(&two, 1, MPI_LONG_LONG, 0, sizeof(long long), 1, MPI_LONG_LONG, MPI_PROD, w));
    CHECK_OK(MPI_Accumulate(&mine, 1, MPI_DOUBLE_INT, 0, 4 * sizeof(long long), 1, MPI_DOUBLE_INT, MPI_MAXLOC, w));
    CHECK_OK(MPI_Accumulate(&mine, 1, MPI_DOUBLE_INT, 0, 4 * sizeof(long long) + 16, 1, MPI_DOUBLE_INT, MPI_MINLOC, w));
    CHECK_OK(MPI_Fetch_and_op(&bit, &olds[i], MPI_LONG_LONG, 0, 2 * sizeof(long long), MPI_BOR, w));
    if (i % 10 == 0) CHECK_OK(MPI_Win_flush(0, w));
  }
  CHECK_OK(MPI_Win_unlock_all(w));
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w);
    CHECK_EQ(ll[0], (long long)rounds * size * (size + 1) / 2);
    CHECK_EQ(ll[1], 1LL << (8 * size));
    CHECK_EQ(ll[2], (1LL << size) - 1);
    /* MAXLOC: value 1 from the odd ranks, the lowest index 1 (or 0 from 0 alone) */
    if (size > 1) {
      CHECK(pair[0].v == 1.0);
      CHECK_EQ(pair[0].i, 1);
    } else {
      CHECK(pair[0].v == 0.0);
      CHECK_EQ(pair[0].i, 0);
    }
    CHECK(pair[1].v == 0.0);
    CHECK_EQ(pair[1].i, 0);
    MPI_Win_unlock(0, w);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_free(&w));
  if (flav == 0) free(mem);
}

int main(int argc, char** argv) {
  mt_init_ring(&argc, &argv, &rank, &size, &right, &left);
  if (size >= SLOTS) {
    if (rank == 0) fprintf(stderr, "at most %d ranks\n", SLOTS);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (int flav = 0; flav < 2; ++flav) {
    for (int ti = 0; ti < NTYPES; ++ti) {
      const TypeCase* tc = &types[ti];
      unsigned char* win = NULL;
      MPI_Win w;
      MPI_Aint bytes = (MPI_Aint)SLOTS * (NE + 1) * ESZ;
      if (flav == 0) {
        win = malloc((size_t)bytes);
        CHECK_OK(MPI_Win_create(win, bytes, (int)tc->sz, MPI_INFO_NULL, MPI_COMM_WORLD, &w));
      } else {
        CHECK_OK(MPI_Win_allocate(bytes, (int)tc->sz, MPI_INFO_NULL, MPI_COMM_WORLD, &win, &w));
      }
      CHECK_OK(MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN));
      fill_window(tc, win);
      MPI_Barrier(MPI_COMM_WORLD);
      run_type(tc, win, w);
      CHECK_OK(MPI_Win_free(&w));
      if (flav == 0) free(win);
    }
    test_overlap(flav);
  }
  return mt_finish();
}
