// The constructor examples of the MPI standard (section 4.1) and a few
// hand-checked subarray / darray layouts.
#include <gtest/gtest.h>

#include <cstring>

#include "segment/type_create.hpp"
#include "segment/type_query.hpp"
#include "test_util.hpp"

namespace adi3::test {
namespace {

constexpr Builtin kD = Builtin::kDouble;
constexpr Builtin kC = Builtin::kChar;
constexpr Builtin kF = Builtin::kFloat;
constexpr Builtin kI = Builtin::kInt;

// The standard's running example: {(double,0),(char,8)} with extent 16.
TypeRef double_char() {
  int bl[2] = {1, 1};
  std::ptrdiff_t d[2] = {0, 8};
  const Datatype* ts[2] = {B(kD), B(kC)};
  TypeRef t;
  EXPECT_EQ(type_struct(2, bl, d, ts, t.out()), ErrorClass::Success);
  return t;
}

TEST(StandardExamples, OldtypeHasExtent16) {
  TypeRef old = double_char();
  EXPECT_EQ(old->size(), 9u);
  EXPECT_EQ(old->lb(), 0);
  EXPECT_EQ(old->extent(), 16);  // the struct alignment epsilon
  EXPECT_EQ(old->true_extent(), 9);
  EXPECT_FALSE(old->is_contiguous());
}

TEST(StandardExamples, Contiguous) {
  TypeRef old = double_char();
  TypeRef t;
  ASSERT_EQ(type_contiguous(3, old.get(), t.out()), ErrorClass::Success);
  EXPECT_EQ(pairs(t.get()), (Pairs{{0, kD}, {8, kC}, {16, kD}, {24, kC}, {32, kD}, {40, kC}}));
  EXPECT_EQ(t->extent(), 48);
}

TEST(StandardExamples, Vector_2_3_4) {
  TypeRef old = double_char();
  TypeRef t;
  ASSERT_EQ(type_vector(2, 3, 4, old.get(), t.out()), ErrorClass::Success);
  EXPECT_EQ(pairs(t.get()), (Pairs{{0, kD},
                                   {8, kC},
                                   {16, kD},
                                   {24, kC},
                                   {32, kD},
                                   {40, kC},
                                   {64, kD},
                                   {72, kC},
                                   {80, kD},
                                   {88, kC},
                                   {96, kD},
                                   {104, kC}}));
  EXPECT_EQ(t->extent(), 112);
  EXPECT_EQ(t->size(), 54u);
}

TEST(StandardExamples, Vector_3_2_4) {
  TypeRef old = double_char();
  TypeRef t;
  ASSERT_EQ(type_vector(3, 2, 4, old.get(), t.out()), ErrorClass::Success);
  // Blocks of two copies start every 4 * 16 bytes.
  EXPECT_EQ(pairs(t.get()), (Pairs{{0, kD},
                                   {8, kC},
                                   {16, kD},
                                   {24, kC},
                                   {64, kD},
                                   {72, kC},
                                   {80, kD},
                                   {88, kC},
                                   {128, kD},
                                   {136, kC},
                                   {144, kD},
                                   {152, kC}}));
  EXPECT_EQ(t->lb(), 0);
  EXPECT_EQ(t->extent(), 160);
}

TEST(StandardExamples, VectorNegativeStride) {
  TypeRef old = double_char();
  TypeRef t;
  ASSERT_EQ(type_vector(3, 1, -2, old.get(), t.out()), ErrorClass::Success);
  EXPECT_EQ(pairs(t.get()), (Pairs{{0, kD}, {8, kC}, {-32, kD}, {-24, kC}, {-64, kD}, {-56, kC}}));
  EXPECT_EQ(t->lb(), -64);
  EXPECT_EQ(t->extent(), 80);
  EXPECT_EQ(t->true_lb(), -64);
  EXPECT_EQ(t->true_extent(), 73);
}

TEST(StandardExamples, Hvector) {
  TypeRef old = double_char();
  TypeRef t;
  ASSERT_EQ(type_hvector(2, 3, 100, old.get(), t.out()), ErrorClass::Success);
  EXPECT_EQ(pairs(t.get()), (Pairs{{0, kD},
                                   {8, kC},
                                   {16, kD},
                                   {24, kC},
                                   {32, kD},
                                   {40, kC},
                                   {100, kD},
                                   {108, kC},
                                   {116, kD},
                                   {124, kC},
                                   {132, kD},
                                   {140, kC}}));
  EXPECT_EQ(t->extent(), 148);
}

TEST(StandardExamples, Indexed) {
  TypeRef old = double_char();
  int bl[2] = {3, 1}, d[2] = {4, 0};
  TypeRef t;
  ASSERT_EQ(type_indexed(2, bl, d, old.get(), t.out()), ErrorClass::Success);
  EXPECT_EQ(pairs(t.get()), (Pairs{{64, kD}, {72, kC}, {80, kD}, {88, kC}, {96, kD}, {104, kC}, {0, kD}, {8, kC}}));
  EXPECT_EQ(t->extent(), 112);
}

TEST(StandardExamples, Hindexed) {
  TypeRef old = double_char();
  int bl[2] = {3, 1};
  std::ptrdiff_t d[2] = {64, 0};
  TypeRef t;
  ASSERT_EQ(type_hindexed(2, bl, d, old.get(), t.out()), ErrorClass::Success);
  EXPECT_EQ(pairs(t.get()), (Pairs{{64, kD}, {72, kC}, {80, kD}, {88, kC}, {96, kD}, {104, kC}, {0, kD}, {8, kC}}));
}

TEST(StandardExamples, IndexedBlock) {
  int d[3] = {5, 0, 2};
  TypeRef t;
  ASSERT_EQ(type_indexed_block(3, 2, d, B(kI), t.out()), ErrorClass::Success);
  EXPECT_EQ(pairs(t.get()), (Pairs{{20, kI}, {24, kI}, {0, kI}, {4, kI}, {8, kI}, {12, kI}}));
  EXPECT_EQ(t->extent(), 28);
  std::ptrdiff_t hd[2] = {-8, 40};
  TypeRef h;
  ASSERT_EQ(type_hindexed_block(2, 1, hd, B(kD), h.out()), ErrorClass::Success);
  EXPECT_EQ(pairs(h.get()), (Pairs{{-8, kD}, {40, kD}}));
  EXPECT_EQ(h->lb(), -8);
  EXPECT_EQ(h->extent(), 56);
}

TEST(StandardExamples, Struct) {
  TypeRef type1 = double_char();
  int bl[3] = {2, 1, 3};
  std::ptrdiff_t d[3] = {0, 16, 26};
  const Datatype* ts[3] = {B(kF), type1.get(), B(kC)};
  TypeRef t;
  ASSERT_EQ(type_struct(3, bl, d, ts, t.out()), ErrorClass::Success);
  EXPECT_EQ(pairs(t.get()), (Pairs{{0, kF}, {4, kF}, {16, kD}, {24, kC}, {26, kC}, {27, kC}, {28, kC}}));
  EXPECT_EQ(t->size(), 8u + 9u + 3u);
  EXPECT_EQ(t->extent(), 32);  // ub 29 (type1's ub is 32) -> 32
}

TEST(StandardExamples, ResizedAndTrueExtent) {
  TypeRef t;
  ASSERT_EQ(type_resized(B(kI), -4, 12, t.out()), ErrorClass::Success);
  EXPECT_EQ(t->lb(), -4);
  EXPECT_EQ(t->extent(), 12);
  EXPECT_EQ(t->true_lb(), 0);
  EXPECT_EQ(t->true_extent(), 4);
  TypeRef c;
  ASSERT_EQ(type_contiguous(3, t.get(), c.out()), ErrorClass::Success);
  EXPECT_EQ(pairs(c.get()), (Pairs{{0, kI}, {12, kI}, {24, kI}}));
  EXPECT_EQ(c->lb(), -4);
  EXPECT_EQ(c->extent(), 36);
  EXPECT_EQ(c->true_extent(), 28);
  // Explicit bounds are sticky: a struct around it takes them, not the data.
  int bl[2] = {1, 1};
  std::ptrdiff_t d[2] = {0, 100};
  const Datatype* ts[2] = {t.get(), B(kC)};
  TypeRef s;
  ASSERT_EQ(type_struct(2, bl, d, ts, s.out()), ErrorClass::Success);
  EXPECT_EQ(s->lb(), -4);
  EXPECT_EQ(s->extent(), 12);
  EXPECT_EQ(s->true_extent(), 101);
}

TEST(StandardExamples, SubarrayCOrder) {
  int sizes[2] = {4, 5}, sub[2] = {2, 3}, starts[2] = {1, 2};
  TypeRef t;
  ASSERT_EQ(type_subarray(2, sizes, sub, starts, kOrderC, B(kI), t.out()), ErrorClass::Success);
  EXPECT_EQ(pairs(t.get()), (Pairs{{28, kI}, {32, kI}, {36, kI}, {48, kI}, {52, kI}, {56, kI}}));
  EXPECT_EQ(t->lb(), 0);
  EXPECT_EQ(t->extent(), 80);
  EXPECT_EQ(t->true_lb(), 28);
  int a[20];
  for (int i = 0; i < 20; ++i) a[i] = i;
  t->commit();
  auto bytes = pack_all(a, 1, t.get());
  std::vector<int> got(6);
  std::memcpy(got.data(), bytes.data(), 24);
  EXPECT_EQ(got, (std::vector<int>{7, 8, 9, 12, 13, 14}));
}

TEST(StandardExamples, SubarrayFortranOrder) {
  int sizes[2] = {4, 5}, sub[2] = {2, 3}, starts[2] = {1, 2};
  TypeRef t;
  ASSERT_EQ(type_subarray(2, sizes, sub, starts, kOrderFortran, B(kI), t.out()), ErrorClass::Success);
  EXPECT_EQ(pairs(t.get()), (Pairs{{36, kI}, {40, kI}, {52, kI}, {56, kI}, {68, kI}, {72, kI}}));
  EXPECT_EQ(t->extent(), 80);
}

TEST(StandardExamples, DarrayCyclic1D) {
  int g = 10, dist = kDistributeCyclic, darg = 2, ps = 3;
  TypeRef t;
  ASSERT_EQ(type_darray(3, 1, 1, &g, &dist, &darg, &ps, kOrderC, B(kI), t.out()), ErrorClass::Success);
  EXPECT_EQ(pairs(t.get()), (Pairs{{8, kI}, {12, kI}, {32, kI}, {36, kI}}));
  EXPECT_EQ(t->lb(), 0);
  EXPECT_EQ(t->extent(), 40);
}

TEST(StandardExamples, DarrayBlockDefault) {
  int g = 10, dist = kDistributeBlock, darg = kDistributeDfltDarg, ps = 3;
  TypeRef t;
  ASSERT_EQ(type_darray(3, 2, 1, &g, &dist, &darg, &ps, kOrderC, B(kI), t.out()), ErrorClass::Success);
  EXPECT_EQ(pairs(t.get()), (Pairs{{32, kI}, {36, kI}}));  // blocks of 4: rank 2 gets 8..9
  // darg * psize < gsize is erroneous for BLOCK.
  darg = 3;
  TypeRef bad;
  EXPECT_EQ(type_darray(3, 2, 1, &g, &dist, &darg, &ps, kOrderC, B(kI), bad.out()), ErrorClass::Arg);
}

TEST(StandardExamples, Darray2D) {
  int g[2] = {4, 6}, dist[2] = {kDistributeBlock, kDistributeCyclic};
  int darg[2] = {kDistributeDfltDarg, kDistributeDfltDarg}, ps[2] = {2, 2};
  TypeRef c;
  // Rank 3 is grid coordinate (1, 1): rows 2..3, columns 1, 3, 5.
  ASSERT_EQ(type_darray(4, 3, 2, g, dist, darg, ps, kOrderC, B(kC), c.out()), ErrorClass::Success);
  EXPECT_EQ(pairs(c.get()), (Pairs{{13, kC}, {15, kC}, {17, kC}, {19, kC}, {21, kC}, {23, kC}}));
  EXPECT_EQ(c->extent(), 24);
  TypeRef f;
  ASSERT_EQ(type_darray(4, 3, 2, g, dist, darg, ps, kOrderFortran, B(kC), f.out()), ErrorClass::Success);
  // Fortran: linear index i0 + 4 * i1, i0 fastest.
  EXPECT_EQ(pairs(f.get()), (Pairs{{6, kC}, {7, kC}, {14, kC}, {15, kC}, {22, kC}, {23, kC}}));
}

TEST(StandardExamples, GetCountAndElements) {
  // Contiguous(2, float) receiving 2 floats, then 3 floats.
  TypeRef t2;
  ASSERT_EQ(type_contiguous(2, B(kF), t2.out()), ErrorClass::Success);
  long long n = 0;
  ASSERT_EQ(type_get_count(t2.get(), 8, &n), ErrorClass::Success);
  EXPECT_EQ(n, 1);
  ASSERT_EQ(type_get_elements(t2.get(), 8, &n), ErrorClass::Success);
  EXPECT_EQ(n, 2);
  ASSERT_EQ(type_get_count(t2.get(), 12, &n), ErrorClass::Success);
  EXPECT_EQ(n, kUndefined);
  ASSERT_EQ(type_get_elements(t2.get(), 12, &n), ErrorClass::Success);
  EXPECT_EQ(n, 3);
}

}  // namespace
}  // namespace adi3::test
