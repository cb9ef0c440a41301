/* Predefined reduction operations against every type MPI 3.1 5.9.2 allows
 * them on (C integer incl. the fixed-size and character-sized ones,
 * floating point incl. long double, logical, complex, byte, the
 * multi-language MPI_AINT / MPI_OFFSET / MPI_COUNT, and the pair types of
 * MINLOC / MAXLOC with ties), each through MPI_Allreduce and checked
 * against the value every rank computes alone; the combinations the table
 * does not allow fail with MPI_ERR_OP; MPI_Reduce_local and
 * MPI_Op_commutative on predefined operations. */
#include <complex.h>
#include <stdbool.h>
#include <stdint.h>

#include "mpitest.h"

static int rank, size;

enum { SIGNED, UNSIGNED, FLOATING, BOOLEAN };
struct ty {
  MPI_Datatype dt;
  const char* name;
  int bytes;
  int kind;
  int bitwise; /* BAND/BOR/BXOR allowed */
  int logical; /* LAND/LOR/LXOR allowed (-1: not said, not checked) */
};

/* rank r's value for an operation (small enough for every type) */
static long long value(MPI_Op op, int r) {
  if (op == MPI_PROD) return r == 1 ? 2 : r == 2 ? 3 : 1;
  if (op == MPI_SUM) return r + 1;
  if (op == MPI_MAX || op == MPI_MIN) return (r * 7) % (size + 2) + 1;
  if (op == MPI_BAND) return 0x7f & ~(1 << (r % 7));
  if (op == MPI_BOR || op == MPI_BXOR) return 1 << (r % 7);
  return r % 2 == 0 || r == 1; /* logical: false on ranks 3, 5, 7, ... */
}

static long long expect(MPI_Op op) {
  long long acc = value(op, 0);
  for (int r = 1; r < size; ++r) {
    long long v = value(op, r);
    if (op == MPI_PROD)
      acc *= v;
    else if (op == MPI_SUM)
      acc += v;
    else if (op == MPI_MAX)
      acc = v > acc ? v : acc;
    else if (op == MPI_MIN)
      acc = v < acc ? v : acc;
    else if (op == MPI_BAND)
      acc &= v;
    else if (op == MPI_BOR)
      acc |= v;
    else if (op == MPI_BXOR)
      acc ^= v;
    else if (op == MPI_LAND)
      acc = acc && v;
    else if (op == MPI_LOR)
      acc = acc || v;
    else if (op == MPI_LXOR)
      acc = !acc != !v;
  }
  return acc;
}

static void store(const struct ty* t, void* p, long long v) {
  if (t->kind == FLOATING) {
    if (t->bytes == sizeof(float))
      *(float*)p = (float)v;
    else if (t->bytes == sizeof(double))
      *(double*)p = (double)v;
    else
      *(long double*)p = (long double)v;
  } else if (t->kind == BOOLEAN) {
    *(bool*)p = v != 0;
  } else {
    memcpy(p, &v, (size_t)t->bytes); /* little-endian host: the low bytes */
  }
}

static long long load(const struct ty* t, const void* p) {
  if (t->kind == FLOATING) {
    if (t->bytes == sizeof(float)) return (long long)*(const float*)p;
    if (t->bytes == sizeof(double)) return (long long)*(const double*)p;
    return (long long)*(const long double*)p;
  }
  if (t->kind == BOOLEAN) return *(const bool*)p;
  long long v = 0;
  memcpy(&v, p, (size_t)t->bytes);
  if (t->kind == SIGNED && t->bytes < 8) {
    int shift = 64 - 8 * t->bytes;
    v = (long long)((unsigned long long)v << shift) >> shift;
  }
  return v;
}

static void check_op(const struct ty* t, MPI_Op op, const char* opname, int allowed) {
  unsigned char in[3 * 16], out[3 * 16];
  for (int i = 0; i < 3; ++i) store(t, in + i * t->bytes, value(op, rank));
  memset(out, 0xa5, sizeof out);
  int rc = MPI_Allreduce(in, out, 3, t->dt, op, MPI_COMM_WORLD);
  if (!allowed) {
    int cls = -1;
    MPI_Error_class(rc, &cls);
    if (cls != MPI_ERR_OP) {
      fprintf(stderr, "[rank %d] %s on %s: class %d, want MPI_ERR_OP\n", rank, opname, t->name, cls);
      mt_fail(__FILE__, __LINE__, "a disallowed op/type pair", cls, MPI_ERR_OP);
    }
    return;
  }
  if (rc != MPI_SUCCESS) {
    fprintf(stderr, "[rank %d] %s on %s refused\n", rank, opname, t->name);
    mt_fail(__FILE__, __LINE__, "an allowed op/type pair", rc, 0);
    return;
  }
  for (int i = 0; i < 3; ++i) {
    long long got = load(t, out + i * t->bytes), want = expect(op);
    if (t->kind == BOOLEAN || op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR) got = got != 0, want = want != 0;
    if (got != want) {
      fprintf(stderr, "[rank %d] %s on %s: element %d\n", rank, opname, t->name, i);
      mt_fail(__FILE__, __LINE__, "reduction result", got, want);
      return;
    }
  }
}

#define T(dt, type, kind, bitwise, logical) \
  { dt, #dt, (int)sizeof(type), kind, bitwise, logical }

static void predefined_ops(void) {
  const struct ty types[] = {
      T(MPI_INT, int, SIGNED, 1, 1),
      T(MPI_LONG, long, SIGNED, 1, 1),
      T(MPI_SHORT, short, SIGNED, 1, 1),
      T(MPI_UNSIGNED_SHORT, unsigned short, UNSIGNED, 1, 1),
      T(MPI_UNSIGNED, unsigned, UNSIGNED, 1, 1),
      T(MPI_UNSIGNED_LONG, unsigned long, UNSIGNED, 1, 1),
      T(MPI_LONG_LONG_INT, long long, SIGNED, 1, 1),
      T(MPI_LONG_LONG, long long, SIGNED, 1, 1),
      T(MPI_UNSIGNED_LONG_LONG, unsigned long long, UNSIGNED, 1, 1),
      T(MPI_SIGNED_CHAR, signed char, SIGNED, 1, 1),
      T(MPI_UNSIGNED_CHAR, unsigned char, UNSIGNED, 1, 1),
      T(MPI_INT8_T, int8_t, SIGNED, 1, 1),
      T(MPI_INT16_T, int16_t, SIGNED, 1, 1),
      T(MPI_INT32_T, int32_t, SIGNED, 1, 1),
      T(MPI_INT64_T, int64_t, SIGNED, 1, 1),
      T(MPI_UINT8_T, uint8_t, UNSIGNED, 1, 1),
      T(MPI_UINT16_T, uint16_t, UNSIGNED, 1, 1),
      T(MPI_UINT32_T, uint32_t, UNSIGNED, 1, 1),
      T(MPI_UINT64_T, uint64_t, UNSIGNED, 1, 1),
      T(MPI_FLOAT, float, FLOATING, 0, 0),
      T(MPI_DOUBLE, double, FLOATING, 0, 0),
      T(MPI_LONG_DOUBLE, long double, FLOATING, 0, 0),
      T(MPI_C_BOOL, bool, BOOLEAN, 0, 1),
      T(MPI_BYTE, unsigned char, UNSIGNED, 1, 0),
      T(MPI_AINT, MPI_Aint, SIGNED, 1, -1),
      T(MPI_OFFSET, MPI_Offset, SIGNED, 1, -1),
      T(MPI_COUNT, MPI_Count, SIGNED, 1, -1),
  };
  struct {
    MPI_Op op;
    const char* name;
  } ops[] = {{MPI_MAX, "MPI_MAX"},   {MPI_MIN, "MPI_MIN"},  {MPI_SUM, "MPI_SUM"},   {MPI_PROD, "MPI_PROD"},
             {MPI_LAND, "MPI_LAND"}, {MPI_LOR, "MPI_LOR"},  {MPI_LXOR, "MPI_LXOR"}, {MPI_BAND, "MPI_BAND"},
             {MPI_BOR, "MPI_BOR"},   {MPI_BXOR, "MPI_BXOR"}};
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  for (unsigned i = 0; i < sizeof types / sizeof types[0]; ++i) {
    const struct ty* t = &types[i];
    const int numeric = t->kind != BOOLEAN && t->dt != MPI_BYTE;
    for (unsigned k = 0; k < sizeof ops / sizeof ops[0]; ++k) {
      MPI_Op op = ops[k].op;
      int allowed;
      if (op == MPI_MAX || op == MPI_MIN || op == MPI_SUM || op == MPI_PROD)
        allowed = numeric;
      else if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR)
        allowed = t->logical;
      else
        allowed = t->bitwise;
      if (allowed >= 0) check_op(t, op, ops[k].name, allowed);
    }
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void complex_ops(void) {
  /* SUM and PROD; rank r contributes 1 + (r % 2) i */
  float _Complex f = 1.0f + (float)(rank % 2) * I, fo = 0;
  double _Complex d = 1.0 + (double)(rank % 2) * I, dout = 0;
  long double _Complex l = 1.0L + (long double)(rank % 2) * I, lo = 0;
  double _Complex want_p = 1, want_s = 0;
  for (int r = 0; r < size; ++r) {
    want_p *= 1.0 + (double)(r % 2) * I;
    want_s += 1.0 + (double)(r % 2) * I;
  }
  CHECK_OK(MPI_Allreduce(&f, &fo, 1, MPI_C_FLOAT_COMPLEX, MPI_PROD, MPI_COMM_WORLD));
  CHECK(crealf(fo) == (float)creal(want_p) && cimagf(fo) == (float)cimag(want_p));
  CHECK_OK(MPI_Allreduce(&f, &fo, 1, MPI_C_COMPLEX, MPI_SUM, MPI_COMM_WORLD));
  CHECK(crealf(fo) == (float)creal(want_s) && cimagf(fo) == (float)cimag(want_s));
  CHECK_OK(MPI_Allreduce(&d, &dout, 1, MPI_C_DOUBLE_COMPLEX, MPI_PROD, MPI_COMM_WORLD));
  CHECK(creal(dout) == creal(want_p) && cimag(dout) == cimag(want_p));
  CHECK_OK(MPI_Allreduce(&l, &lo, 1, MPI_C_LONG_DOUBLE_COMPLEX, MPI_PROD, MPI_COMM_WORLD));
  CHECK(creall(lo) == (long double)creal(want_p) && cimagl(lo) == (long double)cimag(want_p));
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK_CLASS(MPI_Allreduce(&d, &dout, 1, MPI_C_DOUBLE_COMPLEX, MPI_MAX, MPI_COMM_WORLD), MPI_ERR_OP);
  CHECK_CLASS(MPI_Allreduce(&d, &dout, 1, MPI_C_DOUBLE_COMPLEX, MPI_LAND, MPI_COMM_WORLD), MPI_ERR_OP);
  CHECK_CLASS(MPI_Allreduce(&d, &dout, 1, MPI_C_DOUBLE_COMPLEX, MPI_MINLOC, MPI_COMM_WORLD), MPI_ERR_OP);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* MINLOC / MAXLOC: values with ties; the lowest index wins a tie. */
static int tie_value(int r) { return (r * 3) % 4; }

#define LOC_CASE(vtype, itype, dt)                                                        \
  do {                                                                                    \
    struct {                                                                              \
      vtype v;                                                                            \
      itype i;                                                                            \
    } in = {(vtype)tie_value(rank), (itype)(rank + 10)}, mn, mx;                          \
    CHECK_OK(MPI_Allreduce(&in, &mn, 1, dt, MPI_MINLOC, MPI_COMM_WORLD));                 \
    CHECK_OK(MPI_Allreduce(&in, &mx, 1, dt, MPI_MAXLOC, MPI_COMM_WORLD));                 \
    int bmin = 0, bmax = 0;                                                               \
    for (int r = 1; r < size; ++r) {                                                      \
      if (tie_value(r) < tie_value(bmin)) bmin = r;                                       \
      if (tie_value(r) > tie_value(bmax)) bmax = r;                                       \
    }                                                                                     \
    if (mn.v != (vtype)tie_value(bmin) || mn.i != (itype)(bmin + 10)) {                   \
      fprintf(stderr, "[rank %d] MINLOC on %s\n", rank, #dt);                             \
      mt_fail(__FILE__, __LINE__, "MINLOC index", (long long)mn.i, (long long)bmin + 10); \
    }                                                                                     \
    if (mx.v != (vtype)tie_value(bmax) || mx.i != (itype)(bmax + 10)) {                   \
      fprintf(stderr, "[rank %d] MAXLOC on %s\n", rank, #dt);                             \
      mt_fail(__FILE__, __LINE__, "MAXLOC index", (long long)mx.i, (long long)bmax + 10); \
    }                                                                                     \
  } while (0)

static void loc_ops(void) {
  LOC_CASE(float, int, MPI_FLOAT_INT);
  LOC_CASE(double, int, MPI_DOUBLE_INT);
  LOC_CASE(long, int, MPI_LONG_INT);
  LOC_CASE(int, int, MPI_2INT);
  LOC_CASE(short, int, MPI_SHORT_INT);
  LOC_CASE(long double, int, MPI_LONG_DOUBLE_INT);
  /* not a pair type */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int a[2] = {1, 2}, b[2];
  CHECK_CLASS(MPI_Allreduce(a, b, 1, MPI_INT, MPI_MAXLOC, MPI_COMM_WORLD), MPI_ERR_OP);
  CHECK_CLASS(MPI_Allreduce(a, b, 1, MPI_2INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void sub_fn(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  for (int i = 0; i < *len; ++i) ((int*)inout)[i] = ((int*)in)[i] - ((int*)inout)[i];
}

static void reduce_local(void) {
  int in[3] = {1, 2, 3}, io[3] = {10, 20, 30};
  CHECK_OK(MPI_Reduce_local(in, io, 3, MPI_INT, MPI_SUM));
  CHECK_EQ(io[0], 11);
  CHECK_EQ(io[2], 33);
  MPI_Op sub;
  MPI_Op_create(sub_fn, 0, &sub);
  CHECK_OK(MPI_Reduce_local(in, io, 3, MPI_INT, sub)); /* inout = in - inout */
  CHECK_EQ(io[0], 1 - 11);
  CHECK_EQ(io[2], 3 - 33);
  MPI_Op_free(&sub);
  /* the buffers must not alias: MPI_ERR_BUFFER, the data untouched; a
   * count of 0 has nothing to alias */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK_CLASS(MPI_Reduce_local(io, io, 3, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
  CHECK_EQ(io[0], 1 - 11);
  CHECK_OK(MPI_Reduce_local(io, io, 0, MPI_INT, MPI_SUM));
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  int c = -1;
  CHECK_OK(MPI_Op_commutative(MPI_SUM, &c));
  CHECK_EQ(c, 1);
  CHECK_OK(MPI_Op_commutative(MPI_MAXLOC, &c));
  CHECK_EQ(c, 1);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  predefined_ops();
  complex_ops();
  loc_ops();
  reduce_local();
  return mt_finish();
}
