// The connection manager over software devices in one process: both sides
// asking at once still make one queue pair each and end connected both
// ways; lost datagrams are resent; a silent peer times out; a malformed
// queue pair address fails the peer, never the process.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "channels/verbs/conn_manager.hpp"
#include "channels/verbs/verbs_device.hpp"

namespace adi3::verbs {
namespace {

struct Hooks final : ConnManager::Hooks {
  std::vector<int> made;
  std::vector<std::string> failed;
  void qp_created(int peer) override { made.push_back(peer); }
  void connect_failed(int peer, std::string why) override { failed.push_back(std::to_string(peer) + ": " + why); }
};

struct Job {
  std::vector<std::unique_ptr<VerbsDevice>> dev;
  std::vector<Hooks> hooks;
  std::vector<std::unique_ptr<ConnManager>> cm;
  Job(int ranks, std::chrono::milliseconds timeout = std::chrono::seconds(10))
      : hooks(static_cast<std::size_t>(ranks)) {
    static int n = 0;
    const std::string id = "cmtest" + std::to_string(getpid()) + "_" + std::to_string(n++);
    for (int r = 0; r < ranks; ++r) dev.push_back(open_soft_device({r, ranks, id, 64}));
    for (auto& d : dev)
      for (int p = 0; p < ranks; ++p) d->datagram_peer(p, dev[static_cast<std::size_t>(p)]->datagram_address());
    for (auto& d : dev) d->started();
    for (int r = 0; r < ranks; ++r)
      cm.push_back(std::make_unique<ConnManager>(*dev[static_cast<std::size_t>(r)], r, ranks, timeout,
                                                 hooks[static_cast<std::size_t>(r)]));
  }
  // Progress on the given ranks until done() or the deadline.
  template <class F>
  bool pump(const std::vector<int>& ranks, F&& done, std::chrono::milliseconds limit = std::chrono::seconds(5)) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (!done()) {
      if (std::chrono::steady_clock::now() > end) return false;
      for (int r : ranks) cm[static_cast<std::size_t>(r)]->progress();
      usleep(100);
    }
    return true;
  }
};

// A write from `from` to `to` succeeds: both sides are connected.
void expect_write_works(Job& j, int from, int to) {
  std::vector<uint64_t> target(1, 0);
  Region t = j.dev[static_cast<std::size_t>(to)]->reg(target.data(), 8, kLocalWrite | kRemoteWrite);
  uint64_t v = 77;
  ASSERT_TRUE(j.dev[static_cast<std::size_t>(from)]->write(to, 1, &v, 8, 0, t.addr, t.rkey));
  Completion c[4];
  int n = 0;
  for (int spins = 0; n == 0 && spins < 1000; ++spins) n = j.dev[static_cast<std::size_t>(from)]->poll(c, 4);
  ASSERT_EQ(n, 1);
  EXPECT_EQ(c[0].status, Status::Success);
  EXPECT_EQ(target[0], 77u);
  j.dev[static_cast<std::size_t>(to)]->dereg(t);
}

TEST(ConnManager, BothAskingAtOnceMakeOneQueuePairEach) {
  Job j(2);
  j.cm[0]->want(1);
  j.cm[1]->want(0);
  ASSERT_TRUE(j.pump({0, 1}, [&] { return j.cm[0]->ready(1) && j.cm[1]->ready(0); }));
  EXPECT_EQ(j.dev[0]->qps_created(), 1);
  EXPECT_EQ(j.dev[1]->qps_created(), 1);
  EXPECT_EQ(j.hooks[0].made, std::vector<int>{1});
  EXPECT_EQ(j.hooks[1].made, std::vector<int>{0});
  EXPECT_TRUE(j.hooks[0].failed.empty() && j.hooks[1].failed.empty());
  expect_write_works(j, 0, 1);
  expect_write_works(j, 1, 0);
  EXPECT_FALSE(j.cm[0]->pending());
  EXPECT_FALSE(j.cm[1]->pending());
}

TEST(ConnManager, OneSideAsksOthersStayUnconnected) {
  Job j(3);
  j.cm[2]->want(0);
  ASSERT_TRUE(j.pump({0, 1, 2}, [&] { return j.cm[2]->ready(0) && j.cm[0]->ready(2); }));
  EXPECT_EQ(j.dev[0]->qps_created(), 1);
  EXPECT_EQ(j.dev[1]->qps_created(), 0);
  EXPECT_EQ(j.dev[2]->qps_created(), 1);
  expect_write_works(j, 0, 2);
  j.cm[1]->want(1);  // loopback: no datagram
  EXPECT_TRUE(j.cm[1]->ready(1));
  expect_write_works(j, 1, 1);
}

// UD drops a datagram when the target has no receive posted (the software
// device's queue of 16 per sender is full): the request is resent.
TEST(ConnManager, LostRequestIsResent) {
  Job j(2);
  const char junk[8] = "junk";
  for (int i = 0; i < 16; ++i) ASSERT_TRUE(j.dev[0]->send_datagram(1, junk, sizeof junk));
  j.cm[0]->want(1);  // REQ dropped: rank 1's queue is full
  ASSERT_FALSE(j.pump(
      {0}, [&] { return j.cm[0]->ready(1); }, std::chrono::milliseconds(60)));
  // Rank 1 takes (and ignores) the junk; a resent REQ gets through.
  ASSERT_TRUE(j.pump({0, 1}, [&] { return j.cm[0]->ready(1) && j.cm[1]->ready(0); }));
  EXPECT_EQ(j.dev[1]->qps_created(), 1);
  expect_write_works(j, 1, 0);
}

TEST(ConnManager, SilentPeerTimesOut) {
  Job j(2, std::chrono::milliseconds(150));
  j.cm[0]->want(1);
  ASSERT_TRUE(j.pump({0}, [&] { return !j.hooks[0].failed.empty(); }));
  EXPECT_NE(j.hooks[0].failed[0].find("no answer"), std::string::npos) << j.hooks[0].failed[0];
  EXPECT_FALSE(j.cm[0]->ready(1));
  EXPECT_FALSE(j.cm[0]->pending());
}

// A request whose queue pair address is garbage fails that peer only.
TEST(ConnManager, MalformedAddressFailsThePeer) {
  Job j(2);
  struct {
    uint32_t magic = 0x61336d63;
    uint8_t type = 1;
    uint8_t len = 7;
    uint16_t reserved = 0;
    int32_t to = 1;
    char addr[7] = {'g', 'a', 'r', 'b', 'a', 'g', 'e'};
  } req;
  ASSERT_TRUE(j.dev[0]->send_datagram(1, &req, 12 + 7));
  ASSERT_TRUE(j.pump({1}, [&] { return !j.hooks[1].failed.empty(); }));
  EXPECT_NE(j.hooks[1].failed[0].find("malformed"), std::string::npos) << j.hooks[1].failed[0];
  EXPECT_FALSE(j.cm[1]->ready(0));
}

}  // namespace
}  // namespace adi3::verbs
