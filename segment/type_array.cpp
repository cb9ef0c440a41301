// Subarray and darray: built from vector / indexed / resized pieces as the
// standard defines them, then wrapped so the envelope reports the
// original combiner and arguments.
#include <vector>

#include "segment/type_access.hpp"
#include "segment/type_build.hpp"
#include "segment/type_create.hpp"

namespace adi3 {

using detail::TypeAccess;

namespace {

// Dimensions from fastest-varying to slowest.
std::vector<int> fastest_first(int ndims, int order) {
  std::vector<int> dims;
  for (int k = 0; k < ndims; ++k) dims.push_back(order == kOrderFortran ? k : ndims - 1 - k);
  return dims;
}

// Holds the one reference to each intermediate until the end (the new type
// holds its own references to the pieces it is built of).
struct Pieces {
  std::vector<detail::Building> owned;
  Datatype* keep(detail::Building t) {
    if (!t) return nullptr;
    owned.push_back(std::move(t));  // on bad_alloc, t is released
    return owned.back().get();
  }
};

// Finishes `t` (a fresh resized piece, not in `p`) as the user's type.
ErrorClass finish(detail::Building t, Combiner c, std::vector<int> ints, const Datatype* old, Datatype** out) {
  TypeAccess::set_contents(*t, c, std::move(ints), {}, {old});
  return detail::publish(std::move(t), out);
}

}  // namespace

static ErrorClass type_subarray_impl(int ndims, const int* sizes, const int* subsizes, const int* starts, int order,
                                     const Datatype* old, Datatype** out) {
  if (!out) return ErrorClass::Arg;
  if (!old) return ErrorClass::Type;
  if (ndims < 1) return ErrorClass::Dims;
  if (!sizes || !subsizes || !starts || (order != kOrderC && order != kOrderFortran)) return ErrorClass::Arg;
  for (int d = 0; d < ndims; ++d) {
    if (sizes[d] < 1 || subsizes[d] < 0 || starts[d] < 0 || subsizes[d] > sizes[d] ||
        starts[d] > sizes[d] - subsizes[d]) {
      return ErrorClass::Arg;
    }
  }
  Pieces p;
  const Datatype* cur = old;
  std::ptrdiff_t unit = old->extent(), offset = 0, term;
  bool first = true;
  for (int d : fastest_first(ndims, order)) {
    Datatype* t =
        p.keep(first ? detail::new_vector(1, subsizes[d], 0, cur) : detail::new_vector(subsizes[d], 1, unit, cur));
    if (!t || !detail::scale(starts[d], unit, &term) || __builtin_add_overflow(offset, term, &offset) ||
        !detail::scale(sizes[d], unit, &unit)) {
      return ErrorClass::Arg;
    }
    cur = t;
    first = false;
  }
  Datatype* placed = p.keep(detail::new_indexed({1}, {offset}, cur));
  detail::Building t = placed ? detail::new_resized(placed, 0, unit) : nullptr;
  if (!t) return ErrorClass::Arg;
  std::vector<int> ints{ndims};
  ints.insert(ints.end(), sizes, sizes + ndims);
  ints.insert(ints.end(), subsizes, subsizes + ndims);
  ints.insert(ints.end(), starts, starts + ndims);
  ints.push_back(order);
  return finish(std::move(t), Combiner::kSubarray, std::move(ints), old, out);
}

namespace {

// The (start, length) runs of indices of dimension g that process
// coordinate r of p owns.
bool distribute(int distrib, int darg, int g, int p, int r, std::vector<std::int64_t>* lens,
                std::vector<std::int64_t>* starts) {
  std::int64_t b;
  switch (distrib) {
    case kDistributeNone:
      if (p != 1) return false;
      lens->push_back(g);
      starts->push_back(0);
      return true;
    case kDistributeBlock:
      b = darg == kDistributeDfltDarg ? (static_cast<std::int64_t>(g) + p - 1) / p : darg;
      if (b < 1 || b * p < g) return false;
      if (b * r < g) {
        lens->push_back(std::min<std::int64_t>(b, g - b * r));
        starts->push_back(b * r);
      }
      return true;
    case kDistributeCyclic:
      b = darg == kDistributeDfltDarg ? 1 : darg;
      if (b < 1) return false;
      for (std::int64_t s = b * r; s < g; s += b * p) {
        lens->push_back(std::min<std::int64_t>(b, g - s));
        starts->push_back(s);
      }
      return true;
    default:
      return false;
  }
}

}  // namespace

static ErrorClass type_darray_impl(int size, int rank, int ndims, const int* gsizes, const int* distribs,
                                   const int* dargs, const int* psizes, int order, const Datatype* old,
                                   Datatype** out) {
  if (!out) return ErrorClass::Arg;
  if (!old) return ErrorClass::Type;
  if (ndims < 1) return ErrorClass::Dims;
  if (size < 1 || rank < 0 || rank >= size) return ErrorClass::Arg;
  if (!gsizes || !distribs || !dargs || !psizes || (order != kOrderC && order != kOrderFortran)) {
    return ErrorClass::Arg;
  }
  std::int64_t procs = 1;
  for (int d = 0; d < ndims; ++d) {
    if (gsizes[d] < 1 || psizes[d] < 1) return ErrorClass::Arg;
    procs *= psizes[d];
    if (procs > size) return ErrorClass::Dims;
  }
  if (procs != size) return ErrorClass::Dims;
  // The process grid is row-major whatever the array order.
  std::vector<int> coord(static_cast<std::size_t>(ndims));
  for (int d = ndims - 1, r = rank; d >= 0; --d) {
    coord[static_cast<std::size_t>(d)] = r % psizes[d];
    r /= psizes[d];
  }
  Pieces p;
  const Datatype* cur = old;
  std::ptrdiff_t unit = old->extent();
  detail::Building last;
  for (int d : fastest_first(ndims, order)) {
    std::vector<std::int64_t> lens, starts;
    if (!distribute(distribs[d], dargs[d], gsizes[d], psizes[d], coord[static_cast<std::size_t>(d)], &lens, &starts)) {
      return ErrorClass::Arg;
    }
    std::vector<std::ptrdiff_t> disps(starts.size());
    for (std::size_t i = 0; i < starts.size(); ++i) {
      if (!detail::scale(starts[i], unit, &disps[i])) return ErrorClass::Arg;
    }
    Datatype* idx = p.keep(detail::new_indexed(std::move(lens), std::move(disps), cur));
    if (!idx || !detail::scale(gsizes[d], unit, &unit)) return ErrorClass::Arg;
    // Each dimension spans its whole global extent, so the next one steps
    // over full rows.
    // The piece of the previous dimension stays alive through `idx`.
    if (last) p.keep(std::move(last));
    last = detail::new_resized(idx, 0, unit);
    if (!last) return ErrorClass::Arg;
    cur = last.get();
  }
  // `last` becomes the user's type
  std::vector<int> ints{size, rank, ndims};
  ints.insert(ints.end(), gsizes, gsizes + ndims);
  ints.insert(ints.end(), distribs, distribs + ndims);
  ints.insert(ints.end(), dargs, dargs + ndims);
  ints.insert(ints.end(), psizes, psizes + ndims);
  ints.push_back(order);
  return finish(std::move(last), Combiner::kDarray, std::move(ints), old, out);
}

// Public entry points: allocation failure becomes NoMem, never an exception.
ErrorClass type_subarray(int ndims, const int* sizes, const int* subsizes, const int* starts, int order,
                         const Datatype* old, Datatype** out) {
  return detail::no_throw([&] { return type_subarray_impl(ndims, sizes, subsizes, starts, order, old, out); });
}

ErrorClass type_darray(int size, int rank, int ndims, const int* gsizes, const int* distribs, const int* dargs,
                       const int* psizes, int order, const Datatype* old, Datatype** out) {
  return detail::no_throw(
      [&] { return type_darray_impl(size, rank, ndims, gsizes, distribs, dargs, psizes, order, old, out); });
}

}  // namespace adi3
