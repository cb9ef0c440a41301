// cma_huge_pages (channels/shm/cma.cpp): memory a window exposes gets huge
// pages where that is free, and is otherwise left as it was: its bytes
// intact, untouched blocks still untouched, nothing past the cap.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstring>

#include "channels/shm/cma.hpp"

namespace {

constexpr std::size_t kHuge = std::size_t{2} << 20;

// An anonymous mapping of n bytes whose start is 2 MiB-aligned.
struct Mapping {
  explicit Mapping(std::size_t n) : bytes(n + kHuge) {
    raw = static_cast<char*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (raw == MAP_FAILED) raw = nullptr;
    base = raw ? reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(raw) + kHuge - 1) & ~(kHuge - 1)) : nullptr;
  }
  ~Mapping() {
    if (raw) munmap(raw, bytes);
  }
  std::size_t bytes;
  char* raw = nullptr;
  char* base = nullptr;
};

// Pages of [p, p + n) in memory.
std::size_t resident_pages(const char* p, std::size_t n) {
  unsigned char v[kHuge / 4096];
  std::size_t got = 0;
  for (std::size_t at = 0; at < n; at += kHuge) {
    if (mincore(const_cast<char*>(p + at), kHuge, v) != 0) return SIZE_MAX;
    for (unsigned char r : v) got += r & 1;
  }
  return got;
}

TEST(CmaHuge, KeepsBytesAndAddsNoMemory) {
  Mapping m(4 * kHuge);
  ASSERT_NE(m.base, nullptr);
  // Blocks 0 and 1 in memory with a pattern, 2 and 3 untouched; the region
  // starts 16 bytes into block 0, as malloc's blocks do.
  for (std::size_t i = 0; i < 2 * kHuge; ++i) m.base[i] = static_cast<char>(i * 7 + 1);
  const std::size_t done = adi3::shm::cma_huge_pages(m.base + 16, 4 * kHuge - 32, SIZE_MAX);
  // Block 1 is the only aligned block wholly inside and in memory (block 0
  // starts before the region, 2 is untouched, 3 ends after it); 0 where the
  // kernel offers no collapse.
  EXPECT_TRUE(done == 0 || done == kHuge) << done;
  for (std::size_t i = 0; i < 2 * kHuge; ++i) ASSERT_EQ(m.base[i], static_cast<char>(i * 7 + 1)) << i;
  EXPECT_EQ(resident_pages(m.base + 2 * kHuge, 2 * kHuge), 0u);
}

TEST(CmaHuge, CapAndSmallRegions) {
  Mapping m(4 * kHuge);
  ASSERT_NE(m.base, nullptr);
  std::memset(m.base, 3, 4 * kHuge);
  EXPECT_EQ(adi3::shm::cma_huge_pages(m.base, 4 * kHuge, 0), 0u);
  EXPECT_EQ(adi3::shm::cma_huge_pages(m.base, kHuge - 1, SIZE_MAX), 0u);
  EXPECT_EQ(adi3::shm::cma_huge_pages(m.base + 1, kHuge, SIZE_MAX), 0u);  // no aligned block inside
  EXPECT_LE(adi3::shm::cma_huge_pages(m.base, 4 * kHuge, kHuge + 4096), kHuge);
  // An address range that would wrap is refused, not walked.
  EXPECT_EQ(adi3::shm::cma_huge_pages(reinterpret_cast<void*>(UINTPTR_MAX - 4095), 4 * kHuge, SIZE_MAX), 0u);
  for (std::size_t i = 0; i < 4 * kHuge; ++i) ASSERT_EQ(m.base[i], 3) << i;
}

}  // namespace
