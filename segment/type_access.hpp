// Internal: the one door to Datatype's private layout, used by the type
// constructors, the queries and the compiler (all in segment/).
#pragma once
#include "segment/datatype.hpp"

namespace adi3::detail {

struct TypeAccess {
  using Shape = Datatype::Shape;

  static Datatype* make() { return new Datatype(); }
  static void destroy(const Datatype* t) { delete t; }
  // References held (tests: a constructor that failed must leave none).
  static std::int64_t refs(const Datatype& t) { return t.refs_.load(std::memory_order_relaxed); }

  static Shape shape(const Datatype& t) { return t.shape_; }
  static Builtin builtin(const Datatype& t) { return t.builtin_; }
  static std::int64_t count(const Datatype& t) { return t.count_; }
  static std::int64_t blocklen(const Datatype& t) { return t.blocklen_; }
  static std::ptrdiff_t stride(const Datatype& t) { return t.stride_; }
  // Blocklength of block i of a kIndexed / kStruct layout.
  static std::int64_t blocklen(const Datatype& t, std::size_t i) {
    return t.blocklens_.empty() ? t.blocklen_ : t.blocklens_[i];
  }
  static const std::vector<std::ptrdiff_t>& disps(const Datatype& t) { return t.disps_; }
  static const std::vector<const Datatype*>& children(const Datatype& t) { return t.children_; }
  static const std::vector<int>& ints(const Datatype& t) { return t.ints_; }
  static const std::vector<std::ptrdiff_t>& addrs(const Datatype& t) { return t.addrs_; }
  static const std::vector<const Datatype*>& types(const Datatype& t) { return t.types_; }
  static bool sticky_lb(const Datatype& t) { return t.sticky_lb_; }
  static bool sticky_ub(const Datatype& t) { return t.sticky_ub_; }
  static std::uint16_t align(const Datatype& t) { return t.align_; }
  static bool dense(const Datatype& t) { return t.dense_; }
  static std::uint32_t basic_size(const Datatype& t) { return t.basic_size_; }

  // Mutable view for the constructors (only before the type is published).
  static Datatype& edit(Datatype& t) { return t; }
  static void set_shape(Datatype& t, Shape s) { t.shape_ = s; }
  static void set_builtin(Datatype& t, Builtin b, bool predefined) {
    t.builtin_ = b;
    t.predefined_ = predefined;
  }
  static void set_vector(Datatype& t, std::int64_t count, std::int64_t blocklen, std::ptrdiff_t stride) {
    t.count_ = count;
    t.blocklen_ = blocklen;
    t.stride_ = stride;
  }
  // Resized keeps its explicit bounds in (stride_, count_).
  static void set_resized(Datatype& t, std::ptrdiff_t lb, std::ptrdiff_t extent) {
    t.stride_ = lb;
    t.count_ = extent;
  }
  static std::ptrdiff_t resized_lb(const Datatype& t) { return t.stride_; }
  static std::ptrdiff_t resized_extent(const Datatype& t) { return t.count_; }
  static void set_blocks(Datatype& t, std::int64_t uniform_blocklen, std::vector<std::int64_t> blocklens,
                         std::vector<std::ptrdiff_t> disps) {
    t.count_ = static_cast<std::int64_t>(disps.size());
    t.blocklen_ = uniform_blocklen;
    t.blocklens_ = std::move(blocklens);
    t.disps_ = std::move(disps);
  }
  // Takes a reference on the child once it is listed (a push_back that
  // throws leaves no reference behind).
  static void add_child(Datatype& t, const Datatype* c) {
    t.children_.push_back(c);
    c->retain();
  }
  static void set_contents(Datatype& t, Combiner c, std::vector<int> ints, std::vector<std::ptrdiff_t> addrs,
                           std::vector<const Datatype*> types) {
    // Nothing below throws (moves), so the references are never orphaned.
    for (const Datatype* d : types) d->retain();
    t.combiner_ = c;
    t.ints_ = std::move(ints);
    t.addrs_ = std::move(addrs);
    t.types_ = std::move(types);
  }
  static void set_name(Datatype& t, const char* n) { t.name_ = n; }
  static void set_committed(Datatype& t) { t.committed_.store(true, std::memory_order_release); }

  // Derives size, bounds, alignment, density and element counts from the
  // layout (MPI's typemap rules, including sticky explicit bounds and the
  // struct alignment epsilon). Returns false on arithmetic overflow.
  static bool derive(Datatype& t);
};

}  // namespace adi3::detail
