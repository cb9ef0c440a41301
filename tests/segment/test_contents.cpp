// Envelope/contents round trips, names, argument errors.
#include <gtest/gtest.h>

#include <functional>

#include "random_types.hpp"
#include "segment/type_query.hpp"

namespace adi3::test {
namespace {

struct Contents {
  Envelope env;
  std::vector<int> ints;
  std::vector<std::ptrdiff_t> addrs;
  std::vector<const Datatype*> types;
};

Contents contents(const Datatype* t) {
  Contents c;
  EXPECT_EQ(type_get_envelope(t, &c.env), ErrorClass::Success);
  c.ints.resize(static_cast<std::size_t>(c.env.num_integers));
  c.addrs.resize(static_cast<std::size_t>(c.env.num_addresses));
  c.types.resize(static_cast<std::size_t>(c.env.num_datatypes));
  EXPECT_EQ(type_get_contents(t, c.env.num_integers, c.env.num_addresses, c.env.num_datatypes, c.ints.data(),
                              c.addrs.data(), c.types.data()),
            ErrorClass::Success);
  return c;
}

void free_types(Contents* c) {
  for (const Datatype*& t : c->types) {
    if (!t->is_predefined()) {
      EXPECT_EQ(type_free(&t), ErrorClass::Success);
    }
  }
}

// Calls the constructor named by the envelope with the contents.
ErrorClass rebuild(const Contents& c, Datatype** out) {
  const int* i = c.ints.data();
  const std::ptrdiff_t* a = c.addrs.data();
  const Datatype* t0 = c.types.empty() ? nullptr : c.types[0];
  switch (c.env.combiner) {
    case Combiner::kDup:
      return type_dup(t0, out);
    case Combiner::kContiguous:
      return type_contiguous(i[0], t0, out);
    case Combiner::kVector:
      return type_vector(i[0], i[1], i[2], t0, out);
    case Combiner::kHvector:
      return type_hvector(i[0], i[1], a[0], t0, out);
    case Combiner::kIndexed:
      return type_indexed(i[0], i + 1, i + 1 + i[0], t0, out);
    case Combiner::kHindexed:
      return type_hindexed(i[0], i + 1, a, t0, out);
    case Combiner::kIndexedBlock:
      return type_indexed_block(i[0], i[1], i + 2, t0, out);
    case Combiner::kHindexedBlock:
      return type_hindexed_block(i[0], i[1], a, t0, out);
    case Combiner::kStruct:
      return type_struct(i[0], i + 1, a, c.types.data(), out);
    case Combiner::kResized:
      return type_resized(t0, a[0], a[1], out);
    case Combiner::kSubarray: {
      int n = i[0];
      return type_subarray(n, i + 1, i + 1 + n, i + 1 + 2 * n, i[1 + 3 * n], t0, out);
    }
    case Combiner::kDarray: {
      int n = i[2];
      return type_darray(i[0], i[1], n, i + 3, i + 3 + n, i + 3 + 2 * n, i + 3 + 3 * n, i[3 + 4 * n], t0, out);
    }
    case Combiner::kNamed:
      break;
  }
  return ErrorClass::Arg;
}

TEST(Contents, RoundTripOfRandomTypes) {
  for (int seed = 0; seed < 300; ++seed) {
    TypeGen gen(static_cast<std::uint64_t>(seed) + 99);
    std::string what;
    TypeRef t = gen.make(3, &what);
    SCOPED_TRACE(what);
    if (t->is_predefined()) continue;
    Contents c = contents(t.get());
    EXPECT_EQ(c.env.combiner, t->combiner());
    TypeRef again;
    ASSERT_EQ(rebuild(c, again.out()), ErrorClass::Success);
    free_types(&c);
    EXPECT_EQ(again->combiner(), t->combiner());
    EXPECT_EQ(again->size(), t->size());
    EXPECT_EQ(again->lb(), t->lb());
    EXPECT_EQ(again->extent(), t->extent());
    EXPECT_EQ(pairs(again.get()), pairs(t.get()));
    Contents c2 = contents(again.get());
    EXPECT_EQ(c2.ints, c.ints);
    EXPECT_EQ(c2.addrs, c.addrs);
    free_types(&c2);
  }
}

TEST(Contents, ExactArguments) {
  TypeRef v;
  ASSERT_EQ(type_vector(3, 2, -5, B(Builtin::kShort), v.out()), ErrorClass::Success);
  Contents c = contents(v.get());
  EXPECT_EQ(c.env.combiner, Combiner::kVector);
  EXPECT_EQ(c.ints, (std::vector<int>{3, 2, -5}));
  EXPECT_TRUE(c.addrs.empty());
  ASSERT_EQ(c.types.size(), 1u);
  EXPECT_EQ(c.types[0], B(Builtin::kShort));

  int bl[2] = {1, 4};
  std::ptrdiff_t d[2] = {8, -16};
  const Datatype* ts[2] = {v.get(), B(Builtin::kDouble)};
  TypeRef s;
  ASSERT_EQ(type_struct(2, bl, d, ts, s.out()), ErrorClass::Success);
  Contents cs = contents(s.get());
  EXPECT_EQ(cs.env.combiner, Combiner::kStruct);
  EXPECT_EQ(cs.ints, (std::vector<int>{2, 1, 4}));
  EXPECT_EQ(cs.addrs, (std::vector<std::ptrdiff_t>{8, -16}));
  EXPECT_EQ(cs.types[0], v.get());  // the same object, with a new reference
  free_types(&cs);

  int sizes[2] = {6, 7}, sub[2] = {2, 3}, st[2] = {1, 4};
  TypeRef a;
  ASSERT_EQ(type_subarray(2, sizes, sub, st, kOrderFortran, B(Builtin::kInt), a.out()), ErrorClass::Success);
  Contents ca = contents(a.get());
  EXPECT_EQ(ca.env.combiner, Combiner::kSubarray);
  EXPECT_EQ(ca.ints, (std::vector<int>{2, 6, 7, 2, 3, 1, 4, kOrderFortran}));

  TypeRef r;
  ASSERT_EQ(type_resized(a.get(), -3, 99, r.out()), ErrorClass::Success);
  Contents cr = contents(r.get());
  EXPECT_EQ(cr.env.combiner, Combiner::kResized);
  EXPECT_EQ(cr.addrs, (std::vector<std::ptrdiff_t>{-3, 99}));
  free_types(&cr);

  Envelope env;
  ASSERT_EQ(type_get_envelope(B(Builtin::kInt), &env), ErrorClass::Success);
  EXPECT_EQ(env.combiner, Combiner::kNamed);
  int x;
  EXPECT_EQ(type_get_contents(B(Builtin::kInt), 1, 1, 1, &x, nullptr, nullptr), ErrorClass::Arg);
  int small[2];
  EXPECT_EQ(type_get_contents(v.get(), 2, 0, 1, small, nullptr, ts), ErrorClass::Arg);
}

TEST(Contents, DupKeepsEverything) {
  TypeRef r;
  ASSERT_EQ(type_resized(B(Builtin::kInt), -4, 16, r.out()), ErrorClass::Success);
  r->commit();
  TypeRef d;
  ASSERT_EQ(type_dup(r.get(), d.out()), ErrorClass::Success);
  EXPECT_EQ(d->combiner(), Combiner::kDup);
  EXPECT_TRUE(d->is_committed());
  EXPECT_EQ(d->lb(), -4);
  EXPECT_EQ(d->extent(), 16);
  // Still sticky: a struct around the dup takes its bounds.
  int bl[2] = {1, 1};
  std::ptrdiff_t ds[2] = {0, 50};
  const Datatype* ts[2] = {d.get(), B(Builtin::kChar)};
  TypeRef s;
  ASSERT_EQ(type_struct(2, bl, ds, ts, s.out()), ErrorClass::Success);
  EXPECT_EQ(s->extent(), 16);
}

TEST(Names, SetAndGet) {
  TypeRef t;
  ASSERT_EQ(type_contiguous(2, B(Builtin::kInt), t.out()), ErrorClass::Success);
  std::string n = "x";
  ASSERT_EQ(type_get_name(t.get(), &n), ErrorClass::Success);
  EXPECT_EQ(n, "");
  ASSERT_EQ(type_set_name(t.get(), "pair of ints"), ErrorClass::Success);
  ASSERT_EQ(type_get_name(t.get(), &n), ErrorClass::Success);
  EXPECT_EQ(n, "pair of ints");
  std::string longname(300, 'a');
  ASSERT_EQ(type_set_name(t.get(), longname.c_str()), ErrorClass::Success);
  EXPECT_EQ(t->name().size(), 127u);
}

TEST(Errors, BadArgumentsReturnErrorClasses) {
  const Datatype* i = B(Builtin::kInt);
  Datatype* out = nullptr;
  int bl[2] = {1, -1}, d[2] = {0, 1};
  std::ptrdiff_t hd[2] = {0, 8};
  const Datatype* ts[2] = {i, nullptr};
  EXPECT_EQ(type_contiguous(-1, i, &out), ErrorClass::Count);
  EXPECT_EQ(type_contiguous(1, nullptr, &out), ErrorClass::Type);
  EXPECT_EQ(type_contiguous(1, i, nullptr), ErrorClass::Arg);
  EXPECT_EQ(type_vector(-2, 1, 1, i, &out), ErrorClass::Count);
  EXPECT_EQ(type_vector(2, -1, 1, i, &out), ErrorClass::Arg);
  EXPECT_EQ(type_hvector(2, -1, 8, i, &out), ErrorClass::Arg);
  EXPECT_EQ(type_indexed(2, bl, d, i, &out), ErrorClass::Arg);
  EXPECT_EQ(type_indexed(-1, bl, d, i, &out), ErrorClass::Count);
  EXPECT_EQ(type_indexed(2, nullptr, d, i, &out), ErrorClass::Arg);
  EXPECT_EQ(type_hindexed(2, bl, hd, i, &out), ErrorClass::Arg);
  EXPECT_EQ(type_indexed_block(2, -3, d, i, &out), ErrorClass::Arg);
  EXPECT_EQ(type_hindexed_block(-2, 1, hd, i, &out), ErrorClass::Count);
  int ok_bl[2] = {1, 1};
  EXPECT_EQ(type_struct(2, ok_bl, hd, ts, &out), ErrorClass::Type);
  EXPECT_EQ(type_struct(2, bl, hd, ts, &out), ErrorClass::Arg);
  EXPECT_EQ(type_resized(nullptr, 0, 4, &out), ErrorClass::Type);
  EXPECT_EQ(type_dup(nullptr, &out), ErrorClass::Type);
  int sizes[1] = {4}, sub[1] = {5}, st[1] = {0};
  EXPECT_EQ(type_subarray(1, sizes, sub, st, kOrderC, i, &out), ErrorClass::Arg);
  sub[0] = 2;
  st[0] = 3;
  EXPECT_EQ(type_subarray(1, sizes, sub, st, kOrderC, i, &out), ErrorClass::Arg);
  st[0] = 0;
  EXPECT_EQ(type_subarray(0, sizes, sub, st, kOrderC, i, &out), ErrorClass::Dims);
  EXPECT_EQ(type_subarray(1, sizes, sub, st, 12345, i, &out), ErrorClass::Arg);
  int g[1] = {8}, dist[1] = {kDistributeBlock}, darg[1] = {kDistributeDfltDarg}, ps[1] = {3};
  EXPECT_EQ(type_darray(2, 0, 1, g, dist, darg, ps, kOrderC, i, &out), ErrorClass::Dims);  // 3 != 2 procs
  EXPECT_EQ(type_darray(3, 3, 1, g, dist, darg, ps, kOrderC, i, &out), ErrorClass::Arg);   // rank >= size
  dist[0] = 999;
  EXPECT_EQ(type_darray(3, 0, 1, g, dist, darg, ps, kOrderC, i, &out), ErrorClass::Arg);
  // Overflow of the size is an error, not a wrap.
  TypeRef big;
  ASSERT_EQ(type_contiguous(1 << 30, B(Builtin::kLongDouble), big.out()), ErrorClass::Success);
  TypeRef big2;
  ASSERT_EQ(type_contiguous(1 << 20, big.get(), big2.out()), ErrorClass::Success);
  EXPECT_EQ(type_contiguous(1 << 30, big2.get(), &out), ErrorClass::Arg);
  EXPECT_EQ(out, nullptr);
}

}  // namespace
}  // namespace adi3::test
