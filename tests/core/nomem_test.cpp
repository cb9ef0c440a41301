// Out of memory is an error, never a crash: with the request pool capped
// (Config::max_requests, ADI3_MAX_REQUESTS) a call that needs one more
// request fails with ERR_NO_MEM naming the cap, the device stays usable and
// recovers once requests are freed; a message that arrives when nothing is
// left to hold it ends the conversation with its sender, and both sides'
// waits on each other then fail with ERR_NO_MEM instead of hanging (the
// sender is told: PacketType::Refused).
#include "harness.hpp"

namespace {

using namespace core_test;

constexpr std::size_t kCap = 64;  // one chunk of the pool

Setup capped(Setup s) {
  s.config.max_requests = kCap;
  return s;
}

class NoMem : public CoreTest {};

// Rank 0 posts receives until the pool is exhausted: the failing call says
// so; a send that needs a request fails the same way. Then the posted
// receives complete (rank 1 sends them their messages) and, with requests
// free again, a new receive succeeds.
TEST_P(NoMem, RequestsBeyondTheCapFailCleanly) {
  run_ranks(capped(GetParam()), 2, [](Device& dev) {
    adi3::Comm ctl = ctl_comm(dev);
    if (dev.rank() == 0) {
      std::vector<std::vector<unsigned char>> in(kCap + 8, std::vector<unsigned char>(100));
      std::vector<Request*> reqs;
      int e = 0;
      for (std::size_t k = 0; k < in.size() && !e; ++k) {
        Request* r = nullptr;
        e = dev.irecv(in[k].data(), 100, byte(), 1, 3, dev.world(), &r);
        if (!e) reqs.push_back(r);
      }
      ASSERT_EQ(error_class_of(e), ErrorClass::NoMem) << why(dev, e);
      EXPECT_TRUE(contains(why(dev, e), "ADI3_MAX_REQUESTS")) << why(dev, e);
      EXPECT_TRUE(contains(why(dev, e), "a receive")) << why(dev, e);
      ASSERT_GT(reqs.size(), kCap / 2);
      ASSERT_LE(reqs.size(), kCap);
      std::vector<unsigned char> big(256 * 1024);
      Request* s = nullptr;
      e = dev.isend(big.data(), big.size(), byte(), 1, 4, dev.world(), SendMode::Standard, &s);
      EXPECT_EQ(error_class_of(e), ErrorClass::NoMem) << why(dev, e);
      EXPECT_EQ(s, nullptr);
      // One slot back: cancel the last receive.
      ASSERT_OK(dev, dev.cancel(reqs.back()));
      ASSERT_OK(dev, dev.wait(&reqs.back(), nullptr));
      reqs.pop_back();
      send_int(dev, ctl, 1, static_cast<int64_t>(reqs.size()));
      ASSERT_OK(dev, dev.waitall(static_cast<int>(reqs.size()), reqs.data(), nullptr));
      for (std::size_t k = 0; k < reqs.size(); ++k) {
        EXPECT_TRUE(has_pattern(in[k].data(), 100, static_cast<uint32_t>(k))) << "message " << k;
      }
      // Only now may anything more arrive: an unexpected message finds no
      // request to hold it while the pool is full (the second test).
      notify(dev, ctl, 1);
      Request* again = nullptr;
      ASSERT_OK(dev, dev.irecv(in[0].data(), 100, byte(), 1, 5, dev.world(), &again));
      ASSERT_OK(dev, dev.wait(&again, nullptr));
    } else {
      const int64_t n = recv_int(dev, ctl, 0);
      for (int64_t k = 0; k < n; ++k) {
        std::vector<unsigned char> out = pattern(100, static_cast<uint32_t>(k));
        ASSERT_OK(dev, dev.send(out.data(), 100, byte(), 0, 3, dev.world()));
      }
      await(dev, ctl, 0);
      unsigned char b = 1;
      ASSERT_OK(dev, dev.send(&b, 1, byte(), 0, 5, dev.world()));
    }
  });
}

CORE_INSTANTIATE(NoMem);

// Rank 1 floods rank 0 (capped) with more unexpected messages than rank 0
// has requests to hold: rank 0 does not crash; the conversation with rank
// 1 ends, and rank 0's receive from it fails with ERR_NO_MEM saying what
// could not be kept. (No harness finalize: the job ends with a failed pair.)
TEST(NoMemProgress, AnArrivalThatCannotBeKeptEndsTheConversation) {
  auto fabric = std::make_shared<adi3::InprocFabric>(2);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank) {
    threads.emplace_back([&, rank] {
      adi3::Config c;
      if (rank == 0) c.max_requests = kCap;
      Device dev(fabric->channel(rank), c);
      if (rank == 0) {
        unsigned char b = 0;
        Request* r = nullptr;
        ASSERT_OK(dev, dev.irecv(&b, 1, byte(), 1, 9, dev.world(), &r));
        const int e = dev.wait(&r, nullptr);
        EXPECT_EQ(error_class_of(e), ErrorClass::NoMem) << why(dev, e);
        EXPECT_TRUE(contains(why(dev, e), "could not be kept")) << why(dev, e);
        EXPECT_TRUE(contains(why(dev, e), "rank 1")) << why(dev, e);
        EXPECT_LE(dev.live_requests(), kCap);
        if (r) dev.request_free(&r);
      } else {
        // Rank 0 tells us it no longer reads from us: a send after that
        // news fails, and so does a wait on rank 0, within seconds.
        unsigned char b = 7;
        int e = 0;
        for (int k = 0; k <= 2 * static_cast<int>(kCap) && !e; ++k) {
          e = dev.send(&b, 1, byte(), 0, k < 2 * static_cast<int>(kCap) ? 4 : 9, dev.world());
        }
        Request* r = nullptr;
        if (!e) e = dev.irecv(&b, 1, byte(), 0, 10, dev.world(), &r);
        if (!e) e = dev.wait(&r, nullptr);
        EXPECT_EQ(error_class_of(e), ErrorClass::NoMem) << why(dev, e);
        EXPECT_TRUE(contains(why(dev, e), "rank 0 no longer reads from rank 1")) << why(dev, e);
        if (r) dev.request_free(&r);
      }
    });
  }
  for (auto& t : threads) t.join();
}

}  // namespace
