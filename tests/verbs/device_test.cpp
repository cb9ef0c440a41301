// The software verbs device obeys an RC queue pair's rules: ordered
// completions, data visible before the receive completion, errors as
// completions (and the queue pair in error after one), receiver-not-ready,
// atomics atomic among themselves across processes. Also: opening a
// hardware device on a host without one says "no RDMA device".
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <string>
#include <vector>

#include "channels/verbs/verbs_device.hpp"

namespace adi3::verbs {
namespace {

std::string fresh_job() {
  static int n = 0;
  return "verbstest" + std::to_string(getpid()) + "_" + std::to_string(n++);
}

// `ranks` devices of one job in this process, each knowing the others'
// datagram addresses; with `connect`, a queue pair between every pair.
std::vector<std::unique_ptr<VerbsDevice>> job(int ranks, bool connect = true) {
  std::string id = fresh_job();
  std::vector<std::unique_ptr<VerbsDevice>> d;
  for (int r = 0; r < ranks; ++r) d.push_back(open_soft_device({r, ranks, id, 64}));
  for (auto& x : d)
    for (int p = 0; p < ranks; ++p) x->datagram_peer(p, d[static_cast<std::size_t>(p)]->datagram_address());
  for (auto& x : d) x->started();
  if (!connect) return d;
  std::vector<std::string> qp(static_cast<std::size_t>(ranks * ranks));
  for (int r = 0; r < ranks; ++r)
    for (int p = 0; p < ranks; ++p)
      qp[static_cast<std::size_t>(r * ranks + p)] = d[static_cast<std::size_t>(r)]->create_qp(p);
  for (int r = 0; r < ranks; ++r)
    for (int p = 0; p < ranks; ++p)
      d[static_cast<std::size_t>(r)]->connect(p, qp[static_cast<std::size_t>(p * ranks + r)]);
  return d;
}

std::vector<Completion> drain(VerbsDevice& d, std::size_t want) {
  std::vector<Completion> out;
  Completion c[16];
  for (int spins = 0; out.size() < want && spins < 100000; ++spins) {
    int n = d.poll(c, 16);
    out.insert(out.end(), c, c + n);
  }
  return out;
}

TEST(SoftDevice, WriteImmInOrderDataVisibleFirst) {
  auto d = job(2);
  std::vector<uint64_t> target(256, 0);
  Region t = d[1]->reg(target.data(), target.size() * 8, kLocalWrite | kRemoteWrite);
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(d[1]->post_recv(0, 0));
  for (uint64_t i = 0; i < 40; ++i) {
    uint64_t v = 1000 + i;
    ASSERT_TRUE(d[0]->write_imm(1, i, &v, 8, 0, t.addr + i * 8, t.rkey, static_cast<uint32_t>(i)));
  }
  auto sent = drain(*d[0], 40);
  ASSERT_EQ(sent.size(), 40u);
  for (uint64_t i = 0; i < 40; ++i) {
    EXPECT_EQ(sent[i].wr_id, i);
    EXPECT_EQ(sent[i].op, Op::WriteImm);
    EXPECT_EQ(sent[i].status, Status::Success);
  }
  auto got = drain(*d[1], 40);
  ASSERT_EQ(got.size(), 40u);
  for (uint32_t i = 0; i < 40; ++i) {
    EXPECT_EQ(got[i].op, Op::RecvImm);
    EXPECT_EQ(got[i].peer, 0);
    EXPECT_EQ(got[i].imm, i);
    EXPECT_EQ(got[i].bytes, 8u);
    EXPECT_EQ(target[i], 1000 + i) << "the completion came before the data";
  }
}

TEST(SoftDevice, ZeroLengthWriteCarriesOnlyTheImmediate) {
  auto d = job(2);
  ASSERT_TRUE(d[1]->post_recv(0, 0));
  ASSERT_TRUE(d[0]->write_imm(1, 7, nullptr, 0, 0, 0, 0, 0x80000003u));
  auto got = drain(*d[1], 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].imm, 0x80000003u);
  EXPECT_EQ(got[0].bytes, 0u);
}

TEST(SoftDevice, NoReceivePostedIsReceiverNotReady) {
  auto d = job(2);
  uint64_t dst = 0, v = 5;
  Region t = d[1]->reg(&dst, 8, kRemoteWrite);
  ASSERT_TRUE(d[0]->write_imm(1, 1, &v, 8, 0, t.addr, t.rkey, 0));
  auto c = drain(*d[0], 1);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].status, Status::ReceiverNotReady);
  EXPECT_EQ(dst, 0u) << "nothing is written without a receive";
}

// Each bad access completes with RemoteAccess, touches nothing, and puts
// the queue pair in error: the next request is flushed.
struct BadAccess {
  const char* what;
  int64_t offset;
  std::size_t len;
  uint32_t key_delta;
  uint32_t access;
};

class SoftDeviceBad : public ::testing::TestWithParam<BadAccess> {};

TEST_P(SoftDeviceBad, IsACompletionErrorThenFlushed) {
  const BadAccess& b = GetParam();
  auto d = job(2);
  std::vector<char> target(64, 'x');
  Region t = d[1]->reg(target.data(), target.size(), b.access);
  char src[64];
  std::memset(src, 'y', sizeof src);
  ASSERT_TRUE(d[1]->post_recv(0, 0));
  ASSERT_TRUE(d[1]->post_recv(0, 0));
  ASSERT_TRUE(d[0]->write_imm(1, 1, src, b.len, 0, t.addr + static_cast<uint64_t>(b.offset), t.rkey + b.key_delta, 9));
  ASSERT_TRUE(d[0]->write_imm(1, 2, src, 8, 0, t.addr, t.rkey, 10));  // a good one, after the error
  auto c = drain(*d[0], 2);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].wr_id, 1u);
  EXPECT_EQ(c[0].status, Status::RemoteAccess) << b.what;
  EXPECT_EQ(c[1].wr_id, 2u);
  EXPECT_EQ(c[1].status, Status::Flushed) << b.what;
  EXPECT_EQ(std::string(target.begin(), target.end()), std::string(64, 'x')) << b.what;
  EXPECT_TRUE(drain(*d[1], 1).empty()) << "a failed write completed a receive";
}

INSTANTIATE_TEST_SUITE_P(Cases, SoftDeviceBad,
                         ::testing::Values(BadAccess{"unknown key", 0, 8, 1, kRemoteWrite},
                                           BadAccess{"past the end", 60, 8, 0, kRemoteWrite},
                                           BadAccess{"before the start", -8, 8, 0, kRemoteWrite},
                                           BadAccess{"longer than the region", 0, 65, 0, kRemoteWrite},
                                           BadAccess{"no write permission", 0, 8, 0, kRemoteRead}),
                         [](const auto& i) { return std::to_string(i.index); });

TEST(SoftDevice, DeregisteredKeyIsRefused) {
  auto d = job(2);
  uint64_t src = 1, dst = 0;
  Region t = d[1]->reg(&src, 8, kRemoteRead);
  uint32_t key = t.rkey;
  uint64_t addr = t.addr;
  d[1]->dereg(t);
  Region again = d[1]->reg(&src, 8, kRemoteRead);  // same slot, new generation
  EXPECT_NE(again.rkey, key);
  ASSERT_TRUE(d[0]->read(1, 3, &dst, 8, 0, addr, key));
  auto c = drain(*d[0], 1);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].status, Status::RemoteAccess);
  EXPECT_EQ(dst, 0u);
}

TEST(SoftDevice, PlainWriteConsumesNoReceive) {
  auto d = job(2);
  std::vector<char> dst(4096, 0), src(4096, 'z');
  Region t = d[1]->reg(dst.data(), dst.size(), kRemoteWrite);
  ASSERT_TRUE(d[0]->write(1, 5, src.data(), src.size(), 0, t.addr, t.rkey));
  auto c = drain(*d[0], 1);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].op, Op::Write);
  EXPECT_EQ(c[0].status, Status::Success);
  EXPECT_EQ(dst, src);
  EXPECT_TRUE(drain(*d[1], 1).empty());
}

TEST(SoftDevice, ReadFetchesRemoteBytes) {
  auto d = job(3);
  std::vector<char> src(100000), dst(100000, 0);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<char>(i * 7);
  Region s = d[2]->reg(src.data(), src.size(), kRemoteRead);
  ASSERT_TRUE(d[0]->read(2, 11, dst.data(), dst.size(), 0, s.addr, s.rkey));
  auto c = drain(*d[0], 1);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].op, Op::Read);
  EXPECT_EQ(c[0].status, Status::Success);
  EXPECT_EQ(src, dst);
}

TEST(SoftDevice, AtomicsReturnTheOldValue) {
  auto d = job(2);
  alignas(8) uint64_t word[2] = {40, 0};
  Region w = d[1]->reg(word, sizeof word, kRemoteAtomic);
  uint64_t old = 0;
  ASSERT_TRUE(d[0]->fetch_add(1, 1, &old, 0, w.addr, w.rkey, 2));
  ASSERT_EQ(drain(*d[0], 1).at(0).status, Status::Success);
  EXPECT_EQ(old, 40u);
  EXPECT_EQ(word[0], 42u);
  ASSERT_TRUE(d[0]->compare_swap(1, 2, &old, 0, w.addr, w.rkey, 41, 7));  // compare fails
  ASSERT_EQ(drain(*d[0], 1).at(0).status, Status::Success);
  EXPECT_EQ(old, 42u);
  EXPECT_EQ(word[0], 42u);
  ASSERT_TRUE(d[0]->compare_swap(1, 3, &old, 0, w.addr, w.rkey, 42, 7));
  ASSERT_EQ(drain(*d[0], 1).at(0).status, Status::Success);
  EXPECT_EQ(old, 42u);
  EXPECT_EQ(word[0], 7u);
  ASSERT_TRUE(d[0]->fetch_add(1, 4, &old, 0, w.addr + 4, w.rkey, 1));  // misaligned
  auto c = drain(*d[0], 1);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].status, Status::RemoteAccess);
}

// An atomic with an unknown key, past the end, or without atomic access is
// a completion error (not a crash), the queue pair is then in error, and
// the target's word is untouched.
TEST(SoftDevice, BadAtomicIsACompletionError) {
  struct Case {
    const char* what;
    uint64_t at;
    uint32_t key_delta;
    uint32_t access;
  };
  for (const Case& k : {Case{"unknown key", 0, 1, kRemoteAtomic}, Case{"past the end", 16, 0, kRemoteAtomic},
                        Case{"no atomic permission", 0, 0, kRemoteRead | kRemoteWrite}}) {
    auto d = job(2);
    alignas(8) uint64_t word[2] = {5, 6};
    Region w = d[1]->reg(word, sizeof word, k.access);
    uint64_t old = 99;
    ASSERT_TRUE(d[0]->fetch_add(1, 1, &old, 0, w.addr + k.at, w.rkey + k.key_delta, 1));
    ASSERT_TRUE(d[0]->compare_swap(1, 2, &old, 0, w.addr, w.rkey, 5, 7));
    auto c = drain(*d[0], 2);
    ASSERT_EQ(c.size(), 2u) << k.what;
    EXPECT_EQ(c[0].status, Status::RemoteAccess) << k.what;
    EXPECT_EQ(c[1].status, Status::Flushed) << k.what;
    EXPECT_EQ(old, 99u) << k.what;
    EXPECT_EQ(word[0], 5u) << k.what;
    EXPECT_EQ(word[1], 6u) << k.what;
  }
}

// Two processes and the owner hammer one counter with fetch_add: every
// increment lands, and compare_swap sees a consistent value.
TEST(SoftDevice, AtomicsAreAtomicAcrossProcesses) {
  auto d = job(3);
  alignas(8) uint64_t counter = 0;
  Region w = d[0]->reg(&counter, 8, kRemoteAtomic);
  constexpr int kEach = 3000;
  std::vector<pid_t> kids;
  for (int r = 1; r <= 2; ++r) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      uint64_t old = 0;
      bool ok = true;
      for (int i = 0; i < kEach && ok; ++i) {
        ok = d[static_cast<std::size_t>(r)]->fetch_add(0, 1, &old, 0, w.addr, w.rkey, 1);
        Completion c;
        while (ok && d[static_cast<std::size_t>(r)]->poll(&c, 1) == 0) {
        }
        ok = ok && c.status == Status::Success;
      }
      _exit(ok ? 0 : 1);
    }
    kids.push_back(pid);
  }
  uint64_t old = 0;
  for (int i = 0; i < kEach; ++i) {  // rank 0 through its own device (loopback)
    ASSERT_TRUE(d[0]->fetch_add(0, 1, &old, 0, w.addr, w.rkey, 1));
    ASSERT_EQ(drain(*d[0], 1).at(0).status, Status::Success);
  }
  for (pid_t k : kids) {
    int st = 0;
    ASSERT_EQ(waitpid(k, &st, 0), k);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  EXPECT_EQ(counter, 3u * kEach);
}

// The lost wakeup: the condition a sleeper waits for is published, and
// wake() rung, after the sleeper last checked it and before it sleeps (here:
// inside its first check). The sleep must end at once, not at the timeout.
TEST(SoftDevice, WaitUntilSeesAWakeBeforeTheSleep) {
  auto d = job(1);
  std::string why;
  EXPECT_EQ(d[0]->dead_peer(why), -1);  // the next liveness check is due later: the device may sleep
  bool published = false;
  int checks = 0;
  auto done = [&] {
    if (checks++ == 0) {
      published = true;  // a completer, between the check and the sleep
      d[0]->wake();
      return false;
    }
    return published;
  };
  const auto t0 = std::chrono::steady_clock::now();
  // A lost wakeup sleeps the whole 30 s; the bound leaves room for load.
  d[0]->wait_until(std::chrono::seconds(30), WaitCondition::of(done));
  const auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_LT(waited, std::chrono::seconds(5)) << "slept through a wakeup rung before the sleep";
  EXPECT_GE(checks, 1);
}

// With nothing published, the wait sleeps until wake() from another thread.
TEST(SoftDevice, WaitUntilWakesOnWake) {
  auto d = job(1);
  std::string why;
  d[0]->dead_peer(why);
  std::atomic<bool> published{false};
  std::thread waker([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    published.store(true);
    d[0]->wake();
  });
  auto done = [&] { return published.load(); };
  const auto t0 = std::chrono::steady_clock::now();
  while (!done() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5))
    d[0]->wait_until(std::chrono::seconds(5), WaitCondition::of(done));
  waker.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
}

// UD rules: whole datagrams with the sender's rank; a full receive queue
// drops them silently; none over the size limit.
TEST(SoftDevice, DatagramsArriveWholeOrAreDropped) {
  auto d = job(3, false);
  char buf[VerbsDevice::kMaxDatagram];
  int from = -1;
  EXPECT_EQ(d[1]->recv_datagram(buf, sizeof buf, &from), -1);
  ASSERT_TRUE(d[0]->send_datagram(1, "hello", 5));
  ASSERT_TRUE(d[2]->send_datagram(1, "hi", 2));
  int got = 0;
  for (int i = 0; i < 2; ++i) {
    int n = d[1]->recv_datagram(buf, sizeof buf, &from);
    ASSERT_GE(n, 0);
    const std::string text(buf, static_cast<std::size_t>(n));
    EXPECT_EQ(text, from == 0 ? "hello" : "hi");
    got |= 1 << from;
  }
  EXPECT_EQ(got, 0b101);
  EXPECT_EQ(d[1]->recv_datagram(buf, sizeof buf, &from), -1);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(d[0]->send_datagram(1, &i, sizeof i));  // accepted, most dropped
  int kept = 0;
  while (d[1]->recv_datagram(buf, sizeof buf, &from) >= 0) ++kept;
  EXPECT_GT(kept, 0);
  EXPECT_LT(kept, 100);
  std::string big(VerbsDevice::kMaxDatagram + 1, 'x');
  EXPECT_FALSE(d[0]->send_datagram(1, big.data(), big.size()));
  EXPECT_EQ(d[0]->qps_created(), 0);
}

// A queue pair takes requests only once connected; a request reaching a
// peer whose side is not connected to it fails as on a NIC (retries out).
TEST(SoftDevice, QueuePairsMustBeConnectedOnBothSides) {
  auto d = job(2, false);
  std::vector<uint64_t> target(4, 0);
  Region t = d[1]->reg(target.data(), 32, kLocalWrite | kRemoteWrite);
  uint64_t v = 5;
  EXPECT_FALSE(d[0]->post_recv(1, 0)) << "no queue pair yet";
  EXPECT_FALSE(d[0]->write(1, 1, &v, 8, 0, t.addr, t.rkey));
  std::string a0 = d[0]->create_qp(1);
  EXPECT_EQ(d[0]->create_qp(1), a0) << "one queue pair per peer";
  EXPECT_EQ(d[0]->qps_created(), 1);
  EXPECT_TRUE(d[0]->post_recv(1, 0));
  EXPECT_FALSE(d[0]->write(1, 1, &v, 8, 0, t.addr, t.rkey)) << "created, not connected";
  EXPECT_THROW(d[0]->connect(1, "garbage"), std::runtime_error);
  std::string a1 = d[1]->create_qp(0);
  d[0]->connect(1, a1);  // our side ready; rank 1's not yet
  ASSERT_TRUE(d[0]->write(1, 2, &v, 8, 0, t.addr, t.rkey));
  auto c = drain(*d[0], 1);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].status, Status::PeerUnreachable);
  EXPECT_EQ(target[0], 0u);

  auto e = job(2, false);  // in the right order: both sides, then requests
  Region u = e[1]->reg(target.data(), 32, kLocalWrite | kRemoteWrite);
  std::string b0 = e[0]->create_qp(1), b1 = e[1]->create_qp(0);
  e[1]->connect(0, b0);
  e[0]->connect(1, b1);
  ASSERT_TRUE(e[0]->write(1, 3, &v, 8, 0, u.addr, u.rkey));
  c = drain(*e[0], 1);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].status, Status::Success);
  EXPECT_EQ(target[0], 5u);
  EXPECT_EQ(e[0]->qps_created(), 1);
  EXPECT_EQ(e[1]->qps_created(), 1);
}

TEST(IbvDevice, NoDeviceSaysSo) {
  try {
    auto d = open_ibv_device({0, 1, fresh_job(), 8}, DeviceChoice{});
    GTEST_SKIP() << "this host has an RDMA device: " << d->name();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no RDMA device"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace adi3::verbs
