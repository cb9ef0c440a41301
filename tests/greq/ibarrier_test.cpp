// The nonblocking barrier: a generalized request with a poll function,
// advanced by the progress engine of whichever call runs.
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "greq/ibarrier.hpp"
#include "recorder.hpp"

namespace {

using namespace greq_test;
using Clock = std::chrono::steady_clock;

class IbarrierSizes : public ::testing::TestWithParam<int> {};

TEST_P(IbarrierSizes, EveryRankCompletes) {
  adi3::run_thread_ranks(
      GetParam(),
      [](Device& dev) {
        std::size_t base = dev.live_requests();
        for (int i = 0; i < 5; ++i) {
          Request* r = nullptr;
          ASSERT_EQ(adi3::ibarrier(dev, &r), 0);
          ASSERT_NE(r, nullptr);
          Status st;
          EXPECT_EQ(dev.wait(&r, &st), 0);
          EXPECT_EQ(r, nullptr);
          EXPECT_EQ(st.bytes, 0u);
        }
        // Faster ranks' later traffic may already sit here as unexpected
        // messages; everything else is back in the pool.
        dev.progress();
        EXPECT_EQ(dev.live_requests() - dev.unexpected_depth(), base);
      },
      config(false));
}

INSTANTIATE_TEST_SUITE_P(Greq, IbarrierSizes, ::testing::Values(1, 2, 3, 4, 5, 8));

// No rank gets past the barrier before the last one has entered it.
TEST(Ibarrier, NoRankLeavesEarly) {
  constexpr int kRanks = 4;
  auto entered = std::make_shared<std::atomic<int64_t>>(0);  // test-only: when the late rank entered
  adi3::run_thread_ranks(
      kRanks,
      [entered](Device& dev) {
        int late = dev.size() - 1;
        if (dev.rank() == late) std::this_thread::sleep_for(std::chrono::milliseconds(40));
        Request* r = nullptr;
        int64_t t_in = Clock::now().time_since_epoch().count();
        if (dev.rank() == late) entered->store(t_in);
        ASSERT_EQ(adi3::ibarrier(dev, &r), 0);
        bool flag = false;
        while (!flag) ASSERT_EQ(dev.test(&r, &flag, nullptr), 0);
        int64_t t_out = Clock::now().time_since_epoch().count();
        int64_t e = entered->load();
        EXPECT_NE(e, 0) << "rank " << dev.rank() << " left before the late rank entered";
        EXPECT_GE(t_out, e);
      },
      config(false));
}

// Several barriers in flight at once, completed out of order, mixed with a
// device barrier and with user traffic that uses the same tags.
TEST(Ibarrier, OverlappingBarriersAndTrafficDoNotMix) {
  adi3::run_thread_ranks(
      4,
      [](Device& dev) {
        const adi3::Datatype* byte = adi3::Datatype::byte();
        int n = dev.size(), me = dev.rank();
        Request* bars[3];
        for (Request*& b : bars) ASSERT_EQ(adi3::ibarrier(dev, &b), 0);
        // User messages on tags 0..2 (the barriers' first tags) to the right.
        int out[3] = {me, me + 100, me + 200}, in[3] = {-1, -1, -1};
        Request* p2p[6];
        for (int t = 0; t < 3; ++t) {
          ASSERT_EQ(dev.irecv(&in[t], sizeof(int), byte, (me + n - 1) % n, t, dev.world(), &p2p[t]), 0);
          ASSERT_EQ(dev.isend(&out[t], sizeof(int), byte, (me + 1) % n, t, dev.world(), adi3::SendMode::Standard,
                              &p2p[3 + t]),
                    0);
        }
        ASSERT_EQ(dev.barrier(), 0);
        Request* rev[3] = {bars[2], bars[1], bars[0]};
        Status sts[3];
        EXPECT_EQ(dev.waitall(3, rev, sts), 0);
        EXPECT_EQ(dev.waitall(6, p2p, nullptr), 0);
        int left = (me + n - 1) % n;
        EXPECT_EQ(in[0], left);
        EXPECT_EQ(in[1], left + 100);
        EXPECT_EQ(in[2], left + 200);
      },
      config(false));
}

// A barrier freed with request_free still runs to its end on every rank.
TEST(Ibarrier, FreedBarrierStillCompletes) {
  adi3::run_thread_ranks(
      3,
      [](Device& dev) {
        std::size_t base = dev.live_requests();
        Request* r = nullptr;
        ASSERT_EQ(adi3::ibarrier(dev, &r), 0);
        EXPECT_EQ(dev.request_free(&r), 0);
        // Other traffic keeps going meanwhile; the freed barrier's request
        // goes back to the pool when its last round is done.
        ASSERT_EQ(adi3::ibarrier(dev, &r), 0);
        EXPECT_EQ(dev.wait(&r, nullptr), 0);
        auto deadline = Clock::now() + std::chrono::seconds(20);
        auto mine = [&] { return dev.live_requests() - dev.unexpected_depth(); };
        while (mine() != base && Clock::now() < deadline) dev.progress();
        EXPECT_EQ(mine(), base);
      },
      config(false));
}

TEST(Ibarrier, ThreadMultipleDevice) {
  adi3::run_thread_ranks(
      3,
      [](Device& dev) {
        for (int i = 0; i < 20; ++i) {
          Request* r = nullptr;
          ASSERT_EQ(adi3::ibarrier(dev, &r), 0);
          EXPECT_EQ(dev.wait(&r, nullptr), 0);
        }
      },
      config(true));
}

}  // namespace
