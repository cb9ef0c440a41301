#include "coll/reducer.hpp"

#include <algorithm>
#include <climits>
#include <cstring>

#include "coll/copy.hpp"

namespace adi3::coll {

int Reducer::make(ErrorLog& log, const Op& op, const Datatype* type, std::size_t count, Reducer* out) {
  if (int e = check_op(log, op, type)) return e;
  Reducer r;
  r.op_ = op;
  r.type_ = type;
  r.bytes_ = count * type->size();
  r.n_ = count;
  r.stride_ = static_cast<std::size_t>(std::max<std::ptrdiff_t>(type->extent(), 0));
  r.lb_ = type->true_lb();
  if (op.is_predefined() && r.bytes_ > 0) {
    element_type(type, &r.elem_);
    const BuiltinInfo& info = builtin_info(r.elem_);
    if (type->is_predefined()) {
      r.kstride_ = r.stride_;  // pairs keep their padding in memory
    } else if (type->is_contiguous() && is_basic(r.elem_)) {
      r.kper_ = type->size() / info.size;
      r.kstride_ = info.size;
    } else {
      r.packed_ = true;
      r.per_item_ = type->size() / info.size;
      r.n_ = count * r.per_item_;
      r.stride_ = r.kstride_ = info.size;
      r.lb_ = 0;
    }
  }
  *out = std::move(r);
  return 0;
}

std::byte* Reducer::temp(Schedule& s, std::size_t n) const {
  if (packed_) return s.scratch(n * stride_);
  // Element i's data spans [i*extent + true_lb, i*extent + true_ub).
  std::size_t span = n == 0 ? 0 : (n - 1) * stride_ + static_cast<std::size_t>(type_->true_extent());
  return s.scratch(span) - lb_;
}

std::byte* Reducer::copy_in(Schedule& s, const void* user) const {
  std::byte* t = temp(s, n_);
  s.local([this, user, t] {
    if (packed_) {
      pack(user, n_ / per_item_, type_, t);
    } else {
      coll::copy(user, n_, type_, t, n_, type_);
    }
  });
  return t;
}

std::byte* Reducer::dup(Schedule& s, const void* work) const {
  std::byte* t = temp(s, n_);
  s.local([this, work, t] { copy_now(work, t, 0, n_); });
  return t;
}

std::byte* Reducer::view(Schedule& s, const void* user) const {
  return packed_ ? copy_in(s, user) : static_cast<std::byte*>(const_cast<void*>(user));
}

void Reducer::send(Schedule& s, const void* base, std::size_t first, std::size_t n, int peer) const {
  if (packed_) {
    s.send_bytes(at(base, first), n * stride_, peer);
  } else {
    s.send(at(base, first), n, type_, peer);
  }
}

void Reducer::recv(Schedule& s, void* base, std::size_t first, std::size_t n, int peer) const {
  if (packed_) {
    s.recv_bytes(at(base, first), n * stride_, peer);
  } else {
    s.recv(at(base, first), n, type_, peer);
  }
}

void Reducer::combine_now(const void* in, void* inout, std::size_t first, std::size_t n) const {
  if (n == 0) return;
  if (op_.kind() == OpKind::User) {
    for (std::size_t done = 0; done < n;) {
      std::size_t k = std::min<std::size_t>(n - done, INT_MAX);
      op_.function()(at(in, first + done), at(inout, first + done), static_cast<int>(k), type_);
      done += k;
    }
    return;
  }
  apply(op_.kind(), elem_, at(in, first) + lb_, at(inout, first) + lb_, n * kper_, kstride_);
}

void Reducer::copy_now(const void* from, void* to, std::size_t first, std::size_t n) const {
  if (n == 0 || from == to) return;
  if (packed_) {
    std::memcpy(at(to, first), at(from, first), n * stride_);
  } else {
    coll::copy(at(from, first), n, type_, at(to, first), n, type_);
  }
}

void Reducer::combine(Schedule& s, const void* in, void* inout, std::size_t first, std::size_t n) const {
  if (n == 0) return;
  s.local([this, in, inout, first, n] { combine_now(in, inout, first, n); });
}

void Reducer::copy(Schedule& s, const void* from, void* to, std::size_t first, std::size_t n) const {
  if (n == 0 || from == to) return;
  s.local([this, from, to, first, n] { copy_now(from, to, first, n); });
}

void Reducer::copy_out(Schedule& s, const void* work, void* user, std::size_t first, std::size_t n) const {
  if (n == 0) return;
  if (!packed_) {
    copy(s, work, user, first, n);
    return;
  }
  s.local([this, work, user, first, n] {
    unpack(at(work, first), elem_at(user, first / per_item_, type_), n / per_item_, type_);
  });
}

}  // namespace adi3::coll
