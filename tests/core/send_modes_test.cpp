// Every send mode (standard, synchronous, ready, buffered), blocking and
// nonblocking, at sizes around the eager/rendezvous switch and well past it,
// with the receive posted before the message arrives and after (unexpected).
// Data is checked byte by byte, and bytes past the receive count must stay
// untouched. A synchronous send must not complete while its message sits
// unmatched at the receiver.
#include <thread>

#include "harness.hpp"

namespace {

using namespace core_test;
using adi3::Request;
using adi3::SendMode;
using adi3::Status;

enum class Size { Zero, One, Eager, EagerPlus1, K64, M1, M16 };

std::size_t bytes_of(Size s, const Device& dev) {
  switch (s) {
    case Size::Zero:
      return 0;
    case Size::One:
      return 1;
    case Size::Eager:
      return dev.eager_limit();
    case Size::EagerPlus1:
      return dev.eager_limit() + 1;
    case Size::K64:
      return std::size_t{64} << 10;
    case Size::M1:
      return std::size_t{1} << 20;
    case Size::M16:
      return std::size_t{16} << 20;
  }
  return 0;
}

const char* size_name(Size s) {
  const char* names[] = {"0B", "1B", "EagerLimit", "EagerLimitPlus1", "64KiB", "1MiB", "16MiB"};
  return names[static_cast<int>(s)];
}
const char* mode_name(SendMode m) {
  const char* names[] = {"Standard", "Synchronous", "Ready", "Buffered"};
  return names[static_cast<int>(m)];
}

using Param = std::tuple<Setup, SendMode, bool, Size>;  // bool: nonblocking

struct ParamName {
  std::string operator()(const ::testing::TestParamInfo<Param>& i) const {
    return std::get<0>(i.param).name + "_" + mode_name(std::get<1>(i.param)) + "_" +
           (std::get<2>(i.param) ? "Nonblocking" : "Blocking") + "_" + size_name(std::get<3>(i.param));
  }
};

class SendModes : public ::testing::TestWithParam<Param> {};

constexpr std::size_t kGuard = 64;
constexpr unsigned char kGuardByte = 0xCD;
constexpr int kArrived = 10, kGo = 11, kReady = 12;

// The sender (rank 0) of one round: tag identifies the round.
void send_one(Device& dev, const std::vector<unsigned char>& data, SendMode mode, bool nonblocking, int tag) {
  if (nonblocking) {
    Request* r = nullptr;
    ASSERT_OK(dev, dev.isend(data.data(), data.size(), byte(), 1, tag, dev.world(), mode, &r));
    ASSERT_NE(r, nullptr);
    if (mode == SendMode::Buffered) {
      // The data is in the attached buffer: complete without the receiver.
      bool flag = false;
      EXPECT_OK(dev, dev.test(&r, &flag, nullptr));
      EXPECT_TRUE(flag) << "a buffered send must complete locally";
      if (flag) return;
    }
    ASSERT_OK(dev, dev.wait(&r, nullptr));
    EXPECT_EQ(r, nullptr);
  } else {
    ASSERT_OK(dev, dev.send(data.data(), data.size(), byte(), 1, tag, dev.world(), mode));
  }
}

// The receiver (rank 1) of one round; `posted_first`: the receive is posted
// before the sender may start, else only after the message has arrived.
void recv_one(Device& dev, const std::vector<unsigned char>& want, bool nonblocking, int tag, bool posted_first) {
  adi3::Comm ctl = ctl_comm(dev);
  std::vector<unsigned char> buf(want.size() + kGuard, kGuardByte);
  Status st;
  Request* r = nullptr;
  if (posted_first) {
    if (nonblocking) ASSERT_OK(dev, dev.irecv(buf.data(), want.size(), byte(), 0, tag, dev.world(), &r));
    notify(dev, ctl, 0, kReady);  // (no progress happens before the receive is posted)
  } else {
    step("probe until the message arrived");
    ASSERT_OK(dev, dev.probe(0, tag, dev.world(), &st));
    EXPECT_EQ(st.source, 0);
    EXPECT_EQ(st.tag, tag);
    EXPECT_EQ(st.bytes, want.size());
    if (nonblocking) ASSERT_OK(dev, dev.irecv(buf.data(), want.size(), byte(), 0, tag, dev.world(), &r));
  }
  step("receive");
  st = Status{};
  if (nonblocking) {
    ASSERT_OK(dev, dev.wait(&r, &st));
    EXPECT_EQ(r, nullptr);
  } else {
    ASSERT_OK(dev, dev.recv(buf.data(), want.size(), byte(), 0, tag, dev.world(), &st));
  }
  EXPECT_EQ(st.source, 0);
  EXPECT_EQ(st.tag, tag);
  EXPECT_EQ(st.bytes, want.size());
  EXPECT_EQ(st.error, 0);
  EXPECT_FALSE(st.cancelled);
  EXPECT_TRUE(want.empty() || std::memcmp(buf.data(), want.data(), want.size()) == 0)
      << has_pattern(buf.data(), want.size(), static_cast<uint32_t>(tag)).message();
  EXPECT_TRUE(all_bytes(buf.data(), want.size(), buf.size(), kGuardByte)) << "written past the receive count";
}

TEST_P(SendModes, DeliversEveryByte) {
  const auto& [setup, mode, nonblocking, size] = GetParam();
  run_ranks(setup, 2, [&, mode = mode, nonblocking = nonblocking, size = size](Device& dev) {
    const std::size_t n = bytes_of(size, dev);
    adi3::Comm ctl = ctl_comm(dev);
    // Round 1: the receive is posted first (the only legal order for ready
    // mode). Round 2: the message arrives before the receive is posted.
    const int rounds = mode == SendMode::Ready ? 1 : 2;
    std::vector<unsigned char> attached;
    if (dev.rank() == 0 && mode == SendMode::Buffered) {
      // Room for both rounds: a message leaves the buffer only once the
      // sender learns it was transmitted, which may be after the receive.
      attached.resize(rounds * (n + 2 * adi3::BsendBuffer::kOverhead));
      ASSERT_OK(dev, dev.buffer_attach(attached.data(), attached.size()));
    }
    for (int round = 1; round <= rounds; ++round) {
      SCOPED_TRACE(round == 1 ? "receive posted first" : "message arrives first");
      const int tag = 100 + round;
      std::vector<unsigned char> data = pattern(n, static_cast<uint32_t>(tag));
      if (dev.rank() == 0) {
        if (round == 1) await(dev, ctl, 1, kReady);
        send_one(dev, data, mode, nonblocking, tag);
      } else {
        recv_one(dev, data, nonblocking, tag, round == 1);
      }
    }
    if (dev.rank() == 0 && mode == SendMode::Buffered) {
      void* buf = nullptr;
      std::size_t bytes = 0;
      ASSERT_OK(dev, dev.buffer_detach(&buf, &bytes));
      EXPECT_EQ(buf, attached.data());
      EXPECT_EQ(bytes, attached.size());
    }
  });
}

// issend: the message reaches the receiver (probe sees it) but the send must
// not complete until a receive matches it.
using SyncParam = std::tuple<Setup, Size>;
struct SyncParamName {
  std::string operator()(const ::testing::TestParamInfo<SyncParam>& i) const {
    return std::get<0>(i.param).name + "_" + size_name(std::get<1>(i.param));
  }
};
class SynchronousSend : public ::testing::TestWithParam<SyncParam> {};

TEST_P(SynchronousSend, WaitsForTheMatch) {
  const auto& [setup, size] = GetParam();
  run_ranks(setup, 2, [&, size = size](Device& dev) {
    const std::size_t n = bytes_of(size, dev);
    adi3::Comm ctl = ctl_comm(dev);
    const int tag = 7;
    std::vector<unsigned char> data = pattern(n, tag);
    if (dev.rank() == 0) {
      Request* r = nullptr;
      ASSERT_OK(dev, dev.isend(data.data(), n, byte(), 1, tag, dev.world(), SendMode::Synchronous, &r));
      step("wait for the receiver to see the message");
      await(dev, ctl, 1, kArrived);
      step("test the unmatched issend");
      auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(30);
      int tests = 0;
      bool flag = false;
      while (std::chrono::steady_clock::now() < until || tests < 200) {
        ASSERT_OK(dev, dev.test(&r, &flag, nullptr));
        ASSERT_FALSE(flag) << "synchronous send completed before any receive was posted (after " << tests << " tests)";
        ++tests;
        if (tests % 16 == 0) std::this_thread::yield();
      }
      Status st;
      EXPECT_OK(dev, dev.request_get_status(r, &flag, &st));
      EXPECT_FALSE(flag);
      notify(dev, ctl, 1, kGo);
      step("wait for the issend");
      ASSERT_OK(dev, dev.wait(&r, nullptr));
    } else {
      Status st;
      step("probe");
      ASSERT_OK(dev, dev.probe(0, tag, dev.world(), &st));
      EXPECT_EQ(st.bytes, n);
      notify(dev, ctl, 0, kArrived);
      await(dev, ctl, 0, kGo);
      std::vector<unsigned char> buf(n + 1);
      ASSERT_OK(dev, dev.recv(buf.data(), n, byte(), 0, tag, dev.world(), &st));
      EXPECT_EQ(st.bytes, n);
      EXPECT_TRUE(n == 0 || std::memcmp(buf.data(), data.data(), n) == 0);
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Channels, SendModes,
                         ::testing::Combine(::testing::ValuesIn(setups()),
                                            ::testing::Values(SendMode::Standard, SendMode::Synchronous,
                                                              SendMode::Ready, SendMode::Buffered),
                                            ::testing::Bool(),
                                            ::testing::Values(Size::Zero, Size::One, Size::Eager, Size::EagerPlus1,
                                                              Size::K64, Size::M1, Size::M16)),
                         ParamName{});

INSTANTIATE_TEST_SUITE_P(Channels, SynchronousSend,
                         ::testing::Combine(::testing::ValuesIn(setups()),
                                            ::testing::Values(Size::Zero, Size::One, Size::Eager, Size::EagerPlus1,
                                                              Size::K64, Size::M1, Size::M16)),
                         SyncParamName{});

}  // namespace
