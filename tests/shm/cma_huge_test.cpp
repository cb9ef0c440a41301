// cma_huge_pages and ShmOneSided::exposed_for_window: a window's memory
// reached by cross-memory attach gets huge pages once, within bounds (only
// its whole 2 MiB-aligned blocks, only blocks wholly in memory merged, at
// most collapse_max bytes and budget_ns), and memory in a segment of ours
// (which peers map) is left alone.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "channels/shm/cma.hpp"
#include "channels/shm/shm_onesided.hpp"

namespace {

constexpr std::size_t kBlock = std::size_t{2} << 20;
constexpr int64_t kSecond = 1'000'000'000;

// `blocks` 2 MiB-aligned blocks of anonymous memory (unmapped on exit).
struct Aligned {
  explicit Aligned(std::size_t blocks) : bytes(blocks * kBlock) {
    raw = mmap(nullptr, bytes + kBlock, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) raw = nullptr;
    const auto a = reinterpret_cast<uintptr_t>(raw);
    base = reinterpret_cast<char*>((a + kBlock - 1) & ~(kBlock - 1));
  }
  ~Aligned() {
    if (raw) munmap(raw, bytes + kBlock);
  }
  std::size_t bytes;
  void* raw = nullptr;
  char* base = nullptr;
};

std::size_t pages_in_memory(const char* p, std::size_t len) {
  std::vector<unsigned char> v(len / 4096);
  if (mincore(const_cast<char*>(p), len, v.data()) != 0) return SIZE_MAX;
  std::size_t n = 0;
  for (unsigned char r : v) n += r & 1;
  return n;
}

TEST(CmaHuge, NothingWithoutAWholeAlignedBlock) {
  Aligned m(2);
  ASSERT_TRUE(m.raw);
  std::memset(m.base, 1, 2 * kBlock);
  // Below 2 MiB, and 2 MiB that straddles a block boundary: no whole block.
  EXPECT_EQ(adi3::shm::cma_huge_pages(m.base, kBlock - 1, SIZE_MAX, kSecond), 0u);
  EXPECT_EQ(adi3::shm::cma_huge_pages(m.base + 4096, kBlock, SIZE_MAX, kSecond), 0u);
  EXPECT_EQ(adi3::shm::cma_huge_pages(m.base, 0, SIZE_MAX, kSecond), 0u);
  // Sizes that would wrap past the address space's end are refused.
  EXPECT_EQ(adi3::shm::cma_huge_pages(m.base, SIZE_MAX - 10, SIZE_MAX, kSecond), 0u);
  EXPECT_EQ(adi3::shm::cma_huge_pages(reinterpret_cast<void*>(UINTPTR_MAX - kBlock), 2 * kBlock, SIZE_MAX, kSecond),
            0u);
}

TEST(CmaHuge, MergesWholeBlocksWithinTheCap) {
  Aligned m(3);
  ASSERT_TRUE(m.raw);
  std::memset(m.base, 7, 3 * kBlock);
  // A cap below one block merges nothing, nor does a spent budget.
  EXPECT_EQ(adi3::shm::cma_huge_pages(m.base, 3 * kBlock, kBlock - 1, kSecond), 0u);
  EXPECT_EQ(adi3::shm::cma_huge_pages(m.base, 3 * kBlock, SIZE_MAX, 0), 0u);
  const std::size_t got = adi3::shm::cma_huge_pages(m.base, 3 * kBlock, 2 * kBlock, kSecond);
  // 0 where the kernel has no MADV_COLLAPSE or no huge page to give.
  EXPECT_TRUE(got == 0 || got == kBlock || got == 2 * kBlock) << got;
  for (std::size_t i = 0; i < 3 * kBlock; i += 4096) ASSERT_EQ(m.base[i], 7) << i;
}

TEST(CmaHuge, PartlyTouchedBlockIsNotFilled) {
  Aligned m(1);
  ASSERT_TRUE(m.raw);
  std::memset(m.base, 3, kBlock / 2);  // the first half only
  const std::size_t before = pages_in_memory(m.base, kBlock);
  ASSERT_LT(before, kBlock / 4096);
  EXPECT_EQ(adi3::shm::cma_huge_pages(m.base, kBlock, SIZE_MAX, kSecond), 0u);
  EXPECT_EQ(pages_in_memory(m.base, kBlock), before);
}

std::unique_ptr<adi3::shm::ShmOneSided> two_ranks(bool cma) {
  return std::make_unique<adi3::shm::ShmOneSided>("cma-huge-test", 0, std::vector<pid_t>(2, getpid()), cma,
                                                  std::vector<const std::atomic<uint64_t>*>(2, nullptr),
                                                  std::vector<adi3::Doorbell*>(2, nullptr));
}

TEST(CmaHuge, WindowOfUserMemoryOnly) {
  auto os = two_ranks(true);
  // A segment of ours (peers map it): exposed_for_window leaves it be.
  adi3::Region* seg = os->allocate(4 * kBlock);
  ASSERT_TRUE(seg);
  adi3::Region* inside = os->expose(seg->base, 4 * kBlock);
  ASSERT_TRUE(inside);
  os->exposed_for_window(*inside);
  os->release(inside);
  os->release(seg);
  // User memory: asked for and, wholly in memory, merged; contents kept.
  Aligned m(2);
  ASSERT_TRUE(m.raw);
  std::memset(m.base, 5, 2 * kBlock);
  adi3::Region* user = os->expose(m.base, 2 * kBlock);
  ASSERT_TRUE(user);
  os->exposed_for_window(*user);
  os->release(user);
  for (std::size_t i = 0; i < 2 * kBlock; i += 4096) ASSERT_EQ(m.base[i], 5) << i;
  EXPECT_EQ(pages_in_memory(m.base, 2 * kBlock), 2 * kBlock / 4096);
}

}  // namespace
