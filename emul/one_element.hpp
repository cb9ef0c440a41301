// One element of a common predefined type combined with a predefined op,
// inline, for the target's short paths (emul/plain.cpp): a fetch_and_op or
// a one-element accumulate. coll::apply takes the same result through
// op_accepts, its dispatch on the type and the kernel's loop, about 70
// instructions for one element; here a switch on the type and one on the
// op. Integer SUM and PROD wrap around as coll's kernels do (computed in
// the unsigned type); MAX and MIN use the same comparisons.
#pragma once
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <cstring>
#include <type_traits>

#include "coll/op.hpp"
#include "segment/builtin.hpp"

namespace adi3::emul {

// The element types taken here (None: coll::apply's).
enum class OneType : uint8_t { None, I32, U32, I64, U64, F32, F64 };

namespace detail {
// OneType per predefined type id, built once at compile time.
constexpr auto kOneTypes = [] {
  static_assert(sizeof(long) == 8 && sizeof(long long) == 8 && sizeof(int) == 4 && sizeof(std::ptrdiff_t) == 8);
  std::array<OneType, kNumBuiltins> t{};
  auto set = [&t](OneType o, std::initializer_list<Builtin> bs) {
    for (Builtin b : bs) t[static_cast<std::size_t>(b)] = o;
  };
  set(OneType::I32, {Builtin::kInt, Builtin::kInt32});
  set(OneType::U32, {Builtin::kUnsigned, Builtin::kUint32});
  set(OneType::I64,
      {Builtin::kLong, Builtin::kLongLong, Builtin::kInt64, Builtin::kAint, Builtin::kOffset, Builtin::kCount});
  set(OneType::U64, {Builtin::kUnsignedLong, Builtin::kUnsignedLongLong, Builtin::kUint64});
  set(OneType::F32, {Builtin::kFloat});
  set(OneType::F64, {Builtin::kDouble});
  return t;
}();
}  // namespace detail

// b's kind here (b < kNumBuiltins).
inline OneType one_type(Builtin b) { return detail::kOneTypes[static_cast<std::size_t>(b)]; }

// Whether op applies to elements of type t, as coll::op_accepts says for
// them: integers take MAX to BXOR, floating types MAX, MIN, SUM and PROD;
// every type REPLACE and NO_OP.
inline bool one_accepts(OneType t, coll::OpKind op) {
  using coll::OpKind;
  if (t == OneType::None) return false;
  if (op == OpKind::Replace || op == OpKind::NoOp) return true;
  return t < OneType::F32 ? op <= OpKind::Bxor : op <= OpKind::Prod;
}

template <class T>
void one_combine(coll::OpKind op, const void* in, char* at) {
  using coll::OpKind;
  T a, v;
  std::memcpy(&a, in, sizeof a);
  std::memcpy(&v, at, sizeof v);
  switch (op) {
    case OpKind::Max:
      v = a > v ? a : v;
      break;
    case OpKind::Min:
      v = a < v ? a : v;
      break;
    case OpKind::Sum:
      if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;  // 32 bits or more: no promotion to int
        v = static_cast<T>(static_cast<U>(a) + static_cast<U>(v));
      } else {
        v = a + v;
      }
      break;
    case OpKind::Prod:
      if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        v = static_cast<T>(static_cast<U>(a) * static_cast<U>(v));
      } else {
        v = a * v;
      }
      break;
    default:
      if constexpr (std::is_integral_v<T>) {
        switch (op) {
          case OpKind::Land:
            v = static_cast<T>(a && v);
            break;
          case OpKind::Lor:
            v = static_cast<T>(a || v);
            break;
          case OpKind::Lxor:
            v = static_cast<T>(!a != !v);
            break;
          case OpKind::Band:
            v = a & v;
            break;
          case OpKind::Bor:
            v = a | v;
            break;
          case OpKind::Bxor:
            v = a ^ v;
            break;
          default:
            return;
        }
        break;
      }
      return;
  }
  // One atomic store (at is aligned: the callers check), as put_bytes
  // stores one element: a target thread that polls this element with
  // atomic loads while the agent combines into it (the unified model)
  // reads the old or the new value and races with nothing.
  std::atomic_ref<T>(*reinterpret_cast<T*>(at)).store(v, std::memory_order_release);
}

// at = in op at for one element of type t at an address aligned to it
// (one_accepts(t, op) holds and op combines: not REPLACE or NO_OP).
inline void one_apply(OneType t, coll::OpKind op, const void* in, char* at) {
  using Combine = void (*)(coll::OpKind, const void*, char*);
  static constexpr Combine kCombine[] = {nullptr,
                                         one_combine<int32_t>,
                                         one_combine<uint32_t>,
                                         one_combine<int64_t>,
                                         one_combine<uint64_t>,
                                         one_combine<float>,
                                         one_combine<double>};
  if (Combine c = kCombine[static_cast<std::size_t>(t)]) c(op, in, at);
}

}  // namespace adi3::emul
