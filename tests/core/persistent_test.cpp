// Persistent requests: send_init / recv_init, start / startall, reuse many
// times in every send mode, the inactive state (wait/test return an empty
// status at once), start on an active request (an error), cancel, free, and
// PROC_NULL.
#include <algorithm>

#include "harness.hpp"

namespace {

using namespace core_test;
using adi3::ErrorClass;
using adi3::kAnySource;
using adi3::kAnyTag;
using adi3::kProcNull;
using adi3::kUndefined;
using adi3::Request;
using adi3::SendMode;
using adi3::Status;

constexpr int kReady = 40, kGo = 41, kAck = 42;

using Param = std::tuple<Setup, SendMode>;
struct ParamName {
  std::string operator()(const ::testing::TestParamInfo<Param>& i) const {
    const char* modes[] = {"Standard", "Synchronous", "Ready", "Buffered"};
    return std::get<0>(i.param).name + "_" + modes[static_cast<int>(std::get<1>(i.param))];
  }
};
class PersistentModes : public ::testing::TestWithParam<Param> {};

// One persistent pair reused many times; the data changes every round.
TEST_P(PersistentModes, ReuseManyTimes) {
  const auto& [setup, mode] = GetParam();
  run_ranks(setup, 2, [&, mode = mode](Device& dev) {
    adi3::Comm ctl = ctl_comm(dev);
    const std::size_t sizes[] = {0, 16, dev.eager_limit(), dev.eager_limit() + 1, 256 << 10};
    for (std::size_t n : sizes) {
      SCOPED_TRACE("bytes " + std::to_string(n));
      const int rounds = n > 100000 ? 12 : 60;
      const int tag = 3 + static_cast<int>(n % 7);
      std::vector<unsigned char> buf(n + 16);
      if (dev.rank() == 0) {
        std::vector<unsigned char> attached;
        if (mode == SendMode::Buffered) {
          // Each start copies the data into the attached buffer; a message
          // leaves it once transmitted, so room for a few of them.
          attached.resize(4 * (n + 2 * adi3::BsendBuffer::kOverhead));
          ASSERT_OK(dev, dev.buffer_attach(attached.data(), attached.size()));
        }
        Request* r = nullptr;
        ASSERT_OK(dev, dev.send_init(buf.data(), n, byte(), 1, tag, dev.world(), mode, &r));
        for (int i = 0; i < rounds; ++i) {
          fill_pattern(buf.data(), n, static_cast<uint32_t>(i));
          // Ready mode: the receive is started first. The others need this
          // too when the buffered copies must not pile up.
          if (mode == SendMode::Ready || mode == SendMode::Buffered) await(dev, ctl, 1, kReady);
          ASSERT_OK(dev, dev.start(r));
          ASSERT_OK(dev, dev.wait(&r, nullptr));
          ASSERT_NE(r, nullptr) << "a persistent request survives its completion";
        }
        ASSERT_OK(dev, dev.request_free(&r));
        if (mode == SendMode::Buffered) {
          void* p = nullptr;
          std::size_t bytes = 0;
          ASSERT_OK(dev, dev.buffer_detach(&p, &bytes));
        }
      } else {
        Request* r = nullptr;
        ASSERT_OK(dev, dev.recv_init(buf.data(), n, byte(), 0, tag, dev.world(), &r));
        for (int i = 0; i < rounds; ++i) {
          std::memset(buf.data(), 0, buf.size());
          ASSERT_OK(dev, dev.start(r));
          if (mode == SendMode::Ready || mode == SendMode::Buffered) notify(dev, ctl, 0, kReady);
          Status st;
          ASSERT_OK(dev, dev.wait(&r, &st));
          ASSERT_NE(r, nullptr);
          EXPECT_EQ(st.source, 0);
          EXPECT_EQ(st.tag, tag);
          EXPECT_EQ(st.bytes, n);
          ASSERT_TRUE(has_pattern(buf.data(), n, static_cast<uint32_t>(i))) << "round " << i;
          ASSERT_TRUE(all_bytes(buf.data(), n, buf.size(), 0));
        }
        ASSERT_OK(dev, dev.request_free(&r));
      }
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Channels, PersistentModes,
                         ::testing::Combine(::testing::ValuesIn(setups()),
                                            ::testing::Values(SendMode::Standard, SendMode::Synchronous,
                                                              SendMode::Ready, SendMode::Buffered)),
                         ParamName{});

class Persistent : public CoreTest {};

// startall over sends of several sizes and receives with wildcards.
TEST_P(Persistent, StartallWaitall) {
  run(2, [](Device& dev) {
    constexpr int kN = 4;
    const std::size_t sizes[kN] = {1, dev.eager_limit(), dev.eager_limit() + 1, 100000};
    std::vector<std::vector<unsigned char>> bufs;
    for (std::size_t n : sizes) bufs.emplace_back(n);
    Request* reqs[kN];
    const int peer = 1 - dev.rank();
    for (int i = 0; i < kN; ++i) {
      if (dev.rank() == 0) {
        ASSERT_OK(dev, dev.send_init(bufs[i].data(), sizes[i], byte(), peer, 60 + i, dev.world(),
                                     i == 1 ? SendMode::Synchronous : SendMode::Standard, &reqs[i]));
      } else {
        // Tags differ, so each receive gets its own message even with wildcards.
        int src = i == 2 ? kAnySource : peer;
        ASSERT_OK(dev, dev.recv_init(bufs[i].data(), sizes[i], byte(), src, 60 + i, dev.world(), &reqs[i]));
      }
    }
    for (int round = 0; round < 30; ++round) {
      for (int i = 0; i < kN; ++i) {
        if (dev.rank() == 0) fill_pattern(bufs[i].data(), sizes[i], static_cast<uint32_t>(round * kN + i));
      }
      ASSERT_OK(dev, dev.startall(kN, reqs));
      Status st[kN];
      ASSERT_OK(dev, dev.waitall(kN, reqs, st));
      for (int i = 0; i < kN; ++i) {
        ASSERT_NE(reqs[i], nullptr);
        if (dev.rank() == 1) {
          EXPECT_EQ(st[i].source, 0);
          EXPECT_EQ(st[i].tag, 60 + i);
          EXPECT_EQ(st[i].bytes, sizes[i]);
          EXPECT_TRUE(has_pattern(bufs[i].data(), sizes[i], static_cast<uint32_t>(round * kN + i)))
              << "round " << round << " request " << i;
        }
      }
    }
    for (auto& r : reqs) ASSERT_OK(dev, dev.request_free(&r));
  });
}

// Inactive persistent requests (never started, or completed) behave like
// null requests in the wait/test family: an empty status at once.
TEST_P(Persistent, InactiveRequestsReturnEmptyStatus) {
  run(2, [](Device& dev) {
    adi3::Comm ctl = ctl_comm(dev);
    const std::size_t owned = owned_requests(dev);
    std::vector<unsigned char> buf(32);
    Request* r = nullptr;
    if (dev.rank() == 1) {
      await(dev, ctl, 0, kGo);
      std::vector<unsigned char> d = pattern(32, 5);
      ASSERT_OK(dev, dev.send(d.data(), 32, byte(), 0, 5, dev.world()));
      await(dev, ctl, 0, kAck);
      return;
    }
    ASSERT_OK(dev, dev.recv_init(buf.data(), buf.size(), byte(), 1, 5, dev.world(), &r));
    auto check_inactive = [&](const char* when) {
      SCOPED_TRACE(when);
      Status st;
      st.source = 77;
      EXPECT_OK(dev, dev.wait(&r, &st));
      EXPECT_TRUE(is_empty_status(st));
      EXPECT_NE(r, nullptr) << "wait on an inactive request must not free it";
      bool flag = false;
      st.tag = 77;
      EXPECT_OK(dev, dev.test(&r, &flag, &st));
      EXPECT_TRUE(flag);
      EXPECT_TRUE(is_empty_status(st));
      flag = false;
      st.bytes = 77;
      EXPECT_OK(dev, dev.request_get_status(r, &flag, &st));
      EXPECT_TRUE(flag);
      EXPECT_TRUE(is_empty_status(st));
      int index = 5;
      EXPECT_OK(dev, dev.waitany(1, &r, &index, &st));
      EXPECT_EQ(index, kUndefined);
      EXPECT_TRUE(is_empty_status(st));
      int outcount = 5, indices[1] = {-5};
      EXPECT_OK(dev, dev.waitsome(1, &r, &outcount, indices, &st));
      EXPECT_EQ(outcount, kUndefined);
      ASSERT_NE(r, nullptr);
    };
    check_inactive("before the first start");
    ASSERT_OK(dev, dev.start(r));
    // Starting an active request is an error; the operation goes on.
    int e = dev.start(r);
    EXPECT_EQ(adi3::error_class_of(e), ErrorClass::Request) << why(dev, e);
    EXPECT_EQ(dev.posted_depth(), 1u) << "the failed start must not post a second receive";
    bool flag = true;
    EXPECT_OK(dev, dev.test(&r, &flag, nullptr));
    EXPECT_FALSE(flag) << "active and unmatched";
    notify(dev, ctl, 1, kGo);
    Status st;
    ASSERT_OK(dev, dev.wait(&r, &st));
    EXPECT_EQ(st.source, 1);
    EXPECT_EQ(st.bytes, 32u);
    EXPECT_TRUE(has_pattern(buf.data(), 32, 5));
    check_inactive("after completion");
    // Start on a request that is not persistent is an error too.
    Request* plain = nullptr;
    ASSERT_OK(dev, dev.irecv(buf.data(), 1, byte(), adi3::kProcNull, 0, dev.world(), &plain));
    e = dev.start(plain);
    EXPECT_EQ(adi3::error_class_of(e), ErrorClass::Request) << why(dev, e);
    ASSERT_OK(dev, dev.wait(&plain, nullptr));
    e = dev.start(nullptr);
    EXPECT_EQ(adi3::error_class_of(e), ErrorClass::Request) << why(dev, e);
    // Freeing an inactive persistent request reclaims it.
    ASSERT_OK(dev, dev.request_free(&r));
    EXPECT_EQ(r, nullptr);
    EXPECT_EQ(owned_requests(dev), owned);
    notify(dev, ctl, 1, kAck);
  });
}

TEST_P(Persistent, ProcNull) {
  run(1, [](Device& dev) {
    unsigned char buf[8];
    std::memset(buf, 0x11, sizeof buf);
    Request* reqs[2] = {nullptr, nullptr};
    ASSERT_OK(dev, dev.send_init(buf, sizeof buf, byte(), kProcNull, 1, dev.world(), SendMode::Standard, &reqs[0]));
    ASSERT_OK(dev, dev.recv_init(buf, sizeof buf, byte(), kProcNull, 1, dev.world(), &reqs[1]));
    for (int round = 0; round < 3; ++round) {
      ASSERT_OK(dev, dev.startall(2, reqs));
      bool flag = false;
      Status st[2];
      ASSERT_OK(dev, dev.testall(2, reqs, &flag, st));
      EXPECT_TRUE(flag) << "PROC_NULL operations complete at once";
      if (!flag) ASSERT_OK(dev, dev.waitall(2, reqs, st));
      EXPECT_EQ(st[1].source, kProcNull);
      EXPECT_EQ(st[1].tag, kAnyTag);
      EXPECT_EQ(st[1].bytes, 0u);
      EXPECT_TRUE(all_bytes(buf, 0, sizeof buf, 0x11));
    }
    ASSERT_OK(dev, dev.request_free(&reqs[0]));
    ASSERT_OK(dev, dev.request_free(&reqs[1]));
  });
}

// Cancel of a started, unmatched persistent receive; it can be restarted.
TEST_P(Persistent, CancelThenRestart) {
  run(2, [](Device& dev) {
    adi3::Comm ctl = ctl_comm(dev);
    if (dev.rank() == 1) {
      await(dev, ctl, 0, kGo);
      std::vector<unsigned char> d = pattern(dev.eager_limit() + 1, 6);
      ASSERT_OK(dev, dev.send(d.data(), d.size(), byte(), 0, 6, dev.world()));
      return;
    }
    std::vector<unsigned char> buf(dev.eager_limit() + 1, 0);
    Request* r = nullptr;
    ASSERT_OK(dev, dev.recv_init(buf.data(), buf.size(), byte(), kAnySource, kAnyTag, dev.world(), &r));
    for (int i = 0; i < 3; ++i) {
      ASSERT_OK(dev, dev.start(r));
      ASSERT_OK(dev, dev.cancel(r));
      Status st;
      ASSERT_OK(dev, dev.wait(&r, &st));
      EXPECT_TRUE(st.cancelled) << "round " << i;
      ASSERT_NE(r, nullptr);
      EXPECT_EQ(dev.posted_depth(), 0u);
    }
    ASSERT_OK(dev, dev.start(r));
    notify(dev, ctl, 1, kGo);
    Status st;
    ASSERT_OK(dev, dev.wait(&r, &st));
    EXPECT_FALSE(st.cancelled) << "a restarted receive keeps no cancelled state";
    EXPECT_EQ(st.source, 1);
    EXPECT_EQ(st.tag, 6);
    EXPECT_EQ(st.bytes, buf.size());
    EXPECT_TRUE(has_pattern(buf.data(), buf.size(), 6));
    ASSERT_OK(dev, dev.request_free(&r));
  });
}

// Cancel of a started persistent send that left at once (an eager standard
// send is complete when the channel takes it) but waits unmatched at the
// receiver: each round is withdrawn; the request restarts cleanly and its
// last round is received exactly once.
TEST_P(Persistent, CancelSendThenRestart) {
  run(2, [](Device& dev) {
    adi3::Comm ctl = ctl_comm(dev);
    const std::size_t n = std::min<std::size_t>(100, dev.eager_limit());
    const int rounds = 3;
    if (dev.rank() == 1) {
      // Polls in this wait while rank 0 cancels (the cancels need answers).
      await(dev, ctl, 0, kGo);
      std::vector<unsigned char> buf(n);
      Status st;
      ASSERT_OK(dev, dev.recv(buf.data(), n, byte(), 0, 8, dev.world(), &st));
      EXPECT_EQ(st.bytes, n);
      EXPECT_TRUE(has_pattern(buf.data(), n, rounds));
      bool flag = true;
      ASSERT_OK(dev, dev.iprobe(0, 8, dev.world(), &flag, nullptr));
      EXPECT_FALSE(flag) << "a cancelled round was delivered";
      notify(dev, ctl, 0, kAck);
      return;
    }
    std::vector<unsigned char> buf(n);
    Request* r = nullptr;
    ASSERT_OK(dev, dev.send_init(buf.data(), n, byte(), 1, 8, dev.world(), SendMode::Standard, &r));
    for (int i = 0; i < rounds; ++i) {
      fill_pattern(buf.data(), n, static_cast<uint32_t>(i));
      ASSERT_OK(dev, dev.start(r));
      ASSERT_OK(dev, dev.cancel(r));
      Status st;
      ASSERT_OK(dev, dev.wait(&r, &st));
      EXPECT_TRUE(st.cancelled) << "round " << i;
      ASSERT_NE(r, nullptr);
    }
    fill_pattern(buf.data(), n, static_cast<uint32_t>(rounds));
    ASSERT_OK(dev, dev.start(r));
    Status st;
    ASSERT_OK(dev, dev.wait(&r, &st));
    EXPECT_FALSE(st.cancelled) << "a restarted send keeps no cancelled state";
    notify(dev, ctl, 1, kGo);
    await(dev, ctl, 1, kAck);
    ASSERT_OK(dev, dev.request_free(&r));
  });
}

// request_free on active persistent requests: the operations complete, the
// requests are reclaimed afterwards.
TEST_P(Persistent, FreeWhileActive) {
  run(2, [](Device& dev) {
    adi3::Comm ctl = ctl_comm(dev);
    const std::size_t owned = owned_requests(dev);
    for (std::size_t n : {std::size_t{10}, dev.eager_limit() + 1, std::size_t{1} << 20}) {
      SCOPED_TRACE("bytes " + std::to_string(n));
      std::vector<unsigned char> buf(n);
      Request* r = nullptr;
      if (dev.rank() == 0) {
        fill_pattern(buf.data(), n, 7);
        ASSERT_OK(dev, dev.send_init(buf.data(), n, byte(), 1, 7, dev.world(), SendMode::Standard, &r));
        ASSERT_OK(dev, dev.start(r));
        ASSERT_OK(dev, dev.request_free(&r));
        notify(dev, ctl, 1, kGo);
        await(dev, ctl, 1, kAck);  // the send's last packets came before this
        EXPECT_EQ(owned_requests(dev), owned);
      } else {
        ASSERT_OK(dev, dev.recv_init(buf.data(), n, byte(), 0, 7, dev.world(), &r));
        ASSERT_OK(dev, dev.start(r));
        ASSERT_OK(dev, dev.request_free(&r));
        await(dev, ctl, 0, kGo);
        // The freed receive has no handle to wait on; a second message on the
        // control communicator cannot tell when its data is in, so probe the
        // buffer until it is (the watchdog fails the test if never).
        const std::vector<unsigned char> want = pattern(n, 7);
        while (std::memcmp(buf.data(), want.data(), n) != 0) dev.progress();
        notify(dev, ctl, 0, kAck);
        EXPECT_EQ(owned_requests(dev), owned);
      }
    }
  });
}

// A persistent receive truncated in one round is clean in the next.
TEST_P(Persistent, TruncationDoesNotStick) {
  run(2, [](Device& dev) {
    const std::size_t cap = dev.eager_limit() + 10;
    const std::size_t sizes[] = {cap + 1, cap, 5, 3 * cap, 1};
    std::vector<unsigned char> buf(cap);
    Request* r = nullptr;
    if (dev.rank() == 1) {
      for (std::size_t n : sizes) {
        std::vector<unsigned char> d = pattern(n, static_cast<uint32_t>(n));
        ASSERT_OK(dev, dev.send(d.data(), n, byte(), 0, 8, dev.world()));
      }
      return;
    }
    ASSERT_OK(dev, dev.recv_init(buf.data(), cap, byte(), 1, 8, dev.world(), &r));
    for (std::size_t n : sizes) {
      SCOPED_TRACE("bytes " + std::to_string(n));
      ASSERT_OK(dev, dev.start(r));
      Status st;
      int e = dev.wait(&r, &st);
      if (n > cap) {
        EXPECT_EQ(adi3::error_class_of(e), ErrorClass::Truncate) << why(dev, e);
        EXPECT_EQ(st.bytes, cap);
      } else {
        EXPECT_EQ(e, 0) << "an earlier truncation stuck to the request: " << why(dev, e);
        EXPECT_EQ(st.error, 0);
        EXPECT_EQ(st.bytes, n);
      }
      EXPECT_TRUE(has_pattern(buf.data(), std::min(n, cap), static_cast<uint32_t>(n)));
    }
    ASSERT_OK(dev, dev.request_free(&r));
  });
}

CORE_INSTANTIATE(Persistent);

}  // namespace
