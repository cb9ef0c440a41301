// Concurrency (run under TSan by the tsan preset: label "threaded"):
// shared types used by many threads, lazy compilation racing, refcounts.
#include <gtest/gtest.h>

#include <numeric>
#include <thread>
#include <vector>

#include "segment/segment.hpp"
#include "segment/type_query.hpp"
#include "test_util.hpp"

namespace adi3::test {
namespace {

constexpr int kThreads = 4;

TEST(Threads, SegmentsOnASharedTypeRetainAndRelease) {
  Datatype* t = nullptr;
  ASSERT_EQ(type_vector(4, 1, 2, B(Builtin::kInt), &t), ErrorClass::Success);
  t->commit();
  std::vector<std::thread> ths;
  for (int k = 0; k < kThreads; ++k) {
    ths.emplace_back([t] {
      int a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, b[4];
      for (int i = 0; i < 2000; ++i) {
        Segment s(a, 1, t);
        s.pack(0, 16, b);
        EXPECT_EQ(b[3], 7);
      }
    });
  }
  for (auto& th : ths) th.join();
  ASSERT_EQ(type_free(&t), ErrorClass::Success);
}

TEST(Threads, FirstUsesCompileOnce) {
  // Nobody commits: native, external32 and element-counting programs are
  // all built lazily by whichever thread gets there first.
  for (int round = 0; round < 20; ++round) {
    int bl[2] = {1, 2};
    std::ptrdiff_t d[2] = {0, 8};
    const Datatype* ts[2] = {B(Builtin::kShort), B(Builtin::kDouble)};
    Datatype* t = nullptr;
    ASSERT_EQ(type_struct(2, bl, d, ts, &t), ErrorClass::Success);
    std::vector<std::thread> ths;
    for (int k = 0; k < kThreads; ++k) {
      ths.emplace_back([t, k] {
        struct {
          short s;
          double v[2];
        } x{3, {1.0, 2.0}};
        unsigned char out[18];
        Segment s(&x, 1, t, k % 2 ? Representation::external32() : Representation::native());
        EXPECT_EQ(s.pack(0, 18, out), 18u);
        long long n = 0;
        EXPECT_EQ(type_get_elements(t, 10, &n), ErrorClass::Success);
        EXPECT_EQ(n, 2);
      });
    }
    for (auto& th : ths) th.join();
    ASSERT_EQ(type_free(&t), ErrorClass::Success);
  }
}

TEST(Threads, LastReferenceDroppedByAnyThread) {
  for (int round = 0; round < 50; ++round) {
    Datatype* t = nullptr;
    ASSERT_EQ(type_contiguous(3, B(Builtin::kInt), &t), ErrorClass::Success);
    t->commit();
    std::vector<Segment> segs;
    int a[3] = {1, 2, 3};
    for (int k = 0; k < kThreads; ++k) segs.emplace_back(a, 1, t);
    ASSERT_EQ(type_free(&t), ErrorClass::Success);  // the segments keep it alive
    std::vector<std::thread> ths;
    for (auto& s : segs) {
      ths.emplace_back([seg = std::move(s)]() mutable {
        int b[3];
        EXPECT_EQ(seg.pack(0, 12, b), 12u);
      });  // each thread's segment releases the type when it ends
    }
    for (auto& th : ths) th.join();
  }
}

}  // namespace
}  // namespace adi3::test
