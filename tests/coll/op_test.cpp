// Reduction operations: MPI's op/type-class table, the predefined kernels
// against hand-computed values, reduce_local on derived types and user
// ops, and argument errors of the collectives (ErrorClass::Op, Root, Type).
#include <cmath>
#include <complex>

#include "segment/type_create.hpp"
#include "tests/coll/harness.hpp"

namespace adi3::coll::test {
namespace {

ErrorClass op_error(const Op& op, const Datatype* type, bool acc = false, std::string* msg = nullptr) {
  ErrorLog log;
  int e = check_op(log, op, type, acc);
  if (msg) *msg = log.message(e);
  return error_class_of(e);
}

TEST(Op, TypeClassTable) {
  using K = OpKind;
  struct Row {
    Builtin b;
    std::vector<K> ok;
  };
  std::vector<K> arith{K::Max, K::Min, K::Sum, K::Prod};
  std::vector<K> all_int{K::Max, K::Min, K::Sum, K::Prod, K::Land, K::Lor, K::Lxor, K::Band, K::Bor, K::Bxor};
  std::vector<Row> rows{
      {Builtin::kInt, all_int},
      {Builtin::kUnsignedChar, all_int},
      {Builtin::kInt64, all_int},
      // Logical ops on the multi-language integers and every op on MPI_CHAR:
      // extensions MPICH and Open MPI both accept, so programs rely on them.
      {Builtin::kAint, all_int},
      {Builtin::kOffset, all_int},
      {Builtin::kCount, all_int},
      {Builtin::kChar, all_int},
      {Builtin::kWchar, {}},
      {Builtin::kDouble, arith},
      {Builtin::kLongDouble, arith},
      {Builtin::kCBool, {K::Land, K::Lor, K::Lxor}},
      {Builtin::kCDoubleComplex, {K::Sum, K::Prod}},
      {Builtin::kByte, {K::Band, K::Bor, K::Bxor}},
      {Builtin::kPacked, {}},
      {Builtin::k2Int, {K::Maxloc, K::Minloc}},
      {Builtin::kLongDoubleInt, {K::Maxloc, K::Minloc}},
  };
  for (const Row& r : rows) {
    for (int k = 0; k <= static_cast<int>(K::Minloc); ++k) {
      bool want = std::find(r.ok.begin(), r.ok.end(), static_cast<K>(k)) != r.ok.end();
      EXPECT_EQ(op_error(Op(static_cast<K>(k)), B(r.b)) == ErrorClass::Success, want)
          << Op(static_cast<K>(k)).name() << " on " << builtin_info(r.b).name;
    }
    // REPLACE and NO_OP: accumulate only.
    EXPECT_EQ(op_error(Op(K::Replace), B(r.b)), ErrorClass::Op);
    EXPECT_EQ(op_error(Op(K::Replace), B(r.b), true), ErrorClass::Success);
    EXPECT_EQ(op_error(Op(K::NoOp), B(r.b), true), ErrorClass::Success);
  }
}

TEST(Op, ErrorMessagesNameOpAndType) {
  std::string msg;
  EXPECT_EQ(op_error(Op(OpKind::Sum), B(Builtin::k2Int), false, &msg), ErrorClass::Op);
  EXPECT_NE(msg.find("MPI_SUM"), std::string::npos) << msg;
  EXPECT_NE(msg.find("MPI_2INT"), std::string::npos) << msg;
  EXPECT_EQ(op_error(Op(OpKind::Maxloc), B(Builtin::kFloat), false, &msg), ErrorClass::Op);
  EXPECT_NE(msg.find("MPI_MAXLOC"), std::string::npos) << msg;
  EXPECT_NE(msg.find("MPI_FLOAT"), std::string::npos) << msg;
  // Derived types: uniform element types inherit the rules; mixed ones fail.
  Type v(vector_of(B(Builtin::kDouble), 3, 1, 2));
  EXPECT_EQ(op_error(Op(OpKind::Sum), v), ErrorClass::Success);
  EXPECT_EQ(op_error(Op(OpKind::Band), v, false, &msg), ErrorClass::Op);
  EXPECT_NE(msg.find("MPI_DOUBLE"), std::string::npos) << msg;
  Type pairs(vector_of(B(Builtin::kDoubleInt), 2, 1, 3));
  EXPECT_EQ(op_error(Op(OpKind::Minloc), pairs), ErrorClass::Success);
  int lens[2] = {1, 1};
  std::ptrdiff_t disps[2] = {0, 8};
  const Datatype* kinds[2] = {B(Builtin::kInt), B(Builtin::kDouble)};
  Datatype* mixed = nullptr;
  ASSERT_EQ(type_struct(2, lens, disps, kinds, &mixed), ErrorClass::Success);
  Type m(mixed);
  EXPECT_EQ(op_error(Op(OpKind::Sum), m, false, &msg), ErrorClass::Op);
  EXPECT_NE(msg.find("mixed"), std::string::npos) << msg;
  EXPECT_EQ(op_error(Op::user([](const void*, void*, int, const Datatype*) {}, false), m), ErrorClass::Success);
}

template <class T>
std::vector<T> run_op(OpKind op, Builtin b, std::vector<T> in, std::vector<T> inout) {
  apply(op, b, in.data(), inout.data(), in.size(), sizeof(T));
  return inout;
}

// The vectorized loop bodies against the same kernel one element at a
// time (the scalar tail), for every op each type accepts, on 133 elements
// from an odd offset (unaligned vectors, a remainder); complex products
// also against std::complex.
TEST(Op, VectorKernelsMatchScalar) {
  const Builtin types[] = {
      Builtin::kSignedChar, Builtin::kUnsignedChar, Builtin::kShort,         Builtin::kUnsignedShort,
      Builtin::kInt,        Builtin::kUnsigned,     Builtin::kLong,          Builtin::kUnsignedLongLong,
      Builtin::kInt64,      Builtin::kFloat,        Builtin::kDouble,        Builtin::kLongDouble,
      Builtin::kCBool,      Builtin::kByte,         Builtin::kCFloatComplex, Builtin::kCDoubleComplex,
      Builtin::k2Int,       Builtin::kDoubleInt,    Builtin::kFloatInt};
  constexpr std::size_t n = 133, off = 1;
  for (Builtin b : types) {
    const std::size_t sz = builtin_info(b).extent;
    const bool fp = type_class(b) == TypeClass::Floating || type_class(b) == TypeClass::Complex;
    std::vector<unsigned char> in((n + off) * sz), inout((n + off) * sz);
    for (std::size_t i = 0; i < in.size(); ++i) {
      in[i] = static_cast<unsigned char>(key(i, 1) % 7);
      inout[i] = static_cast<unsigned char>(key(i, 2) % 7);
    }
    if (fp || type_class(b) == TypeClass::Pair) {  // small exact values, no NaN bit patterns
      for (std::size_t i = 0; i < n + off; ++i) {
        for (std::size_t h = 0; h < sz; h += (b == Builtin::kFloat || b == Builtin::kCFloatComplex) ? 4 : 8) {
          if (b == Builtin::kLongDouble) {
            long double x = static_cast<long double>(key(i, h, 3) % 9) - 4,
                        y = static_cast<long double>(key(i, h, 4) % 9);
            std::memcpy(&in[i * sz], &x, sizeof x);
            std::memcpy(&inout[i * sz], &y, sizeof y);
            break;
          }
          if (b == Builtin::kFloat || b == Builtin::kCFloatComplex || b == Builtin::kFloatInt) {
            float x = static_cast<float>(key(i, h, 3) % 9) - 4, y = static_cast<float>(key(i, h, 4) % 9) - 4;
            std::memcpy(&in[i * sz + h], &x, 4);
            std::memcpy(&inout[i * sz + h], &y, 4);
            if (b == Builtin::kFloatInt) break;
          } else if (b == Builtin::k2Int) {
            int x = static_cast<int>(key(i, h, 3) % 5), y = static_cast<int>(key(i, h, 4) % 5);
            std::memcpy(&in[i * sz], &x, 4);
            std::memcpy(&inout[i * sz], &y, 4);
            break;
          } else {
            double x = static_cast<double>(key(i, h, 3) % 9) - 4, y = static_cast<double>(key(i, h, 4) % 9) - 4;
            std::memcpy(&in[i * sz + h], &x, 8);
            std::memcpy(&inout[i * sz + h], &y, 8);
            if (b == Builtin::kDoubleInt) break;
          }
        }
      }
    }
    for (int k = 0; k <= static_cast<int>(OpKind::Minloc); ++k) {
      const auto op = static_cast<OpKind>(k);
      if (!op_accepts(op, b)) continue;
      std::vector<unsigned char> vec = inout, one = inout;
      apply(op, b, &in[off * sz], &vec[off * sz], n, sz);
      for (std::size_t i = off; i < n + off; ++i) apply(op, b, &in[i * sz], &one[i * sz], 1, sz);
      EXPECT_EQ(vec, one) << Op(op).name() << " on " << builtin_info(b).name;
      if (b == Builtin::kCDoubleComplex && op == OpKind::Prod) {
        for (std::size_t i = off; i < n + off; ++i) {
          std::complex<double> x, y, z;
          std::memcpy(&x, &in[i * sz], sz);
          std::memcpy(&y, &inout[i * sz], sz);
          std::memcpy(&z, &vec[i * sz], sz);
          EXPECT_EQ(z, x * y) << i;
        }
      }
    }
  }
}

TEST(Op, IntegerKernels) {
  std::vector<int> a{5, -3, 0, 7}, b{2, -8, 4, 7};
  EXPECT_EQ(run_op(OpKind::Max, Builtin::kInt, a, b), (std::vector<int>{5, -3, 4, 7}));
  EXPECT_EQ(run_op(OpKind::Min, Builtin::kInt, a, b), (std::vector<int>{2, -8, 0, 7}));
  EXPECT_EQ(run_op(OpKind::Sum, Builtin::kInt, a, b), (std::vector<int>{7, -11, 4, 14}));
  EXPECT_EQ(run_op(OpKind::Prod, Builtin::kInt, a, b), (std::vector<int>{10, 24, 0, 49}));
  EXPECT_EQ(run_op(OpKind::Land, Builtin::kInt, a, b), (std::vector<int>{1, 1, 0, 1}));
  EXPECT_EQ(run_op(OpKind::Lor, Builtin::kInt, a, b), (std::vector<int>{1, 1, 1, 1}));
  EXPECT_EQ(run_op(OpKind::Lxor, Builtin::kInt, a, b), (std::vector<int>{0, 0, 1, 0}));
  EXPECT_EQ(run_op(OpKind::Band, Builtin::kInt, a, b), (std::vector<int>{5 & 2, -3 & -8, 0, 7}));
  EXPECT_EQ(run_op(OpKind::Bor, Builtin::kInt, a, b), (std::vector<int>{5 | 2, -3 | -8, 4, 7}));
  EXPECT_EQ(run_op(OpKind::Bxor, Builtin::kInt, a, b), (std::vector<int>{5 ^ 2, -3 ^ -8, 4, 0}));
  // Wrap-around instead of undefined overflow.
  EXPECT_EQ(run_op<signed char>(OpKind::Sum, Builtin::kSignedChar, {100}, {100}), (std::vector<signed char>{-56}));
  EXPECT_EQ(run_op<int>(OpKind::Prod, Builtin::kInt, {1 << 30}, {4}), (std::vector<int>{0}));
  EXPECT_EQ(run_op<std::uint64_t>(OpKind::Max, Builtin::kUint64, {~0ull}, {1}), (std::vector<std::uint64_t>{~0ull}));
  EXPECT_EQ(run_op<unsigned char>(OpKind::Bxor, Builtin::kByte, {0xF0}, {0xFF}), (std::vector<unsigned char>{0x0F}));
}

TEST(Op, FloatingComplexLogical) {
  EXPECT_EQ(run_op<double>(OpKind::Sum, Builtin::kDouble, {1.5, -2}, {2.25, 2}), (std::vector<double>{3.75, 0}));
  EXPECT_EQ(run_op<float>(OpKind::Min, Builtin::kFloat, {1.5f, -2}, {2.25f, 2}), (std::vector<float>{1.5f, -2}));
  EXPECT_EQ(run_op<long double>(OpKind::Prod, Builtin::kLongDouble, {1.5L}, {4.0L}), (std::vector<long double>{6.0L}));
  using C = std::complex<double>;
  EXPECT_EQ(run_op<C>(OpKind::Prod, Builtin::kCDoubleComplex, {C(1, 2)}, {C(3, 4)}), (std::vector<C>{C(-5, 10)}));
  EXPECT_EQ(run_op<C>(OpKind::Sum, Builtin::kCxxDoubleComplex, {C(1, 2)}, {C(3, 4)}), (std::vector<C>{C(4, 6)}));
  bool x[3] = {true, true, false}, y[3] = {true, false, false};
  apply(OpKind::Land, Builtin::kCBool, x, y, 3, 1);
  EXPECT_TRUE(y[0] && !y[1] && !y[2]);
  bool p[2] = {true, false}, q[2] = {true, true};
  apply(OpKind::Lxor, Builtin::kCxxBool, p, q, 2, 1);
  EXPECT_TRUE(!q[0] && q[1]);
}

TEST(Op, MaxlocMinlocPairs) {
  struct DI {
    double v;
    int i;
  };
  DI a[3] = {{1.0, 5}, {2.0, 9}, {3.0, 1}}, b[3] = {{2.0, 3}, {2.0, 4}, {1.0, 0}};
  apply(OpKind::Maxloc, Builtin::kDoubleInt, a, b, 3, sizeof(DI));
  EXPECT_EQ(b[0].v, 2.0);
  EXPECT_EQ(b[0].i, 3);
  EXPECT_EQ(b[1].i, 4);  // tie: smaller index
  EXPECT_EQ(b[2].v, 3.0);
  EXPECT_EQ(b[2].i, 1);
  struct SI {
    short v;
    int i;
  };
  SI c[2] = {{3, 7}, {-1, 2}}, d[2] = {{3, 6}, {0, 1}};
  apply(OpKind::Minloc, Builtin::kShortInt, c, d, 2, sizeof(SI));
  EXPECT_EQ(d[0].i, 6);
  EXPECT_EQ(d[1].v, -1);
  EXPECT_EQ(d[1].i, 2);
  // Packed SHORT_INT: 6 bytes each, index right after the short.
  unsigned char pc[12] = {}, pd[12] = {};
  short s1 = 4, s2 = 9;
  int i1 = 1, i2 = 2;
  std::memcpy(pc, &s1, 2);
  std::memcpy(pc + 2, &i1, 4);
  std::memcpy(pd, &s2, 2);
  std::memcpy(pd + 2, &i2, 4);
  apply(OpKind::Maxloc, Builtin::kShortInt, pc, pd, 1, 6);
  short rs;
  int ri;
  std::memcpy(&rs, pd, 2);
  std::memcpy(&ri, pd + 2, 4);
  EXPECT_EQ(rs, 9);
  EXPECT_EQ(ri, 2);
  struct LDI {
    long double v;
    int i;
  };
  LDI e[1] = {{7.0L, 3}}, f[1] = {{7.0L, 8}};
  apply(OpKind::Minloc, Builtin::kLongDoubleInt, e, f, 1, sizeof(LDI));
  EXPECT_EQ(f[0].i, 3);
}

TEST(Op, ReduceLocalDerivedAndUser) {
  ErrorLog log;
  // Strided ints: element = ints 0 and 3 of a 4-int slot; the rest stays.
  Type v(vector_of(B(Builtin::kInt), 2, 1, 3));
  std::vector<int> in{1, 100, 100, 2, 3, 100, 100, 4}, io{10, -1, -1, 20, 30, -1, -1, 40};
  ASSERT_EQ(reduce_local(log, in.data(), io.data(), 2, v, Op(OpKind::Sum)), 0);
  EXPECT_EQ(io, (std::vector<int>{11, -1, -1, 22, 33, -1, -1, 44}));
  // Contiguous with true_lb > 0.
  Type s(shifted_of(B(Builtin::kInt), 2));
  std::vector<int> a{-5, 1, 2}, b{-7, 5, 0};
  ASSERT_EQ(reduce_local(log, a.data(), b.data(), 1, s, Op(OpKind::Max)), 0);
  EXPECT_EQ(b, (std::vector<int>{-7, 5, 2}));
  // User op: gets the caller's count and type.
  int calls = 0;
  Op user = Op::user(
      [&](const void* i, void* o, int count, const Datatype* t) {
        ++calls;
        EXPECT_EQ(count, 2);
        EXPECT_EQ(t, v.get());
        for (int k = 0; k < count; ++k) {
          static_cast<int*>(o)[4 * k] -= static_cast<const int*>(i)[4 * k];
        }
      },
      false);
  ASSERT_EQ(reduce_local(log, in.data(), io.data(), 2, v, user), 0);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(io[0], 10);
  EXPECT_EQ(io[4], 30);
  EXPECT_FALSE(user.commutative());
  EXPECT_EQ(error_class_of(reduce_local(log, in.data(), io.data(), 1, B(Builtin::k2Int), Op(OpKind::Sum))),
            ErrorClass::Op);
}

TEST(Op, CollectiveArgumentErrors) {
  run(3, [&](Device& dev, const Comm& c) {
    int x[4] = {}, y[4] = {};
    // Every rank fails before sending anything, so nobody waits.
    EXPECT_EQ(error_class_of(allreduce(dev, x, y, 2, B(Builtin::k2Int), Op(OpKind::Sum), c)), ErrorClass::Op);
    EXPECT_EQ(error_class_of(allreduce(dev, x, y, 2, B(Builtin::kInt), Op(OpKind::Replace), c)), ErrorClass::Op);
    EXPECT_EQ(error_class_of(reduce(dev, x, y, 2, B(Builtin::kInt), Op(OpKind::Maxloc), 0, c)), ErrorClass::Op);
    EXPECT_EQ(error_class_of(scan(dev, x, y, 2, B(Builtin::kFloat), Op(OpKind::Band), c)), ErrorClass::Op);
    EXPECT_EQ(error_class_of(bcast(dev, x, 1, B(Builtin::kInt), 3, c)), ErrorClass::Root);
    EXPECT_EQ(error_class_of(gather(dev, x, 1, B(Builtin::kInt), y, 1, B(Builtin::kInt), -1, c)), ErrorClass::Root);
    EXPECT_EQ(error_class_of(bcast(dev, x, 1, nullptr, 0, c)), ErrorClass::Type);
    EXPECT_EQ(error_class_of(bcast(dev, kInPlace, 1, B(Builtin::kInt), 0, c)), ErrorClass::Buffer);
    Sequence seq;
    Request* r = reinterpret_cast<Request*>(&seq);
    EXPECT_EQ(error_class_of(iallreduce(dev, x, y, 1, B(Builtin::kCBool), Op(OpKind::Sum), c, seq, &r)),
              ErrorClass::Op);
    EXPECT_EQ(r, nullptr);
    // Displacements whose byte offsets overflow: ERR_COUNT naming them.
    Datatype* wide = nullptr;  // an int in an extent of 2^40 bytes
    ASSERT_EQ(type_resized(B(Builtin::kInt), 0, std::ptrdiff_t{1} << 40, &wide), ErrorClass::Success);
    ASSERT_EQ(type_commit(wide), ErrorClass::Success);
    const int counts[3] = {1, 1, 1}, displs[3] = {0, 1, 1 << 24};  // 2^64 bytes in
    int e = alltoallv(dev, x, counts, displs, wide, y, counts, displs, wide, c);
    EXPECT_EQ(error_class_of(e), ErrorClass::Count);
    EXPECT_NE(dev.errors().message(e).find("displacement 16777216 of a datatype of extent 1099511627776"),
              std::string::npos)
        << dev.errors().message(e);
    e = allgatherv(dev, x, 1, wide, y, counts, displs, wide, c);
    EXPECT_EQ(error_class_of(e), ErrorClass::Count) << dev.errors().message(e);
    const int big[3] = {1, 1 << 24, 1};  // 2^24 elements spanning 2^64 bytes
    e = allgatherv(dev, x, 1, wide, y, big, counts, wide, c);
    EXPECT_EQ(error_class_of(e), ErrorClass::Count) << dev.errors().message(e);
    EXPECT_NE(dev.errors().message(e).find("16777216 elements"), std::string::npos) << dev.errors().message(e);
    ASSERT_EQ(type_free(&wide), ErrorClass::Success);
    // The communicator still works afterwards.
    x[0] = c.rank + 1;
    ASSERT_EQ(allreduce(dev, x, y, 1, B(Builtin::kInt), Op(OpKind::Sum), c), 0);
    EXPECT_EQ(y[0], 6);
  });
}

}  // namespace
}  // namespace adi3::coll::test
