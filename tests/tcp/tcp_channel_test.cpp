// The TCP channel over real sockets, ranks as channels in one process:
// lazy connections (one per pair even when both sides dial at once),
// ordered delivery of large frames, and hostile connections (garbage, no
// secret, wrong ranks, malformed and oversized frames, silence), each
// refused while the job's own traffic continues untouched.
#include <gtest/gtest.h>

#include <atomic>

#include "segment/segment.hpp"
#include "segment/type_create.hpp"
#include "tcp_harness.hpp"

namespace adi3::tcp::testing {
namespace {

using namespace std::chrono_literals;

// Runs job.poll_all() on a thread until destroyed (the attacker blocks).
struct Poller {
  explicit Poller(Job& job)
      : t([this, &job] {
          while (!stop.load()) job.poll_all();
        }) {}
  ~Poller() {
    stop = true;
    t.join();
  }
  std::atomic<bool> stop{false};
  std::thread t;
};

void send_str(TcpChannel& ch, int dest, const std::string& hdr, const std::string& payload) {
  while (ch.send(dest, hdr.data(), hdr.size(), Payload{payload.data(), payload.size(), nullptr, 0}) ==
         SendResult::Busy) {
  }
}

// Every rank sends `count` numbered packets to every other, all at once:
// each pair dials both ways simultaneously, yet one connection wins and
// every packet arrives once, in order.
void all_to_all(Job& job, int ranks, int count, std::size_t bytes) {
  for (int i = 0; i < count; ++i) {
    for (int s = 0; s < ranks; ++s) {
      for (int d = 0; d < ranks; ++d) {
        if (s == d) continue;
        std::string payload(bytes, static_cast<char>('a' + (i + s) % 26));
        send_str(job.ch(s), d, "H" + std::to_string(i), payload);
      }
    }
    job.poll_all();
  }
  const std::size_t want = static_cast<std::size_t>(count) * static_cast<std::size_t>(ranks - 1);
  ASSERT_TRUE(job.until([&] {
    for (int r = 0; r < ranks; ++r) {
      if (job.sink(r).got.size() < want) return false;
    }
    return true;
  }));
  for (int r = 0; r < ranks; ++r) {
    std::vector<int> next(static_cast<std::size_t>(ranks), 0);
    for (const auto& p : job.sink(r).got) {
      int& n = next[static_cast<std::size_t>(p.src)];
      ASSERT_EQ(p.hdr, "H" + std::to_string(n)) << "rank " << r << " from " << p.src;
      ASSERT_EQ(p.payload, std::string(bytes, static_cast<char>('a' + (n + p.src) % 26)));
      ++n;
    }
    EXPECT_TRUE(job.sink(r).failed.empty()) << job.sink(r).failed.front().second;
    EXPECT_EQ(job.ch(r).refused_connections(), 0u);
  }
}

TEST(TcpChannel, SimultaneousDialsGiveOneConnectionInOrder) {
  Job job(4, 4);
  all_to_all(job, 4, 50, 100);
}

TEST(TcpChannel, LargeFramesThroughFullSockets) {
  Job job(3, 3);
  all_to_all(job, 3, 40, 200 * 1024);
}

// MPI_THREAD_MULTIPLE: two threads send to different peers while a third
// polls the same channel (EPOLLOUT flushes, handshakes); run under TSan.
TEST(TcpChannel, SendersAndPollerOnDifferentThreads) {
  Job job(3, 3);
  constexpr int kCount = 2000;
  std::atomic<bool> done{false};
  std::thread poller([&] {
    while (!done.load()) job.ch(0).poll(job.sink(0));
  });
  auto sender = [&](int dest) {
    for (int i = 0; i < kCount; ++i) send_str(job.ch(0), dest, "T" + std::to_string(i), std::string(3000, 'q'));
  };
  std::thread to1(sender, 1), to2(sender, 2);
  const auto end = std::chrono::steady_clock::now() + 20s;
  while ((job.sink(1).got.size() < kCount || job.sink(2).got.size() < kCount) &&
         std::chrono::steady_clock::now() < end) {
    job.ch(1).poll(job.sink(1));
    job.ch(2).poll(job.sink(2));
  }
  to1.join();
  to2.join();
  done = true;
  poller.join();
  for (int r = 1; r <= 2; ++r) {
    ASSERT_EQ(job.sink(r).got.size(), static_cast<std::size_t>(kCount));
    for (int i = 0; i < kCount; ++i)
      ASSERT_EQ(job.sink(r).got[static_cast<std::size_t>(i)].hdr, "T" + std::to_string(i));
  }
}

// Noncontiguous payloads: a vector of ints (every other one) goes as the
// Segment's iovec, straight from the buffer, when its pieces fit one
// sendmsg (also from an offset into the stream, as rendezvous chunks do);
// one with more pieces is packed. Either way the bytes are the packed
// stream's.
TEST(TcpChannel, NoncontiguousPayloadsGoAsIovecs) {
  Job job(2, 2);
  send_str(job.ch(0), 1, "warm", "up");  // connect first: the iovec path needs an idle, connected peer
  ASSERT_TRUE(job.until([&] { return job.sink(1).got.size() == 1; }));
  std::vector<int> buf(4000);
  for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<int>(i * 7 + 1);
  Datatype* vec = nullptr;
  ASSERT_EQ(type_vector(2000, 1, 2, Datatype::builtin(Builtin::kInt32), &vec), ErrorClass::Success);
  vec->commit();
  struct Case {
    std::size_t count, first, bytes;
    bool iov;
  };
  const Case cases[] = {{10, 0, 40, true}, {10, 12, 20, true}, {1, 0, 8000, false}, {1, 400, 100, true}};
  std::size_t sent = 0;
  for (const Case& c : cases) {
    Segment seg(buf.data(), c.count, vec);
    const std::size_t before = job.ch(0).iov_sends();
    while (job.ch(0).send(1, "v", 1, Payload{nullptr, c.bytes, &seg, c.first}) == SendResult::Busy) job.poll_all();
    ++sent;
    EXPECT_EQ(job.ch(0).iov_sends() - before, c.iov ? 1u : 0u) << c.count << " " << c.first << " " << c.bytes;
    ASSERT_TRUE(job.until([&] { return job.sink(1).got.size() == 1 + sent; }));
    std::string want(c.bytes, '\0');
    seg.pack(c.first, c.first + c.bytes, want.data());
    EXPECT_EQ(job.sink(1).got.back().payload, want);
  }
  (void)type_free(&vec);
}

TEST(TcpChannel, SendToSelf) {
  Job job(1, 1);
  send_str(job.ch(0), 0, "me", "payload");
  ASSERT_TRUE(job.until([&] { return job.sink(0).got.size() == 1; }));
  EXPECT_EQ(job.sink(0).got[0].payload, "payload");
}

// The job keeps working after an attack on rank 0: a fresh exchange 0<->1.
void job_still_works(Job& job) {
  const std::size_t had0 = job.sink(0).got.size(), had1 = job.sink(1).got.size();
  send_str(job.ch(0), 1, "after", "x");
  send_str(job.ch(1), 0, "after", "y");
  ASSERT_TRUE(job.until([&] { return job.sink(0).got.size() == had0 + 1 && job.sink(1).got.size() == had1 + 1; }));
  EXPECT_EQ(job.sink(0).got.back().payload, "y");
  EXPECT_EQ(job.sink(1).got.back().payload, "x");
  for (const auto& p : job.sink(0).got) EXPECT_TRUE(p.src == 1) << "a packet from rank " << p.src;
}

// Waits (polling) until rank 0 has refused `n` connections.
void expect_refused(Job& job, std::size_t n) {
  EXPECT_TRUE(job.until([&] { return job.ch(0).refused_connections() >= n; }, 5s))
      << "refused " << job.ch(0).refused_connections();
}

TEST(TcpChannel, GarbageIsRefused) {
  Job job(2, 2);
  int fd = dial(job.ch(0).address());
  ASSERT_GE(fd, 0);
  std::string junk(200, '\x5a');
  ASSERT_TRUE(write_all(fd, junk.data(), junk.size()));
  expect_refused(job, 1);
  char c;
  EXPECT_LE(recv(fd, &c, 1, 0), 0) << "the connection stays open";
  close(fd);
  job_still_works(job);
  EXPECT_TRUE(job.sink(0).failed.empty());
}

// A well-formed hello from `from` to `to`; returns the socket after it.
int hello(Job& job, int from, int to, Nonce* nonce) {
  int fd = dial(job.ch(0).address());
  *nonce = random_nonce();
  char h[kHelloBytes];
  encode_hello(h, Hello{from, to, *nonce});
  EXPECT_TRUE(write_all(fd, h, sizeof h));
  return fd;
}

TEST(TcpChannel, NoSecretNoEntry) {
  Job job(2, 3);
  Nonce mine;
  int fd;
  {
    Poller p(job);
    fd = hello(job, 2, 0, &mine);
    char c[kChallengeBytes];
    ASSERT_EQ(read_n(fd, c, sizeof c), sizeof c);  // the challenge comes
    Mac forged{};                                  // but we cannot answer it
    ASSERT_TRUE(write_all(fd, forged.data(), forged.size()));
    char verdict;
    EXPECT_EQ(read_n(fd, &verdict, 1), 0u) << "an impostor got a verdict";
  }
  close(fd);
  expect_refused(job, 1);
  job_still_works(job);
  EXPECT_TRUE(job.sink(0).failed.empty());
}

TEST(TcpChannel, WrongClaimedRanksAreRefused) {
  Job job(2, 3);
  Nonce n;
  char c;
  int fd = hello(job, 0, 0, &n);  // claims to be rank 0 itself
  expect_refused(job, 1);
  EXPECT_LE(recv(fd, &c, 1, 0), 0);
  close(fd);
  fd = hello(job, 2, 1, &n);  // dials rank 1 at rank 0's port
  expect_refused(job, 2);
  close(fd);
  // A rank outside the job.
  fd = dial(job.ch(0).address());
  char h[kHelloBytes];
  encode_hello(h, Hello{7, 0, n});
  ASSERT_TRUE(write_all(fd, h, sizeof h));
  expect_refused(job, 3);
  close(fd);
  job_still_works(job);
}

// Authenticates as rank 2 (the test knows the secret) and returns the
// connection, accepted by rank 0.
int impostor(Job& job) {
  Poller p(job);
  Nonce mine;
  int fd = hello(job, 2, 0, &mine);
  char raw[kChallengeBytes];
  EXPECT_EQ(read_n(fd, raw, sizeof raw), sizeof raw);
  Challenge c;
  std::string why;
  EXPECT_TRUE(decode_challenge(raw, 3, &c, &why)) << why;
  Key key{kSecret, kJob};
  EXPECT_TRUE(mac_equal(handshake_mac(key, Role::Server, 2, 0, mine, c.nonce), c.mac.data()));
  Mac proof = handshake_mac(key, Role::Client, 2, 0, mine, c.nonce);
  EXPECT_TRUE(write_all(fd, proof.data(), proof.size()));
  char verdict = 0;
  EXPECT_EQ(read_n(fd, &verdict, 1), 1u);
  EXPECT_EQ(verdict, kAccept);
  return fd;
}

void expect_failed(Job& job, int peer, const char* text) {
  ASSERT_TRUE(job.until([&] { return !job.sink(0).failed.empty(); }, 5s));
  EXPECT_EQ(job.sink(0).failed[0].first, peer);
  EXPECT_NE(job.sink(0).failed[0].second.find(text), std::string::npos) << job.sink(0).failed[0].second;
}

TEST(TcpChannel, MalformedFrameFailsOnlyThatPeer) {
  Job job(2, 3);
  int fd = impostor(job);
  char frame[kFrameHeaderBytes];
  encode_frame_header(frame, kFramePacket, 0, 0);  // a packet without a header
  ASSERT_TRUE(write_all(fd, frame, sizeof frame));
  expect_failed(job, 2, "malformed frame");
  close(fd);
  job_still_works(job);
}

TEST(TcpChannel, OversizedFrameFailsOnlyThatPeer) {
  Job job(2, 3);
  int fd = impostor(job);
  char frame[kFrameHeaderBytes + 48];
  encode_frame_header(frame, kFramePacket, 48, std::size_t{1} << 31);  // 2 GiB "payload"
  ASSERT_TRUE(write_all(fd, frame, sizeof frame));
  expect_failed(job, 2, "payload of 2147483648 bytes");
  EXPECT_TRUE(job.sink(0).got.empty());
  close(fd);
  job_still_works(job);
}

TEST(TcpChannel, SecondConnectionForAConnectedRankIsRefused) {
  Job job(2, 3);
  int first = impostor(job);
  Poller p(job);
  Nonce n;
  int fd = hello(job, 2, 0, &n);
  char raw[kChallengeBytes];
  ASSERT_EQ(read_n(fd, raw, sizeof raw), sizeof raw);
  Challenge c;
  ASSERT_TRUE(decode_challenge(raw, 3, &c, nullptr));
  Mac proof = handshake_mac(Key{kSecret, kJob}, Role::Client, 2, 0, n, c.nonce);
  ASSERT_TRUE(write_all(fd, proof.data(), proof.size()));
  char verdict = 0;
  ASSERT_EQ(read_n(fd, &verdict, 1), 1u);
  EXPECT_EQ(verdict, kReject);
  close(fd);
  close(first);
}

// A channel closed right after send() accepted packets for a peer whose
// connection is still being set up (a finalize barrier's last message):
// the packets still arrive, and the peer sees a goodbye, not a failure.
// Both directions: the closing rank's dial wins (rank 0), or it loses the
// simultaneous dial and must wait for the peer's (rank 1).
TEST(TcpChannel, PacketsQueuedWhileConnectingLeaveBeforeClose) {
  for (int closing : {0, 1}) {
    Job job(2, 2);
    const int other = 1 - closing;
    send_str(job.ch(closing), other, "last", "words");
    if (closing == 1) send_str(job.ch(other), closing, "h", "p");  // both dial
    std::atomic<bool> closed{false};
    TcpChannel* gone = job.channels[static_cast<std::size_t>(closing)].release();
    std::thread closer([&] {
      delete gone;
      closed.store(true);
    });
    // The other rank keeps polling while the destructor runs, and a while
    // after (the goodbye, then the end of stream).
    auto end = std::chrono::steady_clock::now() + 10s;
    while (!closed.load() && std::chrono::steady_clock::now() < end) job.ch(other).poll(job.sink(other));
    closer.join();
    end = std::chrono::steady_clock::now() + 200ms;
    while (std::chrono::steady_clock::now() < end) job.ch(other).poll(job.sink(other));
    ASSERT_EQ(job.sink(other).got.size(), 1u) << "closing rank " << closing;
    EXPECT_EQ(job.sink(other).got[0].hdr, "last");
    EXPECT_EQ(job.sink(other).got[0].payload, "words");
    EXPECT_TRUE(job.sink(other).failed.empty()) << job.sink(other).failed.front().second;
  }
}

TEST(TcpChannel, PeerGoneWithoutGoodbyeIsReported) {
  Job job(2, 3);
  int fd = impostor(job);
  close(fd);
  expect_failed(job, 2, "without a goodbye");
  job_still_works(job);
}

TEST(TcpChannel, SilentConnectionTimesOut) {
  TcpSettings s;
  s.connect_timeout_ms = 300;
  Job job(2, 2, s);
  int fd = dial(job.ch(0).address());
  ASSERT_GE(fd, 0);
  expect_refused(job, 1);
  close(fd);
  job_still_works(job);
}

TEST(TcpChannel, UnreachablePeerFailsWithinTheConnectTimeout) {
  TcpSettings s;
  s.connect_timeout_ms = 500;
  Job job(1, 2, s);  // rank 1 published 127.0.0.1:9 and never listens
  send_str(job.ch(0), 1, "h", "p");
  ASSERT_TRUE(job.until([&] { return !job.sink(0).failed.empty(); }, 5s));
  EXPECT_EQ(job.sink(0).failed[0].first, 1);
  EXPECT_EQ(job.ch(0).send(1, "h", 1, Payload{}), SendResult::Failed);
}

}  // namespace
}  // namespace adi3::tcp::testing
