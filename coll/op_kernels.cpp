// The predefined reduction kernels: one loop per (op, C type) pair, chosen
// by a switch on the predefined type, plus MPI's table of which ops accept
// which type classes. Every loop is a plain element-wise loop the compiler
// vectorizes (no per-element call or branch; checked with
// -fopt-info-vec); on x86-64 each kernel is built for AVX-512, AVX2 and
// the baseline, picked once at load time (the baseline alone has 16-byte
// vectors). Long double stays scalar (x87).
#include <complex>
#include <cstring>
#include <type_traits>

#include "coll/op.hpp"

// Function multi-versioning (GCC's ifunc clones). Not in sanitized builds:
// their resolvers run before the sanitizer runtime is up.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !ADI3_SANITIZED
#define ADI3_KERNEL __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define ADI3_KERNEL
#endif

namespace adi3::coll {
namespace {

using B = Builtin;

// Integer SUM/PROD wrap around (as the hardware does) instead of being
// undefined behaviour on signed overflow: compute in the unsigned type.
template <class T>
T wrap_add(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}
template <class T>
T wrap_mul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  // Promote small types to unsigned int first so the product cannot
  // overflow a signed int after integral promotion.
  using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
  return static_cast<T>(static_cast<U>(static_cast<W>(static_cast<U>(a)) * static_cast<W>(static_cast<U>(b))));
}

template <class T>
ADI3_KERNEL void integer(OpKind op, const void* in, void* inout, std::size_t n) {
  const T* a = static_cast<const T*>(in);
  T* b = static_cast<T*>(inout);
  switch (op) {
    case OpKind::Max:
      for (std::size_t i = 0; i < n; ++i) b[i] = a[i] > b[i] ? a[i] : b[i];
      break;
    case OpKind::Min:
      for (std::size_t i = 0; i < n; ++i) b[i] = a[i] < b[i] ? a[i] : b[i];
      break;
    case OpKind::Sum:
      for (std::size_t i = 0; i < n; ++i) b[i] = wrap_add(a[i], b[i]);
      break;
    case OpKind::Prod:
      for (std::size_t i = 0; i < n; ++i) b[i] = wrap_mul(a[i], b[i]);
      break;
    case OpKind::Land:
      for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<T>(a[i] && b[i]);
      break;
    case OpKind::Lor:
      for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<T>(a[i] || b[i]);
      break;
    case OpKind::Lxor:
      for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<T>(!a[i] != !b[i]);
      break;
    case OpKind::Band:
      for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<T>(a[i] & b[i]);
      break;
    case OpKind::Bor:
      for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<T>(a[i] | b[i]);
      break;
    case OpKind::Bxor:
      for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<T>(a[i] ^ b[i]);
      break;
    default:
      break;
  }
}

template <class T>
ADI3_KERNEL void floating(OpKind op, const void* in, void* inout, std::size_t n) {
  const T* a = static_cast<const T*>(in);
  T* b = static_cast<T*>(inout);
  switch (op) {
    case OpKind::Max:
      for (std::size_t i = 0; i < n; ++i) b[i] = a[i] > b[i] ? a[i] : b[i];
      break;
    case OpKind::Min:
      for (std::size_t i = 0; i < n; ++i) b[i] = a[i] < b[i] ? a[i] : b[i];
      break;
    case OpKind::Sum:
      for (std::size_t i = 0; i < n; ++i) b[i] = a[i] + b[i];
      break;
    case OpKind::Prod:
      for (std::size_t i = 0; i < n; ++i) b[i] = a[i] * b[i];
      break;
    default:
      break;
  }
}

// Complex values as (re, im) pairs of T. The product is the textbook
// formula (as MPICH and Open MPI compute it): std::complex's operator*
// calls __muldc3 per element for C's infinity rules, which no loop
// vectorizes.
template <class T>
ADI3_KERNEL void complex(OpKind op, const void* in, void* inout, std::size_t n) {
  const T* a = static_cast<const T*>(in);
  T* b = static_cast<T*>(inout);
  if (op == OpKind::Sum) {
    for (std::size_t i = 0; i < 2 * n; ++i) b[i] = a[i] + b[i];
  } else if (op == OpKind::Prod) {
    for (std::size_t i = 0; i < n; ++i) {
      T ar = a[2 * i], ai = a[2 * i + 1], br = b[2 * i], bi = b[2 * i + 1];
      b[2 * i] = ar * br - ai * bi;
      b[2 * i + 1] = ar * bi + ai * br;
    }
  }
}

// Logical ops on C/C++ bool, read as bytes so any nonzero byte is true.
ADI3_KERNEL void logical(OpKind op, const void* in, void* inout, std::size_t n) {
  const auto* a = static_cast<const unsigned char*>(in);
  auto* b = static_cast<unsigned char*>(inout);
  switch (op) {
    case OpKind::Land:
      for (std::size_t i = 0; i < n; ++i) b[i] = a[i] && b[i];
      break;
    case OpKind::Lor:
      for (std::size_t i = 0; i < n; ++i) b[i] = a[i] || b[i];
      break;
    case OpKind::Lxor:
      for (std::size_t i = 0; i < n; ++i) b[i] = !a[i] != !b[i];
      break;
    default:
      break;
  }
}

// MAXLOC/MINLOC on {V value; int index} pairs, `stride` bytes apart with the
// index `at` bytes in (packed pairs have no padding, so both are loaded
// with memcpy). Ties keep the smaller index, as MPI specifies.
// MAXLOC/MINLOC on {V value; int index} pairs, `stride` bytes apart with the
// index `at` bytes in (packed pairs have no padding, so both are loaded
// with memcpy). Ties keep the smaller index, as MPI specifies. Branch-free
// selects: the results depend on data the branch predictor cannot guess.
template <class V, bool Max>
ADI3_KERNEL void pair_loc(const void* in, void* inout, std::size_t n, std::size_t stride, std::size_t at) {
  const auto* a = static_cast<const unsigned char*>(in);
  auto* b = static_cast<unsigned char*>(inout);
  for (std::size_t i = 0; i < n; ++i, a += stride, b += stride) {
    V av, bv;
    int ai, bi;
    std::memcpy(&av, a, sizeof av);
    std::memcpy(&bv, b, sizeof bv);
    std::memcpy(&ai, a + at, sizeof ai);
    std::memcpy(&bi, b + at, sizeof bi);
    const bool take = Max ? av > bv : av < bv;
    const bool tie = av == bv;
    const V v = take ? av : bv;
    const int low = ai < bi ? ai : bi;
    const int idx = take ? ai : (tie ? low : bi);
    std::memcpy(b, &v, sizeof v);
    std::memcpy(b + at, &idx, sizeof idx);
  }
}

template <class V>
void pair(Builtin b, OpKind op, const void* in, void* inout, std::size_t n, std::size_t stride) {
  const BuiltinInfo& info = builtin_info(b);
  // Packed pairs put the index right after the value; in memory it sits at
  // the C struct's offset. The two differ only where padding precedes it.
  std::size_t at = stride == info.extent ? info.second_offset : sizeof(V);
  if (op == OpKind::Maxloc) {
    pair_loc<V, true>(in, inout, n, stride, at);
  } else if (op == OpKind::Minloc) {
    pair_loc<V, false>(in, inout, n, stride, at);
  }
}

}  // namespace

TypeClass type_class(Builtin b) {
  switch (b) {
    case B::kChar:  // a C integer to MPICH and Open MPI, so programs use it as one
    case B::kSignedChar:
    case B::kUnsignedChar:
    case B::kShort:
    case B::kUnsignedShort:
    case B::kInt:
    case B::kUnsigned:
    case B::kLong:
    case B::kUnsignedLong:
    case B::kLongLong:
    case B::kUnsignedLongLong:
    case B::kInt8:
    case B::kInt16:
    case B::kInt32:
    case B::kInt64:
    case B::kUint8:
    case B::kUint16:
    case B::kUint32:
    case B::kUint64:
      return TypeClass::CInteger;
    case B::kAint:
    case B::kOffset:
    case B::kCount:
      return TypeClass::MultiLanguage;
    case B::kFloat:
    case B::kDouble:
    case B::kLongDouble:
      return TypeClass::Floating;
    case B::kCBool:
    case B::kCxxBool:
      return TypeClass::Logical;
    case B::kCComplex:
    case B::kCFloatComplex:
    case B::kCDoubleComplex:
    case B::kCLongDoubleComplex:
    case B::kCxxFloatComplex:
    case B::kCxxDoubleComplex:
    case B::kCxxLongDoubleComplex:
      return TypeClass::Complex;
    case B::kByte:
      return TypeClass::Byte;
    case B::kFloatInt:
    case B::kDoubleInt:
    case B::kLongInt:
    case B::k2Int:
    case B::kShortInt:
    case B::kLongDoubleInt:
      return TypeClass::Pair;
    default:  // WCHAR (characters, not numbers) and PACKED
      return TypeClass::None;
  }
}

bool op_accepts(OpKind op, Builtin b) {
  TypeClass c = type_class(b);
  switch (op) {
    case OpKind::Max:
    case OpKind::Min:
      return c == TypeClass::CInteger || c == TypeClass::Floating || c == TypeClass::MultiLanguage;
    case OpKind::Sum:
    case OpKind::Prod:
      return c == TypeClass::CInteger || c == TypeClass::Floating || c == TypeClass::Complex ||
             c == TypeClass::MultiLanguage;
    case OpKind::Land:
    case OpKind::Lor:
    case OpKind::Lxor:
      // Logical ops on MPI_AINT/OFFSET/COUNT are an extension MPICH and Open MPI share.
      return c == TypeClass::CInteger || c == TypeClass::Logical || c == TypeClass::MultiLanguage;
    case OpKind::Band:
    case OpKind::Bor:
    case OpKind::Bxor:
      return c == TypeClass::CInteger || c == TypeClass::Byte || c == TypeClass::MultiLanguage;
    case OpKind::Maxloc:
    case OpKind::Minloc:
      return c == TypeClass::Pair;
    default:  // REPLACE, NO_OP, user ops
      return true;
  }
}

Kernel kernel_of(Builtin b) {
  switch (b) {
    case B::kChar:
      return integer<char>;
    case B::kSignedChar:
    case B::kInt8:
      return integer<signed char>;
    case B::kUnsignedChar:
    case B::kUint8:
    case B::kByte:
    case B::kPacked:
      return integer<unsigned char>;
    case B::kShort:
    case B::kInt16:
      return integer<short>;
    case B::kUnsignedShort:
    case B::kUint16:
      return integer<unsigned short>;
    case B::kInt:
    case B::kInt32:
      return integer<int>;
    case B::kUnsigned:
    case B::kUint32:
      return integer<unsigned>;
    case B::kWchar:
      return integer<wchar_t>;
    case B::kLong:
      return integer<long>;
    case B::kUnsignedLong:
      return integer<unsigned long>;
    case B::kLongLong:
      return integer<long long>;
    case B::kUnsignedLongLong:
      return integer<unsigned long long>;
    case B::kInt64:
    case B::kOffset:
    case B::kCount:
      return integer<std::int64_t>;
    case B::kUint64:
      return integer<std::uint64_t>;
    case B::kAint:
      return integer<std::ptrdiff_t>;
    case B::kFloat:
      return floating<float>;
    case B::kDouble:
      return floating<double>;
    case B::kLongDouble:
      return floating<long double>;
    case B::kCBool:
    case B::kCxxBool:
      return logical;
    case B::kCComplex:
    case B::kCFloatComplex:
    case B::kCxxFloatComplex:
      return complex<float>;
    case B::kCDoubleComplex:
    case B::kCxxDoubleComplex:
      return complex<double>;
    case B::kCLongDoubleComplex:
    case B::kCxxLongDoubleComplex:
      return complex<long double>;
    default:  // pairs (pair_kernel) and types without arithmetic
      return nullptr;
  }
}

void apply(OpKind op, Builtin b, const void* in, void* inout, std::size_t n, std::size_t stride) {
  if (op == OpKind::NoOp || n == 0) return;
  if (op == OpKind::Replace) {
    std::memmove(inout, in, n * stride);
    return;
  }
  if (Kernel k = kernel_of(b)) {
    k(op, in, inout, n);
    return;
  }
  switch (b) {
    case B::kFloatInt:
      pair<float>(b, op, in, inout, n, stride);
      break;
    case B::kDoubleInt:
      pair<double>(b, op, in, inout, n, stride);
      break;
    case B::kLongInt:
      pair<long>(b, op, in, inout, n, stride);
      break;
    case B::k2Int:
      pair<int>(b, op, in, inout, n, stride);
      break;
    case B::kShortInt:
      pair<short>(b, op, in, inout, n, stride);
      break;
    case B::kLongDoubleInt:
      pair<long double>(b, op, in, inout, n, stride);
      break;
    default:
      break;
  }
}

}  // namespace adi3::coll
