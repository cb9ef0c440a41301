// Internal: what every public collective call does around its builder:
// argument checks, then run the schedule now (blocking) or hand it to the
// progress engine (nonblocking).
#pragma once
#include <memory>

#include "adi3/device.hpp"
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

template <class Build>
int blocking(Device& dev, const Comm& comm, Tag tag, Build&& build) {
  Schedule s(dev, comm, static_cast<int>(tag));
  if (int e = build(s)) return e;
  return s.run();
}

template <class Build>
int nonblocking(Device& dev, const Comm& comm, Sequence& seq, Request** out, Build&& build) {
  *out = nullptr;
  auto s = std::make_unique<Schedule>(dev, comm, seq.next_tag());
  if (int e = build(*s)) return e;
  return launch(dev, std::move(s), out);
}

}  // namespace adi3::coll::detail
