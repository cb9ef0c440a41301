// The predefined types: names, sizes, extents, contiguity.
#include <gtest/gtest.h>

#include <complex>
#include <cstring>
#include <set>
#include <string>

#include "segment/type_query.hpp"
#include "test_util.hpp"

namespace adi3::test {
namespace {

TEST(Builtin, EveryTypeHasItsCLayout) {
  std::set<std::string> names;
  for (std::size_t i = 0; i < kNumBuiltins; ++i) {
    auto b = static_cast<Builtin>(i);
    const Datatype* t = Datatype::builtin(b);
    SCOPED_TRACE(t->name());
    EXPECT_TRUE(t->is_predefined());
    EXPECT_TRUE(t->is_committed());
    EXPECT_EQ(t->combiner(), Combiner::kNamed);
    EXPECT_EQ(t->name().rfind("MPI_", 0), 0u);
    EXPECT_TRUE(names.insert(t->name()).second) << "duplicate name";
    Builtin back;
    ASSERT_TRUE(t->builtin_id(&back));
    EXPECT_EQ(back, b);
    ref::TypeMap m = ref::flatten(t);
    EXPECT_EQ(t->size(), m.size());
    EXPECT_EQ(t->extent(), m.extent());
    EXPECT_EQ(t->lb(), 0);
    EXPECT_EQ(t->true_lb(), 0);
    EXPECT_EQ(t->true_extent(), m.true_ub());
    Envelope env;
    ASSERT_EQ(type_get_envelope(t, &env), ErrorClass::Success);
    EXPECT_EQ(env.combiner, Combiner::kNamed);
    EXPECT_EQ(env.num_integers + env.num_addresses + env.num_datatypes, 0);
  }
  EXPECT_EQ(names.size(), kNumBuiltins);
}

TEST(Builtin, SizesOfCTypes) {
  EXPECT_EQ(B(Builtin::kInt)->size(), sizeof(int));
  EXPECT_EQ(B(Builtin::kLong)->size(), sizeof(long));
  EXPECT_EQ(B(Builtin::kLongDouble)->size(), sizeof(long double));
  EXPECT_EQ(B(Builtin::kWchar)->size(), sizeof(wchar_t));
  EXPECT_EQ(B(Builtin::kCBool)->size(), sizeof(bool));
  EXPECT_EQ(B(Builtin::kAint)->size(), sizeof(std::ptrdiff_t));
  EXPECT_EQ(B(Builtin::kCount)->size(), 8u);
  EXPECT_EQ(B(Builtin::kOffset)->size(), 8u);
  EXPECT_EQ(B(Builtin::kCDoubleComplex)->size(), sizeof(std::complex<double>));
  EXPECT_EQ(B(Builtin::kCLongDoubleComplex)->size(), sizeof(std::complex<long double>));
  EXPECT_EQ(B(Builtin::kCxxBool)->size(), sizeof(bool));
  EXPECT_EQ(B(Builtin::kInt64)->size(), 8u);
  EXPECT_EQ(B(Builtin::kUint16)->size(), 2u);
  EXPECT_EQ(Datatype::byte(), B(Builtin::kByte));
  EXPECT_EQ(B(Builtin::kByte)->name(), "MPI_BYTE");
  EXPECT_EQ(B(Builtin::kPacked)->name(), "MPI_PACKED");
  EXPECT_EQ(B(Builtin::kInt)->name(), "MPI_INT");
  EXPECT_EQ(B(Builtin::k2Int)->name(), "MPI_2INT");
}

struct PairCase {
  Builtin b;
  std::size_t size;
  std::ptrdiff_t extent;
  bool contiguous;
};

TEST(Builtin, PairTypesHaveStructExtentWithPadding) {
  const PairCase cases[] = {
      {Builtin::kFloatInt, 8, 8, true}, {Builtin::kDoubleInt, 12, 16, false}, {Builtin::kLongInt, 12, 16, false},
      {Builtin::k2Int, 8, 8, true},     {Builtin::kShortInt, 6, 8, false},    {Builtin::kLongDoubleInt, 20, 32, false},
  };
  for (const PairCase& c : cases) {
    const Datatype* t = B(c.b);
    SCOPED_TRACE(t->name());
    EXPECT_EQ(t->size(), c.size);
    EXPECT_EQ(t->extent(), c.extent);
    EXPECT_EQ(t->is_contiguous(), c.contiguous);
    EXPECT_EQ(t->basic_count(), 2u);
  }
  struct DI {
    double d;
    int i;
  };
  EXPECT_EQ(B(Builtin::kDoubleInt)->extent(), static_cast<std::ptrdiff_t>(sizeof(DI)));
}

TEST(Builtin, PairPacksWithoutPadding) {
  struct DI {
    double d;
    int i;
  } v[2] = {{1.5, 7}, {-2.0, 9}};
  auto bytes = pack_all(v, 2, B(Builtin::kDoubleInt));
  ASSERT_EQ(bytes.size(), 24u);
  double d;
  int i;
  std::memcpy(&d, &bytes[12], 8);
  std::memcpy(&i, &bytes[20], 4);
  EXPECT_EQ(d, -2.0);
  EXPECT_EQ(i, 9);
}

TEST(Builtin, RefcountIsANoOp) {
  const Datatype* t = B(Builtin::kDouble);
  for (int k = 0; k < 3; ++k) t->release();
  t->retain();
  EXPECT_EQ(t->size(), 8u);
  const Datatype* c = t;
  EXPECT_EQ(type_free(&c), ErrorClass::Type);  // freeing a predefined type is an error
  EXPECT_EQ(c, t);
}

TEST(Builtin, NamesAreImmutable) {
  Datatype* t = const_cast<Datatype*>(B(Builtin::kInt));
  EXPECT_EQ(type_set_name(t, "mine"), ErrorClass::Type);
  std::string n;
  ASSERT_EQ(type_get_name(t, &n), ErrorClass::Success);
  EXPECT_EQ(n, "MPI_INT");
}

}  // namespace
}  // namespace adi3::test
