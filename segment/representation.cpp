// The native and external32 representations.
#include "segment/representation.hpp"

#include <cstdint>
#include <cstring>

namespace adi3 {
namespace {

class Native final : public Representation {
 public:
  explicit Native(bool typed) : typed_(typed) {}
  const char* name() const override { return "native"; }
  bool is_identity(Builtin) const override { return !typed_; }
  std::size_t stream_size(Builtin b) const override { return builtin_info(b).size; }
  void encode(Builtin b, const void* mem, void* stream, std::size_t n) const override {
    std::memcpy(stream, mem, n * builtin_info(b).size);
  }
  void decode(Builtin b, const void* stream, void* mem, std::size_t n) const override {
    std::memcpy(mem, stream, n * builtin_info(b).size);
  }

 private:
  bool typed_;
};

// Byte-reverses n items of W bytes (little-endian host <-> big-endian).
template <std::size_t W>
void swap_items(const unsigned char* in, unsigned char* out, std::size_t n) {
  for (std::size_t k = 0; k < n; ++k, in += W, out += W) {
    if constexpr (W == 2) {
      std::uint16_t v;
      std::memcpy(&v, in, 2);
      v = __builtin_bswap16(v);
      std::memcpy(out, &v, 2);
    } else if constexpr (W == 4) {
      std::uint32_t v;
      std::memcpy(&v, in, 4);
      v = __builtin_bswap32(v);
      std::memcpy(out, &v, 4);
    } else if constexpr (W == 8) {
      std::uint64_t v;
      std::memcpy(&v, in, 8);
      v = __builtin_bswap64(v);
      std::memcpy(out, &v, 8);
    } else {
      for (std::size_t i = 0; i < W; ++i) out[i] = in[W - 1 - i];
    }
  }
}

void swap_any(std::size_t width, const void* in, void* out, std::size_t n) {
  auto* i = static_cast<const unsigned char*>(in);
  auto* o = static_cast<unsigned char*>(out);
  switch (width) {
    case 1:
      std::memmove(o, i, n);
      break;
    case 2:
      swap_items<2>(i, o, n);
      break;
    case 4:
      swap_items<4>(i, o, n);
      break;
    case 8:
      swap_items<8>(i, o, n);
      break;
    default:
      swap_items<16>(i, o, n);
      break;
  }
}

// x87 extended (64-bit significand with explicit integer bit, 15-bit
// exponent, in the low 10 of 16 bytes) <-> IEEE binary128 big-endian. Both
// use the same exponent bias, so only the significand moves: the 63
// fraction bits become the top of binary128's 112 (the rest is zero), and
// back they are truncated.
void x87_to_quad(const unsigned char* in, unsigned char* out) {
  std::uint64_t mant;
  std::uint16_t se;
  std::memcpy(&mant, in, 8);
  std::memcpy(&se, in + 8, 2);
  std::uint64_t frac = mant & 0x7fffffffffffffffULL;
  std::uint64_t hi = (static_cast<std::uint64_t>(se) << 48) | (frac >> 15);
  std::uint64_t lo = frac << 49;
  hi = __builtin_bswap64(hi);
  lo = __builtin_bswap64(lo);
  std::memcpy(out, &hi, 8);
  std::memcpy(out + 8, &lo, 8);
}

void quad_to_x87(const unsigned char* in, unsigned char* out) {
  std::uint64_t hi, lo;
  std::memcpy(&hi, in, 8);
  std::memcpy(&lo, in + 8, 8);
  hi = __builtin_bswap64(hi);
  lo = __builtin_bswap64(lo);
  auto se = static_cast<std::uint16_t>(hi >> 48);
  std::uint64_t frac = ((hi & 0xffffffffffffULL) << 15) | (lo >> 49);
  bool normal = (se & 0x7fff) != 0;  // x87 keeps the integer bit explicit
  std::uint64_t mant = frac | (normal ? 0x8000000000000000ULL : 0);
  std::memset(out, 0, 16);
  std::memcpy(out, &mant, 8);
  std::memcpy(out + 8, &se, 2);
}

static_assert(sizeof(long) == 8 && sizeof(wchar_t) == 4 && sizeof(long double) == 16 && sizeof(bool) == 1,
              "external32 here assumes LP64 native sizes");

// Integers the external32 table makes narrower than LP64 memory (MPI_LONG
// and MPI_UNSIGNED_LONG are 4 bytes, MPI_WCHAR 2): the low bytes, big-endian.
// Values that do not fit are truncated, as a C conversion would do.
void narrow(std::size_t mem_w, std::size_t ext_w, const unsigned char* in, unsigned char* out, std::size_t n) {
  for (std::size_t k = 0; k < n; ++k, in += mem_w, out += ext_w) {
    for (std::size_t i = 0; i < ext_w; ++i) out[i] = in[ext_w - 1 - i];  // little-endian host
  }
}

// And back, sign-extending the signed ones (MPI_LONG).
void widen(std::size_t mem_w, std::size_t ext_w, bool is_signed, const unsigned char* in, unsigned char* out,
           std::size_t n) {
  for (std::size_t k = 0; k < n; ++k, in += ext_w, out += mem_w) {
    unsigned char fill = is_signed && (in[0] & 0x80) ? 0xff : 0;
    for (std::size_t i = 0; i < ext_w; ++i) out[i] = in[ext_w - 1 - i];
    for (std::size_t i = ext_w; i < mem_w; ++i) out[i] = fill;
  }
}

class External32 final : public Representation {
 public:
  const char* name() const override { return "external32"; }
  bool is_identity(Builtin b) const override {
    const BuiltinInfo& i = builtin_info(b);
    return i.scalar == Scalar::kOpaque || i.size == i.components;  // one-byte parts
  }
  std::size_t stream_size(Builtin b) const override { return builtin_info(b).ext32_size; }

  void encode(Builtin b, const void* mem, void* stream, std::size_t n) const override {
    const BuiltinInfo& i = builtin_info(b);
    if (i.scalar == Scalar::kLongDouble) {
      auto* in = static_cast<const unsigned char*>(mem);
      auto* out = static_cast<unsigned char*>(stream);
      for (std::size_t k = 0; k < n * i.components; ++k) x87_to_quad(in + 16 * k, out + 16 * k);
    } else if (i.scalar == Scalar::kOpaque) {
      std::memmove(stream, mem, n * i.size);
    } else if (i.ext32_size < i.size) {
      narrow(i.size, i.ext32_size, static_cast<const unsigned char*>(mem), static_cast<unsigned char*>(stream), n);
    } else {
      swap_any(i.size / i.components, mem, stream, n * i.components);
    }
  }

  void decode(Builtin b, const void* stream, void* mem, std::size_t n) const override {
    const BuiltinInfo& i = builtin_info(b);
    if (i.scalar == Scalar::kLongDouble) {
      auto* in = static_cast<const unsigned char*>(stream);
      auto* out = static_cast<unsigned char*>(mem);
      for (std::size_t k = 0; k < n * i.components; ++k) quad_to_x87(in + 16 * k, out + 16 * k);
    } else if (i.scalar == Scalar::kOpaque) {
      std::memmove(mem, stream, n * i.size);
    } else if (i.ext32_size < i.size) {
      widen(i.size, i.ext32_size, b == Builtin::kLong, static_cast<const unsigned char*>(stream),
            static_cast<unsigned char*>(mem), n);
    } else {
      swap_any(i.size / i.components, stream, mem, n * i.components);
    }
  }
};

}  // namespace

const Representation& Representation::native() {
  static const Native rep(false);
  return rep;
}

const Representation& Representation::external32() {
  static const External32 rep;
  return rep;
}

const Representation* Representation::find(std::string_view datarep) {
  if (datarep == "native") return &native();
  if (datarep == "external32") return &external32();
  return nullptr;
}

namespace detail {
const Representation& native_typed() {
  static const Native rep(true);
  return rep;
}
}  // namespace detail

}  // namespace adi3
