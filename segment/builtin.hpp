// The predefined (named) MPI datatypes: C types, fixed-width integers,
// address/offset/count, C and C++ complex and bool, BYTE, PACKED, and the
// MINLOC/MAXLOC pair types. Each is an immutable constant.
#pragma once
#include <cstddef>
#include <cstdint>

namespace adi3 {

enum class Builtin : std::uint8_t {
  kChar,
  kSignedChar,
  kUnsignedChar,
  kShort,
  kUnsignedShort,
  kInt,
  kUnsigned,
  kLong,
  kUnsignedLong,
  kLongLong,
  kUnsignedLongLong,
  kFloat,
  kDouble,
  kLongDouble,
  kWchar,
  kCBool,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUint8,
  kUint16,
  kUint32,
  kUint64,
  kAint,
  kOffset,
  kCount,
  kCComplex,
  kCFloatComplex,
  kCDoubleComplex,
  kCLongDoubleComplex,
  kByte,
  kPacked,
  kCxxBool,
  kCxxFloatComplex,
  kCxxDoubleComplex,
  kCxxLongDoubleComplex,
  // Pair types for MINLOC/MAXLOC: C structs {value; int index;}.
  kFloatInt,
  kDoubleInt,
  kLongInt,
  k2Int,
  kShortInt,
  kLongDoubleInt,
  kNumBuiltins  // not a type
};

inline constexpr std::size_t kNumBuiltins = static_cast<std::size_t>(Builtin::kNumBuiltins);

// How external32 and other representations treat a basic type's bytes.
enum class Scalar : std::uint8_t {
  kOpaque,      // bytes copied as they are (char, byte, bool, packed)
  kInteger,     // two's complement integer (byte order converted)
  kFloat,       // IEEE binary32 / binary64
  kLongDouble,  // native long double (x87 80-bit on x86-64)
  kPair,        // not basic: a struct of two basic types
};

struct BuiltinInfo {
  const char* name;          // "MPI_INT", for Type_get_name
  std::uint16_t size;        // bytes of data (native)
  std::uint16_t extent;      // native extent (pair types include padding)
  std::uint16_t align;       // native alignment, for the struct epsilon rule
  std::uint16_t ext32_size;  // bytes in the external32 representation
  Scalar scalar;
  std::uint8_t components;  // 2 for complex (each part converted alone), else 1
  // Pair types: the two member types and the second one's offset.
  Builtin first;
  Builtin second;
  std::uint16_t second_offset;
};

// The constant table entry for b (b must not be kNumBuiltins).
const BuiltinInfo& builtin_info(Builtin b);

// True for the types a typemap is made of (everything but the pair types).
inline bool is_basic(Builtin b) { return builtin_info(b).scalar != Scalar::kPair; }

}  // namespace adi3
