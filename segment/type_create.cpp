// The basic type constructors: validate, record the envelope/contents as
// given, describe the layout in bytes, derive the properties.
#include "segment/type_create.hpp"

#include <vector>

#include "segment/type_access.hpp"
#include "segment/type_build.hpp"

namespace adi3 {

using detail::TypeAccess;
using Shape = TypeAccess::Shape;
using detail::Building;

namespace detail {

Building make_type() { return Building(TypeAccess::make()); }

ErrorClass publish(Building t, Datatype** out) {
  if (!t || !TypeAccess::derive(*t)) return ErrorClass::Arg;
  *out = t.release();
  return ErrorClass::Success;
}

// Derived now, so the caller can read its extent; null on overflow.
Building derived(Building t) {
  if (!TypeAccess::derive(*t)) t.reset();
  return t;
}

bool scale(std::int64_t v, std::ptrdiff_t unit, std::ptrdiff_t* r) { return !__builtin_mul_overflow(v, unit, r); }

Building new_vector(std::int64_t count, std::int64_t bl, std::ptrdiff_t stride, const Datatype* old) {
  Building t = make_type();
  TypeAccess::set_shape(*t, Shape::kVector);
  TypeAccess::set_vector(*t, count, bl, stride);
  TypeAccess::add_child(*t, old);
  return derived(std::move(t));
}

Building new_indexed(std::vector<std::int64_t> bls, std::vector<std::ptrdiff_t> disps, const Datatype* old) {
  Building t = make_type();
  TypeAccess::set_shape(*t, Shape::kIndexed);
  TypeAccess::set_blocks(*t, 0, std::move(bls), std::move(disps));
  TypeAccess::add_child(*t, old);
  return derived(std::move(t));
}

Building new_resized(const Datatype* old, std::ptrdiff_t lb, std::ptrdiff_t extent) {
  Building t = make_type();
  TypeAccess::set_shape(*t, Shape::kResized);
  TypeAccess::set_resized(*t, lb, extent);
  TypeAccess::add_child(*t, old);
  return derived(std::move(t));
}

}  // namespace detail

using detail::publish;
using detail::scale;

namespace {

ErrorClass check_old(const Datatype* old, Datatype** out) {
  if (!out) return ErrorClass::Arg;
  if (!old) return ErrorClass::Type;
  return ErrorClass::Success;
}

// Blocklengths must be >= 0; copies them.
bool take_blocklengths(int count, const int* bls, std::vector<std::int64_t>* v) {
  if (count > 0 && !bls) return false;
  v->assign(bls, bls + count);
  for (std::int64_t b : *v) {
    if (b < 0) return false;
  }
  return true;
}

}  // namespace

static ErrorClass type_contiguous_impl(int count, const Datatype* old, Datatype** out) {
  if (ErrorClass e = check_old(old, out); e != ErrorClass::Success) return e;
  if (count < 0) return ErrorClass::Count;
  Building t = detail::new_vector(1, count, 0, old);
  if (!t) return ErrorClass::Arg;
  TypeAccess::set_contents(*t, Combiner::kContiguous, {count}, {}, {old});
  return publish(std::move(t), out);
}

static ErrorClass type_vector_impl(int count, int blocklength, int stride, const Datatype* old, Datatype** out) {
  if (ErrorClass e = check_old(old, out); e != ErrorClass::Success) return e;
  if (count < 0) return ErrorClass::Count;
  if (blocklength < 0) return ErrorClass::Arg;
  std::ptrdiff_t bytes;
  if (!scale(stride, old->extent(), &bytes)) return ErrorClass::Arg;
  Building t = detail::new_vector(count, blocklength, bytes, old);
  if (!t) return ErrorClass::Arg;
  TypeAccess::set_contents(*t, Combiner::kVector, {count, blocklength, stride}, {}, {old});
  return publish(std::move(t), out);
}

static ErrorClass type_hvector_impl(int count, int blocklength, std::ptrdiff_t stride, const Datatype* old,
                                    Datatype** out) {
  if (ErrorClass e = check_old(old, out); e != ErrorClass::Success) return e;
  if (count < 0) return ErrorClass::Count;
  if (blocklength < 0) return ErrorClass::Arg;
  Building t = detail::new_vector(count, blocklength, stride, old);
  if (!t) return ErrorClass::Arg;
  TypeAccess::set_contents(*t, Combiner::kHvector, {count, blocklength}, {stride}, {old});
  return publish(std::move(t), out);
}

static ErrorClass type_indexed_impl(int count, const int* blocklengths, const int* displacements, const Datatype* old,
                                    Datatype** out) {
  if (ErrorClass e = check_old(old, out); e != ErrorClass::Success) return e;
  if (count < 0) return ErrorClass::Count;
  std::vector<std::int64_t> bls;
  if (!take_blocklengths(count, blocklengths, &bls) || (count > 0 && !displacements)) return ErrorClass::Arg;
  std::vector<std::ptrdiff_t> disps(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    if (!scale(displacements[i], old->extent(), &disps[static_cast<std::size_t>(i)])) return ErrorClass::Arg;
  }
  std::vector<int> ints{count};
  ints.insert(ints.end(), blocklengths, blocklengths + count);
  ints.insert(ints.end(), displacements, displacements + count);
  Building t = detail::new_indexed(std::move(bls), std::move(disps), old);
  if (!t) return ErrorClass::Arg;
  TypeAccess::set_contents(*t, Combiner::kIndexed, std::move(ints), {}, {old});
  return publish(std::move(t), out);
}

static ErrorClass type_hindexed_impl(int count, const int* blocklengths, const std::ptrdiff_t* displacements,
                                     const Datatype* old, Datatype** out) {
  if (ErrorClass e = check_old(old, out); e != ErrorClass::Success) return e;
  if (count < 0) return ErrorClass::Count;
  std::vector<std::int64_t> bls;
  if (!take_blocklengths(count, blocklengths, &bls) || (count > 0 && !displacements)) return ErrorClass::Arg;
  std::vector<std::ptrdiff_t> disps(displacements, displacements + count);
  std::vector<int> ints{count};
  ints.insert(ints.end(), blocklengths, blocklengths + count);
  Building t = detail::new_indexed(std::move(bls), disps, old);
  if (!t) return ErrorClass::Arg;
  TypeAccess::set_contents(*t, Combiner::kHindexed, std::move(ints), std::move(disps), {old});
  return publish(std::move(t), out);
}

static ErrorClass type_indexed_block_impl(int count, int blocklength, const int* displacements, const Datatype* old,
                                          Datatype** out) {
  if (ErrorClass e = check_old(old, out); e != ErrorClass::Success) return e;
  if (count < 0) return ErrorClass::Count;
  if (blocklength < 0 || (count > 0 && !displacements)) return ErrorClass::Arg;
  std::vector<std::ptrdiff_t> disps(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    if (!scale(displacements[i], old->extent(), &disps[static_cast<std::size_t>(i)])) return ErrorClass::Arg;
  }
  std::vector<int> ints{count, blocklength};
  ints.insert(ints.end(), displacements, displacements + count);
  Building t = detail::make_type();
  TypeAccess::set_shape(*t, Shape::kIndexed);
  TypeAccess::set_blocks(*t, blocklength, {}, std::move(disps));
  TypeAccess::add_child(*t, old);
  TypeAccess::set_contents(*t, Combiner::kIndexedBlock, std::move(ints), {}, {old});
  return publish(std::move(t), out);
}

static ErrorClass type_hindexed_block_impl(int count, int blocklength, const std::ptrdiff_t* displacements,
                                           const Datatype* old, Datatype** out) {
  if (ErrorClass e = check_old(old, out); e != ErrorClass::Success) return e;
  if (count < 0) return ErrorClass::Count;
  if (blocklength < 0 || (count > 0 && !displacements)) return ErrorClass::Arg;
  std::vector<std::ptrdiff_t> disps(displacements, displacements + count);
  Building t = detail::make_type();
  TypeAccess::set_shape(*t, Shape::kIndexed);
  TypeAccess::set_blocks(*t, blocklength, {}, disps);
  TypeAccess::add_child(*t, old);
  TypeAccess::set_contents(*t, Combiner::kHindexedBlock, {count, blocklength}, std::move(disps), {old});
  return publish(std::move(t), out);
}

static ErrorClass type_struct_impl(int count, const int* blocklengths, const std::ptrdiff_t* displacements,
                                   const Datatype* const* types, Datatype** out) {
  if (!out) return ErrorClass::Arg;
  if (count < 0) return ErrorClass::Count;
  std::vector<std::int64_t> bls;
  if (!take_blocklengths(count, blocklengths, &bls) || (count > 0 && !displacements)) return ErrorClass::Arg;
  if (count > 0 && !types) return ErrorClass::Type;
  for (int i = 0; i < count; ++i) {
    if (!types[i]) return ErrorClass::Type;
  }
  std::vector<std::ptrdiff_t> disps(displacements, displacements + count);
  std::vector<const Datatype*> tv(types, types + count);
  std::vector<int> ints{count};
  ints.insert(ints.end(), blocklengths, blocklengths + count);
  Building t = detail::make_type();
  TypeAccess::set_shape(*t, Shape::kStruct);
  TypeAccess::set_blocks(*t, 0, std::move(bls), disps);
  for (const Datatype* c : tv) TypeAccess::add_child(*t, c);
  TypeAccess::set_contents(*t, Combiner::kStruct, std::move(ints), std::move(disps), std::move(tv));
  return publish(std::move(t), out);
}

static ErrorClass type_resized_impl(const Datatype* old, std::ptrdiff_t lb, std::ptrdiff_t extent, Datatype** out) {
  if (ErrorClass e = check_old(old, out); e != ErrorClass::Success) return e;
  Building t = detail::new_resized(old, lb, extent);
  if (!t) return ErrorClass::Arg;
  TypeAccess::set_contents(*t, Combiner::kResized, {}, {lb, extent}, {old});
  return publish(std::move(t), out);
}

static ErrorClass type_dup_impl(const Datatype* old, Datatype** out) {
  if (ErrorClass e = check_old(old, out); e != ErrorClass::Success) return e;
  // One copy of old: same typemap, bounds and stickiness.
  Building t = detail::new_vector(1, 1, 0, old);
  if (!t) return ErrorClass::Arg;
  TypeAccess::set_contents(*t, Combiner::kDup, {}, {}, {old});
  // dup keeps the committed state; commit compiles (allocates), so it runs
  // while the new type is still ours to drop.
  if (old->is_committed()) t->commit();
  return publish(std::move(t), out);
}

ErrorClass type_commit(Datatype* t) {
  if (!t) return ErrorClass::Type;
  t->commit();
  return ErrorClass::Success;
}

ErrorClass type_free(const Datatype** t) {
  if (!t || !*t || (*t)->is_predefined()) return ErrorClass::Type;
  (*t)->release();
  *t = nullptr;
  return ErrorClass::Success;
}

ErrorClass type_free(Datatype** t) {
  if (!t) return ErrorClass::Type;
  const Datatype* c = *t;
  ErrorClass e = type_free(&c);
  if (e == ErrorClass::Success) *t = nullptr;
  return e;
}

// Public entry points: allocation failure becomes NoMem, never an exception.
ErrorClass type_contiguous(int count, const Datatype* old, Datatype** out) {
  return detail::no_throw([&] { return type_contiguous_impl(count, old, out); });
}

ErrorClass type_vector(int count, int blocklength, int stride, const Datatype* old, Datatype** out) {
  return detail::no_throw([&] { return type_vector_impl(count, blocklength, stride, old, out); });
}

ErrorClass type_hvector(int count, int blocklength, std::ptrdiff_t stride, const Datatype* old, Datatype** out) {
  return detail::no_throw([&] { return type_hvector_impl(count, blocklength, stride, old, out); });
}

ErrorClass type_indexed(int count, const int* blocklengths, const int* displacements, const Datatype* old,
                        Datatype** out) {
  return detail::no_throw([&] { return type_indexed_impl(count, blocklengths, displacements, old, out); });
}

ErrorClass type_hindexed(int count, const int* blocklengths, const std::ptrdiff_t* displacements, const Datatype* old,
                         Datatype** out) {
  return detail::no_throw([&] { return type_hindexed_impl(count, blocklengths, displacements, old, out); });
}

ErrorClass type_indexed_block(int count, int blocklength, const int* displacements, const Datatype* old,
                              Datatype** out) {
  return detail::no_throw([&] { return type_indexed_block_impl(count, blocklength, displacements, old, out); });
}

ErrorClass type_hindexed_block(int count, int blocklength, const std::ptrdiff_t* displacements, const Datatype* old,
                               Datatype** out) {
  return detail::no_throw([&] { return type_hindexed_block_impl(count, blocklength, displacements, old, out); });
}

ErrorClass type_struct(int count, const int* blocklengths, const std::ptrdiff_t* displacements,
                       const Datatype* const* types, Datatype** out) {
  return detail::no_throw([&] { return type_struct_impl(count, blocklengths, displacements, types, out); });
}

ErrorClass type_resized(const Datatype* old, std::ptrdiff_t lb, std::ptrdiff_t extent, Datatype** out) {
  return detail::no_throw([&] { return type_resized_impl(old, lb, extent, out); });
}

ErrorClass type_dup(const Datatype* old, Datatype** out) {
  return detail::no_throw([&] { return type_dup_impl(old, out); });
}

}  // namespace adi3
