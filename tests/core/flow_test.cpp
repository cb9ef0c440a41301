// Eager flow control (ADI3_UNEXPECTED_BYTES, adi3/flow.hpp): a sender
// without credit falls back to rendezvous, so the receiver holds at most its
// budget of unexpected eager bytes; nothing is lost or reordered; credit
// comes back as messages are received (or withdrawn by a cancel); a sender
// that ignores its credit, or a peer that returns credit it never got, is
// refused as failed.
#include "harness.hpp"

namespace {

using namespace core_test;
using adi3::EagerCredits;

constexpr std::size_t kBudget = 96 * 1024;  // 3 ranks: a 32 KiB share each
// The 2-rank tests share one budget: run as processes (tests/shm), a job's
// device keeps the configuration of its first test.
constexpr std::size_t kPairBudget = 2 * 16384;

Setup with_budget(Setup s, std::size_t budget = kBudget) {
  s.config.unexpected_bytes = budget;
  return s;
}

// Progress for a while; true if the unexpected queue did not change.
bool stays(Device& dev, std::size_t depth) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
  while (std::chrono::steady_clock::now() < end) {
    dev.progress();
    if (dev.unexpected_depth() != depth) return false;
  }
  return true;
}

class Flow : public CoreTest {};

// Ranks 1 and 2 each send 200 messages of 1000 bytes (blocking, standard)
// that rank 0 does not receive yet. Each gets as far as its share allows
// eagerly, then its next send goes by rendezvous and waits for the match:
// rank 0 holds exactly share / charge eager messages per sender plus one
// request-to-send. Then rank 0 receives everything, from ANY_SOURCE, and
// checks each byte and each sender's order.
constexpr int kCount = 200;
constexpr std::size_t kBytes = 1000;
TEST_P(Flow, SendersWithoutCreditFallBackToRendezvous) {
  run_ranks(with_budget(GetParam()), 3, [](Device& dev) {
    // Eager messages that fit the share (none when kBytes is above the
    // configuration's eager limit).
    const std::size_t fit =
        kBytes <= dev.eager_limit() ? static_cast<std::size_t>(dev.eager_share()) / EagerCredits::charge(kBytes) : 0;
    if (dev.rank() == 0) {
      ASSERT_EQ(dev.eager_share(), static_cast<int64_t>(kBudget / 3));
      const std::size_t held = 2 * (std::min(fit, std::size_t{kCount}) + 1);
      ASSERT_TRUE(progress_until(dev, [&] { return dev.unexpected_depth() >= held; }))
          << "held " << dev.unexpected_depth() << ", want " << held;
      EXPECT_TRUE(stays(dev, held)) << "the flood went on past the budget: " << dev.unexpected_depth();
      std::vector<int> next(3, 0);
      std::vector<unsigned char> in(kBytes);
      for (int i = 0; i < 2 * kCount; ++i) {
        Status st;
        ASSERT_OK(dev, dev.recv(in.data(), kBytes, byte(), adi3::kAnySource, 5, dev.world(), &st));
        ASSERT_TRUE(st.source == 1 || st.source == 2) << st.source;
        const int k = next[static_cast<std::size_t>(st.source)]++;
        ASSERT_EQ(st.bytes, kBytes);
        ASSERT_TRUE(has_pattern(in.data(), kBytes, static_cast<uint32_t>(st.source * 1000 + k)))
            << "message " << k << " from rank " << st.source << " (lost or out of order)";
      }
    } else {
      std::vector<unsigned char> out(kBytes);
      for (int k = 0; k < kCount; ++k) {
        fill_pattern(out.data(), kBytes, static_cast<uint32_t>(dev.rank() * 1000 + k));
        ASSERT_OK(dev, dev.send(out.data(), kBytes, byte(), 0, 5, dev.world()));
      }
      // Everything was received: all but less than half a share came back.
      EXPECT_TRUE(progress_until(dev, [&] { return dev.eager_credit(0) > dev.eager_share() / 2; }))
          << "credit toward rank 0: " << dev.eager_credit(0);
    }
  });
}

// Nonblocking and synchronous sends, zero-byte messages and an mprobe'd
// receive mixed: everything matched in order while the credit runs out.
constexpr int kMixed = 120;
TEST_P(Flow, MixedModesKeepTheirOrder) {
  run_ranks(with_budget(GetParam(), kPairBudget), 2, [](Device& dev) {
    auto size_of = [](int k) { return static_cast<std::size_t>(k) * 97 % 1500; };
    if (dev.rank() == 1) {
      std::vector<std::vector<unsigned char>> bufs(kMixed);
      std::vector<Request*> reqs;
      for (int k = 0; k < kMixed; ++k) {
        bufs[static_cast<std::size_t>(k)] = pattern(size_of(k), static_cast<uint32_t>(k));
        const SendMode mode = k % 10 == 9 ? SendMode::Synchronous : SendMode::Standard;
        Request* r = nullptr;
        ASSERT_OK(dev,
                  dev.isend(bufs[static_cast<std::size_t>(k)].data(), size_of(k), byte(), 0, 7, dev.world(), mode, &r));
        reqs.push_back(r);
      }
      ASSERT_OK(dev, dev.waitall(kMixed, reqs.data(), nullptr));
    } else {
      ASSERT_TRUE(
          progress_until(dev, [&] { return dev.unexpected_depth() > 0 && stays(dev, dev.unexpected_depth()); }));
      std::vector<unsigned char> in(1500);
      for (int k = 0; k < kMixed; ++k) {
        Status st;
        if (k % 7 == 3) {
          Request* m = nullptr;
          ASSERT_OK(dev, dev.mprobe(1, 7, dev.world(), &m, &st));
          ASSERT_OK(dev, dev.mrecv(in.data(), in.size(), byte(), &m, &st));
        } else {
          ASSERT_OK(dev, dev.recv(in.data(), in.size(), byte(), 1, 7, dev.world(), &st));
        }
        ASSERT_EQ(st.bytes, size_of(k)) << "message " << k;
        ASSERT_TRUE(has_pattern(in.data(), st.bytes, static_cast<uint32_t>(k))) << "message " << k;
      }
    }
  });
}

// A cancelled unexpected eager message gives its credit back: a sender
// that sends and cancels more than its share, one message at a time, keeps
// sending eagerly (the receiver never holds more than one of them).
TEST_P(Flow, CancelledMessagesReturnTheirCredit) {
  run_ranks(with_budget(GetParam(), kPairBudget), 2, [](Device& dev) {
    adi3::Comm ctl = ctl_comm(dev);
    if (dev.rank() == 1) {
      std::vector<unsigned char> out(4000, 0x5a);
      for (int k = 0; k < 40; ++k) {  // 40 x 4 KiB: ten shares
        Request* r = nullptr;
        ASSERT_OK(dev, dev.isend(out.data(), out.size(), byte(), 0, 8, dev.world(), SendMode::Standard, &r));
        ASSERT_OK(dev, dev.cancel(r));
        Status st;
        ASSERT_OK(dev, dev.wait(&r, &st));
        ASSERT_TRUE(st.cancelled) << "message " << k << " was received, yet nobody posted a receive";
      }
      notify(dev, ctl, 0);
      EXPECT_TRUE(progress_until(dev, [&] { return dev.eager_credit(0) > dev.eager_share() / 2; }))
          << "credit toward rank 0: " << dev.eager_credit(0);
    } else {
      await(dev, ctl, 1);
      // Every one withdrawn (rank 1's finalize barrier may be here already).
      EXPECT_LE(dev.unexpected_depth(), 1u);
    }
  });
}

CORE_INSTANTIATE(Flow);

// ---- a peer that ignores the protocol (no harness finalize: the job ends
// with a refused rank) ----

// Rank 1 forges eager messages past its share (never received), or a
// credit it was never owed: rank 0 refuses it, holds no more than the share
// from it, and still serves rank 2.
void refused_then_serves(Device& dev, const char* what) {
  ASSERT_TRUE(progress_until(dev, [&] { return dev.refused_packets() > 0; })) << what << ": never refused";
  // What rank 1 got queued fits its share (plus rank 2's message, which
  // may be there already).
  EXPECT_LE(dev.unexpected_depth(), static_cast<std::size_t>(dev.eager_share()) / EagerCredits::charge(1000) + 1);
  unsigned char b = 0;
  const int e = dev.send(&b, 1, byte(), 1, 3, dev.world());
  EXPECT_EQ(error_class_of(e), ErrorClass::ProcFailed) << what << ": " << why(dev, e);
  std::vector<unsigned char> out = pattern(100, 1), in(100);
  ASSERT_OK(dev, dev.sendrecv(out.data(), 100, byte(), 2, 4, in.data(), 100, byte(), 2, 4, dev.world(), nullptr));
  EXPECT_TRUE(has_pattern(in.data(), 100, 2));
}

void rank2(Device& dev) {
  std::vector<unsigned char> out = pattern(100, 2), in(100);
  ASSERT_OK(dev, dev.sendrecv(out.data(), 100, byte(), 0, 4, in.data(), 100, byte(), 0, 4, dev.world(), nullptr));
  EXPECT_TRUE(has_pattern(in.data(), 100, 1));
}

TEST(FlowWire, EagerBeyondTheShareIsRefused) {
  adi3::Config c;
  c.unexpected_bytes = kBudget;
  run_job(3, c, [](Device& dev) {
    if (dev.rank() == 1) {
      std::vector<unsigned char> junk(1000, 0x11);
      for (int k = 0; k < 200; ++k) {  // 200 KB against a 32 KiB share
        PacketHeader h{PacketType::Eager, 0, 0, 0, 1, 9, junk.size(), 0, 0, 0};
        raw_send(dev, 0, h, junk.data(), junk.size());
      }
    } else if (dev.rank() == 0) {
      refused_then_serves(dev, "eager beyond the share");
    } else {
      rank2(dev);
    }
  });
}

TEST(FlowWire, CreditNeverGivenIsRefused) {
  adi3::Config c;
  c.unexpected_bytes = kBudget;
  run_job(3, c, [](Device& dev) {
    if (dev.rank() == 1) {
      PacketHeader h{PacketType::Credit, 0, 0, 0, 0, 0, kBudget, 0, 0, 0};
      raw_send(dev, 0, h);
    } else if (dev.rank() == 0) {
      refused_then_serves(dev, "credit never given");
      EXPECT_EQ(dev.eager_credit(1), dev.eager_share()) << "the forged credit was added";
    } else {
      rank2(dev);
    }
  });
}

}  // namespace
