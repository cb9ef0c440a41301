// The registration cache: reuse while a region covers the buffer, new
// regions for new ranges, nothing kept idle where registrations pin pages,
// invalidation of freed memory, and keys that go with their regions.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "channels/verbs/mr_cache.hpp"

namespace adi3::verbs {
namespace {

// A device that only counts registrations (the cache never moves data).
class CountingDevice final : public VerbsDevice {
 public:
  explicit CountingDevice(bool follow) : follow_(follow) {}
  const char* name() const override { return "counting"; }
  std::string datagram_address() const override { return {}; }
  void datagram_peer(int, const std::string&) override {}
  bool send_datagram(int, const void*, std::size_t) override { return false; }
  int recv_datagram(void*, std::size_t, int*) override { return -1; }
  std::string create_qp(int) override { return {}; }
  void connect(int, const std::string&) override {}
  int qps_created() const override { return 0; }
  Region reg(void* a, std::size_t len, uint32_t) override {
    ++live;
    ++regs;
    return {reinterpret_cast<uintptr_t>(a), len, ++key_, key_, this};
  }
  void dereg(Region& r) override {
    if (r.handle) --live;
    r = Region{};
  }
  bool registrations_follow_mappings() const override { return follow_; }
  bool post_recv(int, uint64_t) override { return false; }
  bool write_imm(int, uint64_t, const void*, std::size_t, uint32_t, uint64_t, uint32_t, uint32_t) override {
    return false;
  }
  bool write(int, uint64_t, const void*, std::size_t, uint32_t, uint64_t, uint32_t) override { return false; }
  bool read(int, uint64_t, void*, std::size_t, uint32_t, uint64_t, uint32_t) override { return false; }
  bool fetch_add(int, uint64_t, uint64_t*, uint32_t, uint64_t, uint32_t, uint64_t) override { return false; }
  bool compare_swap(int, uint64_t, uint64_t*, uint32_t, uint64_t, uint32_t, uint64_t, uint64_t) override {
    return false;
  }
  int poll(Completion*, int) override { return 0; }
  void wait(std::chrono::microseconds) override {}
  void wake() override {}

  int live = 0, regs = 0;

 private:
  bool follow_;
  uint32_t key_ = 0;
};

TEST(MrCache, ReusesACoveringRegion) {
  CountingDevice dev(true);
  std::vector<char> buf(1 << 20);
  {
    MrCache c(dev, kRemoteRead, 1 << 30);
    Region a = c.acquire(buf.data() + 100, 5000);
    c.release(a);
    Region b = c.acquire(buf.data() + 200, 3000);  // inside a's pages
    EXPECT_EQ(b.rkey, a.rkey);
    EXPECT_EQ(c.hits(), 1u);
    Region e = c.acquire(buf.data() + 500000, 1000);  // elsewhere
    EXPECT_NE(e.rkey, a.rkey);
    c.release(b);
    c.release(e);
    EXPECT_EQ(dev.live, 2);  // kept idle for reuse
  }
  EXPECT_EQ(dev.live, 0);
}

TEST(MrCache, PinnedRegistrationsGoAtTheirLastRelease) {
  CountingDevice dev(false);
  std::vector<char> buf(1 << 16);
  MrCache c(dev, kRemoteRead, 1 << 30);
  Region a = c.acquire(buf.data(), 4096);
  Region b = c.acquire(buf.data(), 4096);  // shared while in use
  EXPECT_EQ(a.rkey, b.rkey);
  c.release(a);
  EXPECT_EQ(dev.live, 1);
  c.release(b);
  EXPECT_EQ(dev.live, 0);
}

TEST(MrCache, InvalidateDropsIdleAndRetiresBusyRegions) {
  CountingDevice dev(true);
  std::vector<char> buf(1 << 16);
  MrCache c(dev, kRemoteRead, 1 << 30);
  Region idle = c.acquire(buf.data(), 100);
  c.release(idle);
  Region busy = c.acquire(buf.data() + 40000, 100);
  c.invalidate(buf.data(), buf.size());
  EXPECT_EQ(dev.live, 1);  // the busy one stays until released
  Region fresh = c.acquire(buf.data() + 40000, 100);
  EXPECT_NE(fresh.rkey, busy.rkey) << "a freed range reused an old registration";
  c.release(busy);
  c.release(fresh);
  EXPECT_EQ(dev.live, 1);
}

TEST(MrCache, IdleBytesAreBounded) {
  CountingDevice dev(true);
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  std::vector<char> buf(64 * page);
  MrCache c(dev, kRemoteRead, 4 * page);
  for (int i = 0; i < 32; ++i) c.release(c.acquire(buf.data() + 2 * page * static_cast<std::size_t>(i), 1));
  EXPECT_LE(static_cast<std::size_t>(dev.live) * page, 4 * page);
}

TEST(MrCache, GrowingBufferReplacesOverlappedRegions) {
  CountingDevice dev(true);
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  std::vector<char> buf(16 * page);
  MrCache c(dev, kRemoteRead, 1 << 30);
  c.release(c.acquire(buf.data(), 1));
  c.release(c.acquire(buf.data() + 3 * page, 1));
  Region big = c.acquire(buf.data(), 8 * page);
  EXPECT_EQ(c.regions(), 1u);
  c.release(big);
  EXPECT_EQ(dev.live, 1);
}

}  // namespace
}  // namespace adi3::verbs
