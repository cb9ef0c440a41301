// Payloads read into place over real TCP sockets: the channel reads a
// payload the sink can take (rendezvous data, for the core) straight into
// the receive buffer with readv over the Segment's iovec, resuming across
// partial reads (forced here: every read call takes at most a few hundred
// bytes), and copies nothing through its staging buffer (counted); so is
// an eager message of 8 KiB or more that a posted receive matches.
#include <gtest/gtest.h>

#include <thread>

#include "adi3/device.hpp"
#include "segment/segment.hpp"
#include "segment/type_create.hpp"
#include "tcp_harness.hpp"

namespace adi3::tcp::testing {
namespace {

constexpr std::size_t kHdr = 48;  // the core's header size, as rendezvous data has

// Places every packet whose header starts with 'P' into bytes [offset,
// offset + n) of a Segment (the offset is in the header after the 'P').
struct PlacingSink final : PacketSink {
  Segment* seg = nullptr;
  std::size_t placed = 0, delivered = 0;
  void on_packet(int, const void*, std::size_t, const void*, std::size_t) override { ++delivered; }
  void on_peer_failed(int peer, const char* why) override { ADD_FAILURE() << "rank " << peer << " failed: " << why; }
  bool place(int, const void* hdr, std::size_t hb, std::size_t, Placement* where) override {
    if (hb != kHdr || static_cast<const char*>(hdr)[0] != 'P') return false;
    std::memcpy(&where->first, static_cast<const char*>(hdr) + 8, sizeof where->first);
    where->seg = seg;
    return true;
  }
  void on_placed(int, const void*, std::size_t, std::size_t) override { ++placed; }
};

// An indexed type of ints: blocks of 48, 16 and 80 at 0, 64 and 96
// (extent 176): pieces large enough to be read into directly.
Datatype* indexed_ints() {
  const int lens[] = {48, 16, 80}, displs[] = {0, 64, 96};
  Datatype* t = nullptr;
  EXPECT_EQ(type_indexed(3, lens, displs, Datatype::builtin(Builtin::kInt32), &t), ErrorClass::Success);
  t->commit();
  return t;
}
constexpr std::size_t kIdxInts = 144, kIdxExtent = 176, kGap = 50;  // ints per element, extent, an int in a gap
// Where int i of an indexed_ints() stream lands in the buffer (in ints).
std::size_t indexed_slot(std::size_t i) {
  const std::size_t e = i / kIdxInts, j = i % kIdxInts;
  return e * kIdxExtent + (j < 48 ? j : j < 64 ? 64 + (j - 48) : 96 + (j - 64));
}

TEST(TcpPlacement, ChannelReadsPayloadsIntoASegmentAcrossPartialReads) {
  TcpSettings settings;
  settings.max_read = 300;
  Job job(2, 2, settings);
  PlacingSink sink;
  Datatype* type = indexed_ints();
  std::size_t frames = 0;
  for (std::size_t ints : {1u, 9u, 100u, 1001u, 20000u, 65536u}) {
    std::vector<int> recv(indexed_slot(ints - 1) + 1 + kIdxExtent, -1);
    Segment seg(recv.data(), (ints + kIdxInts - 1) / kIdxInts, type);
    sink.seg = &seg;
    std::vector<int> src(ints);
    for (std::size_t i = 0; i < ints; ++i) src[i] = static_cast<int>(i * 7 + ints);
    // In frames of at most the channel's payload limit, each naming its offset.
    const std::size_t bytes = ints * 4, max = job.ch(0).caps().max_payload;
    for (std::size_t at = 0; at < bytes; at += max) {
      job.ch(1).expect_payload(0);  // as the core does before it asks for data
      char hdr[kHdr] = {'P'};
      std::memcpy(hdr + 8, &at, sizeof at);
      const std::size_t n = std::min(max, bytes - at);
      while (job.ch(0).send(1, hdr, kHdr, Payload{reinterpret_cast<char*>(src.data()) + at, n, nullptr, 0}) ==
             SendResult::Busy) {
        job.ch(1).poll(sink);
      }
      ++frames;
    }
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (sink.placed < frames && std::chrono::steady_clock::now() < end) {
      job.ch(0).poll(job.sink(0));
      job.ch(1).poll(sink);
    }
    ASSERT_EQ(sink.placed, frames) << ints << " ints";
    for (std::size_t i = 0; i < ints; ++i) ASSERT_EQ(recv[indexed_slot(i)], src[i]) << "int " << i << " of " << ints;
    EXPECT_EQ(recv[kGap], -1) << "a gap of the type was written";
  }
  EXPECT_EQ(sink.delivered, 0u);
  EXPECT_EQ(job.ch(1).staged_bytes(), 0u) << "payload bytes copied from the staging buffer";
  EXPECT_GT(job.ch(1).placed_bytes(), 0u);
  (void)type_free(&type);
}

// The core over TCP: a vector type sent, received into an indexed type
// and into a contiguous buffer, sizes from one int to several rendezvous
// chunks, every read call partial. Rendezvous data goes into the receive
// buffer directly; nothing is staged. Then a receive type of single ints
// (pieces too small for readv): through the staging buffer, still exact.
TEST(TcpPlacement, RendezvousDataIsReceivedInPlace) {
  TcpSettings settings;
  settings.max_read = 700;
  Job job(2, 2, settings);
  TcpChannel* ch1 = job.channels[1].get();
  const std::vector<std::size_t> sizes = {1, 17, 1000, 16384, 16385, 40000, 100001, 150000};
  std::size_t rndv_bytes = 0;
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      Config config;
      Device dev(std::move(job.channels[static_cast<std::size_t>(r)]), config);
      Datatype* vec = nullptr;  // 4 ints, every other one (extent 7 ints)
      ASSERT_EQ(type_vector(4, 1, 2, Datatype::builtin(Builtin::kInt32), &vec), ErrorClass::Success);
      vec->commit();
      Datatype* idx = indexed_ints();
      const Datatype* i32 = Datatype::builtin(Builtin::kInt32);
      auto value = [](std::size_t i, std::size_t ints) { return static_cast<int>(i * 13 + ints); };
      for (int phase = 0; phase < 2; ++phase) {
        for (std::size_t ints : sizes) {
          const std::size_t count = (ints + 3) / 4;  // vectors of 4 ints
          const std::size_t sent = count * 4;
          if (r == 0) {
            std::vector<int> src(count * 7, -5);
            for (std::size_t i = 0; i < sent; ++i) src[i / 4 * 7 + 2 * (i % 4)] = value(i, ints);
            ASSERT_EQ(dev.send(src.data(), count, vec, 1, 1, dev.world()), 0);
            if (phase == 0) {
              ASSERT_EQ(dev.send(src.data(), count, vec, 1, 2, dev.world()), 0);
            }
            continue;
          }
          Status st;
          if (phase == 1) {  // into every other int of a buffer: 4-byte pieces
            std::vector<int> got(count * 7, -1);
            ASSERT_EQ(dev.recv(got.data(), count, vec, 0, 1, dev.world(), &st), 0);
            EXPECT_EQ(st.bytes, sent * 4);
            for (std::size_t i = 0; i < sent; ++i) {
              ASSERT_EQ(got[i / 4 * 7 + 2 * (i % 4)], value(i, ints)) << "vector receive of " << sent << ": int " << i;
            }
            if (sent > 1) {
              EXPECT_EQ(got[1], -1) << "a gap of the receive type was written";
            }
            continue;
          }
          if (sent * 4 > dev.eager_limit()) rndv_bytes += 2 * sent * 4;
          const std::size_t elems = (sent + kIdxInts - 1) / kIdxInts;
          std::vector<int> got(elems * kIdxExtent, -1);
          ASSERT_EQ(dev.recv(got.data(), elems, idx, 0, 1, dev.world(), &st), 0);
          EXPECT_EQ(st.bytes, sent * 4);
          for (std::size_t i = 0; i < sent; ++i) {
            ASSERT_EQ(got[indexed_slot(i)], value(i, ints)) << "indexed receive of " << sent << ": int " << i;
          }
          if (sent > kGap) {
            EXPECT_EQ(got[kGap], -1) << "a gap of the receive type was written";
          }
          std::vector<int> flat(sent, -1);
          ASSERT_EQ(dev.recv(flat.data(), sent, i32, 0, 2, dev.world(), &st), 0);
          for (std::size_t i = 0; i < sent; ++i) {
            ASSERT_EQ(flat[i], value(i, ints)) << "contiguous receive of " << sent << ": int " << i;
          }
        }
        if (r == 1 && phase == 0) {
          // Rendezvous data went into place whole; so did the 64 KiB
          // eager messages a posted receive matched (EagerMessages... below),
          // but for what had come before their receive was posted.
          const std::size_t eager = ch1->placed_bytes() + ch1->staged_bytes() - rndv_bytes;
          EXPECT_GE(ch1->placed_bytes() + ch1->staged_bytes(), rndv_bytes);
          EXPECT_EQ(eager % 65536, 0u) << "rendezvous bytes staged or placed twice";
          EXPECT_LE(ch1->staged_bytes(), eager) << "payload bytes copied from the staging buffer";
        }
      }
      if (r == 1) {
        EXPECT_GT(ch1->staged_bytes(), 0u) << "4-byte pieces were read into place one by one";
      }
      EXPECT_EQ(dev.finalize(), 0);
      (void)type_free(&vec);
      (void)type_free(&idx);
    });
  }
  for (auto& t : ranks) t.join();
}

// Eager messages (8 KiB up to the eager limit) that a posted receive
// matches are read into its buffer as they arrive, contiguous or not, every
// read partial: exact data, gaps untouched, nearly nothing staged. A
// synchronous send completes (its acknowledgement leaves at delivery); a
// message longer than its receive is truncated with ERR_TRUNCATE and the
// next one is still right; a receive posted late takes the staged copy.
TEST(TcpPlacement, EagerMessagesForPostedReceivesAreReceivedInPlace) {
  TcpSettings settings;
  settings.max_read = 700;
  Job job(2, 2, settings);
  TcpChannel* ch1 = job.channels[1].get();
  constexpr std::size_t kInts = 12000;  // 48,000 bytes: eager
  constexpr int kMsgs = 6;
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      Config config;
      Device dev(std::move(job.channels[static_cast<std::size_t>(r)]), config);
      ASSERT_GE(dev.eager_limit(), kInts * 4);
      const Datatype* i32 = Datatype::builtin(Builtin::kInt32);
      const Datatype* chr = Datatype::builtin(Builtin::kChar);
      Datatype* idx = indexed_ints();
      auto value = [](std::size_t i, int m) { return static_cast<int>(i * 31 + static_cast<std::size_t>(m)); };
      if (r == 0) {
        char go = 0;
        Status st;
        ASSERT_EQ(dev.recv(&go, 1, chr, 1, 99, dev.world(), &st), 0);
        for (int m = 0; m < kMsgs + 2; ++m) {
          std::vector<int> src(kInts);
          for (std::size_t i = 0; i < kInts; ++i) src[i] = value(i, m);
          ASSERT_EQ(
              dev.send(src.data(), kInts, i32, 1, m, dev.world(), m == 1 ? SendMode::Synchronous : SendMode::Standard),
              0);
        }
      } else {
        // Posted before anything is sent: half contiguous, half indexed.
        const std::size_t elems = (kInts + kIdxInts - 1) / kIdxInts;
        std::vector<std::vector<int>> bufs(kMsgs);
        std::vector<Request*> reqs(kMsgs);
        for (int m = 0; m < kMsgs; ++m) {
          const bool contiguous = m % 2 == 0;
          auto& b = bufs[static_cast<std::size_t>(m)];
          b.assign(contiguous ? kInts : elems * kIdxExtent, -1);
          ASSERT_EQ(dev.irecv(b.data(), contiguous ? kInts : elems, contiguous ? i32 : idx, 0, m, dev.world(),
                              &reqs[static_cast<std::size_t>(m)]),
                    0);
        }
        // One too short for its message.
        std::vector<int> shorter(kInts / 2 + 1, -1);
        shorter.back() = -7;
        Request* trunc = nullptr;
        ASSERT_EQ(dev.irecv(shorter.data(), kInts / 2, i32, 0, kMsgs, dev.world(), &trunc), 0);
        const std::size_t placed0 = ch1->placed_bytes(), staged0 = ch1->staged_bytes();
        char go = 1;
        ASSERT_EQ(dev.send(&go, 1, chr, 0, 99, dev.world()), 0);
        Status st;
        for (int m = 0; m < kMsgs; ++m) {
          ASSERT_EQ(dev.wait(&reqs[static_cast<std::size_t>(m)], &st), 0) << "message " << m;
          EXPECT_EQ(st.bytes, kInts * 4);
          const std::vector<int>& got = bufs[static_cast<std::size_t>(m)];
          for (std::size_t i = 0; i < kInts; ++i) {
            ASSERT_EQ(got[m % 2 == 0 ? i : indexed_slot(i)], value(i, m)) << "message " << m << ", int " << i;
          }
          if (m % 2) {
            EXPECT_EQ(got[kGap], -1) << "a gap of the receive type was written";
          }
        }
        const int e = dev.wait(&trunc, &st);
        EXPECT_EQ(error_class_of(e == 0 ? st.error : e), ErrorClass::Truncate);
        for (std::size_t i = 0; i < kInts / 2; ++i) ASSERT_EQ(shorter[i], value(i, kMsgs)) << "truncated, int " << i;
        EXPECT_EQ(shorter.back(), -7) << "written past the truncated receive";
        // The messages went into place but for what came with their headers.
        const std::size_t placed = ch1->placed_bytes() - placed0, staged = ch1->staged_bytes() - staged0;
        EXPECT_GE(placed + staged, kMsgs * kInts * 4);
        EXPECT_LE(staged, static_cast<std::size_t>(kMsgs + 1) * 700) << "eager payload staged, not placed";
        // Posted after its message arrived: from the unexpected queue.
        std::vector<int> late(kInts, -1);
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
        while (std::chrono::steady_clock::now() < until) dev.progress();
        ASSERT_EQ(dev.recv(late.data(), kInts, i32, 0, kMsgs + 1, dev.world(), &st), 0);
        for (std::size_t i = 0; i < kInts; ++i) ASSERT_EQ(late[i], value(i, kMsgs + 1)) << "late receive, int " << i;
      }
      EXPECT_EQ(dev.finalize(), 0);
      (void)type_free(&idx);
    });
  }
  for (auto& t : ranks) t.join();
}

}  // namespace
}  // namespace adi3::tcp::testing
