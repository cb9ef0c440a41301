// What the core knows of communicators: the context id separates matching
// (wildcards never cross it), and comm ranks map to channel ranks through
// Comm::peers (statuses and errors speak comm ranks).
#include "harness.hpp"

namespace {

using namespace core_test;
using adi3::Comm;
using adi3::kAnySource;
using adi3::kAnyTag;
using adi3::Request;
using adi3::Status;

class Communicators : public CoreTest {};

Comm make_comm(const Device& dev, uint32_t context, std::vector<int> peers) {
  Comm c;
  c.context = context;
  c.size = static_cast<int>(peers.size());
  c.rank = -1;
  for (std::size_t i = 0; i < peers.size(); ++i) {
    if (peers[i] == dev.rank()) c.rank = static_cast<int>(i);
  }
  c.peers = std::move(peers);
  return c;
}

// Messages on one context are invisible to probes and receives, wildcard or
// not, on another.
TEST_P(Communicators, ContextsSeparateMatching) {
  run(2, [](Device& dev) {
    Comm a = dev.world(), b = dev.world();
    a.context = 5;
    b.context = 6;
    adi3::Comm ctl = ctl_comm(dev);
    const std::size_t sizes[] = {8, dev.eager_limit() + 1};
    if (dev.rank() == 1) {
      for (std::size_t n : sizes) {
        std::vector<unsigned char> da = pattern(n, 5), db = pattern(n, 6);
        Request* r[2];
        ASSERT_OK(dev, dev.isend(da.data(), n, byte(), 0, 0, a, adi3::SendMode::Standard, &r[0]));
        ASSERT_OK(dev, dev.isend(db.data(), n, byte(), 0, 0, b, adi3::SendMode::Standard, &r[1]));
        notify(dev, ctl, 0);
        ASSERT_OK(dev, dev.waitall(2, r, nullptr));
      }
      return;
    }
    for (std::size_t n : sizes) {
      SCOPED_TRACE("bytes " + std::to_string(n));
      await(dev, ctl, 1);
      bool flag = true;
      Status st;
      Comm c = dev.world();
      c.context = 7;
      EXPECT_OK(dev, dev.iprobe(kAnySource, kAnyTag, c, &flag, &st));
      EXPECT_FALSE(flag) << "a probe on an unused context saw a message";
      EXPECT_OK(dev, dev.iprobe(kAnySource, kAnyTag, dev.world(), &flag, &st));
      EXPECT_FALSE(flag) << "a probe on world saw another context's message";
      // b's message was sent second; a wildcard receive on b still gets it.
      std::vector<unsigned char> buf(n);
      ASSERT_OK(dev, dev.recv(buf.data(), n, byte(), kAnySource, kAnyTag, b, &st));
      EXPECT_TRUE(has_pattern(buf.data(), n, 6));
      ASSERT_OK(dev, dev.recv(buf.data(), n, byte(), 1, 0, a, &st));
      EXPECT_TRUE(has_pattern(buf.data(), n, 5));
    }
  });
}

// A communicator whose ranks are the channel ranks reversed: sends address
// comm ranks, statuses report comm ranks, rendezvous replies reach the
// right channel rank.
TEST_P(Communicators, ReversedRankMapping) {
  run(3, [](Device& dev) {
    Comm c = make_comm(dev, 9, {2, 1, 0});
    ASSERT_EQ(c.rank, 2 - dev.rank());
    const int next = (c.rank + 1) % 3, prev = (c.rank + 2) % 3;
    for (std::size_t n : {std::size_t{0}, std::size_t{40}, dev.eager_limit() + 1, std::size_t{1} << 20}) {
      SCOPED_TRACE("bytes " + std::to_string(n));
      std::vector<unsigned char> out = pattern(n, static_cast<uint32_t>(c.rank)), in(n);
      Status st;
      ASSERT_OK(dev, dev.sendrecv(out.data(), n, byte(), next, 3, in.data(), n, byte(), prev, 3, c, &st));
      EXPECT_EQ(st.source, prev) << "status source is a comm rank";
      EXPECT_TRUE(has_pattern(in.data(), n, static_cast<uint32_t>(prev)));
      // Wildcard receive and probe also report comm ranks.
      ASSERT_OK(dev, dev.sendrecv(out.data(), n, byte(), next, 4, in.data(), n, byte(), kAnySource, kAnyTag, c, &st));
      EXPECT_EQ(st.source, prev);
      EXPECT_EQ(st.tag, 4);
      ASSERT_OK(dev, dev.barrier());
    }
  });
}

// A communicator of channel ranks 0 and 2 only; rank 1 is not in it.
TEST_P(Communicators, SubsetCommunicator) {
  run(3, [](Device& dev) {
    if (dev.rank() == 1) return;
    Comm c = make_comm(dev, 11, {0, 2});
    const int other = 1 - c.rank;
    for (std::size_t n : {std::size_t{16}, dev.eager_limit() + 1}) {
      std::vector<unsigned char> out = pattern(n, static_cast<uint32_t>(c.rank + 10)), in(n / 2);
      Status st;
      // The receive half is truncated: its message names the comm rank.
      int e = dev.sendrecv(out.data(), n, byte(), other, 1, in.data(), n / 2, byte(), other, 1, c, &st);
      EXPECT_EQ(adi3::error_class_of(e), adi3::ErrorClass::Truncate) << why(dev, e);
      EXPECT_EQ(st.source, other);
      EXPECT_TRUE(contains(dev.errors().message(e), "rank " + std::to_string(other))) << dev.errors().message(e);
      EXPECT_TRUE(has_pattern(in.data(), n / 2, static_cast<uint32_t>(other + 10)));
    }
    // Comm rank 2 does not exist in a communicator of 2.
    unsigned char b = 0;
    int e = dev.send(&b, 1, byte(), 2, 0, c);
    EXPECT_EQ(adi3::error_class_of(e), adi3::ErrorClass::Rank) << why(dev, e);
    EXPECT_TRUE(contains(dev.errors().message(e), "2")) << dev.errors().message(e);
  });
}

CORE_INSTANTIATE(Communicators);

}  // namespace
