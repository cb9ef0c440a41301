// PROC_NULL as destination and source (every mode, blocking and not), and
// the combined sendrecv / sendrecv_replace: rings, shifts with PROC_NULL
// ends, exchanges with oneself, eager and rendezvous sizes.
#include "harness.hpp"

namespace {

using namespace core_test;
using adi3::kAnySource;
using adi3::kAnyTag;
using adi3::kProcNull;
using adi3::Request;
using adi3::SendMode;
using adi3::Status;

class SendRecv : public CoreTest {};

void expect_proc_null_status(const Status& st) {
  EXPECT_EQ(st.source, kProcNull);
  EXPECT_EQ(st.tag, kAnyTag);
  EXPECT_EQ(st.bytes, 0u);
  EXPECT_EQ(st.error, 0);
  EXPECT_FALSE(st.cancelled);
}

TEST_P(SendRecv, ProcNullSendsAndReceives) {
  run(2, [](Device& dev) {
    const std::size_t owned = owned_requests(dev);
    std::vector<unsigned char> buf(1 << 20, 0x3C);
    const SendMode modes[] = {SendMode::Standard, SendMode::Synchronous, SendMode::Ready, SendMode::Buffered};
    for (SendMode mode : modes) {
      SCOPED_TRACE("mode " + std::to_string(static_cast<int>(mode)));
      for (std::size_t n : {std::size_t{0}, std::size_t{1}, buf.size()}) {
        // (Buffered: no buffer is attached, and none is needed.)
        EXPECT_OK(dev, dev.send(buf.data(), n, byte(), kProcNull, 5, dev.world(), mode));
        Request* r = nullptr;
        ASSERT_OK(dev, dev.isend(buf.data(), n, byte(), kProcNull, 5, dev.world(), mode, &r));
        ASSERT_NE(r, nullptr);
        bool flag = false;
        Status st;
        EXPECT_OK(dev, dev.test(&r, &flag, &st));
        EXPECT_TRUE(flag) << "a send to PROC_NULL completes at once";
        if (!flag) EXPECT_OK(dev, dev.wait(&r, &st));
        EXPECT_EQ(r, nullptr);
      }
    }
    for (int tag : {0, 7, kAnyTag}) {
      Status st;
      st.bytes = 99;
      EXPECT_OK(dev, dev.recv(buf.data(), buf.size(), byte(), kProcNull, tag, dev.world(), &st));
      expect_proc_null_status(st);
      Request* r = nullptr;
      ASSERT_OK(dev, dev.irecv(buf.data(), buf.size(), byte(), kProcNull, tag, dev.world(), &r));
      bool flag = false;
      st = Status{};
      EXPECT_OK(dev, dev.test(&r, &flag, &st));
      EXPECT_TRUE(flag) << "a receive from PROC_NULL completes at once";
      if (!flag) EXPECT_OK(dev, dev.wait(&r, &st));
      expect_proc_null_status(st);
    }
    EXPECT_TRUE(all_bytes(buf.data(), 0, buf.size(), 0x3C)) << "a PROC_NULL receive wrote data";
    Status st;
    EXPECT_OK(dev, dev.sendrecv(buf.data(), 10, byte(), kProcNull, 1, buf.data() + 100, 10, byte(), kProcNull, 1,
                                dev.world(), &st));
    expect_proc_null_status(st);
    EXPECT_OK(dev, dev.sendrecv_replace(buf.data(), 10, byte(), kProcNull, 1, kProcNull, 1, dev.world(), &st));
    expect_proc_null_status(st);
    EXPECT_TRUE(all_bytes(buf.data(), 0, buf.size(), 0x3C));
    EXPECT_EQ(owned_requests(dev), owned);
  });
}

std::vector<std::size_t> exchange_sizes(const Device& dev) {
  return {0, 1, dev.eager_limit(), dev.eager_limit() + 1, 64 << 10, 1 << 20};
}

uint32_t seed_of(int rank, std::size_t n) { return static_cast<uint32_t>(rank * 1000003 + static_cast<int>(n)); }

// Every rank sends to the next and receives from the previous at once.
TEST_P(SendRecv, Ring) {
  run(3, [](Device& dev) {
    const int me = dev.rank(), n = dev.size(), next = (me + 1) % n, prev = (me + n - 1) % n;
    for (std::size_t bytes : exchange_sizes(dev)) {
      for (bool wild : {false, true}) {
        SCOPED_TRACE("bytes " + std::to_string(bytes) + (wild ? ", wildcard receive" : ""));
        std::vector<unsigned char> out = pattern(bytes, seed_of(me, bytes)), in(bytes + 100, 0xEE);
        Status st;
        // The receive buffer is larger than the message.
        ASSERT_OK(dev, dev.sendrecv(out.data(), bytes, byte(), next, 11, in.data(), in.size(), byte(),
                                    wild ? kAnySource : prev, wild ? kAnyTag : 11, dev.world(), &st));
        EXPECT_EQ(st.source, prev);
        EXPECT_EQ(st.tag, 11);
        EXPECT_EQ(st.bytes, bytes);
        EXPECT_TRUE(has_pattern(in.data(), bytes, seed_of(prev, bytes)));
        EXPECT_TRUE(all_bytes(in.data(), bytes, in.size(), 0xEE));
        // Keep the rounds apart: the wildcard receive must not take the next
        // round's message.
        ASSERT_OK(dev, dev.barrier());
      }
    }
  });
}

// A non-periodic shift: the ends talk to PROC_NULL.
TEST_P(SendRecv, ShiftWithProcNullEnds) {
  run(3, [](Device& dev) {
    const int me = dev.rank(), n = dev.size();
    const int next = me + 1 < n ? me + 1 : kProcNull, prev = me > 0 ? me - 1 : kProcNull;
    for (std::size_t bytes : exchange_sizes(dev)) {
      SCOPED_TRACE("bytes " + std::to_string(bytes));
      std::vector<unsigned char> out = pattern(bytes, seed_of(me, bytes)), in(bytes, 0xEE);
      Status st;
      ASSERT_OK(
          dev, dev.sendrecv(out.data(), bytes, byte(), next, 12, in.data(), bytes, byte(), prev, 12, dev.world(), &st));
      if (prev == kProcNull) {
        expect_proc_null_status(st);
        EXPECT_TRUE(all_bytes(in.data(), 0, bytes, 0xEE));
      } else {
        EXPECT_EQ(st.source, prev);
        EXPECT_EQ(st.bytes, bytes);
        EXPECT_TRUE(has_pattern(in.data(), bytes, seed_of(prev, bytes)));
      }
      // sendrecv_replace the other way round.
      std::vector<unsigned char> io = pattern(bytes, seed_of(me, bytes + 1));
      ASSERT_OK(dev, dev.sendrecv_replace(io.data(), bytes, byte(), prev, 13, next, 13, dev.world(), &st));
      if (next == kProcNull) {
        expect_proc_null_status(st);
        EXPECT_TRUE(has_pattern(io.data(), bytes, seed_of(me, bytes + 1))) << "buffer must keep its data";
      } else {
        EXPECT_EQ(st.source, next);
        EXPECT_EQ(st.bytes, bytes);
        EXPECT_TRUE(has_pattern(io.data(), bytes, seed_of(next, bytes + 1)));
      }
    }
  });
}

TEST_P(SendRecv, ReplaceRing) {
  run(3, [](Device& dev) {
    const int me = dev.rank(), n = dev.size(), next = (me + 1) % n, prev = (me + n - 1) % n;
    for (std::size_t bytes : exchange_sizes(dev)) {
      SCOPED_TRACE("bytes " + std::to_string(bytes));
      std::vector<unsigned char> io = pattern(bytes, seed_of(me, bytes));
      Status st;
      ASSERT_OK(dev, dev.sendrecv_replace(io.data(), bytes, byte(), next, 14, prev, 14, dev.world(), &st));
      EXPECT_EQ(st.source, prev);
      EXPECT_EQ(st.tag, 14);
      EXPECT_EQ(st.bytes, bytes);
      EXPECT_TRUE(has_pattern(io.data(), bytes, seed_of(prev, bytes)));
    }
  });
}

// Exchanges with oneself: sendrecv and sendrecv_replace where dest = source
// = the caller, at every size (the receive is posted before the send).
TEST_P(SendRecv, WithSelf) {
  run(2, [](Device& dev) {
    const int me = dev.rank();
    for (std::size_t bytes : exchange_sizes(dev)) {
      SCOPED_TRACE("bytes " + std::to_string(bytes));
      std::vector<unsigned char> out = pattern(bytes, 77), in(bytes, 0);
      Status st;
      ASSERT_OK(dev,
                dev.sendrecv(out.data(), bytes, byte(), me, 15, in.data(), bytes, byte(), me, 15, dev.world(), &st));
      EXPECT_EQ(st.source, me);
      EXPECT_EQ(st.bytes, bytes);
      EXPECT_TRUE(has_pattern(in.data(), bytes, 77));
      std::vector<unsigned char> io = pattern(bytes, 78);
      ASSERT_OK(dev, dev.sendrecv_replace(io.data(), bytes, byte(), me, 16, me, kAnyTag, dev.world(), &st));
      EXPECT_EQ(st.tag, 16);
      EXPECT_TRUE(has_pattern(io.data(), bytes, 78));
    }
  });
}

// Different send and receive sizes, and a truncated receive half.
TEST_P(SendRecv, UnequalSizesAndTruncation) {
  run(2, [](Device& dev) {
    const int me = dev.rank(), peer = 1 - me;
    const std::size_t small = 8, big = dev.eager_limit() + 500;
    // Rank 0 sends big and receives small; rank 1 the other way round.
    std::size_t mine = me == 0 ? big : small, theirs = me == 0 ? small : big;
    std::vector<unsigned char> out = pattern(mine, seed_of(me, mine)), in(big, 0);
    Status st;
    ASSERT_OK(dev,
              dev.sendrecv(out.data(), mine, byte(), peer, 17, in.data(), big, byte(), peer, 17, dev.world(), &st));
    EXPECT_EQ(st.bytes, theirs);
    EXPECT_TRUE(has_pattern(in.data(), theirs, seed_of(peer, theirs)));
    // Now both receive into 4 bytes: rank 1's receive of the big message and
    // rank 0's of the small one are truncated.
    int e = dev.sendrecv(out.data(), mine, byte(), peer, 18, in.data(), 4, byte(), peer, 18, dev.world(), &st);
    EXPECT_EQ(adi3::error_class_of(e), adi3::ErrorClass::Truncate) << why(dev, e);
    EXPECT_EQ(st.bytes, 4u);
    EXPECT_TRUE(has_pattern(in.data(), 4, seed_of(peer, theirs)));
  });
}

// sendrecv_replace receiving more than the buffer holds.
TEST_P(SendRecv, ReplaceTruncates) {
  run(2, [](Device& dev) {
    const int me = dev.rank(), peer = 1 - me;
    for (std::size_t big : {std::size_t{64}, dev.eager_limit() + 1, std::size_t{300000}}) {
      SCOPED_TRACE("bytes " + std::to_string(big));
      // One count for both directions: rank 0 sends and receives `big`
      // bytes at most, rank 1 16.
      std::size_t mine = me == 0 ? big : 16;
      std::vector<unsigned char> io = pattern(mine, seed_of(me, mine));
      io.resize(big + 8, 0xEE);
      Status st;
      int e = dev.sendrecv_replace(io.data(), mine, byte(), peer, 19, peer, 19, dev.world(), &st);
      if (me == 0) {  // 16 bytes into room for `big`
        EXPECT_EQ(e, 0) << why(dev, e);
        EXPECT_EQ(st.bytes, 16u);
        EXPECT_TRUE(has_pattern(io.data(), 16, seed_of(peer, 16)));
      } else {  // `big` bytes into room for 16
        EXPECT_EQ(adi3::error_class_of(e), adi3::ErrorClass::Truncate) << why(dev, e);
        EXPECT_EQ(st.bytes, 16u);
        EXPECT_TRUE(has_pattern(io.data(), 16, seed_of(peer, big)));
        EXPECT_TRUE(all_bytes(io.data(), 16, io.size(), 0xEE)) << "written past the buffer";
      }
    }
  });
}

// A blocking receive keeps its request on the caller's stack: posted before
// the message comes (eager, rendezvous by get or by clear-to-send, where it
// moves to a pool request), found unexpected, by wildcards, truncated; the
// status is the message's and no request is left behind.
TEST_P(SendRecv, BlockingReceiveEveryProtocol) {
  run(2, [](Device& dev) {
    const int me = dev.rank(), peer = 1 - me;
    const std::size_t owned = owned_requests(dev);
    for (std::size_t bytes : exchange_sizes(dev)) {
      for (int shape = 0; shape < 4; ++shape) {  // specific, ANY_SOURCE, ANY_TAG, truncated
        SCOPED_TRACE("bytes " + std::to_string(bytes) + ", shape " + std::to_string(shape));
        const int tag = 20 + shape;
        char go = 0;
        if (me == 0) {
          // Rank 1 is (about to be) blocked in its receive: the message
          // mostly arrives posted. The second one waits unexpected.
          ASSERT_OK(dev, dev.recv(&go, 1, byte(), peer, 30, dev.world(), nullptr));
          std::vector<unsigned char> out = pattern(bytes, seed_of(me, bytes + shape));
          ASSERT_OK(dev, dev.send(out.data(), bytes, byte(), peer, tag, dev.world()));
          ASSERT_OK(dev, dev.send(out.data(), bytes, byte(), peer, tag + 10, dev.world()));
          continue;
        }
        ASSERT_OK(dev, dev.send(&go, 1, byte(), peer, 30, dev.world()));
        const bool trunc = shape == 3 && bytes > 1;
        const std::size_t room = trunc ? bytes / 2 : bytes;
        for (int second = 0; second < 2; ++second) {
          std::vector<unsigned char> in(bytes + 8, 0xEE);
          Status st;
          const int src = shape == 1 ? kAnySource : peer, want_tag = shape == 2 ? kAnyTag : tag + 10 * second;
          int e = dev.recv(in.data(), room, byte(), src, want_tag, dev.world(), &st);
          if (trunc) {
            EXPECT_EQ(adi3::error_class_of(e), adi3::ErrorClass::Truncate) << why(dev, e);
            EXPECT_EQ(st.error, e);
          } else {
            EXPECT_EQ(e, 0) << why(dev, e);
          }
          EXPECT_EQ(st.source, peer);
          EXPECT_EQ(st.tag, tag + 10 * second);
          EXPECT_EQ(st.bytes, room);
          EXPECT_TRUE(has_pattern(in.data(), room, seed_of(peer, bytes + shape)));
          EXPECT_TRUE(all_bytes(in.data(), room, in.size(), 0xEE)) << "written past the buffer";
        }
      }
    }
    EXPECT_EQ(owned_requests(dev), owned);
    EXPECT_EQ(dev.posted_depth(), 0u);
  });
}

CORE_INSTANTIATE(SendRecv);

}  // namespace
