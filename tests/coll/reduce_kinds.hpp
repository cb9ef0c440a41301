// The (type, op) combinations the reduction tests run: predefined ops on
// predefined, shifted, strided and pair types, and user ops (one
// non-commutative) on contiguous and strided layouts. Each comes with a
// generator of a rank's packed input and a serial reference (reduce_local
// folded in rank order).
#pragma once
#include <complex>
#include <memory>

#include "tests/coll/harness.hpp"

namespace adi3::coll::test {

// An affine map x -> a*x + b on uint32 (wrapping); a op b = "a, then b",
// which is associative but not commutative.
inline void affine(const void* in, void* inout, int count, const Datatype* type) {
  std::ptrdiff_t ext = type->extent();
  std::ptrdiff_t off_b = ext == 8 ? 4 : 8;  // contiguous pair, or strided one
  auto* i = static_cast<const std::byte*>(in);
  auto* o = static_cast<std::byte*>(inout);
  for (int k = 0; k < count; ++k, i += ext, o += ext) {
    std::uint32_t a1, b1, a2, b2;
    std::memcpy(&a1, i, 4);
    std::memcpy(&b1, i + off_b, 4);
    std::memcpy(&a2, o, 4);
    std::memcpy(&b2, o + off_b, 4);
    std::uint32_t a = a1 * a2, b = a2 * b1 + b2;
    std::memcpy(o, &a, 4);
    std::memcpy(o + off_b, &b, 4);
  }
}

// A commutative user sum over the strided int pair (ints at 0 and 12).
inline void strided_sum(const void* in, void* inout, int count, const Datatype* type) {
  std::ptrdiff_t ext = type->extent();
  auto* i = static_cast<const std::byte*>(in);
  auto* o = static_cast<std::byte*>(inout);
  for (int k = 0; k < count; ++k, i += ext, o += ext) {
    for (std::ptrdiff_t at : {std::ptrdiff_t{0}, std::ptrdiff_t{12}}) {
      int x, y;
      std::memcpy(&x, i + at, 4);
      std::memcpy(&y, o + at, 4);
      y += x;
      std::memcpy(o + at, &y, 4);
    }
  }
}

// a op b = a: associative, not commutative; on a predefined type, so the
// paths for predefined types meet a non-commutative op too.
inline void take_left(const void* in, void* inout, int count, const Datatype* type) {
  std::memcpy(inout, in, static_cast<std::size_t>(count) * static_cast<std::size_t>(type->extent()));
}

enum class Elem { Int, Double, DoubleInt, ShortInt, Bool, Complex, U32 };

struct Kind {
  std::string name;
  const Datatype* type;
  Op op;
  Elem elem;
};

// Packed input of `rank` for count elements of k.type.
inline std::vector<std::byte> input(const Kind& k, std::size_t count, int rank, int salt) {
  std::size_t bytes = count * k.type->size();
  std::vector<std::byte> v(bytes);
  std::size_t i = 0;
  auto put = [&](const void* p, std::size_t n) {
    std::memcpy(v.data() + i, p, n);
    i += n;
  };
  for (std::size_t e = 0; i < bytes; ++e) {
    std::uint64_t r = key(rank, e, static_cast<std::uint64_t>(salt));
    switch (k.elem) {
      case Elem::Int: {
        int x = static_cast<int>(r % 2001) - 1000;
        put(&x, 4);
        break;
      }
      case Elem::Double: {
        double x = static_cast<double>(r % 2001) - 1000;
        put(&x, 8);
        break;
      }
      case Elem::DoubleInt: {
        double x = static_cast<double>(r % 4);
        int j = static_cast<int>((r >> 8) % 10);
        put(&x, 8);
        put(&j, 4);
        break;
      }
      case Elem::ShortInt: {
        short x = static_cast<short>(r % 4);
        int j = static_cast<int>((r >> 8) % 10);
        put(&x, 2);
        put(&j, 4);
        break;
      }
      case Elem::Bool: {
        bool x = (r % 3) == 0;
        put(&x, 1);
        break;
      }
      case Elem::Complex: {
        std::complex<double> x(static_cast<double>(r % 5) - 2, static_cast<double>((r >> 8) % 5) - 2);
        put(&x, 16);
        break;
      }
      case Elem::U32: {
        auto x = static_cast<std::uint32_t>(r) | (e % 2 ? 0u : 1u);
        put(&x, 4);
        break;
      }
    }
  }
  return v;
}

// The fold x_from op ... op x_to (inclusive) as a typed buffer.
inline Typed fold(const Kind& k, std::size_t count, int from, int to, int salt) {
  Typed acc(k.type, count);
  acc.set(input(k, count, from, salt));
  ErrorLog log;
  for (int r = from + 1; r <= to; ++r) {
    Typed x(k.type, count);
    x.set(input(k, count, r, salt));
    EXPECT_EQ(reduce_local(log, acc.ptr(), x.ptr(), count, k.type, k.op), 0);
    acc = std::move(x);
  }
  return acc;
}

// The types and kinds, built once per test (before the rank threads).
struct Kinds {
  Type ivec{vector_of(B(Builtin::kInt), 2, 1, 3)};
  Type ishift{shifted_of(B(Builtin::kInt), 2)};
  Type dvec{vector_of(B(Builtin::kDouble), 3, 1, 2)};
  Type divec{vector_of(B(Builtin::kDoubleInt), 2, 1, 2)};
  Type sicontig{contiguous_of(B(Builtin::kShortInt), 3)};
  Type aff{contiguous_of(B(Builtin::kUint32), 2)};
  Type affvec{vector_of(B(Builtin::kUint32), 2, 1, 2)};
  std::vector<Kind> all;

  Kinds() {
    all = {
        {"int sum", B(Builtin::kInt), Op(OpKind::Sum), Elem::Int},
        {"shifted int max", ishift, Op(OpKind::Max), Elem::Int},
        {"strided int prod", ivec, Op(OpKind::Prod), Elem::Int},
        {"strided int bxor", ivec, Op(OpKind::Bxor), Elem::Int},
        {"double sum", B(Builtin::kDouble), Op(OpKind::Sum), Elem::Double},
        {"strided double min", dvec, Op(OpKind::Min), Elem::Double},
        {"double_int maxloc", B(Builtin::kDoubleInt), Op(OpKind::Maxloc), Elem::DoubleInt},
        {"strided double_int minloc", divec, Op(OpKind::Minloc), Elem::DoubleInt},
        {"short_int maxloc", B(Builtin::kShortInt), Op(OpKind::Maxloc), Elem::ShortInt},
        {"contiguous short_int minloc", sicontig, Op(OpKind::Minloc), Elem::ShortInt},
        {"bool lor", B(Builtin::kCBool), Op(OpKind::Lor), Elem::Bool},
        {"complex sum", B(Builtin::kCDoubleComplex), Op(OpKind::Sum), Elem::Complex},
        {"user affine (non-commutative)", aff, Op::user(affine, false), Elem::U32},
        {"user affine strided (non-commutative)", affvec, Op::user(affine, false), Elem::U32},
        {"user strided sum (commutative)", ivec, Op::user(strided_sum, true), Elem::Int},
        {"user take-left int (non-commutative)", B(Builtin::kInt), Op::user(take_left, false), Elem::Int},
    };
  }
};

}  // namespace adi3::coll::test
