// Internal: building blocks shared by the type constructors.
#pragma once
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

#include "adi3/error.hpp"
#include "segment/datatype.hpp"

namespace adi3::detail {

// Runs a constructor body; running out of memory is an error result.
template <class F>
ErrorClass no_throw(F&& f) noexcept {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return ErrorClass::NoMem;
  }
}

// The one reference to a type under construction. A constructor that
// returns early (bad argument, overflow) or runs out of memory part way
// (std::bad_alloc out of a vector, add_child, set_contents, commit) drops
// it, and with it the half-built type and its references to other types.
struct ReleaseType {
  void operator()(const Datatype* t) const noexcept { t->release(); }
};
using Building = std::unique_ptr<Datatype, ReleaseType>;

// A fresh, empty type owned by the caller.
Building make_type();

// Derives t's properties and hands it out, or destroys it (overflow).
ErrorClass publish(Building t, Datatype** out);
// v * unit without overflow.
bool scale(std::int64_t v, std::ptrdiff_t unit, std::ptrdiff_t* r);

// Layouts with one reference each, already derived (null on overflow);
// the caller sets contents and publishes them, or lets them go.
Building new_vector(std::int64_t count, std::int64_t blocklen, std::ptrdiff_t stride_bytes, const Datatype* old);
Building new_indexed(std::vector<std::int64_t> blocklens, std::vector<std::ptrdiff_t> disps, const Datatype* old);
Building new_resized(const Datatype* old, std::ptrdiff_t lb, std::ptrdiff_t extent);

}  // namespace adi3::detail
