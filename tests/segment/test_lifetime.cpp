// Reference counting: types freed while a segment, a request or a derived
// type still uses them stay valid (run under ASan to catch the rest).
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

#include "segment/segment.hpp"
#include "segment/type_query.hpp"
#include "test_util.hpp"

namespace adi3::test {
namespace {

TEST(Lifetime, FreeWhileASegmentHoldsTheType) {
  Datatype* v = nullptr;
  ASSERT_EQ(type_vector(4, 1, 2, B(Builtin::kInt), &v), ErrorClass::Success);
  v->commit();
  int a[8];
  std::iota(a, a + 8, 0);
  Segment seg(a, 1, v);
  ASSERT_EQ(type_free(&v), ErrorClass::Success);  // the user's handle is gone
  EXPECT_EQ(v, nullptr);
  int out[4] = {};
  EXPECT_EQ(seg.pack(0, 6, out), 6u);  // mid-element, and resumed below
  EXPECT_EQ(seg.pack(6, 16, reinterpret_cast<char*>(out) + 6), 10u);
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(out[1], 2);
  EXPECT_EQ(out[2], 4);
  EXPECT_EQ(out[3], 6);
}

TEST(Lifetime, ComponentsOutliveTheirHandles) {
  Datatype* inner = nullptr;
  Datatype* outer = nullptr;
  ASSERT_EQ(type_vector(2, 1, 3, B(Builtin::kDouble), &inner), ErrorClass::Success);
  ASSERT_EQ(type_contiguous(2, inner, &outer), ErrorClass::Success);
  ASSERT_EQ(type_free(&inner), ErrorClass::Success);
  outer->commit();  // compiles after the component's handle is freed
  double a[16];
  std::iota(a, a + 16, 0.0);
  auto bytes = pack_all(a, 1, outer);
  double got[4];
  std::memcpy(got, bytes.data(), sizeof got);
  EXPECT_EQ(got[0], 0.0);
  EXPECT_EQ(got[1], 3.0);
  EXPECT_EQ(got[2], 4.0);
  EXPECT_EQ(got[3], 7.0);
  ASSERT_EQ(type_free(&outer), ErrorClass::Success);
}

TEST(Lifetime, ContentsHandOutReferences) {
  Datatype* inner = nullptr;
  Datatype* outer = nullptr;
  ASSERT_EQ(type_contiguous(3, B(Builtin::kChar), &inner), ErrorClass::Success);
  ASSERT_EQ(type_dup(inner, &outer), ErrorClass::Success);
  ASSERT_EQ(type_free(&inner), ErrorClass::Success);
  const Datatype* got = nullptr;
  ASSERT_EQ(type_get_contents(outer, 0, 0, 1, nullptr, nullptr, &got), ErrorClass::Success);
  ASSERT_EQ(type_free(&outer), ErrorClass::Success);
  EXPECT_EQ(got->size(), 3u);  // alive through the reference get_contents gave
  ASSERT_EQ(type_free(&got), ErrorClass::Success);
}

TEST(Lifetime, SegmentsMoveAndOutliveEachOther) {
  Datatype* t = nullptr;
  ASSERT_EQ(type_vector(3, 2, 3, B(Builtin::kShort), &t), ErrorClass::Success);
  t->commit();
  short a[9];
  std::iota(a, a + 9, 0);
  Segment s1(a, 1, t);
  char buf[12];
  EXPECT_EQ(s1.pack(0, 3, buf), 3u);
  Segment s2(std::move(s1));
  EXPECT_EQ(s1.size(), 0u);
  EXPECT_EQ(s2.pack(3, 12, buf + 3), 9u);  // resumes after the move (re-seeks)
  short got[6];
  std::memcpy(got, buf, sizeof got);
  EXPECT_EQ(got[2], 3);
  EXPECT_EQ(got[5], 7);
  Segment s3;
  s3 = std::move(s2);
  ASSERT_EQ(type_free(&t), ErrorClass::Success);
  EXPECT_EQ(s3.pack(0, 12, buf), 12u);
}

}  // namespace
}  // namespace adi3::test
