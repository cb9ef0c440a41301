// probe / iprobe and the matched probes mprobe / improbe with mrecv / imrecv:
// what they see, that a plain probe leaves the message in place, that a
// message taken by a matched probe can be received by nothing else, and the
// PROC_NULL cases.
#include <thread>

#include "harness.hpp"

namespace {

using namespace core_test;
using adi3::kAnySource;
using adi3::kAnyTag;
using adi3::kProcNull;
using adi3::Request;
using adi3::Status;

constexpr int kGo = 20, kSent = 21;

class Probe : public CoreTest {};

// Message sizes: eager, one past the eager limit, and a large rendezvous.
std::vector<std::size_t> probe_sizes(const Device& dev) { return {0, 10, dev.eager_limit() + 1, 1 << 20}; }

bool iprobe_until(Device& dev, int src, int tag, Status* st) {
  bool flag = false;
  for (;;) {
    int e = dev.iprobe(src, tag, dev.world(), &flag, st);
    EXPECT_EQ(e, 0) << why(dev, e);
    if (e || flag) return flag;
    std::this_thread::yield();
  }
}

void send_pattern(Device& dev, int to, int tag, std::size_t n, uint32_t seed) {
  std::vector<unsigned char> d = pattern(n, seed);
  ASSERT_OK(dev, dev.send(d.data(), n, byte(), to, tag, dev.world()));
}

// Receives (any way) into a fresh buffer and checks size and content.
void expect_message(Device& dev, const Status& st, const std::vector<unsigned char>& buf, int src, int tag,
                    std::size_t n, uint32_t seed) {
  (void)dev;
  EXPECT_EQ(st.source, src);
  EXPECT_EQ(st.tag, tag);
  EXPECT_EQ(st.bytes, n);
  EXPECT_TRUE(has_pattern(buf.data(), n, seed));
}

TEST_P(Probe, IprobeSeesOnlyArrivedMessagesAndLeavesThem) {
  run(2, [](Device& dev) {
    adi3::Comm ctl = ctl_comm(dev);
    for (std::size_t n : probe_sizes(dev)) {
      SCOPED_TRACE("bytes " + std::to_string(n));
      if (dev.rank() == 0) {
        bool flag = true;
        Status st;
        EXPECT_OK(dev, dev.iprobe(1, 3, dev.world(), &flag, &st));
        EXPECT_FALSE(flag) << "nothing was sent yet";
        EXPECT_OK(dev, dev.iprobe(kAnySource, kAnyTag, dev.world(), &flag, &st));
        EXPECT_FALSE(flag);
        notify(dev, ctl, 1, kGo);
        ASSERT_TRUE(iprobe_until(dev, 1, 3, &st));
        EXPECT_EQ(st.source, 1);
        EXPECT_EQ(st.tag, 3);
        EXPECT_EQ(st.bytes, n);
        // Still there, for every pattern that matches it.
        for (auto [s, t] : {std::pair{1, 3}, {kAnySource, 3}, {1, kAnyTag}, {kAnySource, kAnyTag}}) {
          Status again;
          EXPECT_OK(dev, dev.iprobe(s, t, dev.world(), &flag, &again));
          EXPECT_TRUE(flag) << "probe(" << s << ", " << t << ")";
          EXPECT_EQ(again.bytes, n);
        }
        EXPECT_OK(dev, dev.probe(1, 3, dev.world(), &st));
        EXPECT_EQ(st.bytes, n);
        EXPECT_OK(dev, dev.iprobe(1, 4, dev.world(), &flag, &st));
        EXPECT_FALSE(flag) << "other tag";
        std::vector<unsigned char> buf(n);
        EXPECT_OK(dev, dev.recv(buf.data(), n, byte(), 1, 3, dev.world(), &st));
        expect_message(dev, st, buf, 1, 3, n, 3);
        EXPECT_OK(dev, dev.iprobe(kAnySource, kAnyTag, dev.world(), &flag, &st));
        EXPECT_FALSE(flag) << "received messages are gone";
      } else {
        await(dev, ctl, 0, kGo);
        send_pattern(dev, 0, 3, n, 3);
      }
    }
  });
}

// probe with wildcards returns the oldest matching message; the receive of
// what the probe returned gets exactly that message.
TEST_P(Probe, ProbeFollowsMatchingOrder) {
  run(2, [](Device& dev) {
    adi3::Comm ctl = ctl_comm(dev);
    const std::size_t big = dev.eager_limit() + 100;
    if (dev.rank() == 1) {
      send_pattern(dev, 0, 1, 8, 1);
      send_pattern(dev, 0, 2, big, 2);  // rendezvous: the sender waits in send
      send_pattern(dev, 0, 3, 24, 3);
      notify(dev, ctl, 0, kSent);
      return;
    }
    Status st;
    // The rendezvous send blocks rank 1 until received: probe it first.
    ASSERT_OK(dev, dev.probe(1, 2, dev.world(), &st));
    EXPECT_EQ(st.bytes, big);
    EXPECT_OK(dev, dev.probe(1, kAnyTag, dev.world(), &st));
    EXPECT_EQ(st.tag, 1) << "oldest message of the source";
    EXPECT_OK(dev, dev.probe(kAnySource, kAnyTag, dev.world(), &st));
    EXPECT_EQ(st.tag, 1);
    std::vector<unsigned char> buf(big);
    EXPECT_OK(dev, dev.recv(buf.data(), big, byte(), st.source, st.tag, dev.world(), &st));
    expect_message(dev, st, buf, 1, 1, 8, 1);
    EXPECT_OK(dev, dev.probe(kAnySource, kAnyTag, dev.world(), &st));
    EXPECT_EQ(st.tag, 2);
    EXPECT_EQ(st.bytes, big);
    EXPECT_OK(dev, dev.recv(buf.data(), big, byte(), kAnySource, st.tag, dev.world(), &st));
    expect_message(dev, st, buf, 1, 2, big, 2);
    await(dev, ctl, 1, kSent);
    EXPECT_OK(dev, dev.probe(kAnySource, 3, dev.world(), &st));
    EXPECT_EQ(st.bytes, 24u);
    EXPECT_OK(dev, dev.recv(buf.data(), big, byte(), 1, kAnyTag, dev.world(), &st));
    expect_message(dev, st, buf, 1, 3, 24, 3);
  });
}

// A message taken by mprobe is invisible to probes and receives; the next
// message with the same envelope goes to them instead.
TEST_P(Probe, MprobedMessageBelongsToMrecvOnly) {
  run(2, [](Device& dev) {
    adi3::Comm ctl = ctl_comm(dev);
    for (std::size_t n : probe_sizes(dev)) {
      SCOPED_TRACE("bytes " + std::to_string(n));
      const std::size_t m = n / 2 + 5;  // the second message's size
      if (dev.rank() == 1) {
        std::vector<unsigned char> a = pattern(n, 50), b = pattern(m, 51);
        Request* r[2] = {nullptr, nullptr};
        ASSERT_OK(dev, dev.isend(a.data(), n, byte(), 0, 5, dev.world(), adi3::SendMode::Standard, &r[0]));
        notify(dev, ctl, 0, kSent);
        await(dev, ctl, 0, kGo);
        ASSERT_OK(dev, dev.isend(b.data(), m, byte(), 0, 5, dev.world(), adi3::SendMode::Standard, &r[1]));
        ASSERT_OK(dev, dev.waitall(2, r, nullptr));
        continue;
      }
      await(dev, ctl, 1, kSent);
      Request* msg = nullptr;
      Status st;
      ASSERT_OK(dev, dev.mprobe(1, 5, dev.world(), &msg, &st));
      ASSERT_NE(msg, nullptr);
      EXPECT_EQ(st.source, 1);
      EXPECT_EQ(st.tag, 5);
      EXPECT_EQ(st.bytes, n);
      bool flag = true;
      Request* other = nullptr;
      EXPECT_OK(dev, dev.iprobe(kAnySource, kAnyTag, dev.world(), &flag, &st));
      EXPECT_FALSE(flag) << "iprobe saw the mprobed message";
      EXPECT_OK(dev, dev.improbe(1, 5, dev.world(), &flag, &other, &st));
      EXPECT_FALSE(flag) << "improbe saw the mprobed message";
      EXPECT_EQ(other, nullptr);
      // A receive posted now must wait for the second message.
      std::vector<unsigned char> bbuf(n + m + 1), abuf(n + 1);
      Request* r = nullptr;
      ASSERT_OK(dev, dev.irecv(bbuf.data(), bbuf.size(), byte(), 1, 5, dev.world(), &r));
      for (int i = 0; i < 50; ++i) {
        EXPECT_OK(dev, dev.test(&r, &flag, &st));
        ASSERT_FALSE(flag) << "a receive got the mprobed message";
      }
      notify(dev, ctl, 1, kGo);
      ASSERT_OK(dev, dev.wait(&r, &st));
      expect_message(dev, st, bbuf, 1, 5, m, 51);
      ASSERT_OK(dev, dev.mrecv(abuf.data(), n, byte(), &msg, &st));
      EXPECT_EQ(msg, nullptr) << "mrecv sets the handle to the null message";
      expect_message(dev, st, abuf, 1, 5, n, 50);
    }
  });
}

TEST_P(Probe, ImprobeAndImrecv) {
  run(3, [](Device& dev) {
    adi3::Comm ctl = ctl_comm(dev);
    const std::size_t sizes[] = {1, dev.eager_limit(), dev.eager_limit() + 1, 200000};
    if (dev.rank() != 0) {
      await(dev, ctl, 0, kGo);
      for (std::size_t i = 0; i < 4; ++i) {
        send_pattern(dev, 0, 40 + static_cast<int>(i), sizes[i], static_cast<uint32_t>(dev.rank() * 10 + i));
      }
      return;
    }
    bool flag = true;
    Request* msg = reinterpret_cast<Request*>(0x1);
    Status st;
    EXPECT_OK(dev, dev.improbe(kAnySource, kAnyTag, dev.world(), &flag, &msg, &st));
    EXPECT_FALSE(flag);
    EXPECT_EQ(msg, nullptr) << "no message: the handle is null";
    notify(dev, ctl, 1, kGo);
    notify(dev, ctl, 2, kGo);
    // Each sender's messages in order (tags 40..43), the two senders in any
    // interleaving.
    std::size_t next[3] = {0, 0, 0};
    std::vector<Request*> reqs;
    std::vector<std::vector<unsigned char>> bufs;
    std::vector<Status> probed;
    while (reqs.size() < 8) {
      EXPECT_OK(dev, dev.improbe(kAnySource, kAnyTag, dev.world(), &flag, &msg, &st));
      if (!flag) {
        std::this_thread::yield();
        continue;
      }
      ASSERT_TRUE(st.source == 1 || st.source == 2) << st.source;
      std::size_t i = next[st.source]++;
      EXPECT_EQ(st.tag, 40 + static_cast<int>(i)) << "per-source order";
      EXPECT_EQ(st.bytes, sizes[i]);
      bufs.emplace_back(st.bytes);
      probed.push_back(st);
      Request* r = nullptr;
      ASSERT_OK(dev, dev.imrecv(bufs.back().data(), st.bytes, byte(), &msg, &r));
      EXPECT_EQ(msg, nullptr);
      reqs.push_back(r);
    }
    std::vector<Status> sts(reqs.size());
    ASSERT_OK(dev, dev.waitall(static_cast<int>(reqs.size()), reqs.data(), sts.data()));
    for (std::size_t k = 0; k < reqs.size(); ++k) {
      std::size_t i = static_cast<std::size_t>(probed[k].tag - 40);
      expect_message(dev, sts[k], bufs[k], probed[k].source, probed[k].tag, sizes[i],
                     static_cast<uint32_t>(probed[k].source * 10 + static_cast<int>(i)));
    }
  });
}

TEST_P(Probe, ProcNull) {
  run(1, [](Device& dev) {
    Status st;
    ASSERT_OK(dev, dev.probe(kProcNull, 3, dev.world(), &st));
    EXPECT_EQ(st.source, kProcNull);
    EXPECT_EQ(st.tag, kAnyTag);
    EXPECT_EQ(st.bytes, 0u);
    EXPECT_FALSE(st.cancelled);
    bool flag = false;
    st = Status{};
    ASSERT_OK(dev, dev.iprobe(kProcNull, kAnyTag, dev.world(), &flag, &st));
    EXPECT_TRUE(flag);
    EXPECT_EQ(st.source, kProcNull);
    EXPECT_EQ(st.tag, kAnyTag);
    EXPECT_EQ(st.bytes, 0u);

    // The PROC_NULL message (MPI_MESSAGE_NO_PROC).
    Request* msg = reinterpret_cast<Request*>(0x1);
    st = Status{};
    ASSERT_OK(dev, dev.mprobe(kProcNull, 0, dev.world(), &msg, &st));
    EXPECT_EQ(msg, nullptr);
    EXPECT_EQ(st.source, kProcNull);
    EXPECT_EQ(st.tag, kAnyTag);
    flag = false;
    msg = reinterpret_cast<Request*>(0x1);
    ASSERT_OK(dev, dev.improbe(kProcNull, kAnyTag, dev.world(), &flag, &msg, &st));
    EXPECT_TRUE(flag);
    EXPECT_EQ(msg, nullptr);
    EXPECT_EQ(st.source, kProcNull);

    unsigned char buf[16];
    std::memset(buf, 0xAB, sizeof buf);
    st = Status{};
    ASSERT_OK(dev, dev.mrecv(buf, sizeof buf, byte(), &msg, &st));
    EXPECT_EQ(st.source, kProcNull);
    EXPECT_EQ(st.tag, kAnyTag);
    EXPECT_EQ(st.bytes, 0u);
    EXPECT_TRUE(all_bytes(buf, 0, sizeof buf, 0xAB)) << "mrecv of the null message wrote data";

    Request* r = nullptr;
    ASSERT_OK(dev, dev.imrecv(buf, sizeof buf, byte(), &msg, &r));
    ASSERT_NE(r, nullptr);
    st = Status{};
    ASSERT_OK(dev, dev.test(&r, &flag, &st));
    EXPECT_TRUE(flag) << "imrecv of the null message completes at once";
    if (!flag) ASSERT_OK(dev, dev.wait(&r, &st));
    EXPECT_EQ(r, nullptr);
    EXPECT_EQ(st.source, kProcNull);
    EXPECT_EQ(st.tag, kAnyTag);
    EXPECT_EQ(st.bytes, 0u);
    EXPECT_TRUE(all_bytes(buf, 0, sizeof buf, 0xAB));
  });
}

// mrecv into a buffer smaller than the probed message truncates it.
TEST_P(Probe, MrecvTruncates) {
  run(2, [](Device& dev) {
    const std::size_t sizes[] = {dev.eager_limit(), dev.eager_limit() + 1, 300000};
    for (std::size_t n : sizes) {
      SCOPED_TRACE("bytes " + std::to_string(n));
      if (dev.rank() == 1) {
        send_pattern(dev, 0, 9, n, 9);
        continue;
      }
      Request* msg = nullptr;
      Status st;
      ASSERT_OK(dev, dev.mprobe(1, 9, dev.world(), &msg, &st));
      const std::size_t cap = n / 3;
      std::vector<unsigned char> buf(n, 0xEE);
      int e = dev.mrecv(buf.data(), cap, byte(), &msg, &st);
      EXPECT_EQ(adi3::error_class_of(e), adi3::ErrorClass::Truncate) << why(dev, e);
      EXPECT_EQ(st.bytes, cap);
      EXPECT_TRUE(has_pattern(buf.data(), cap, 9));
      EXPECT_TRUE(all_bytes(buf.data(), cap, n, 0xEE)) << "written past the buffer";
    }
  });
}

// A synchronous send received through mprobe + mrecv completes (the match
// is acknowledged on that path too), and not while only probed.
TEST_P(Probe, SynchronousSendThroughMprobe) {
  run(2, [](Device& dev) {
    adi3::Comm ctl = ctl_comm(dev);
    for (std::size_t n : probe_sizes(dev)) {
      SCOPED_TRACE("bytes " + std::to_string(n));
      if (dev.rank() == 1) {
        std::vector<unsigned char> d = pattern(n, 60);
        Request* r = nullptr;
        ASSERT_OK(dev, dev.isend(d.data(), n, byte(), 0, 6, dev.world(), adi3::SendMode::Synchronous, &r));
        await(dev, ctl, 0, kSent);  // rank 0 has probed it
        bool flag = true;
        for (int i = 0; i < 100 && flag; ++i) EXPECT_OK(dev, dev.test(&r, &flag, nullptr));
        EXPECT_FALSE(flag) << "synchronous send complete while its message was only probed";
        notify(dev, ctl, 0, kGo);
        ASSERT_OK(dev, dev.wait(&r, nullptr));
        continue;
      }
      Status st;
      ASSERT_OK(dev, dev.probe(1, 6, dev.world(), &st));
      notify(dev, ctl, 1, kSent);
      await(dev, ctl, 1, kGo);
      Request* msg = nullptr;
      ASSERT_OK(dev, dev.mprobe(1, 6, dev.world(), &msg, &st));
      std::vector<unsigned char> buf(n);
      ASSERT_OK(dev, dev.mrecv(buf.data(), n, byte(), &msg, &st));
      EXPECT_TRUE(has_pattern(buf.data(), n, 60));
    }
  });
}

CORE_INSTANTIATE(Probe);

}  // namespace
