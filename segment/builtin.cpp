// The predefined datatypes: one constant table describing each C/C++ type
// as this platform lays it out, and the Datatype objects built from it.
#include <complex>
#include <cstddef>
#include <cwchar>

#include "segment/datatype.hpp"
#include "segment/type_access.hpp"

namespace adi3 {
namespace {

template <class T, class I>
struct Pair {
  T value;
  I index;
};

// Native size/extent/alignment of T; ext32 is the size in the standard's
// external32 table (MPI-4.1 19.3.11), which differs for long and wchar_t.
template <class T>
constexpr BuiltinInfo scalar(const char* name, Scalar s, std::uint16_t ext32, std::uint8_t parts = 1) {
  return BuiltinInfo{
      name, sizeof(T), sizeof(T), alignof(T), ext32, s, parts, Builtin::kNumBuiltins, Builtin::kNumBuiltins, 0};
}

// A MINLOC/MAXLOC pair: the C struct {T value; I index;} with its padding.
template <class T, class I>
constexpr BuiltinInfo pair(const char* name, Builtin first, Builtin second, std::uint16_t ext32) {
  using P = Pair<T, I>;
  return BuiltinInfo{name,
                     static_cast<std::uint16_t>(sizeof(T) + sizeof(I)),
                     sizeof(Pair<T, I>),
                     alignof(Pair<T, I>),
                     ext32,
                     Scalar::kPair,
                     1,
                     first,
                     second,
                     offsetof(P, index)};
}

using S = Scalar;
using B = Builtin;

// Order must follow enum Builtin.
constexpr BuiltinInfo kTable[kNumBuiltins] = {
    scalar<char>("MPI_CHAR", S::kInteger, 1),
    scalar<signed char>("MPI_SIGNED_CHAR", S::kInteger, 1),
    scalar<unsigned char>("MPI_UNSIGNED_CHAR", S::kInteger, 1),
    scalar<short>("MPI_SHORT", S::kInteger, 2),
    scalar<unsigned short>("MPI_UNSIGNED_SHORT", S::kInteger, 2),
    scalar<int>("MPI_INT", S::kInteger, 4),
    scalar<unsigned>("MPI_UNSIGNED", S::kInteger, 4),
    scalar<long>("MPI_LONG", S::kInteger, 4),
    scalar<unsigned long>("MPI_UNSIGNED_LONG", S::kInteger, 4),
    scalar<long long>("MPI_LONG_LONG_INT", S::kInteger, 8),
    scalar<unsigned long long>("MPI_UNSIGNED_LONG_LONG", S::kInteger, 8),
    scalar<float>("MPI_FLOAT", S::kFloat, 4),
    scalar<double>("MPI_DOUBLE", S::kFloat, 8),
    scalar<long double>("MPI_LONG_DOUBLE", S::kLongDouble, 16),
    scalar<wchar_t>("MPI_WCHAR", S::kInteger, 2),
    scalar<bool>("MPI_C_BOOL", S::kOpaque, 1),
    scalar<std::int8_t>("MPI_INT8_T", S::kInteger, 1),
    scalar<std::int16_t>("MPI_INT16_T", S::kInteger, 2),
    scalar<std::int32_t>("MPI_INT32_T", S::kInteger, 4),
    scalar<std::int64_t>("MPI_INT64_T", S::kInteger, 8),
    scalar<std::uint8_t>("MPI_UINT8_T", S::kInteger, 1),
    scalar<std::uint16_t>("MPI_UINT16_T", S::kInteger, 2),
    scalar<std::uint32_t>("MPI_UINT32_T", S::kInteger, 4),
    scalar<std::uint64_t>("MPI_UINT64_T", S::kInteger, 8),
    scalar<std::ptrdiff_t>("MPI_AINT", S::kInteger, 8),
    scalar<std::int64_t>("MPI_OFFSET", S::kInteger, 8),
    scalar<std::int64_t>("MPI_COUNT", S::kInteger, 8),
    scalar<std::complex<float>>("MPI_C_COMPLEX", S::kFloat, 8, 2),
    scalar<std::complex<float>>("MPI_C_FLOAT_COMPLEX", S::kFloat, 8, 2),
    scalar<std::complex<double>>("MPI_C_DOUBLE_COMPLEX", S::kFloat, 16, 2),
    scalar<std::complex<long double>>("MPI_C_LONG_DOUBLE_COMPLEX", S::kLongDouble, 32, 2),
    scalar<unsigned char>("MPI_BYTE", S::kOpaque, 1),
    scalar<unsigned char>("MPI_PACKED", S::kOpaque, 1),
    scalar<bool>("MPI_CXX_BOOL", S::kOpaque, 1),
    scalar<std::complex<float>>("MPI_CXX_FLOAT_COMPLEX", S::kFloat, 8, 2),
    scalar<std::complex<double>>("MPI_CXX_DOUBLE_COMPLEX", S::kFloat, 16, 2),
    scalar<std::complex<long double>>("MPI_CXX_LONG_DOUBLE_COMPLEX", S::kLongDouble, 32, 2),
    pair<float, int>("MPI_FLOAT_INT", B::kFloat, B::kInt, 8),
    pair<double, int>("MPI_DOUBLE_INT", B::kDouble, B::kInt, 12),
    pair<long, int>("MPI_LONG_INT", B::kLong, B::kInt, 8),
    pair<int, int>("MPI_2INT", B::kInt, B::kInt, 8),
    pair<short, int>("MPI_SHORT_INT", B::kShort, B::kInt, 6),
    pair<long double, int>("MPI_LONG_DOUBLE_INT", B::kLongDouble, B::kInt, 20),
};

static_assert(sizeof(long double) == 16, "external32 long double conversion assumes x87 in 16 bytes");

}  // namespace

const BuiltinInfo& builtin_info(Builtin b) { return kTable[static_cast<std::size_t>(b)]; }

namespace detail {
namespace {

// Built once on first use; never modified or freed afterwards.
struct BuiltinTypes {
  Datatype* types[kNumBuiltins];

  BuiltinTypes() {
    // Scalars first: the pair types refer to them.
    for (std::size_t i = 0; i < kNumBuiltins; ++i) {
      if (kTable[i].scalar != Scalar::kPair) types[i] = make(static_cast<Builtin>(i));
    }
    for (std::size_t i = 0; i < kNumBuiltins; ++i) {
      if (kTable[i].scalar == Scalar::kPair) types[i] = make(static_cast<Builtin>(i));
    }
  }

  Datatype* make(Builtin b) {
    const BuiltinInfo& info = builtin_info(b);
    Datatype* t = TypeAccess::make();
    TypeAccess::set_builtin(*t, b, true);
    if (info.scalar == Scalar::kPair) {
      // A pair is the struct {value; index}; the extent comes out padded
      // through the struct alignment rule, as for the C struct.
      TypeAccess::set_shape(*t, TypeAccess::Shape::kStruct);
      TypeAccess::set_blocks(*t, 1, {1, 1}, {0, info.second_offset});
      TypeAccess::add_child(*t, types[static_cast<std::size_t>(info.first)]);
      TypeAccess::add_child(*t, types[static_cast<std::size_t>(info.second)]);
    } else {
      TypeAccess::set_shape(*t, TypeAccess::Shape::kBasic);
    }
    TypeAccess::derive(*t);
    TypeAccess::set_name(*t, info.name);
    TypeAccess::set_committed(*t);
    return t;
  }
};

const BuiltinTypes& builtin_types() {
  static const BuiltinTypes table;
  return table;
}

}  // namespace
}  // namespace detail

const Datatype* Datatype::builtin(Builtin b) { return detail::builtin_types().types[static_cast<std::size_t>(b)]; }

const Datatype* Datatype::byte() { return builtin(Builtin::kByte); }

}  // namespace adi3
