// MPI_THREAD_MULTIPLE stress: 2-4 ranks, several threads per rank, all
// sending and receiving at once through the one Device of their rank.
//
// Per rank: kWorkers worker threads; worker t exchanges with worker t of every
// other rank (tags private to t: pairwise isend/irecv in every send mode,
// ANY_SOURCE receives, a blocking sendrecv), completing with a different
// wait/test family per thread. Each worker also sends messages of one shared
// tag to every other rank, where two consumer threads compete for them: one
// with improbe + imrecv/mrecv, one with irecv + test (and a final cancel), so
// a message taken by a matched probe must never reach the other thread.
// Every payload names its sender, thread and round and is checked in full;
// per-sender order is checked where MPI defines it.
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "harness.hpp"

namespace {

using namespace core_test;
using adi3::kAnySource;
using adi3::Request;
using adi3::SendMode;
using adi3::Status;

constexpr int kWorkers = 3;
constexpr int kRounds = 24;
constexpr int kPairTag = 100, kAnyTagBase = 200, kProbeTag = 300, kSrTag = 400;
// Receive buffers hold the largest message: 40000 bytes or one more than the
// eager limit, which is 64 KiB on tcp.
constexpr std::size_t kBufBytes = 70000;

struct Header {
  int32_t src, thread, round, kind;
};

uint32_t seed_of(const Header& h) {
  return static_cast<uint32_t>(h.src * 7919 + h.thread * 131 + h.round * 17 + h.kind);
}

std::vector<unsigned char> make_payload(const Header& h, std::size_t n) {
  n = std::max(n, sizeof(Header));
  std::vector<unsigned char> v = pattern(n, seed_of(h));
  std::memcpy(v.data(), &h, sizeof h);
  return v;
}

// Checks a received payload; returns its header.
Header check_payload(const unsigned char* p, std::size_t n, const char* what) {
  Header h{};
  EXPECT_GE(n, sizeof h) << what;
  if (n < sizeof h) return h;
  std::memcpy(&h, p, sizeof h);
  std::vector<unsigned char> want = pattern(n, seed_of(h));
  EXPECT_EQ(0, std::memcmp(p + sizeof h, want.data() + sizeof h, n - sizeof h))
      << what << ": payload of " << h.src << "/" << h.thread << "/" << h.round << " corrupted";
  return h;
}

std::size_t size_for(int round, int salt, const Device& dev) {
  switch ((round + salt) % 5) {
    case 0:
      return 16;
    case 1:
      return dev.eager_limit();
    case 2:
      return dev.eager_limit() + 1;
    case 3:
      return 40000;
    default:
      return 100;
  }
}

SendMode mode_for(int round, int t) {
  switch ((round + t) % 4) {
    case 1:
      return SendMode::Synchronous;
    case 3:
      return SendMode::Buffered;
    default:
      return SendMode::Standard;
  }
}

// Completes a set of requests with the thread's own family.
void complete_all(Device& dev, std::vector<Request*>& reqs, std::vector<Status>& st, int family) {
  const int n = static_cast<int>(reqs.size());
  st.assign(reqs.size(), Status{});
  if (family == 0) {
    ASSERT_OK(dev, dev.waitall(n, reqs.data(), st.data()));
    return;
  }
  int left = n;
  std::vector<int> idx(reqs.size());
  std::vector<Status> some(reqs.size());
  while (left > 0) {
    if (family == 1) {
      int i = -1;
      Status s;
      ASSERT_OK(dev, dev.waitany(n, reqs.data(), &i, &s));
      ASSERT_GE(i, 0);
      st[static_cast<std::size_t>(i)] = s;
      --left;
    } else {
      int out = 0;
      ASSERT_OK(dev, dev.testsome(n, reqs.data(), &out, idx.data(), some.data()));
      ASSERT_NE(out, adi3::kUndefined);
      for (int k = 0; k < out; ++k)
        st[static_cast<std::size_t>(idx[static_cast<std::size_t>(k)])] = some[static_cast<std::size_t>(k)];
      left -= out;
      if (out == 0) std::this_thread::yield();
    }
  }
}

void worker(Device& dev, int t) {
  const int me = dev.rank(), n = dev.size();
  std::vector<int> peers;
  for (int p = 0; p < n; ++p) {
    if (p != me) peers.push_back(p);
  }
  const std::size_t np = peers.size();
  std::vector<int> any_last(static_cast<std::size_t>(n), -1);  // ANY_SOURCE: last round seen per source
  for (int round = 0; round < kRounds; ++round) {
    std::vector<std::vector<unsigned char>> out, in;
    std::vector<Request*> reqs;
    // Receives first: pairwise, then the ANY_SOURCE ones.
    for (int p : peers) {
      in.emplace_back(std::max<std::size_t>(size_for(round, p, dev), sizeof(Header)));
      Request* r = nullptr;
      ASSERT_OK(dev, dev.irecv(in.back().data(), in.back().size(), byte(), p, kPairTag + t, dev.world(), &r));
      reqs.push_back(r);
    }
    // The ANY_SOURCE tag alternates with the round: a peer may be one round
    // ahead, and a receive of this round taking its message of the next
    // round would leave this round's message of a third rank to the next
    // round's receive, which is only posted after this round completed: a
    // deadlock when that send is a rendezvous one.
    const int any_tag = kAnyTagBase + 2 * t + (round & 1);
    for (std::size_t k = 0; k < np; ++k) {
      in.emplace_back(kBufBytes);
      Request* r = nullptr;
      ASSERT_OK(dev, dev.irecv(in.back().data(), in.back().size(), byte(), kAnySource, any_tag, dev.world(), &r));
      reqs.push_back(r);
    }
    for (int p : peers) {
      Header h{me, t, round, 1};
      out.push_back(make_payload(h, size_for(round, me, dev)));
      Request* r = nullptr;
      ASSERT_OK(dev, dev.isend(out.back().data(), out.back().size(), byte(), p, kPairTag + t, dev.world(),
                               mode_for(round, t), &r));
      reqs.push_back(r);
      Header ha{me, t, round, 2};
      out.push_back(make_payload(ha, size_for(round, t + 1, dev)));
      ASSERT_OK(dev, dev.isend(out.back().data(), out.back().size(), byte(), p, any_tag, dev.world(),
                               SendMode::Standard, &r));
      reqs.push_back(r);
      Header hp{me, t, round, 3};
      out.push_back(make_payload(hp, size_for(round, t + 2, dev)));
      ASSERT_OK(dev, dev.isend(out.back().data(), out.back().size(), byte(), p, kProbeTag, dev.world(),
                               round % 2 ? SendMode::Synchronous : SendMode::Standard, &r));
      reqs.push_back(r);
    }
    std::vector<Status> st;
    complete_all(dev, reqs, st, t % 3);
    if (::testing::Test::HasFatalFailure()) return;
    for (std::size_t k = 0; k < np; ++k) {
      Header h = check_payload(in[k].data(), st[k].bytes, "pairwise");
      EXPECT_EQ(st[k].source, peers[k]);
      EXPECT_EQ(h.src, peers[k]);
      EXPECT_EQ(h.thread, t);
      EXPECT_EQ(h.round, round);
      EXPECT_EQ(st[k].bytes, std::max<std::size_t>(size_for(round, peers[k], dev), sizeof(Header)));
    }
    for (std::size_t k = np; k < 2 * np; ++k) {
      Header h = check_payload(in[k].data(), st[k].bytes, "ANY_SOURCE");
      EXPECT_EQ(st[k].source, h.src);
      EXPECT_EQ(h.thread, t);
      EXPECT_EQ(h.kind, 2);
      if (h.src >= 0 && h.src < n) {
        int& last = any_last[static_cast<std::size_t>(h.src)];
        EXPECT_GT(h.round, last) << "ANY_SOURCE receives broke the order of source " << h.src;
        last = h.round;
      }
    }
    // A blocking exchange with the partner threads, in a ring over ranks.
    const int next = (me + 1) % n, prev = (me + n - 1) % n;
    Header hs{me, t, round, 4};
    std::vector<unsigned char> sout = make_payload(hs, size_for(round, 3, dev)), sin(kBufBytes);
    Status s;
    ASSERT_OK(dev, dev.sendrecv(sout.data(), sout.size(), byte(), next, kSrTag + t, sin.data(), sin.size(), byte(),
                                prev, kSrTag + t, dev.world(), &s));
    Header h = check_payload(sin.data(), s.bytes, "sendrecv");
    EXPECT_EQ(h.src, prev);
    EXPECT_EQ(h.round, round);
  }
  for (int p : peers) EXPECT_EQ(any_last[static_cast<std::size_t>(p)], kRounds - 1) << "from " << p;
}

// Two threads compete for the kProbeTag messages of every other rank.
struct Consumers {
  std::atomic<int> taken{0};
  int total = 0;
  std::mutex mu;
  std::multiset<std::tuple<int, int, int>> seen;  // (src, thread, round)

  void record(const std::vector<std::pair<Header, std::size_t>>& got) {
    std::lock_guard<std::mutex> g(mu);
    for (auto& [h, bytes] : got) seen.insert({h.src, h.thread, h.round});
  }
};

// Per (source, sending thread), a consumer sees rounds in increasing order.
void check_order(const std::vector<std::pair<Header, std::size_t>>& got, const char* who) {
  std::map<std::pair<int, int>, int> last;
  for (auto& [h, bytes] : got) {
    auto it = last.find({h.src, h.thread});
    if (it != last.end()) {
      EXPECT_GT(h.round, it->second) << who << ": order of " << h.src << "/" << h.thread;
    }
    last[{h.src, h.thread}] = h.round;
  }
}

void probe_consumer(Device& dev, Consumers& c) {
  std::vector<std::pair<Header, std::size_t>> got;
  int turn = 0;
  while (c.taken.load() < c.total) {
    bool flag = false;
    Request* msg = nullptr;
    Status st;
    ASSERT_OK(dev, dev.improbe(kAnySource, kProbeTag, dev.world(), &flag, &msg, &st));
    if (!flag) {
      std::this_thread::yield();
      continue;
    }
    ASSERT_NE(msg, nullptr);
    std::vector<unsigned char> buf(st.bytes);
    Status rs;
    if (++turn % 2) {
      ASSERT_OK(dev, dev.mrecv(buf.data(), buf.size(), byte(), &msg, &rs));
    } else {
      Request* r = nullptr;
      ASSERT_OK(dev, dev.imrecv(buf.data(), buf.size(), byte(), &msg, &r));
      ASSERT_OK(dev, dev.wait(&r, &rs));
    }
    EXPECT_EQ(rs.source, st.source);
    EXPECT_EQ(rs.bytes, st.bytes);
    Header h = check_payload(buf.data(), rs.bytes, "mprobe");
    EXPECT_EQ(h.src, st.source);
    got.push_back({h, rs.bytes});
    c.taken.fetch_add(1);
  }
  check_order(got, "mprobe consumer");
  c.record(got);
}

void recv_consumer(Device& dev, Consumers& c) {
  std::vector<std::pair<Header, std::size_t>> got;
  std::vector<unsigned char> buf(kBufBytes);
  for (;;) {
    Request* r = nullptr;
    ASSERT_OK(dev, dev.irecv(buf.data(), buf.size(), byte(), kAnySource, kProbeTag, dev.world(), &r));
    bool flag = false;
    Status st;
    while (!flag && c.taken.load() < c.total) {
      ASSERT_OK(dev, dev.test(&r, &flag, &st));
      if (!flag) std::this_thread::yield();
    }
    if (!flag) {
      // Everything is taken: the receive cannot match any more.
      ASSERT_OK(dev, dev.cancel(r));
      ASSERT_OK(dev, dev.wait(&r, &st));
      EXPECT_TRUE(st.cancelled) << "a receive matched a message beyond the expected count";
      if (st.cancelled) break;
    }
    Header h = check_payload(buf.data(), st.bytes, "recv consumer");
    EXPECT_EQ(h.src, st.source);
    got.push_back({h, st.bytes});
    c.taken.fetch_add(1);
  }
  check_order(got, "recv consumer");
  c.record(got);
}

using Param = std::tuple<Setup, int>;
struct ParamName {
  std::string operator()(const ::testing::TestParamInfo<Param>& i) const {
    return std::get<0>(i.param).name + "_" + std::to_string(std::get<1>(i.param)) + "Ranks";
  }
};
class ThreadMultiple : public ::testing::TestWithParam<Param> {};

TEST_P(ThreadMultiple, ManyThreadsPerRank) {
  const auto& [setup, ranks] = GetParam();
  ASSERT_TRUE(setup.config.thread_multiple);
  RunOptions opt;
  opt.timeout = std::chrono::seconds(100);
  run_ranks(
      setup, ranks,
      [](Device& dev) {
        const int n = dev.size();
        ASSERT_LT(dev.eager_limit(), kBufBytes) << "receive buffers too small for this channel's eager limit";
        // Buffered sends of all workers share one attached buffer.
        std::vector<unsigned char> attached(static_cast<std::size_t>(kWorkers * n) * 4 *
                                            (kBufBytes + 2 * adi3::BsendBuffer::kOverhead));
        ASSERT_OK(dev, dev.buffer_attach(attached.data(), attached.size()));
        Consumers c;
        c.total = (n - 1) * kWorkers * kRounds;
        std::vector<std::thread> threads;
        for (int t = 0; t < kWorkers; ++t) threads.emplace_back([&dev, t] { worker(dev, t); });
        threads.emplace_back([&] { probe_consumer(dev, c); });
        threads.emplace_back([&] { recv_consumer(dev, c); });
        for (auto& th : threads) th.join();
        EXPECT_EQ(c.taken.load(), c.total);
        // Every message exactly once.
        std::multiset<std::tuple<int, int, int>> want;
        for (int src = 0; src < n; ++src) {
          if (src == dev.rank()) continue;
          for (int t = 0; t < kWorkers; ++t) {
            for (int round = 0; round < kRounds; ++round) want.insert({src, t, round});
          }
        }
        EXPECT_TRUE(c.seen == want) << "probe-tag messages lost or duplicated: got " << c.seen.size() << " of "
                                    << want.size();
        void* p = nullptr;
        std::size_t bytes = 0;
        ASSERT_OK(dev, dev.buffer_detach(&p, &bytes));
      },
      opt);
}

INSTANTIATE_TEST_SUITE_P(Channels, ThreadMultiple,
                         ::testing::Combine(::testing::ValuesIn(threaded_setups()), ::testing::Values(2, 3, 4)),
                         ParamName{});

}  // namespace
