// Envelope/contents, element counts and names.
#include "segment/type_query.hpp"

#include <algorithm>
#include <cstring>

#include "segment/copy_ops.hpp"
#include "segment/type_access.hpp"
#include "segment/type_build.hpp"

namespace adi3 {

using detail::TypeAccess;

ErrorClass type_get_envelope(const Datatype* t, Envelope* env) {
  if (!t) return ErrorClass::Type;
  if (!env) return ErrorClass::Arg;
  env->combiner = t->combiner();
  env->num_integers = static_cast<int>(TypeAccess::ints(*t).size());
  env->num_addresses = static_cast<int>(TypeAccess::addrs(*t).size());
  env->num_datatypes = static_cast<int>(TypeAccess::types(*t).size());
  return ErrorClass::Success;
}

ErrorClass type_get_contents(const Datatype* t, int max_integers, int max_addresses, int max_datatypes, int* integers,
                             std::ptrdiff_t* addresses, const Datatype** types) {
  if (!t) return ErrorClass::Type;
  if (t->combiner() == Combiner::kNamed) return ErrorClass::Arg;
  const auto& ints = TypeAccess::ints(*t);
  const auto& addrs = TypeAccess::addrs(*t);
  const auto& tys = TypeAccess::types(*t);
  if (static_cast<std::size_t>(std::max(max_integers, 0)) < ints.size() ||
      static_cast<std::size_t>(std::max(max_addresses, 0)) < addrs.size() ||
      static_cast<std::size_t>(std::max(max_datatypes, 0)) < tys.size()) {
    return ErrorClass::Arg;
  }
  if ((!ints.empty() && !integers) || (!addrs.empty() && !addresses) || (!tys.empty() && !types)) {
    return ErrorClass::Arg;
  }
  std::copy(ints.begin(), ints.end(), integers);
  std::copy(addrs.begin(), addrs.end(), addresses);
  for (std::size_t i = 0; i < tys.size(); ++i) {
    tys[i]->retain();  // no-op for predefined types
    types[i] = tys[i];
  }
  return ErrorClass::Success;
}

ErrorClass type_elements_bytes(const Datatype* t, long long elements, std::size_t* bytes) {
  if (!t) return ErrorClass::Type;
  if (!bytes || elements < 0) return ErrorClass::Arg;
  auto per = static_cast<unsigned long long>(t->basic_count());
  if (per == 0 || t->size() == 0) {
    *bytes = 0;  // no elements to count: any byte count reads back as 0
    return ErrorClass::Success;
  }
  auto n = static_cast<unsigned long long>(elements);
  std::size_t whole = n / per, rest = n % per;
  *bytes = whole * t->size();
  if (rest == 0) return ErrorClass::Success;
  std::uint32_t bs = TypeAccess::basic_size(*t);
  if (bs != 0 && bs != UINT32_MAX) {
    *bytes += rest * bs;
    return ErrorClass::Success;
  }
  // Mixed element sizes: walk one instance until `rest` elements are seen.
  detail::ElemBytesOp op;
  op.want = rest;
  ErrorClass e = detail::no_throw([&] {
    auto prog = t->program_for(detail::native_typed());
    detail::Cursor cur;
    cur.reset(prog->root, 0, prog->size, prog->depth);
    cur.seek(0);
    cur.walk(op, t->size());
    return ErrorClass::Success;
  });
  if (e != ErrorClass::Success) return e;
  *bytes += op.bytes;
  return ErrorClass::Success;
}

ErrorClass type_get_elements(const Datatype* t, std::size_t bytes, long long* count) {
  if (!t) return ErrorClass::Type;
  if (!count) return ErrorClass::Arg;
  if (t->size() == 0) {
    *count = 0;
    return ErrorClass::Success;
  }
  std::size_t whole = bytes / t->size(), rest = bytes % t->size();
  auto n = static_cast<long long>(whole * t->basic_count());
  if (rest) {
    std::uint32_t bs = TypeAccess::basic_size(*t);
    if (bs != 0 && bs != UINT32_MAX) {
      // Every basic element has the same size: no need to walk.
      if (rest % bs) {
        *count = kUndefined;
        return ErrorClass::Success;
      }
      n += static_cast<long long>(rest / bs);
    } else {
      // Walk the typemap's first `rest` bytes counting elements.
      detail::CountOp op;
      ErrorClass e = detail::no_throw([&] {
        auto prog = t->program_for(detail::native_typed());
        detail::Cursor cur;
        cur.reset(prog->root, 0, prog->size, prog->depth);
        cur.seek(0);
        cur.walk(op, rest);
        return ErrorClass::Success;
      });
      if (e != ErrorClass::Success) return e;
      if (op.partial) {
        *count = kUndefined;
        return ErrorClass::Success;
      }
      n += static_cast<long long>(op.n);
    }
  }
  *count = n;
  return ErrorClass::Success;
}

ErrorClass type_get_count(const Datatype* t, std::size_t bytes, long long* count) {
  if (!t) return ErrorClass::Type;
  if (!count) return ErrorClass::Arg;
  if (t->size() == 0) {
    *count = 0;
    return ErrorClass::Success;
  }
  *count = bytes % t->size() ? kUndefined : static_cast<long long>(bytes / t->size());
  return ErrorClass::Success;
}

ErrorClass type_set_name(Datatype* t, const char* name) {
  if (!t || t->is_predefined()) return ErrorClass::Type;
  if (!name) return ErrorClass::Arg;
  std::size_t n = strnlen(name, 127);
  t->set_name(std::string(name, n));
  return ErrorClass::Success;
}

ErrorClass type_get_name(const Datatype* t, std::string* name) {
  if (!t) return ErrorClass::Type;
  if (!name) return ErrorClass::Arg;
  *name = t->name();
  return ErrorClass::Success;
}

}  // namespace adi3
