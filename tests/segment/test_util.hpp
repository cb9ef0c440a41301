// Helpers shared by the segment tests.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "reference.hpp"
#include "segment/datatype.hpp"
#include "segment/type_create.hpp"

namespace adi3::test {

// Owns one reference to a derived type (predefined ones are ignored).
class TypeRef {
 public:
  TypeRef() = default;
  explicit TypeRef(Datatype* t) : t_(t) {}
  TypeRef(TypeRef&& o) noexcept : t_(std::exchange(o.t_, nullptr)) {}
  TypeRef& operator=(TypeRef&& o) noexcept {
    std::swap(t_, o.t_);
    return *this;
  }
  ~TypeRef() {
    if (t_ && !t_->is_predefined()) t_->release();
  }
  Datatype* get() const { return t_; }
  Datatype* operator->() const { return t_; }
  Datatype** out() { return &t_; }

 private:
  Datatype* t_ = nullptr;
};

inline const Datatype* B(Builtin b) { return Datatype::builtin(b); }

// (offset, type) pairs of a typemap, for comparing with the standard's examples.
using Pairs = std::vector<std::pair<std::ptrdiff_t, Builtin>>;
inline Pairs pairs(const Datatype* t) {
  Pairs p;
  for (const ref::Entry& e : ref::flatten(t).entries) p.emplace_back(e.off, e.type);
  return p;
}

// Packs the whole of (buf, count, t) through a Segment.
std::vector<unsigned char> pack_all(const void* buf, std::size_t count, const Datatype* t);

}  // namespace adi3::test
