// The wire is untrusted: a rank that sends a packet breaking the protocol
// (a forged or stale request id, a clear-to-send for more than the message,
// data outside what the receive asked for, a malformed header) is refused:
// nothing is written or read where it does not belong, the offender is
// named and treated as failed (sends to it fail), and the rank goes on
// serving the others.
//
// These jobs end with a failed rank, so they run their own thread-ranks
// without the harness's finalize (whose barrier needs every rank).
#include "harness.hpp"

namespace {

using namespace core_test;

adi3::Config plain() { return adi3::Config{}; }
adi3::Config streamed() {  // rendezvous by clear-to-send and data, never a native get
  adi3::Config c;
  c.rndv_get = false;
  return c;
}

constexpr int kGo = 61, kDone = 62;

// Rank 0, after refusing rank 1: the refusal is logged naming rank 1, a send
// to rank 1 fails with ERR_PROC_FAILED, and rank 0 still exchanges an eager
// and a rendezvous message with rank 2 byte for byte.
void serve_rank2_after_refusing_rank1(Device& dev, const char* what) {
  ASSERT_TRUE(progress_until(dev, [&] { return dev.refused_packets() > 0; })) << "rank 0 never refused the packet";
  unsigned char b = 0;
  int e = dev.send(&b, 1, byte(), 1, 3, dev.world());
  EXPECT_EQ(error_class_of(e), ErrorClass::ProcFailed) << what << ": " << why(dev, e);
  EXPECT_TRUE(contains(dev.errors().message(e), "rank 1")) << dev.errors().message(e);
  for (std::size_t n : {std::size_t{100}, std::size_t{1} << 20}) {
    std::vector<unsigned char> out = pattern(n, 7), in(n);
    Status st;
    ASSERT_OK(dev, dev.sendrecv(out.data(), n, byte(), 2, 5, in.data(), n, byte(), 2, 5, dev.world(), &st));
    EXPECT_TRUE(has_pattern(in.data(), n, 8)) << n << " bytes from rank 2";
  }
}
void rank2_partner(Device& dev) {
  for (std::size_t n : {std::size_t{100}, std::size_t{1} << 20}) {
    std::vector<unsigned char> out = pattern(n, 8), in(n);
    Status st;
    ASSERT_OK(dev, dev.sendrecv(out.data(), n, byte(), 0, 5, in.data(), n, byte(), 0, 5, dev.world(), &st));
    EXPECT_TRUE(has_pattern(in.data(), n, 7)) << n << " bytes from rank 0";
  }
}

TEST(Wire, ForgedRequestIdsAreRefused) {
  // Data, clear-to-send, fin, acknowledgement and cancel answers naming ids
  // rank 0 never handed out (or a pointer-like value).
  for (PacketType t :
       {PacketType::Data, PacketType::Cts, PacketType::Fin, PacketType::SyncAck, PacketType::CancelAck}) {
    SCOPED_TRACE("packet type " + std::to_string(static_cast<int>(t)));
    run_job(3, plain(), [t](Device& dev) {
      if (dev.rank() == 1) {
        const uint64_t forged = 0x00007f00deadbee0ull;
        PacketHeader h{t, 0, 0, 0, 1, 0, 8, forged, forged, 0};
        unsigned char junk[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        raw_send(dev, 0, &h, sizeof h, t == PacketType::Data ? junk : nullptr, t == PacketType::Data ? 8 : 0);
      } else if (dev.rank() == 0) {
        serve_rank2_after_refusing_rank1(dev, "forged id");
      } else {
        rank2_partner(dev);
      }
    });
  }
}

TEST(Wire, MalformedHeadersAreRefused) {
  struct Case {
    uint8_t id;
    std::size_t hdr_bytes;
  };
  for (Case c : {Case{static_cast<uint8_t>(PacketType::Eager), 5}, Case{77, 16}, Case{12, 48},
                 Case{static_cast<uint8_t>(PacketType::Rts), 47},
                 // The short 32-byte header is an eager packet's only.
                 Case{static_cast<uint8_t>(PacketType::Rts), 32}, Case{static_cast<uint8_t>(PacketType::Eager), 40}}) {
    SCOPED_TRACE("id " + std::to_string(c.id) + ", header of " + std::to_string(c.hdr_bytes) + " bytes");
    run_job(3, plain(), [c](Device& dev) {
      if (dev.rank() == 1) {
        unsigned char hdr[64] = {};
        hdr[0] = c.id;
        raw_send(dev, 0, hdr, c.hdr_bytes);
      } else if (dev.rank() == 0) {
        serve_rank2_after_refusing_rank1(dev, "malformed header");
      } else {
        rank2_partner(dev);
      }
    });
  }
}

TEST(Wire, EagerLengthMustMatchItsPayload) {
  run_job(3, plain(), [](Device& dev) {
    if (dev.rank() == 1) {
      PacketHeader h{PacketType::Eager, 0, 0, 0, 1, 9, 1000, 0, 0, 0};  // says 1000, carries 10
      unsigned char p[10] = {};
      raw_send(dev, 0, &h, sizeof h, p, sizeof p);
    } else if (dev.rank() == 0) {
      serve_rank2_after_refusing_rank1(dev, "eager length");
      EXPECT_EQ(dev.unexpected_depth(), 0u) << "the refused message was queued";
    } else {
      rank2_partner(dev);
    }
  });
}

// Rank 1 answers rank 0's rendezvous send with a clear-to-send for twice the
// message: rank 0 must not read past its buffer; it refuses, its send fails.
TEST(Wire, ClearToSendBeyondTheMessageIsRefused) {
  run_job(3, streamed(), [](Device& dev) {
    const std::size_t n = 256 * 1024;
    if (dev.rank() == 0) {
      std::vector<unsigned char> out = pattern(n, 3);
      Request* r = nullptr;
      ASSERT_OK(dev, dev.isend(out.data(), n, byte(), 1, 4, dev.world(), SendMode::Standard, &r));
      int e = dev.wait(&r, nullptr);
      EXPECT_EQ(error_class_of(e), ErrorClass::ProcFailed) << why(dev, e);
      if (r) dev.request_free(&r);
      serve_rank2_after_refusing_rank1(dev, "oversized clear-to-send");
    } else if (dev.rank() == 1) {
      // The request-to-send arrives as an unexpected message; its sender's
      // id is what a clear-to-send names.
      Request* m = nullptr;
      Status st;
      ASSERT_OK(dev, dev.mprobe(0, 4, dev.world(), &m, &st));
      PacketHeader cts{PacketType::Cts, 0, 0, 0, 0, 0, 2 * n, m->remote, 0x1234, 0};
      raw_send(dev, 0, &cts, sizeof cts);
      dev.request_free(&m);
    } else {
      rank2_partner(dev);
    }
  });
}

// Rank 1 sends a real rendezvous message, then forges data for rank 0's
// receive at an offset beyond what it asked for: nothing lands outside the
// receive buffer.
TEST(Wire, DataOutsideTheReceiveIsRefused) {
  run_job(3, streamed(), [](Device& dev) {
    const std::size_t n = 64 * 1024, cap = 40 * 1024;  // truncated: want = cap
    if (dev.rank() == 0) {
      std::vector<unsigned char> in(cap + 4096, 0xEE);
      Request* r = nullptr;
      ASSERT_OK(dev, dev.irecv(in.data(), cap, byte(), 1, 4, dev.world(), &r));
      dev.wait(&r, nullptr);  // truncated, or failed when the forged packet came first
      progress_until(dev, [&] { return dev.refused_packets() > 0; });
      EXPECT_TRUE(all_bytes(in.data(), cap, in.size(), 0xEE)) << "written past the receive buffer";
      serve_rank2_after_refusing_rank1(dev, "data beyond the receive");
    } else if (dev.rank() == 1) {
      std::vector<unsigned char> out = pattern(n, 4);
      Request* s = nullptr;
      ASSERT_OK(dev, dev.isend(out.data(), n, byte(), 0, 4, dev.world(), SendMode::Standard, &s));
      // The clear-to-send names rank 0's receive: forge data past its end.
      ASSERT_TRUE(progress_until(dev, [&] { return s->remote != 0 || s->complete(); }));
      PacketHeader d{PacketType::Data, 0, 0, 0, 1, 4, 1024, s->id(), s->remote, cap};
      std::vector<unsigned char> junk(1024, 0x11);
      raw_send(dev, 0, &d, sizeof d, junk.data(), junk.size());
      dev.wait(&s, nullptr);
    } else {
      rank2_partner(dev);
    }
  });
}

// A peer replaying a request id after the request completed (its slot may
// hold a new request by then): the generation no longer matches.
TEST(Wire, StaleRequestIdsAreRefused) {
  run_job(3, plain(), [](Device& dev) {
    adi3::Comm ctl = ctl_comm(dev);
    if (dev.rank() == 0) {
      // A synchronous eager send: its id reaches rank 1, then it completes.
      unsigned char b = 5;
      ASSERT_OK(dev, dev.send(&b, 1, byte(), 1, 4, dev.world(), SendMode::Synchronous));
      notify(dev, ctl, 1, kGo);
      // A new request may take the same slot.
      Request* r = nullptr;
      unsigned char c = 0;
      ASSERT_OK(dev, dev.irecv(&c, 1, byte(), 2, 9, dev.world(), &r));
      serve_rank2_after_refusing_rank1(dev, "stale id");
      notify(dev, ctl, 2, kDone);
      ASSERT_OK(dev, dev.wait(&r, nullptr));
    } else if (dev.rank() == 1) {
      Request* m = nullptr;
      Status st;
      ASSERT_OK(dev, dev.mprobe(0, 4, dev.world(), &m, &st));
      const uint64_t sreq = m->remote;
      unsigned char b = 0;
      ASSERT_OK(dev, dev.mrecv(&b, 1, byte(), &m, &st));  // acknowledges: rank 0's send completes
      await(dev, ctl, 0, kGo);
      PacketHeader ack{PacketType::SyncAck, 0, 0, 0, 0, 0, 0, sreq, 0, 0};
      raw_send(dev, 0, &ack, sizeof ack);
    } else {
      rank2_partner(dev);
      await(dev, ctl, 0, kDone);
      unsigned char c = 1;
      ASSERT_OK(dev, dev.send(&c, 1, byte(), 0, 9, dev.world()));
    }
  });
}

}  // namespace
