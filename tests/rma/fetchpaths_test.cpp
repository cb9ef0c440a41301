// The emulation's short paths for operations that bring data back
// (emul/quick.cpp quick_get_now and quick_fetch_now at the origin, their
// reply records rma::QuickReply; emul/apply.cpp plain_get and plain_fetch at
// the target): get, fetch_and_op, compare_and_swap and get_accumulate of
// one packet. Every result is exact; the same assertions hold on the native
// paths, so every setup runs them (the emulated ones take the paths under
// test).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "emul/one_element.hpp"
#include "rma/window_state.hpp"
#include "tests/rma/rma_harness.hpp"

namespace {

using namespace rma_test;
using adi3::coll::Op;
using adi3::coll::OpKind;

class RmaFetchPaths : public core_test::CoreTest {};

adi3::Comm ctl(Device& dev) { return core_test::ctl_comm(dev, 0x6500); }

constexpr std::ptrdiff_t kBytes = 64 * 1024;
constexpr std::ptrdiff_t kPattern = 32 * 1024;  // [kPattern, kBytes): a pattern per rank

char pattern(int rank, std::ptrdiff_t i) { return static_cast<char>((i * 7 + rank * 13) & 0xff); }

// A window of kBytes per rank (displacement unit 1), zero but for the pattern.
struct ByteWin {
  Device& dev;
  Window* win = nullptr;
  char* mem = nullptr;
  std::vector<char> own;
  ByteWin(Device& d, Flavor f) : dev(d) {
    int e;
    if (f == Flavor::Allocate) {
      void* base = nullptr;
      e = Window::allocate(dev, kBytes, 1, {}, win_comm(dev), &base, &win);
      mem = static_cast<char*>(base);
    } else {
      own.resize(static_cast<std::size_t>(kBytes));
      mem = own.data();
      e = Window::create(dev, mem, kBytes, 1, {}, win_comm(dev), &win);
    }
    EXPECT_EQ(e, 0) << why(dev, e);
    std::memset(mem, 0, static_cast<std::size_t>(kPattern));
    for (std::ptrdiff_t i = kPattern; i < kBytes; ++i) mem[i] = pattern(dev.rank(), i);
  }
  ~ByteWin() {
    int e = Window::free(&win);
    EXPECT_EQ(e, 0) << why(dev, e);
  }
};

// Every rank, flushed after each operation, against one target: kIters
// fetch_and_op (SUM, int64) on one counter (the values fetched, over all
// ranks, are exactly 0 .. n * kIters - 1), a compare_and_swap loop that
// increments another, and get_accumulate (SUM of 3 int32) on a shared run.
void concurrent_fetches(Device& dev, Flavor f) {
  constexpr int kIters = 150;
  const int n = dev.size(), me = dev.rank();
  ByteWin w(dev, f);
  const auto* i64 = dt(adi3::Builtin::kInt64);
  const auto* i32 = dt(adi3::Builtin::kInt32);
  const int t = n > 1 ? 1 : 0;
  ASSERT_EQ(dev.barrier(), 0);
  ASSERT_EQ(w.win->lock_all(0), 0);
  std::vector<int64_t> got(kIters);
  const int64_t one = 1;
  const int32_t add[3] = {me + 1, 2 * (me + 1), -(me + 1)};
  int32_t prev[3] = {0, 0, 0};
  for (int i = 0; i < kIters; ++i) {
    ASSERT_EQ(w.win->fetch_and_op(&one, &got[static_cast<std::size_t>(i)], i64, t, 0, Op(OpKind::Sum)), 0);
    ASSERT_EQ(w.win->flush(t), 0);
    if (i > 0) {
      EXPECT_GT(got[static_cast<std::size_t>(i)], got[static_cast<std::size_t>(i) - 1]) << i;
    }
    int64_t cur = 0;
    ASSERT_EQ(w.win->fetch_and_op(nullptr, &cur, i64, t, 8, Op(OpKind::NoOp)), 0);
    ASSERT_EQ(w.win->flush(t), 0);
    for (;;) {
      const int64_t next = cur + 1;
      int64_t old = -1;
      ASSERT_EQ(w.win->compare_and_swap(&next, &cur, &old, i64, t, 8), 0);
      ASSERT_EQ(w.win->flush(t), 0);
      if (old == cur) break;
      EXPECT_GT(old, cur);
      cur = old;
    }
    int32_t old[3] = {-1, -1, -1};
    ASSERT_EQ(w.win->get_accumulate(add, 3, i32, old, 3, i32, t, 16, 3, i32, Op(OpKind::Sum)), 0);
    ASSERT_EQ(w.win->flush(t), 0);
    // Others only add to the run too: it grows from one fetch to the next.
    if (i > 0) {
      EXPECT_GE(old[0], prev[0] + me + 1) << i;
      EXPECT_GE(old[1], prev[1] + 2 * (me + 1)) << i;
      EXPECT_LE(old[2], prev[2] - (me + 1)) << i;
    }
    std::memcpy(prev, old, sizeof prev);
  }
  ASSERT_EQ(w.win->unlock_all(), 0);
  ASSERT_EQ(dev.barrier(), 0);
  if (me == t) {
    int64_t c0, c1;
    int32_t run[3];
    std::memcpy(&c0, w.mem, sizeof c0);
    std::memcpy(&c1, w.mem + 8, sizeof c1);
    std::memcpy(run, w.mem + 16, sizeof run);
    const int32_t s = n * (n + 1) / 2 * kIters;
    EXPECT_EQ(c0, int64_t{n} * kIters);
    EXPECT_EQ(c1, int64_t{n} * kIters);
    EXPECT_EQ(run[0], s);
    EXPECT_EQ(run[1], 2 * s);
    EXPECT_EQ(run[2], -s);
  }
  // Every value fetched from the counter, over all ranks: each exactly once.
  adi3::Comm c = ctl(dev);
  const auto* byte = adi3::Datatype::byte();
  const std::size_t len = got.size() * sizeof(int64_t);
  if (me != 0) {
    ASSERT_EQ(dev.send(got.data(), len, byte, 0, 5, c), 0);
  } else {
    std::vector<int64_t> all(got);
    for (int r = 1; r < n; ++r) {
      std::vector<int64_t> theirs(got.size());
      ASSERT_EQ(dev.recv(theirs.data(), len, byte, r, 5, c, nullptr), 0);
      all.insert(all.end(), theirs.begin(), theirs.end());
    }
    std::sort(all.begin(), all.end());
    for (std::size_t i = 0; i < all.size(); ++i) ASSERT_EQ(all[i], static_cast<int64_t>(i)) << i;
  }
  ASSERT_EQ(dev.barrier(), 0);
}

TEST_P(RmaFetchPaths, ConcurrentFetchesNp1) {
  run(1, [](Device& d) { concurrent_fetches(d, Flavor::Allocate); });
}
TEST_P(RmaFetchPaths, ConcurrentFetchesNp2) {
  run(2, [](Device& d) { concurrent_fetches(d, Flavor::Allocate); });
}
TEST_P(RmaFetchPaths, ConcurrentFetchesNp3) {
  run(3, [](Device& d) { concurrent_fetches(d, Flavor::Allocate); });
}
TEST_P(RmaFetchPaths, ConcurrentFetchesCreateNp3) {
  run(3, [](Device& d) { concurrent_fetches(d, Flavor::Create); });
}

// Gets of 1 byte to more than a packet from the next rank's pattern: one
// per flush, 16 per flush, 100 of 8 bytes per flush (more than the reply
// records: the rest take the general path), in a fence epoch, and under
// lock/unlock; then each operation kind on several element types, each rank
// at its own slot of the target, exact.
void gets_and_types(Device& dev, Flavor f) {
  const int n = dev.size(), me = dev.rank();
  ByteWin w(dev, f);
  const int t = (me + 1) % n;
  const auto* byte = adi3::Datatype::byte();
  std::vector<char> buf(static_cast<std::size_t>(kBytes - kPattern));
  auto check = [&](std::ptrdiff_t at, std::size_t len, const char* got, const char* what) {
    for (std::size_t i = 0; i < len; ++i) {
      ASSERT_EQ(got[i], pattern(t, at + static_cast<std::ptrdiff_t>(i))) << what << " byte " << i << " of " << len;
    }
  };
  ASSERT_EQ(dev.barrier(), 0);
  ASSERT_EQ(w.win->lock_all(0), 0);
  for (std::size_t len : {std::size_t{1}, std::size_t{8}, std::size_t{100}, std::size_t{1024}, std::size_t{2048},
                          std::size_t{8192}, std::size_t{24576}}) {
    const std::ptrdiff_t at = kPattern + 3 + static_cast<std::ptrdiff_t>(len % 61);
    std::fill(buf.begin(), buf.end(), 0);
    ASSERT_EQ(w.win->get(buf.data(), static_cast<int64_t>(len), byte, t, at, static_cast<int64_t>(len), byte), 0);
    ASSERT_EQ(w.win->flush(t), 0);
    check(at, len, buf.data(), "one per flush");
    std::fill(buf.begin(), buf.end(), 0);
    const std::size_t each = std::min<std::size_t>(len, 1024);
    for (int k = 0; k < 16; ++k) {
      const std::ptrdiff_t a = at + k * static_cast<std::ptrdiff_t>(each);
      ASSERT_EQ(w.win->get(buf.data() + static_cast<std::size_t>(k) * each, static_cast<int64_t>(each), byte, t, a,
                           static_cast<int64_t>(each), byte),
                0);
    }
    ASSERT_EQ(w.win->flush(t), 0);
    check(at, 16 * each, buf.data(), "16 per flush");
  }
  std::fill(buf.begin(), buf.end(), 0);
  for (int k = 0; k < 100; ++k) {
    ASSERT_EQ(w.win->get(buf.data() + 8 * k, 8, byte, t, kPattern + 8 * k, 8, byte), 0);
  }
  ASSERT_EQ(w.win->flush_all(), 0);
  check(kPattern, 800, buf.data(), "100 per flush");

  // One kind of operation per element type, each rank at its own 64-byte
  // slot of the target (the target's memory there starts at zero).
  const std::ptrdiff_t slot = 1024 + 64 * me;
  double d = -1;
  const double d_add = 2.5;
  ASSERT_EQ(w.win->fetch_and_op(&d_add, &d, dt(adi3::Builtin::kDouble), t, slot, Op(OpKind::Sum)), 0);
  ASSERT_EQ(w.win->fetch_and_op(&d_add, &d, dt(adi3::Builtin::kDouble), t, slot, Op(OpKind::Sum)), 0);
  ASSERT_EQ(w.win->flush(t), 0);
  EXPECT_EQ(d, 2.5);
  int16_t s = -1;
  const int16_t s_max = 77, s_rep = -5;
  ASSERT_EQ(w.win->fetch_and_op(&s_max, &s, dt(adi3::Builtin::kInt16), t, slot + 8, Op(OpKind::Max)), 0);
  ASSERT_EQ(w.win->flush(t), 0);
  EXPECT_EQ(s, 0);
  ASSERT_EQ(w.win->fetch_and_op(&s_rep, &s, dt(adi3::Builtin::kInt16), t, slot + 8, Op(OpKind::Replace)), 0);
  ASSERT_EQ(w.win->flush(t), 0);
  EXPECT_EQ(s, 77);
  ASSERT_EQ(w.win->fetch_and_op(nullptr, &s, dt(adi3::Builtin::kInt16), t, slot + 8, Op(OpKind::NoOp)), 0);
  ASSERT_EQ(w.win->flush(t), 0);
  EXPECT_EQ(s, -5);
  unsigned char b = 9;
  const unsigned char b_new = 0xab, b_cmp = 0, b_bad = 1;
  ASSERT_EQ(w.win->compare_and_swap(&b_new, &b_bad, &b, byte, t, slot + 11), 0);  // no swap
  ASSERT_EQ(w.win->flush(t), 0);
  EXPECT_EQ(b, 0);
  ASSERT_EQ(w.win->compare_and_swap(&b_new, &b_cmp, &b, byte, t, slot + 11), 0);
  ASSERT_EQ(w.win->flush(t), 0);
  EXPECT_EQ(b, 0);
  ASSERT_EQ(w.win->fetch_and_op(nullptr, &b, byte, t, slot + 11, Op(OpKind::NoOp)), 0);
  ASSERT_EQ(w.win->flush(t), 0);
  EXPECT_EQ(b, 0xab);
  const float fl[3] = {1.5f, -2.0f, 4.0f};
  float old[3] = {-1, -1, -1};
  const auto* f32 = dt(adi3::Builtin::kFloat);
  ASSERT_EQ(w.win->get_accumulate(fl, 3, f32, old, 3, f32, t, slot + 16, 3, f32, Op(OpKind::Replace)), 0);
  ASSERT_EQ(w.win->get_accumulate(fl, 3, f32, old, 3, f32, t, slot + 16, 3, f32, Op(OpKind::Prod)), 0);
  ASSERT_EQ(w.win->flush(t), 0);
  EXPECT_EQ(old[0], 1.5f);
  EXPECT_EQ(old[1], -2.0f);
  EXPECT_EQ(old[2], 4.0f);
  ASSERT_EQ(w.win->get_accumulate(nullptr, 0, f32, old, 3, f32, t, slot + 16, 3, f32, Op(OpKind::NoOp)), 0);
  ASSERT_EQ(w.win->flush(t), 0);
  EXPECT_EQ(old[0], 2.25f);
  EXPECT_EQ(old[1], 4.0f);
  EXPECT_EQ(old[2], 16.0f);
  ASSERT_EQ(w.win->unlock_all(), 0);

  // Fence epoch, then lock / get / fetch_and_op / unlock.
  ASSERT_EQ(w.win->fence(0), 0);
  std::fill(buf.begin(), buf.end(), 0);
  ASSERT_EQ(w.win->get(buf.data(), 24, byte, t, kPattern + 40, 24, byte), 0);
  int64_t v = -1;
  const int64_t ten = 10;
  ASSERT_EQ(w.win->fetch_and_op(&ten, &v, dt(adi3::Builtin::kInt64), t, slot + 32, Op(OpKind::Sum)), 0);
  ASSERT_EQ(w.win->fence(0), 0);
  check(kPattern + 40, 24, buf.data(), "fence");
  EXPECT_EQ(v, 0);
  ASSERT_EQ(w.win->fence(adi3::kModeNoSucceed), 0);
  ASSERT_EQ(w.win->lock(adi3::LockType::Shared, t, 0), 0);
  ASSERT_EQ(w.win->get(buf.data(), 16, byte, t, kPattern + 80, 16, byte), 0);
  ASSERT_EQ(w.win->fetch_and_op(&ten, &v, dt(adi3::Builtin::kInt64), t, slot + 32, Op(OpKind::Sum)), 0);
  ASSERT_EQ(w.win->unlock(t), 0);
  check(kPattern + 80, 16, buf.data(), "lock");
  EXPECT_EQ(v, 10);
  ASSERT_EQ(dev.barrier(), 0);
}

TEST_P(RmaFetchPaths, GetsAndTypesNp1) {
  run(1, [](Device& d) { gets_and_types(d, Flavor::Allocate); });
}
TEST_P(RmaFetchPaths, GetsAndTypesNp2) {
  run(2, [](Device& d) { gets_and_types(d, Flavor::Allocate); });
}
TEST_P(RmaFetchPaths, GetsAndTypesCreateNp2) {
  run(2, [](Device& d) { gets_and_types(d, Flavor::Create); });
}
TEST_P(RmaFetchPaths, GetsAndTypesNp3) {
  run(3, [](Device& d) { gets_and_types(d, Flavor::Allocate); });
}

// Forged replies: a get from its own window (NOCHECK: the short path) waits
// for its reply, which only this rank's progress sends; before that, the
// rank sends itself replies that name the get's record with another
// sequence number, with the wrong length, as a batch reply of the wrong
// length, and one for a record that was freed. Each is refused; the get
// ends with its own data and the buffer of a finished get is not written.
// The rank's agent could answer the get before the test finds its record:
// it is stopped while the test looks and forges (only this thread then
// progresses the rank), and a failed look still runs the collective steps
// below, so the other ranks end instead of hanging.
void forged_replies(Device& dev) {
  const int me = dev.rank();
  ByteWin w(dev, Flavor::Allocate);
  adi3::rma::WindowState& st = w.win->state();
  const auto* i64 = dt(adi3::Builtin::kInt64);
  const int64_t mine = 0x1122334455667788;
  std::memcpy(w.mem + 256, &mine, sizeof mine);
  ASSERT_EQ(dev.barrier(), 0);
  ASSERT_EQ(w.win->lock_all(adi3::kModeNoCheck), 0);
  int64_t done = 0, live = 0;
  ASSERT_EQ(w.win->get(&done, 1, i64, me, 256, 1, i64), 0);
  ASSERT_EQ(w.win->flush(me), 0);
  EXPECT_EQ(done, mine);
  done = 7;
  uint64_t freed = 0;
  {
    std::lock_guard g(st.mu);
    freed = adi3::rma::kQuickToken | (st.quick_seq * adi3::rma::kQuickSlots);  // slot 0 was its record (or none)
  }
  const bool agent = dev.port().agent_running();
  const std::string agent_why = dev.port().agent_reason();
  dev.port().stop_agent();
  ASSERT_EQ(w.win->get(&live, 1, i64, me, 256, 1, i64), 0);
  uint64_t token = 0;
  {
    std::lock_guard g(st.mu);
    for (const auto& q : st.quick) {
      if (q.token) token = q.token;
    }
  }
  if (st.native_usable) {
    EXPECT_EQ(token, 0u);  // native: no packet, no record
  } else if (token == 0) {
    ADD_FAILURE() << "the get took no reply record";
  } else {
    const adi3::rma::PeerWin p = st.peers[static_cast<std::size_t>(me)];
    auto forge = [&](adi3::rma::Msg kind, uint64_t tok, const void* data, std::size_t n, uint64_t len) {
      adi3::rma::Header h{};
      h.id = p.pkt;
      h.win = p.win;
      h.gen = p.gen;
      h.kind = kind;
      h.token = tok;
      h.len = len;
      h.count = 1;
      int e = dev.port().send_packet(p.peer, &h, sizeof h, adi3::Payload{data, n, nullptr, 0});
      ASSERT_EQ(e, 0) << why(dev, e);
    };
    const int64_t evil[2] = {-1, -1};
    forge(adi3::rma::Msg::GetResp, token + adi3::rma::kQuickSlots, evil, 8, 8);  // another sequence number
    forge(adi3::rma::Msg::GetResp, token, evil, 4, 4);                           // too short
    forge(adi3::rma::Msg::GetResp, token, evil, 16, 16);                         // too long
    forge(adi3::rma::Msg::GetResp, freed, evil, 8, 8);                           // a finished get's record
    struct {
      adi3::rma::RespRec r;
      int64_t d[2];
    } rec{};
    rec.r.token = token;
    rec.r.len = 16;
    rec.d[0] = rec.d[1] = -1;
    forge(adi3::rma::Msg::BatchResp, 0, &rec, sizeof rec, sizeof rec);
  }
  if (agent) dev.port().require_agent(agent_why.c_str());
  EXPECT_EQ(w.win->flush(me), 0);
  EXPECT_EQ(live, mine);
  EXPECT_EQ(done, 7);
  EXPECT_EQ(w.win->unlock_all(), 0);
  EXPECT_EQ(dev.barrier(), 0);
}

TEST_P(RmaFetchPaths, ForgedRepliesRefusedNp1) { run(1, forged_replies); }
TEST_P(RmaFetchPaths, ForgedRepliesRefusedNp2) { run(2, forged_replies); }

// The target's one-element kernel (emul/one_element.hpp) against coll's:
// the same ops accepted, the same bytes for every op it takes, on values
// that overflow, compare signed and unsigned differently, and are zero.
TEST(RmaOneElement, MatchesCollKernels) {
  using adi3::Builtin;
  const Builtin types[] = {Builtin::kInt,    Builtin::kInt32,    Builtin::kUnsigned,     Builtin::kUint32,
                           Builtin::kLong,   Builtin::kLongLong, Builtin::kInt64,        Builtin::kAint,
                           Builtin::kOffset, Builtin::kCount,    Builtin::kUnsignedLong, Builtin::kUnsignedLongLong,
                           Builtin::kUint64, Builtin::kFloat,    Builtin::kDouble};
  const int64_t values[] = {0, 1, -1, 3, -7, 0x7fffffff, INT64_MAX, INT64_MIN, 0x12345678};
  int checked = 0;
  for (Builtin b : types) {
    const auto one = adi3::emul::one_type(b);
    ASSERT_NE(one, adi3::emul::OneType::None) << static_cast<int>(b);
    const std::size_t es = adi3::Datatype::builtin(b)->size();
    for (int k = 0; k <= static_cast<int>(OpKind::NoOp); ++k) {
      const auto op = static_cast<OpKind>(k);
      const bool takes = adi3::emul::one_accepts(one, op);
      if (op != OpKind::Replace && op != OpKind::NoOp) {
        EXPECT_EQ(takes, adi3::coll::op_accepts(op, b)) << static_cast<int>(b) << " op " << k;
      }
      if (!takes || op == OpKind::Replace || op == OpKind::NoOp) continue;
      for (int64_t x : values) {
        for (int64_t y : values) {
          alignas(16) char in[8] = {}, mine[8] = {}, theirs[8] = {};
          if (one == adi3::emul::OneType::F32) {
            const float a = static_cast<float>(x % 100000), c = static_cast<float>(y % 100000);
            std::memcpy(in, &a, 4);
            std::memcpy(mine, &c, 4);
          } else if (one == adi3::emul::OneType::F64) {
            const double a = static_cast<double>(x), c = static_cast<double>(y);
            std::memcpy(in, &a, 8);
            std::memcpy(mine, &c, 8);
          } else {
            std::memcpy(in, &x, es);
            std::memcpy(mine, &y, es);
          }
          std::memcpy(theirs, mine, sizeof mine);
          adi3::emul::one_apply(one, op, in, mine);
          adi3::coll::apply(op, b, in, theirs, 1, es);
          EXPECT_EQ(std::memcmp(mine, theirs, sizeof mine), 0)
              << "type " << static_cast<int>(b) << " op " << k << " " << x << " " << y;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 1000);
  EXPECT_EQ(adi3::emul::one_type(Builtin::kShort), adi3::emul::OneType::None);
  EXPECT_EQ(adi3::emul::one_type(Builtin::kLongDouble), adi3::emul::OneType::None);
}

INSTANTIATE_TEST_SUITE_P(Rma, RmaFetchPaths, ::testing::ValuesIn(core_test::setups()), core_test::SetupName());

}  // namespace
