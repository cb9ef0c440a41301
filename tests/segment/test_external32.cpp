// external32: byte-exact encodings from the standard's table.
#include <gtest/gtest.h>

#include <complex>
#include <cstring>

#include "segment/pack.hpp"
#include "segment/segment.hpp"
#include "test_util.hpp"

namespace adi3::test {
namespace {

using Bytes = std::vector<unsigned char>;

template <class T>
Bytes ext32(const T* v, std::size_t count, Builtin b) {
  std::size_t n = 0, pos = 0;
  EXPECT_EQ(pack_external_size("external32", count, B(b), &n), ErrorClass::Success);
  Bytes out(n);
  EXPECT_EQ(pack_external("external32", v, count, B(b), out.data(), n, &pos), ErrorClass::Success);
  EXPECT_EQ(pos, n);
  return out;
}

TEST(External32, IntegersAreBigEndian) {
  int one = 1;
  EXPECT_EQ(ext32(&one, 1, Builtin::kInt), (Bytes{0, 0, 0, 1}));
  short s = -2;
  EXPECT_EQ(ext32(&s, 1, Builtin::kShort), (Bytes{0xff, 0xfe}));
  // long and unsigned long are 4 bytes in the table, wchar_t 2.
  long l = 0x05060708L;
  EXPECT_EQ(ext32(&l, 1, Builtin::kLong), (Bytes{5, 6, 7, 8}));
  unsigned long ul = 0xfffffffeUL;
  EXPECT_EQ(ext32(&ul, 1, Builtin::kUnsignedLong), (Bytes{0xff, 0xff, 0xff, 0xfe}));
  unsigned long long u = 1;
  EXPECT_EQ(ext32(&u, 1, Builtin::kUnsignedLongLong), (Bytes{0, 0, 0, 0, 0, 0, 0, 1}));
  wchar_t w = L'A';
  EXPECT_EQ(ext32(&w, 1, Builtin::kWchar), (Bytes{0, 0x41}));
  char c[3] = {'a', 'b', 'c'};
  EXPECT_EQ(ext32(c, 3, Builtin::kChar), (Bytes{'a', 'b', 'c'}));
  bool t = true;
  EXPECT_EQ(ext32(&t, 1, Builtin::kCBool), (Bytes{1}));
  std::ptrdiff_t a = -1;
  EXPECT_EQ(ext32(&a, 1, Builtin::kAint), Bytes(8, 0xff));
}

TEST(External32, NarrowIntegersComeBackWidened) {
  long l[2] = {-5, 0x7fffffffL};
  unsigned long u = 0xfffffff0UL;
  wchar_t w = 0xe9;
  Bytes a = ext32(l, 2, Builtin::kLong), b = ext32(&u, 1, Builtin::kUnsignedLong), c = ext32(&w, 1, Builtin::kWchar);
  long l2[2] = {};
  unsigned long u2 = 0;
  wchar_t w2 = 0;
  std::size_t pos = 0;
  ASSERT_EQ(unpack_external("external32", a.data(), a.size(), &pos, l2, 2, B(Builtin::kLong)), ErrorClass::Success);
  pos = 0;
  ASSERT_EQ(unpack_external("external32", b.data(), b.size(), &pos, &u2, 1, B(Builtin::kUnsignedLong)),
            ErrorClass::Success);
  pos = 0;
  ASSERT_EQ(unpack_external("external32", c.data(), c.size(), &pos, &w2, 1, B(Builtin::kWchar)), ErrorClass::Success);
  EXPECT_EQ(l2[0], -5);  // sign-extended
  EXPECT_EQ(l2[1], 0x7fffffffL);
  EXPECT_EQ(u2, 0xfffffff0UL);  // zero-extended
  EXPECT_EQ(w2, 0xe9);
}

TEST(External32, FloatsAreIeeeBigEndian) {
  float f = 1.0f;
  EXPECT_EQ(ext32(&f, 1, Builtin::kFloat), (Bytes{0x3f, 0x80, 0, 0}));
  double d = -2.0;
  EXPECT_EQ(ext32(&d, 1, Builtin::kDouble), (Bytes{0xc0, 0, 0, 0, 0, 0, 0, 0}));
  std::complex<float> z(1.0f, 2.0f);
  EXPECT_EQ(ext32(&z, 1, Builtin::kCFloatComplex), (Bytes{0x3f, 0x80, 0, 0, 0x40, 0, 0, 0}));
}

TEST(External32, LongDoubleIsBinary128) {
  long double v[2] = {1.0L, -0.375L};
  Bytes got = ext32(v, 2, Builtin::kLongDouble);
  ASSERT_EQ(got.size(), 32u);
  Bytes one{0x3f, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  Bytes m375{0xbf, 0xfd, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};  // -1.5 * 2^-2
  EXPECT_EQ(Bytes(got.begin(), got.begin() + 16), one);
  EXPECT_EQ(Bytes(got.begin() + 16, got.end()), m375);
  long double back[2] = {};
  std::size_t pos = 0;
  ASSERT_EQ(unpack_external("external32", got.data(), got.size(), &pos, back, 2, B(Builtin::kLongDouble)),
            ErrorClass::Success);
  EXPECT_EQ(back[0], 1.0L);
  EXPECT_EQ(back[1], -0.375L);
}

TEST(External32, PairTypesDropThePadding) {
  struct DI {
    double d;
    int i;
  } v{1.0, 2};
  EXPECT_EQ(ext32(&v, 1, Builtin::kDoubleInt), (Bytes{0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2}));
  struct SI {
    short s;
    int i;
  } w{3, 4};
  EXPECT_EQ(ext32(&w, 1, Builtin::kShortInt), (Bytes{0, 3, 0, 0, 0, 4}));
}

TEST(External32, SizesFollowTheTable) {
  struct Case {
    Builtin b;
    std::size_t bytes;
  };
  // MPI-4.1's external32 table, every predefined C type (pairs: the sum).
  const Case cases[] = {{Builtin::kPacked, 1},
                        {Builtin::kByte, 1},
                        {Builtin::kChar, 1},
                        {Builtin::kUnsignedChar, 1},
                        {Builtin::kSignedChar, 1},
                        {Builtin::kWchar, 2},
                        {Builtin::kShort, 2},
                        {Builtin::kUnsignedShort, 2},
                        {Builtin::kInt, 4},
                        {Builtin::kLong, 4},
                        {Builtin::kUnsigned, 4},
                        {Builtin::kUnsignedLong, 4},
                        {Builtin::kLongLong, 8},
                        {Builtin::kUnsignedLongLong, 8},
                        {Builtin::kFloat, 4},
                        {Builtin::kDouble, 8},
                        {Builtin::kLongDouble, 16},
                        {Builtin::kCBool, 1},
                        {Builtin::kInt8, 1},
                        {Builtin::kInt16, 2},
                        {Builtin::kInt32, 4},
                        {Builtin::kInt64, 8},
                        {Builtin::kUint8, 1},
                        {Builtin::kUint16, 2},
                        {Builtin::kUint32, 4},
                        {Builtin::kUint64, 8},
                        {Builtin::kAint, 8},
                        {Builtin::kCount, 8},
                        {Builtin::kOffset, 8},
                        {Builtin::kCComplex, 8},
                        {Builtin::kCFloatComplex, 8},
                        {Builtin::kCDoubleComplex, 16},
                        {Builtin::kCLongDoubleComplex, 32},
                        {Builtin::kCxxBool, 1},
                        {Builtin::kCxxFloatComplex, 8},
                        {Builtin::kCxxDoubleComplex, 16},
                        {Builtin::kCxxLongDoubleComplex, 32},
                        {Builtin::kFloatInt, 8},
                        {Builtin::kDoubleInt, 12},
                        {Builtin::kLongInt, 8},
                        {Builtin::k2Int, 8},
                        {Builtin::kShortInt, 6},
                        {Builtin::kLongDoubleInt, 20}};
  for (const Case& c : cases) {
    std::size_t n = 0;
    ASSERT_EQ(pack_external_size("external32", 3, B(c.b), &n), ErrorClass::Success);
    EXPECT_EQ(n, 3 * c.bytes) << B(c.b)->name();
  }
  std::size_t n;
  EXPECT_EQ(pack_external_size("native", 1, B(Builtin::kInt), &n), ErrorClass::Arg);
}

TEST(External32, PartialElementsAcrossCalls) {
  // A derived type with long doubles and ints, packed and unpacked one
  // byte at a time through an external32 segment.
  int bl[2] = {2, 1};
  std::ptrdiff_t d[2] = {0, 40};
  const Datatype* ts[2] = {B(Builtin::kLongDouble), B(Builtin::kInt)};
  TypeRef t;
  ASSERT_EQ(type_struct(2, bl, d, ts, t.out()), ErrorClass::Success);
  t->commit();
  struct S {
    long double a[2];
    int pad[2];
    int i;
    int tail[3];
  };
  S s{};
  s.a[0] = 3.25L;
  s.a[1] = -1e300L;
  s.i = 0x01020304;
  Segment pk(&s, 1, t.get(), Representation::external32());
  ASSERT_EQ(pk.size(), 36u);
  Bytes stream(36);
  for (std::size_t k = 0; k < 36; ++k) ASSERT_EQ(pk.pack(k, k + 1, &stream[k]), 1u);
  EXPECT_EQ(Bytes(stream.end() - 4, stream.end()), (Bytes{1, 2, 3, 4}));
  S r{};
  Segment up(&r, 1, t.get(), Representation::external32());
  for (std::size_t k = 0; k < 36; k += 5) up.unpack(k, k + 5, &stream[k]);
  EXPECT_EQ(r.a[0], 3.25L);
  EXPECT_EQ(r.a[1], -1e300L);
  EXPECT_EQ(r.i, 0x01020304);
}

TEST(External32, UncommittedAndTruncation) {
  TypeRef t;
  ASSERT_EQ(type_contiguous(2, B(Builtin::kInt), t.out()), ErrorClass::Success);
  int v[2] = {1, 2};
  unsigned char out[8];
  std::size_t pos = 0;
  EXPECT_EQ(pack_external("external32", v, 1, t.get(), out, 8, &pos), ErrorClass::Type);
  t->commit();
  EXPECT_EQ(pack_external("external32", v, 1, t.get(), out, 7, &pos), ErrorClass::Truncate);
  EXPECT_EQ(pos, 0u);
  EXPECT_EQ(pack_external("xdr", v, 1, t.get(), out, 8, &pos), ErrorClass::Arg);
  ASSERT_EQ(pack_external("external32", v, 1, t.get(), out, 8, &pos), ErrorClass::Success);
  EXPECT_EQ(Bytes(out, out + 8), (Bytes{0, 0, 0, 1, 0, 0, 0, 2}));
  int back[2] = {};
  pos = 0;
  EXPECT_EQ(unpack_external("external32", out, 7, &pos, back, 1, t.get()), ErrorClass::Truncate);
  ASSERT_EQ(unpack_external("external32", out, 8, &pos, back, 1, t.get()), ErrorClass::Success);
  EXPECT_EQ(back[1], 2);
}

}  // namespace
}  // namespace adi3::test
