// MPI_Cancel of receives (pending: cancelled; already matched: completes
// normally) and of sends (either cancelled, and then never received, or
// completed and received; in both cases the wait is local), and
// MPI_Request_free on active send and receive requests (the operation still
// completes, the data arrives and the request is reclaimed).
#include <thread>

#include "harness.hpp"

namespace {

using namespace core_test;
using adi3::kAnySource;
using adi3::kAnyTag;
using adi3::Request;
using adi3::SendMode;
using adi3::Status;

constexpr int kGo = 30, kDone = 31, kAck = 32, kResult = 33;

class CancelFree : public CoreTest {};

std::vector<std::size_t> sizes_of(const Device& dev) { return {0, 100, dev.eager_limit() + 1, 1 << 20}; }

TEST_P(CancelFree, CancelPendingReceive) {
  run(2, [](Device& dev) {
    adi3::Comm ctl = ctl_comm(dev);
    if (dev.rank() == 1) {
      await(dev, ctl, 0, kGo);
      std::vector<unsigned char> d = pattern(64, 7);
      ASSERT_OK(dev, dev.send(d.data(), d.size(), byte(), 0, 7, dev.world()));
      return;
    }
    const std::size_t live = owned_requests(dev);
    const std::pair<int, int> shapes[] = {{1, 7}, {kAnySource, 7}, {1, kAnyTag}, {kAnySource, kAnyTag}};
    std::vector<unsigned char> dead(64, 0x5A);
    for (auto [src, tag] : shapes) {
      SCOPED_TRACE("pattern " + std::to_string(src) + ", " + std::to_string(tag));
      Request* r = nullptr;
      ASSERT_OK(dev, dev.irecv(dead.data(), dead.size(), byte(), src, tag, dev.world(), &r));
      EXPECT_EQ(dev.posted_depth(), 1u);
      ASSERT_OK(dev, dev.cancel(r));
      bool flag = false;
      Status st;
      EXPECT_OK(dev, dev.request_get_status(r, &flag, &st));
      EXPECT_TRUE(flag) << "a cancelled receive is complete";
      EXPECT_TRUE(st.cancelled);
      st = Status{};
      ASSERT_OK(dev, dev.wait(&r, &st));
      EXPECT_EQ(r, nullptr);
      EXPECT_TRUE(st.cancelled);
      EXPECT_EQ(st.bytes, 0u);
      EXPECT_EQ(dev.posted_depth(), 0u) << "a cancelled receive left in the posted queue";
    }
    // A cancelled receive that is freed instead of waited for.
    Request* r = nullptr;
    ASSERT_OK(dev, dev.irecv(dead.data(), dead.size(), byte(), 1, 7, dev.world(), &r));
    ASSERT_OK(dev, dev.cancel(r));
    ASSERT_OK(dev, dev.request_free(&r));
    EXPECT_EQ(r, nullptr);
    EXPECT_EQ(owned_requests(dev), live);
    // The message goes to a receive posted afterwards, not to a cancelled one.
    notify(dev, ctl, 1, kGo);
    std::vector<unsigned char> buf(64);
    Status st;
    ASSERT_OK(dev, dev.recv(buf.data(), buf.size(), byte(), 1, 7, dev.world(), &st));
    EXPECT_FALSE(st.cancelled);
    EXPECT_TRUE(has_pattern(buf.data(), 64, 7));
    EXPECT_TRUE(all_bytes(dead.data(), 0, dead.size(), 0x5A)) << "a cancelled receive got data";
    EXPECT_EQ(owned_requests(dev), live);
  });
}

// Cancel after the match: the receive is not cancelled and gets all data
// (for rendezvous, the data may still be on its way when cancel is called).
TEST_P(CancelFree, CancelMatchedReceive) {
  run(2, [](Device& dev) {
    adi3::Comm ctl = ctl_comm(dev);
    for (std::size_t n : sizes_of(dev)) {
      SCOPED_TRACE("bytes " + std::to_string(n));
      if (dev.rank() == 1) {
        await(dev, ctl, 0, kGo);
        std::vector<unsigned char> d = pattern(n, 8);
        Request* r = nullptr;
        ASSERT_OK(dev, dev.isend(d.data(), n, byte(), 0, 8, dev.world(), SendMode::Standard, &r));
        notify(dev, ctl, 0, kDone);  // after the envelope: rank 0 has matched when it sees this
        ASSERT_OK(dev, dev.wait(&r, nullptr));
        continue;
      }
      std::vector<unsigned char> buf(n);
      Request* r = nullptr;
      ASSERT_OK(dev, dev.irecv(buf.data(), n, byte(), 1, 8, dev.world(), &r));
      notify(dev, ctl, 1, kGo);
      await(dev, ctl, 1, kDone);
      EXPECT_EQ(dev.posted_depth(), 0u) << "the receive should have matched";
      ASSERT_OK(dev, dev.cancel(r));
      Status st;
      ASSERT_OK(dev, dev.wait(&r, &st));
      EXPECT_FALSE(st.cancelled) << "a matched receive cannot be cancelled";
      EXPECT_EQ(st.source, 1);
      EXPECT_EQ(st.bytes, n);
      EXPECT_TRUE(has_pattern(buf.data(), n, 8));
    }
  });
}

// Cancel of a send nobody has received: MPI requires the wait to return
// without the receiver's help, with the send either cancelled (then no
// receive may get it) or completed (then the receiver gets it).
void cancel_unmatched_send(Device& dev, SendMode mode, const std::vector<std::size_t>& sizes) {
  adi3::Comm ctl = ctl_comm(dev);
  for (std::size_t n : sizes) {
    SCOPED_TRACE(std::string(mode == SendMode::Standard ? "standard" : "synchronous") + ", bytes " + std::to_string(n));
    if (dev.rank() == 1) {
      int64_t cancelled = recv_int(dev, ctl, 0, kResult);
      await(dev, ctl, 0, kDone);  // anything sent before this has arrived
      Status st;
      bool flag = false;
      EXPECT_OK(dev, dev.iprobe(0, 9, dev.world(), &flag, &st));
      EXPECT_EQ(flag, cancelled == 0) << (cancelled ? "a cancelled send arrived" : "a completed send is lost");
      if (flag) {
        std::vector<unsigned char> buf(n);
        EXPECT_OK(dev, dev.recv(buf.data(), n, byte(), 0, 9, dev.world(), &st));
        EXPECT_TRUE(has_pattern(buf.data(), n, 9));
      }
      notify(dev, ctl, 0, kAck);
      continue;
    }
    std::vector<unsigned char> d = pattern(n, 9);
    Request* r = nullptr;
    ASSERT_OK(dev, dev.isend(d.data(), n, byte(), 1, 9, dev.world(), mode, &r));
    ASSERT_OK(dev, dev.cancel(r));
    // MPI_Wait on a send marked for cancellation is local: poll with a
    // deadline instead of hanging if it is not.
    bool flag = false;
    Status st;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (!flag && std::chrono::steady_clock::now() < deadline) {
      ASSERT_OK(dev, dev.test(&r, &flag, &st));
      if (!flag) std::this_thread::yield();
    }
    EXPECT_TRUE(flag) << "wait on a send marked for cancellation did not return without the receiver";
    send_int(dev, ctl, 1, flag && st.cancelled ? 1 : 0, kResult);
    notify(dev, ctl, 1, kDone);
    if (!flag) ASSERT_OK(dev, dev.wait(&r, &st));  // the receiver takes it: clean up
    await(dev, ctl, 1, kAck);
  }
}

// Eager standard sends complete locally, so cancel may simply not cancel them.
TEST_P(CancelFree, CancelUnmatchedEagerSend) {
  run(2, [](Device& dev) { cancel_unmatched_send(dev, SendMode::Standard, {0, 1, 100, dev.eager_limit()}); });
}

TEST_P(CancelFree, CancelUnmatchedRendezvousOrSynchronousSend) {
  run(2, [](Device& dev) {
    cancel_unmatched_send(dev, SendMode::Standard, {dev.eager_limit() + 1, 1 << 20});
    cancel_unmatched_send(dev, SendMode::Synchronous, {0, 100, dev.eager_limit() + 1, 1 << 20});
  });
}

// Cancel must succeed for an unmatched send whatever its mode and size,
// also when it already left (an eager standard send is complete once the
// channel took it): the receiver, waiting in a receive for another
// message, withdraws it from its unexpected queue and answers.
TEST_P(CancelFree, CancelSendThatLeftWhileReceiverWaitsForAnother) {
  run(2, [](Device& dev) {
    adi3::Comm ctl = ctl_comm(dev);
    struct Case {
      SendMode mode;
      std::size_t bytes;
    };
    const Case cases[] = {{SendMode::Standard, 0},
                          {SendMode::Standard, 100},
                          {SendMode::Standard, dev.eager_limit()},
                          {SendMode::Standard, dev.eager_limit() + 1},
                          {SendMode::Standard, 1 << 20},
                          {SendMode::Synchronous, 100},
                          {SendMode::Synchronous, 1 << 20}};
    int tag = 60;
    for (const Case& c : cases) {
      ++tag;
      SCOPED_TRACE(std::string(c.mode == SendMode::Standard ? "standard" : "synchronous") + ", bytes " +
                   std::to_string(c.bytes));
      if (dev.rank() == 1) {
        // In a receive for another message (polling) while rank 0 cancels.
        ASSERT_EQ(recv_int(dev, ctl, 0, kResult), 1) << "the send was not cancelled";
        bool flag = true;
        ASSERT_OK(dev, dev.iprobe(0, tag, dev.world(), &flag, nullptr));
        EXPECT_FALSE(flag) << "a cancelled message is still receivable";
        continue;
      }
      std::vector<unsigned char> d = pattern(c.bytes, 9);
      Request* r = nullptr;
      ASSERT_OK(dev, dev.isend(d.data(), c.bytes, byte(), 1, tag, dev.world(), c.mode, &r));
      // Let it leave and reach rank 1's unexpected queue.
      for (int i = 0; i < 200; ++i) {
        dev.progress();
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
      ASSERT_OK(dev, dev.cancel(r));
      Status st;
      ASSERT_OK(dev, dev.wait(&r, &st));
      EXPECT_TRUE(st.cancelled) << "an unmatched send that left was not cancelled";
      send_int(dev, ctl, 1, st.cancelled ? 1 : 0, kResult);
    }
  });
}

// request_free on active sends: the message is still delivered, and the
// request is reclaimed once the send completes.
TEST_P(CancelFree, FreeActiveSend) {
  run(2, [](Device& dev) {
    adi3::Comm ctl = ctl_comm(dev);
    const std::size_t live = owned_requests(dev);
    for (SendMode mode : {SendMode::Standard, SendMode::Synchronous}) {
      for (std::size_t n : sizes_of(dev)) {
        SCOPED_TRACE(std::string(mode == SendMode::Standard ? "standard" : "synchronous") + ", bytes " +
                     std::to_string(n));
        if (dev.rank() == 1) {
          await(dev, ctl, 0, kGo);
          std::vector<unsigned char> buf(n);
          Status st;
          ASSERT_OK(dev, dev.recv(buf.data(), n, byte(), 0, 10, dev.world(), &st));
          EXPECT_EQ(st.bytes, n);
          EXPECT_TRUE(has_pattern(buf.data(), n, 10));
          notify(dev, ctl, 0, kAck);
          continue;
        }
        std::vector<unsigned char> d = pattern(n, 10);  // must live until the ack
        Request* r = nullptr;
        ASSERT_OK(dev, dev.isend(d.data(), n, byte(), 1, 10, dev.world(), mode, &r));
        ASSERT_OK(dev, dev.request_free(&r));
        EXPECT_EQ(r, nullptr);
        notify(dev, ctl, 1, kGo);
        await(dev, ctl, 1, kAck);
        // Everything the send needed arrived before the ack (same pair, in order).
        EXPECT_EQ(owned_requests(dev), live) << "freed send request not reclaimed";
      }
    }
  });
}

// request_free on an active receive: the data still lands in the buffer.
TEST_P(CancelFree, FreeActiveReceive) {
  run(2, [](Device& dev) {
    adi3::Comm ctl = ctl_comm(dev);
    const std::size_t live = owned_requests(dev);
    for (std::size_t n : sizes_of(dev)) {
      for (bool any : {false, true}) {
        SCOPED_TRACE("bytes " + std::to_string(n) + (any ? ", wildcards" : ""));
        if (dev.rank() == 1) {
          await(dev, ctl, 0, kGo);
          std::vector<unsigned char> d = pattern(n, 11);
          ASSERT_OK(dev, dev.send(d.data(), n, byte(), 0, 11, dev.world()));
          notify(dev, ctl, 0, kDone);  // after the send completed: all its data went out before this
          continue;
        }
        std::vector<unsigned char> buf(n + 8, 0);
        Request* r = nullptr;
        ASSERT_OK(dev, dev.irecv(buf.data(), n, byte(), any ? kAnySource : 1, any ? kAnyTag : 11, dev.world(), &r));
        ASSERT_OK(dev, dev.request_free(&r));
        EXPECT_EQ(r, nullptr);
        notify(dev, ctl, 1, kGo);
        await(dev, ctl, 1, kDone);
        EXPECT_TRUE(has_pattern(buf.data(), n, 11)) << "data of a freed receive";
        EXPECT_TRUE(all_bytes(buf.data(), n, n + 8, 0));
        EXPECT_EQ(owned_requests(dev), live) << "freed receive request not reclaimed";
      }
    }
  });
}

// A completed request freed instead of waited for.
TEST_P(CancelFree, FreeCompletedRequests) {
  run(2, [](Device& dev) {
    adi3::Comm ctl = ctl_comm(dev);
    const std::size_t live = owned_requests(dev);
    int peer = 1 - dev.rank();
    std::vector<unsigned char> out = pattern(100, 12), in(100);
    Request* s = nullptr;
    Request* r = nullptr;
    ASSERT_OK(dev, dev.irecv(in.data(), in.size(), byte(), peer, 12, dev.world(), &r));
    ASSERT_OK(dev, dev.isend(out.data(), out.size(), byte(), peer, 12, dev.world(), SendMode::Standard, &s));
    bool flag = false;
    while (!flag) ASSERT_OK(dev, dev.request_get_status(r, &flag, nullptr));
    flag = false;
    while (!flag) ASSERT_OK(dev, dev.request_get_status(s, &flag, nullptr));
    ASSERT_OK(dev, dev.request_free(&r));
    ASSERT_OK(dev, dev.request_free(&s));
    EXPECT_TRUE(has_pattern(in.data(), in.size(), 12));
    EXPECT_EQ(owned_requests(dev), live);
    // A null request cannot be freed.
    Request* null = nullptr;
    int e = dev.request_free(&null);
    EXPECT_EQ(adi3::error_class_of(e), adi3::ErrorClass::Request) << why(dev, e);
    notify(dev, ctl, peer);  // keep the ranks together until both are done
    await(dev, ctl, peer);
  });
}

CORE_INSTANTIATE(CancelFree);

}  // namespace
