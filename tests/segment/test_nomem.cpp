// Datatype constructors that run out of memory part way: each allocation of
// a constructor fails in turn; the call returns NoMem, writes no type, frees
// every byte it took and leaves the old types' reference counts as they
// were (no half-built type keeps them alive). Its own executable: it
// replaces the global operator new.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <new>

#include "segment/type_access.hpp"
#include "segment/type_create.hpp"
#include "test_util.hpp"

namespace {

// The allocation counter of this test program (armed only around the call
// under test, single-threaded).
struct Counter {
  bool armed = false;
  long fail_at = 0;  // the n-th allocation while armed throws
  long made = 0;
  long live = 0;  // allocations minus frees while armed
};
Counter counter;

}  // namespace

void* operator new(std::size_t n) {
  if (counter.armed && ++counter.made == counter.fail_at) throw std::bad_alloc();
  void* p = std::malloc(n ? n : 1);
  if (!p) throw std::bad_alloc();
  if (counter.armed) ++counter.live;
  return p;
}
void operator delete(void* p) noexcept {
  if (p && counter.armed) --counter.live;
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept { operator delete(p); }

namespace adi3::test {
namespace {

using detail::TypeAccess;
using Make = std::function<ErrorClass(Datatype**)>;

// Fails allocation 1, 2, ... of make until it succeeds; `olds` are the types
// it builds on.
void sweep(const Make& make, std::initializer_list<const Datatype*> olds) {
  std::vector<std::int64_t> refs;
  for (const Datatype* o : olds) refs.push_back(TypeAccess::refs(*o));
  int failures = 0;
  for (long at = 1; at < 10000; ++at) {
    Datatype* t = nullptr;
    counter = Counter{true, at, 0, 0};
    ErrorClass e = make(&t);
    long live = counter.live;
    counter.armed = false;
    if (e == ErrorClass::Success) {
      ASSERT_NE(t, nullptr);
      ASSERT_EQ(type_free(&t), ErrorClass::Success);
      EXPECT_GE(failures, 1) << "the constructor allocated nothing";
      std::size_t i = 0;
      for (const Datatype* o : olds) EXPECT_EQ(TypeAccess::refs(*o), refs[i++]) << "after the successful call";
      return;
    }
    ASSERT_EQ(e, ErrorClass::NoMem) << "allocation " << at;
    EXPECT_EQ(t, nullptr) << "allocation " << at;
    EXPECT_EQ(live, 0) << "allocation " << at << " failed: blocks left behind";
    std::size_t i = 0;
    for (const Datatype* o : olds) {
      EXPECT_EQ(TypeAccess::refs(*o), refs[i++]) << "allocation " << at << " failed: a reference left behind";
    }
    ++failures;
  }
  FAIL() << "never succeeded";
}

// A derived, committed old type (its reference count is real).
struct Old {
  Datatype* t = nullptr;
  Old() {
    EXPECT_EQ(type_vector(3, 2, 4, B(Builtin::kInt), &t), ErrorClass::Success);
    t->commit();
  }
  ~Old() { (void)type_free(&t); }
};

TEST(TypeNoMem, ContiguousVectorHvectorResized) {
  Old o;
  sweep([&](Datatype** t) { return type_contiguous(5, o.t, t); }, {o.t});
  sweep([&](Datatype** t) { return type_vector(4, 1, 3, o.t, t); }, {o.t});
  sweep([&](Datatype** t) { return type_hvector(4, 2, 200, o.t, t); }, {o.t});
  sweep([&](Datatype** t) { return type_resized(o.t, -8, 400, t); }, {o.t});
}

TEST(TypeNoMem, IndexedForms) {
  Old o;
  const int bls[] = {1, 3, 2};
  const int disps[] = {0, 5, 20};
  const std::ptrdiff_t hdisps[] = {0, 160, 640};
  sweep([&](Datatype** t) { return type_indexed(3, bls, disps, o.t, t); }, {o.t});
  sweep([&](Datatype** t) { return type_hindexed(3, bls, hdisps, o.t, t); }, {o.t});
  sweep([&](Datatype** t) { return type_indexed_block(3, 2, disps, o.t, t); }, {o.t});
  sweep([&](Datatype** t) { return type_hindexed_block(3, 2, hdisps, o.t, t); }, {o.t});
}

TEST(TypeNoMem, StructOfTwoDerivedTypes) {
  Old a, b;
  const int bls[] = {1, 2, 1};
  const std::ptrdiff_t disps[] = {0, 64, 256};
  const Datatype* types[] = {a.t, b.t, B(Builtin::kDouble)};
  sweep([&](Datatype** t) { return type_struct(3, bls, disps, types, t); }, {a.t, b.t});
}

TEST(TypeNoMem, DupOfACommittedTypeCompiles) {
  Old o;
  sweep([&](Datatype** t) { return type_dup(o.t, t); }, {o.t});
}

TEST(TypeNoMem, SubarrayAndDarrayIntermediates) {
  Old o;
  const int sizes[] = {6, 5, 4}, subsizes[] = {3, 2, 2}, starts[] = {1, 2, 0};
  sweep([&](Datatype** t) { return type_subarray(3, sizes, subsizes, starts, kOrderC, o.t, t); }, {o.t});
  const int gsizes[] = {10, 7}, distribs[] = {kDistributeCyclic, kDistributeBlock};
  const int dargs[] = {2, kDistributeDfltDarg}, psizes[] = {2, 3};
  sweep([&](Datatype** t) { return type_darray(6, 4, 2, gsizes, distribs, dargs, psizes, kOrderFortran, o.t, t); },
        {o.t});
}

}  // namespace
}  // namespace adi3::test
