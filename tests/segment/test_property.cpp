// Property tests: random nested types packed / unpacked / described at
// random split points, checked against the naive reference walker.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "random_types.hpp"
#include "segment/pack.hpp"
#include "segment/segment.hpp"
#include "segment/type_query.hpp"

namespace adi3::test {
namespace {

constexpr int kSeeds = 2000;

// A buffer covering every entry of `es`, with `base` at offset 0 of the type.
struct Buffer {
  std::vector<unsigned char> mem;
  unsigned char* base = nullptr;
  Buffer(const std::vector<ref::Entry>& es, std::mt19937_64& rng, bool zero) {
    std::ptrdiff_t lo = 0, hi = 0;
    for (const auto& e : es) {
      lo = std::min(lo, e.off);
      hi = std::max(hi, e.off + static_cast<std::ptrdiff_t>(e.size));
    }
    mem.resize(static_cast<std::size_t>(hi - lo) + 64);
    base = mem.data() + 32 - lo;
    for (auto& b : mem) b = zero ? 0 : static_cast<unsigned char>(rng());
  }
};

// Cut points 0 = c0 < c1 < ... = n, with some chunks of one byte.
std::vector<std::size_t> cuts(std::size_t n, std::mt19937_64& rng) {
  std::vector<std::size_t> c{0};
  while (c.back() < n) {
    std::size_t step = rng() % 3 == 0 ? 1 : 1 + rng() % (n / 3 + 7);
    c.push_back(std::min(n, c.back() + step));
  }
  return c;
}

// Long doubles must hold real values (10 bytes + zero padding) for the
// external32 round trip to be exact.
void sanitize_long_doubles(const std::vector<ref::Entry>& es, unsigned char* base, std::mt19937_64& rng) {
  for (const auto& e : es) {
    // long, unsigned long and wchar_t are narrower in external32: keep their
    // values in range so unpacking gives them back (sign- or zero-extended).
    std::size_t w = e.type == Builtin::kWchar ? 4 : 8, keep = e.type == Builtin::kWchar ? 2 : 4;
    if (e.type == Builtin::kLong || e.type == Builtin::kUnsignedLong || e.type == Builtin::kWchar) {
      for (std::size_t k = 0; k < e.size / w; ++k) {
        unsigned char* p = base + e.off + w * k;
        unsigned char fill = e.type == Builtin::kLong && (p[keep - 1] & 0x80) ? 0xff : 0;
        std::memset(p + keep, fill, w - keep);
      }
    }
    if (e.type != Builtin::kLongDouble && e.type != Builtin::kCLongDoubleComplex) continue;
    for (std::size_t k = 0; k < e.size / 16; ++k) {
      long double v = static_cast<long double>(static_cast<double>(rng() % 100000) / 7.0 - 3000.0);
      unsigned char* p = base + e.off + 16 * k;
      std::memset(p, 0, 16);
      std::memcpy(p, &v, 10);
    }
  }
}

class RandomTypes : public ::testing::TestWithParam<int> {};

TEST_P(RandomTypes, MatchReference) {
  const int seed0 = GetParam();
  for (int seed = seed0; seed < seed0 + kSeeds / 4; ++seed) {
    TypeGen gen(static_cast<std::uint64_t>(seed) * 7919 + 13);
    std::string what;
    TypeRef t = gen.make(gen.rnd(2, 4), &what);
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + what);
    t->commit();
    const ref::TypeMap m = ref::flatten(t.get());
    ASSERT_EQ(t->size(), m.size());
    ASSERT_EQ(t->lb(), m.lb);
    ASSERT_EQ(t->extent(), m.extent());
    ASSERT_EQ(t->true_lb(), m.true_lb());
    ASSERT_EQ(t->true_extent(), m.true_ub() - m.true_lb());
    ASSERT_EQ(t->basic_count(), m.entries.size());

    auto& rng = gen.rng();
    // Data outside [lb, ub) (sticky bounds) would make copies overlap.
    bool covered = t->true_lb() >= t->lb() && t->true_ub() <= t->ub();
    const std::size_t count = covered ? static_cast<std::size_t>(gen.rnd(1, 3)) : 1;
    const auto es = ref::replicate(m, count);
    Buffer src(es, rng, false);
    const auto want = ref::pack(es, src.base);
    Segment seg(src.base, count, t.get());
    ASSERT_EQ(seg.size(), want.size());

    // Pack at random split points, in order (resumed) and shuffled (seeks).
    std::vector<unsigned char> got(want.size() + 1, 0xEE);
    auto c = cuts(want.size(), rng);
    for (std::size_t i = 0; i + 1 < c.size(); ++i) {
      ASSERT_EQ(seg.pack(c[i], c[i + 1], got.data() + c[i]), c[i + 1] - c[i]);
    }
    ASSERT_EQ(0xEE, got.back());
    got.pop_back();
    ASSERT_EQ(got, want);
    // The whole stream in one call: Segment (its cursor left where the
    // cuts put it) and MPI_Pack at a nonzero position.
    std::fill(got.begin(), got.end(), 0);
    ASSERT_EQ(seg.pack(0, want.size(), got.data()), want.size());
    ASSERT_EQ(got, want);
    {
      std::vector<unsigned char> packed(want.size() + 5, 0xEE);
      std::size_t position = 3;
      ASSERT_EQ(pack(src.base, count, t.get(), packed.data(), packed.size(), &position), ErrorClass::Success);
      ASSERT_EQ(position, want.size() + 3);
      ASSERT_TRUE(std::equal(want.begin(), want.end(), packed.begin() + 3));
      ASSERT_EQ(packed.back(), 0xEE);
    }
    std::vector<std::size_t> order(c.size() > 1 ? c.size() - 1 : 0);
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    std::fill(got.begin(), got.end(), 0);
    for (std::size_t i : order) seg.pack(c[i], c[i + 1], got.data() + c[i]);
    ASSERT_EQ(got, want);

    // Unpack at random split points into a zeroed buffer: the typemap
    // bytes come back, the gaps stay zero.
    if (ref::disjoint(es)) {
      Buffer dst(es, rng, true);
      Buffer expect(es, rng, true);
      ref::unpack(es, want.data(), expect.base);
      Segment useg(dst.base, count, t.get());
      auto uc = cuts(want.size(), rng);
      for (std::size_t i = 0; i + 1 < uc.size(); ++i) {
        ASSERT_EQ(useg.unpack(uc[i], uc[i + 1], want.data() + uc[i]), uc[i + 1] - uc[i]);
      }
      ASSERT_EQ(dst.mem, expect.mem);
      Buffer whole(es, rng, true);
      std::size_t position = 0;
      ASSERT_EQ(unpack(want.data(), want.size(), &position, whole.base, count, t.get()), ErrorClass::Success);
      ASSERT_EQ(position, want.size());
      ASSERT_EQ(whole.mem, expect.mem);
      Buffer whole_seg(es, rng, true);
      Segment wseg(whole_seg.base, count, t.get());
      ASSERT_EQ(wseg.unpack(0, want.size(), want.data()), want.size());
      ASSERT_EQ(whole_seg.mem, expect.mem);
    } else {
      ADD_FAILURE() << "generator made an overlapping layout";
    }

    // to_iov at random limits describes exactly the packed bytes.
    std::vector<unsigned char> viaiov;
    std::size_t pos = 0;
    while (pos < want.size()) {
      struct iovec iov[8];
      std::size_t max = 1 + rng() % 8, n = 0;
      std::size_t last = std::min(want.size(), pos + 1 + rng() % (want.size() / 2 + 16));
      std::size_t got_bytes = seg.to_iov(pos, last, iov, max, &n);
      ASSERT_LE(n, max);
      ASSERT_GT(got_bytes, 0u);
      std::size_t sum = 0;
      for (std::size_t k = 0; k < n; ++k) {
        auto* p = static_cast<unsigned char*>(iov[k].iov_base);
        viaiov.insert(viaiov.end(), p, p + iov[k].iov_len);
        sum += iov[k].iov_len;
      }
      ASSERT_EQ(sum, got_bytes);
      pos += got_bytes;
    }
    ASSERT_EQ(viaiov, want);

    // get_elements at random byte counts, including mid-element ones.
    for (int k = 0; k < 6; ++k) {
      std::size_t bytes = want.empty() ? 0 : rng() % (want.size() + 1);
      long long n = 0, r = ref::elements(es, bytes);
      ASSERT_EQ(type_get_elements(t.get(), bytes, &n), ErrorClass::Success);
      ASSERT_EQ(n, r < 0 ? kUndefined : r) << bytes << " bytes";
    }

    // external32: byte-exact against the reference, whole and split.
    sanitize_long_doubles(es, src.base, rng);
    const auto want32 = ref::pack_external32(es, src.base);
    std::size_t ext_size = 0, position = 0;
    ASSERT_EQ(pack_external_size("external32", count, t.get(), &ext_size), ErrorClass::Success);
    ASSERT_EQ(ext_size, want32.size());
    std::vector<unsigned char> out32(ext_size);
    ASSERT_EQ(pack_external("external32", src.base, count, t.get(), out32.data(), out32.size(), &position),
              ErrorClass::Success);
    ASSERT_EQ(position, ext_size);
    ASSERT_EQ(out32, want32);
    Segment eseg(src.base, count, t.get(), Representation::external32());
    std::fill(out32.begin(), out32.end(), 0);
    auto ec = cuts(want32.size(), rng);
    for (std::size_t i = 0; i + 1 < ec.size(); ++i) eseg.pack(ec[i], ec[i + 1], out32.data() + ec[i]);
    ASSERT_EQ(out32, want32);
    if (ref::disjoint(es)) {
      Buffer dst(es, rng, true);
      Buffer expect(es, rng, true);
      ref::unpack(es, ref::pack(es, src.base).data(), expect.base);
      Segment useg(dst.base, count, t.get(), Representation::external32());
      auto uc = cuts(want32.size(), rng);
      for (std::size_t i = 0; i + 1 < uc.size(); ++i) useg.unpack(uc[i], uc[i + 1], want32.data() + uc[i]);
      ASSERT_EQ(dst.mem, expect.mem);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, RandomTypes, ::testing::Values(0, kSeeds / 4, kSeeds / 2, 3 * kSeeds / 4));

}  // namespace
}  // namespace adi3::test
