// Internal: what every public collective call does around its builder:
// argument checks, then run the schedule now (blocking) or hand it to the
// progress engine (nonblocking).
#pragma once
#include <memory>
#include <new>

#include "adi3/device.hpp"
#include "adi3/sizes.hpp"
#include "coll/coll.hpp"
#include "coll/nbc.hpp"
#include "coll/schedule.hpp"

namespace adi3::coll::detail {

inline const Tuning& pick(const Tuning* t) { return t ? *t : default_tuning(); }

inline int check_type(Schedule& s, const Datatype* t, const char* what) {
  if (!t) return s.device().errors().raise(ErrorClass::Type, "%s datatype is null", what);
  if (!t->is_committed()) return s.device().errors().raise(ErrorClass::Type, "%s datatype is not committed", what);
  return 0;
}

inline int check_root(Schedule& s, int root) {
  if (root < 0 || root >= s.size()) {
    return s.device().errors().raise(ErrorClass::Root, "invalid root %d: the communicator has %d ranks (0..%d)", root,
                                     s.size(), s.size() - 1);
  }
  return 0;
}

// MPI_IN_PLACE where the standard does not allow it.
inline int check_not_in_place(Schedule& s, const void* buf, const char* what) {
  if (!in_place(buf)) return 0;
  return s.device().errors().raise(ErrorClass::Buffer, "MPI_IN_PLACE is not allowed as %s here", what);
}

// An array of p counts (displacements: may be negative).
inline int check_counts(Schedule& s, const int* a, const char* what, bool displacements = false) {
  if (!a) return s.device().errors().raise(ErrorClass::Arg, "%s array is null", what);
  for (int i = 0; i < s.size() && !displacements; ++i) {
    if (a[i] < 0) return s.device().errors().raise(ErrorClass::Count, "%s[%d] is negative (%d)", what, i, a[i]);
  }
  return 0;
}

// Block i of a v-collective: counts[i] elements of t at displacement
// displs[i] (in t's extents, or in bytes for alltoallw). Its byte offset, its
// bytes and the memory it spans must not overflow (ERR_COUNT naming them).
inline int check_block(Schedule& s, const char* what, int i, int count, int disp, const Datatype* t,
                       bool disp_in_bytes = false) {
  std::ptrdiff_t offset = disp, span = 0;
  if (!disp_in_bytes && !checked_offset(disp, t->extent(), &offset)) {
    return s.device().errors().raise(ErrorClass::Count, "%s[%d]: displacement %d of a datatype of extent %td overflows",
                                     what, i, disp, t->extent());
  }
  std::size_t bytes = 0;
  const auto n = static_cast<std::size_t>(count);
  if (!checked_bytes(n, t->size(), &bytes) || !checked_span(n, t->extent(), t->true_extent(), &span) ||
      __builtin_add_overflow(offset, span, &span)) {
    return s.device().errors().raise(ErrorClass::Count,
                                     "%s[%d]: %d elements of a datatype of extent %td at byte offset %td overflow",
                                     what, i, count, t->extent(), offset);
  }
  return 0;
}
inline int check_blocks(Schedule& s, const char* what, const int* counts, const int* displs, const Datatype* t) {
  for (int i = 0; i < s.size(); ++i) {
    if (int e = check_block(s, what, i, counts[i], displs[i], t)) return e;
  }
  return 0;
}

// Builds s. Nothing has been sent yet: out of memory (a scratch block, the
// step list) is ERR_NO_MEM naming it, and the schedule is dropped.
template <class Build>
int build(Schedule& s, Build& builder) {
  try {
    return builder(s);
  } catch (const std::bad_alloc&) {
    return s.out_of_memory();
  }
}

template <class Build>
int blocking(Device& dev, const Comm& comm, Tag tag, Build&& builder) {
  Schedule s(dev, comm, static_cast<int>(tag));
  if (int e = build(s, builder)) return e;
  return s.run();
}

template <class Build>
int nonblocking(Device& dev, const Comm& comm, Sequence& seq, Request** out, Build&& builder) {
  *out = nullptr;
  // The tag is taken only once the schedule exists (the new-initializer
  // is evaluated after the allocation succeeded).
  std::unique_ptr<Schedule> s(new (std::nothrow) Schedule(dev, comm, seq.next_tag()));
  if (!s)
    return dev.errors().raise(ErrorClass::NoMem,
                              "out of memory allocating a nonblocking collective's schedule (%zu bytes)",
                              sizeof(Schedule));
  if (int e = build(*s, builder)) return e;
  return seq.is_persistent() ? launch_persistent(dev, std::move(s), out) : launch(dev, std::move(s), out);
}

}  // namespace adi3::coll::detail
