// Datatype: accessors, reference counting, commit, and derive(): the MPI
// typemap rules that turn a layout into size, bounds and flags.
#include "segment/datatype.hpp"

#include <algorithm>
#include <limits>

#include "segment/program.hpp"
#include "segment/representation.hpp"
#include "segment/type_access.hpp"

namespace adi3 {

void Datatype::release_derived() const {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

Datatype::~Datatype() {
  for (const Datatype* c : children_) c->release();
  for (const Datatype* c : types_) c->release();
}

bool Datatype::builtin_id(Builtin* out) const {
  if (!predefined_) return false;
  *out = builtin_;
  return true;
}

bool Datatype::set_name(std::string name) {
  if (predefined_) return false;
  name_ = std::move(name);
  return true;
}

void Datatype::commit() {
  native_program();
  committed_.store(true, std::memory_order_release);
}

const detail::Program& Datatype::native_program() const {
  if (const detail::Program* p = native_ready_.load(std::memory_order_acquire)) return *p;
  std::call_once(native_once_, [this] {
    native_ = detail::compile(*this, nullptr);
    native_ready_.store(native_.get(), std::memory_order_release);
  });
  return *native_;
}

std::shared_ptr<const detail::Program> Datatype::program_for(const Representation& rep) const {
  if (&rep == &Representation::native()) {
    native_program();
    return native_;
  }
  if (&rep == &Representation::external32()) {
    std::call_once(ext32_once_, [this, &rep] { ext32_ = detail::compile(*this, &rep); });
    return ext32_;
  }
  if (&rep == &detail::native_typed()) {
    std::call_once(typed_once_, [this, &rep] { typed_ = detail::compile(*this, &rep); });
    return typed_;
  }
  return detail::compile(*this, &rep);
}

namespace detail {
namespace {

using I64 = std::int64_t;

bool mul(I64 a, I64 b, I64* r) { return !__builtin_mul_overflow(a, b, r); }
bool add(I64 a, I64 b, I64* r) { return !__builtin_add_overflow(a, b, r); }
bool sub(I64 a, I64 b, I64* r) { return !__builtin_sub_overflow(a, b, r); }

constexpr std::uint32_t kMixed = std::numeric_limits<std::uint32_t>::max();

// Folds blocks into the type's properties, following MPI's typemap rules:
// explicit (resized) bounds are sticky and win over data bounds.
struct Bounds {
  bool ok = true;
  bool any = false, slb = false, sub = false, data = false;
  I64 lb = 0, ub = 0, s_lb = 0, s_ub = 0, t_lb = 0, t_ub = 0;
  I64 size = 0;
  std::uint64_t nbasic = 0;
  std::uint32_t bsize = 0;
  std::uint16_t align = 1;
  bool dense = true, have_run = false;
  I64 run_end = 0;

  // `reps` blocks at disp + r * rep_stride, each `bl` copies of c.
  void add_blocks(I64 disp, I64 bl, const Datatype& c, I64 reps, I64 rep_stride) {
    if (bl == 0 || reps == 0) return;
    I64 ext = c.extent(), span, rspan, n, sz;
    if (!mul(bl - 1, ext, &span) || !mul(reps - 1, rep_stride, &rspan) || !mul(bl, reps, &n) ||
        !mul(n, static_cast<I64>(c.size()), &sz) || !add(size, sz, &size)) {
      ok = false;
      return;
    }
    I64 lo = std::min<I64>(0, span) + std::min<I64>(0, rspan);
    I64 hi = std::max<I64>(0, span) + std::max<I64>(0, rspan);
    auto at = [&](I64 base, I64 off, I64* out) { ok = ok && add(disp, base, out) && add(*out, off, out); };
    I64 l = 0, u = 0;
    at(c.lb(), lo, &l);
    at(c.ub(), hi, &u);
    bool contributes = c.size() > 0 || TypeAccess::sticky_lb(c) || TypeAccess::sticky_ub(c);
    if (contributes) {
      if (TypeAccess::sticky_lb(c)) {
        s_lb = slb ? std::min(s_lb, l) : l;
        slb = true;
      }
      if (TypeAccess::sticky_ub(c)) {
        s_ub = sub ? std::max(s_ub, u) : u;
        sub = true;
      }
      lb = any ? std::min(lb, l) : l;
      ub = any ? std::max(ub, u) : u;
      any = true;
    }
    if (c.size() > 0) {
      I64 tl = 0, tu = 0;
      at(c.true_lb(), lo, &tl);
      at(c.true_ub(), hi, &tu);
      t_lb = data ? std::min(t_lb, tl) : tl;
      t_ub = data ? std::max(t_ub, tu) : tu;
      data = true;
      std::uint64_t nb = static_cast<std::uint64_t>(n) * c.basic_count();
      nbasic += nb;
      std::uint32_t cb = TypeAccess::basic_size(c);
      bsize = bsize == 0 ? cb : (bsize == cb ? bsize : kMixed);
      // Dense: each block one run, blocks following each other in order.
      I64 csz = static_cast<I64>(c.size());
      bool block_run = TypeAccess::dense(c) && (bl == 1 || ext == csz);
      bool reps_run = reps == 1 || rep_stride == bl * csz;
      I64 start = disp + c.true_lb();
      if (!block_run || !reps_run || (have_run && start != run_end)) dense = false;
      have_run = true;
      run_end = start + bl * reps * csz;
    }
    align = std::max(align, TypeAccess::align(c));
  }
};

}  // namespace

bool TypeAccess::derive(Datatype& t) {
  if (t.shape_ == Shape::kBasic) {
    const BuiltinInfo& info = builtin_info(t.builtin_);
    t.size_ = info.size;
    t.lb_ = 0;
    t.extent_ = info.extent;
    t.true_lb_ = 0;
    t.true_extent_ = info.size;
    t.align_ = info.align;
    t.dense_ = true;
    t.nbasic_ = 1;
    t.basic_size_ = info.size;
    return true;
  }
  Bounds b;
  // A struct of count 0 has no children at all.
  const Datatype* c0 = t.children_.empty() ? nullptr : t.children_[0];
  switch (t.shape_) {
    case Shape::kVector:
      b.add_blocks(0, t.blocklen_, *c0, t.count_, t.stride_);
      break;
    case Shape::kIndexed:
    case Shape::kStruct:
      for (std::size_t i = 0; i < t.disps_.size(); ++i) {
        const Datatype& c = t.shape_ == Shape::kStruct ? *t.children_[i] : *c0;
        b.add_blocks(t.disps_[i], blocklen(t, i), c, 1, 0);
      }
      break;
    case Shape::kResized:
      b.add_blocks(0, 1, *c0, 1, 0);
      break;
    case Shape::kBasic:
      break;
  }
  if (!b.ok) return false;
  I64 lb = b.slb ? b.s_lb : b.lb;
  I64 ub = b.sub ? b.s_ub : b.ub;
  if (!b.any) lb = ub = 0;
  if (t.shape_ == Shape::kResized) {
    lb = t.stride_;  // resized keeps (lb, extent) in (stride_, count_)
    if (!add(t.stride_, t.count_, &ub)) return false;
    b.slb = b.sub = true;
  } else if (t.shape_ == Shape::kStruct && !b.sub && b.any) {
    // The struct epsilon: pad the extent to the strictest alignment inside.
    I64 ext = 0;
    if (!sub(ub, lb, &ext)) return false;
    if (ext > 0 && ext % b.align != 0 && !add(ub, b.align - ext % b.align, &ub)) return false;
  }
  // Bounds whose difference is no MPI_Aint make no type (ub = lb + extent).
  I64 extent = 0, true_extent = 0;
  if (!sub(ub, lb, &extent) || (b.data && !sub(b.t_ub, b.t_lb, &true_extent))) return false;
  t.size_ = static_cast<std::size_t>(b.size);
  t.lb_ = lb;
  t.extent_ = extent;
  t.true_lb_ = b.data ? b.t_lb : 0;
  t.true_extent_ = true_extent;
  t.sticky_lb_ = b.slb;
  t.sticky_ub_ = b.sub;
  t.align_ = b.align;
  t.dense_ = b.dense;
  t.nbasic_ = b.nbasic;
  t.basic_size_ = b.bsize;
  return true;
}

}  // namespace detail
}  // namespace adi3
