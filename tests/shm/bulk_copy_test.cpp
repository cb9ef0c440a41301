// bulk_move (channels/common/bulk_copy.hpp): the same bytes as memmove at
// every size class and at the source-destination distances around the 4 KiB
// aliasing window it routes differently, disjoint and overlapping, and
// nothing written outside the destination.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "channels/common/bulk_copy.hpp"

namespace {

constexpr std::size_t kSizes[] = {0,
                                  1,
                                  127,
                                  128,
                                  2047,
                                  2048,
                                  2049,
                                  4096 + 17,
                                  65536,
                                  300000,
                                  512 * 1024 - 1,
                                  512 * 1024,
                                  (1 << 20) + 3};  // the last: in 256 KiB pieces
constexpr long kGaps[] = {1, 15, 16, 63, 64, 4096 + 16, 8192 + 1, -1, -16, -4096 + 16, -4096 + 63};

std::vector<unsigned char> pattern(std::size_t n) {
  std::vector<unsigned char> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(i * 131 + (i >> 9) * 7 + 3);
  return v;
}

TEST(BulkCopy, AliasWindowIsOneToSixtyThreeBytesModuloAPage) {
  std::vector<char> b(3 * 4096);
  char* s = b.data() + 4096;
  EXPECT_FALSE(adi3::copy_aliases_4k(s, s, 4096));
  EXPECT_TRUE(adi3::copy_aliases_4k(s + 16, s, 4096));
  EXPECT_TRUE(adi3::copy_aliases_4k(s + 63, s, 2048));
  EXPECT_FALSE(adi3::copy_aliases_4k(s + 64, s, 4096));
  EXPECT_FALSE(adi3::copy_aliases_4k(s + 16, s, 2047));  // below the sizes rep movsb takes
  EXPECT_TRUE(adi3::copy_aliases_4k(s - 4096 + 16, s, 4096));
  EXPECT_FALSE(adi3::copy_aliases_4k(s - 16, s, 4096));
  // From its stop threshold on, glibc's vector loop is faster than ours.
  std::vector<char> big(2 << 20);
  EXPECT_TRUE(adi3::copy_aliases_4k(big.data() + 16, big.data(), 512 * 1024 - 1));
  EXPECT_FALSE(adi3::copy_aliases_4k(big.data() + 16, big.data(), 512 * 1024));
}

TEST(BulkCopy, DisjointBuffersMatchMemmove) {
  for (std::size_t n : kSizes) {
    for (long gap : kGaps) {
      if (gap < 0) continue;
      // dst = src + n + gap rounded so the distance modulo 4 KiB is gap's.
      const std::size_t dist = (n + 8191) / 4096 * 4096 + static_cast<std::size_t>(gap);
      std::vector<unsigned char> buf(dist + n + 64, 0xEE);
      const auto src = pattern(n);
      std::memcpy(buf.data(), src.data(), n);
      unsigned char* d = buf.data() + dist;
      adi3::bulk_move(d, buf.data(), n);
      ASSERT_EQ(std::memcmp(d, src.data(), n), 0) << "n " << n << " gap " << gap;
      for (std::size_t i = dist + n; i < buf.size(); ++i) ASSERT_EQ(buf[i], 0xEE) << "n " << n << " past the end";
      for (std::size_t i = n; i < dist; ++i) ASSERT_EQ(buf[i], 0xEE) << "n " << n << " before the destination";
    }
  }
}

TEST(BulkCopy, OverlappingBuffersMatchMemmove) {
  for (std::size_t n : kSizes) {
    for (long gap : kGaps) {
      const std::size_t lead = 16384;
      std::vector<unsigned char> a(lead + n + 16384), b;
      for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<unsigned char>(i * 29 + 1);
      b = a;
      unsigned char* s = a.data() + lead;
      unsigned char* d = s + gap;
      adi3::bulk_move(d, s, n);
      std::memmove(b.data() + lead + gap, b.data() + lead, n);
      ASSERT_EQ(a, b) << "n " << n << " gap " << gap;
    }
  }
}

}  // namespace
