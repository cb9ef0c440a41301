// Buffered mode: buffer_attach / buffer_detach, ErrorClass::Buffer when no
// buffer is attached or a message does not fit, MPI_BSEND_OVERHEAD being
// enough per message, space coming back after delivery, and detach waiting
// until every buffered message has left the buffer (the test scribbles over
// the buffer as soon as detach returns; the receiver must still see intact
// data).
#include <thread>

#include "harness.hpp"

namespace {

using namespace core_test;
using adi3::BsendBuffer;
using adi3::error_class_of;
using adi3::ErrorClass;
using adi3::Request;
using adi3::SendMode;
using adi3::Status;

constexpr int kGo = 70, kAck = 71, kSent = 72;

class Bsend : public CoreTest {};

TEST_P(Bsend, AttachAndDetach) {
  run(1, [](Device& dev) {
    std::vector<unsigned char> a(4096), b(4096);
    void* p = reinterpret_cast<void*>(0x1);
    std::size_t bytes = 1;
    ASSERT_OK(dev, dev.buffer_detach(&p, &bytes));
    EXPECT_EQ(p, nullptr) << "nothing attached";
    EXPECT_EQ(bytes, 0u);
    ASSERT_OK(dev, dev.buffer_attach(a.data(), a.size()));
    int e = dev.buffer_attach(b.data(), b.size());
    EXPECT_EQ(error_class_of(e), ErrorClass::Buffer) << "second attach: " << why(dev, e);
    ASSERT_OK(dev, dev.buffer_detach(&p, &bytes));
    EXPECT_EQ(p, a.data());
    EXPECT_EQ(bytes, a.size());
    e = dev.buffer_attach(b.data(), 8);
    EXPECT_EQ(error_class_of(e), ErrorClass::Buffer) << "8-byte buffer: " << why(dev, e);
    e = dev.buffer_attach(nullptr, 4096);
    EXPECT_EQ(error_class_of(e), ErrorClass::Buffer) << "null buffer: " << why(dev, e);
    ASSERT_OK(dev, dev.buffer_attach(b.data() + 3, b.size() - 3));  // unaligned is fine
    ASSERT_OK(dev, dev.buffer_detach(&p, &bytes));
    EXPECT_EQ(p, b.data() + 3);
    EXPECT_EQ(bytes, b.size() - 3);
  });
}

TEST_P(Bsend, NoBufferAttached) {
  run(2, [](Device& dev) {
    if (dev.rank() == 1) return;
    unsigned char buf[300] = {};
    int e = dev.send(buf, sizeof buf, byte(), 1, 0, dev.world(), SendMode::Buffered);
    EXPECT_EQ(error_class_of(e), ErrorClass::Buffer) << why(dev, e);
    EXPECT_TRUE(contains(dev.errors().message(e), "300")) << dev.errors().message(e);
    Request* r = reinterpret_cast<Request*>(0x1);
    e = dev.isend(buf, sizeof buf, byte(), 1, 0, dev.world(), SendMode::Buffered, &r);
    EXPECT_EQ(error_class_of(e), ErrorClass::Buffer) << why(dev, e);
    EXPECT_EQ(r, nullptr);
  });
}

// Messages that no receive has matched yet keep their space; one more that
// does not fit fails with ErrorClass::Buffer and sends nothing.
TEST_P(Bsend, MessageThatDoesNotFit) {
  run(2, [](Device& dev) {
    adi3::Comm ctl = ctl_comm(dev);
    const std::size_t big = dev.eager_limit() + 5000;  // rendezvous: stays until received
    if (dev.rank() == 1) {
      await(dev, ctl, 0, kGo);
      std::vector<unsigned char> buf(big);
      for (int i = 0; i < 2; ++i) {
        Status st;
        ASSERT_OK(dev, dev.recv(buf.data(), big, byte(), 0, adi3::kAnyTag, dev.world(), &st));
        EXPECT_EQ(st.tag, i) << "the failed sends must not have sent anything";
        EXPECT_TRUE(has_pattern(buf.data(), big, static_cast<uint32_t>(i)));
      }
      Status st;
      bool flag = true;
      EXPECT_OK(dev, dev.iprobe(0, adi3::kAnyTag, dev.world(), &flag, &st));
      EXPECT_FALSE(flag);
      return;
    }
    std::vector<unsigned char> attached(2 * (big + BsendBuffer::kOverhead));
    ASSERT_OK(dev, dev.buffer_attach(attached.data(), attached.size()));
    for (int i = 0; i < 2; ++i) {
      std::vector<unsigned char> d = pattern(big, static_cast<uint32_t>(i));
      ASSERT_OK(dev, dev.send(d.data(), big, byte(), 1, i, dev.world(), SendMode::Buffered));
    }
    std::vector<unsigned char> d = pattern(big, 9);
    int e = dev.send(d.data(), big, byte(), 1, 9, dev.world(), SendMode::Buffered);
    EXPECT_EQ(error_class_of(e), ErrorClass::Buffer) << why(dev, e);
    EXPECT_TRUE(contains(dev.errors().message(e), std::to_string(big))) << dev.errors().message(e);
    Request* r = reinterpret_cast<Request*>(0x1);
    // What is left (under 2 * MPI_BSEND_OVERHEAD) cannot hold 200 bytes.
    e = dev.isend(d.data(), 200, byte(), 1, 9, dev.world(), SendMode::Buffered, &r);
    EXPECT_EQ(error_class_of(e), ErrorClass::Buffer) << "200 bytes: " << why(dev, e);
    EXPECT_EQ(r, nullptr);
    // Larger than the whole buffer.
    std::vector<unsigned char> huge(attached.size() + 1);
    e = dev.send(huge.data(), huge.size(), byte(), 1, 9, dev.world(), SendMode::Buffered);
    EXPECT_EQ(error_class_of(e), ErrorClass::Buffer) << why(dev, e);
    notify(dev, ctl, 1, kGo);
    void* p = nullptr;
    std::size_t bytes = 0;
    ASSERT_OK(dev, dev.buffer_detach(&p, &bytes));
    EXPECT_EQ(p, attached.data());
  });
}

// MPI_BSEND_OVERHEAD per message is enough, whatever the alignment, and the
// space of delivered messages is reused (blocks split and merge again).
TEST_P(Bsend, OverheadIsEnoughAndSpaceIsReused) {
  run(2, [](Device& dev) {
    adi3::Comm ctl = ctl_comm(dev);
    constexpr std::size_t kMax = 30001;
    // Both sides of the eager limit when it is below kMax (channels differ).
    const std::size_t edge = std::min<std::size_t>(dev.eager_limit(), kMax - 1);
    const std::size_t sizes[] = {30001, 0, 1, 100, edge, edge + 1, 17, 30001, 29999};
    constexpr int kRounds = 3;
    if (dev.rank() == 1) {
      std::vector<unsigned char> buf(kMax);
      for (int round = 0; round < kRounds; ++round) {
        for (std::size_t i = 0; i < std::size(sizes); i += 2) {
          await(dev, ctl, 0, kSent);
          for (std::size_t k = i; k < std::min(i + 2, std::size(sizes)); ++k) {
            Status st;
            ASSERT_OK(dev, dev.recv(buf.data(), kMax, byte(), 0, static_cast<int>(k), dev.world(), &st));
            EXPECT_EQ(st.bytes, sizes[k]);
            EXPECT_TRUE(has_pattern(buf.data(), sizes[k], static_cast<uint32_t>(k + 100 * round)));
          }
          notify(dev, ctl, 0, kAck);
        }
      }
      return;
    }
    // Exactly two messages of the largest size, at an odd address.
    std::vector<unsigned char> mem(2 * (kMax + BsendBuffer::kOverhead) + 5);
    ASSERT_OK(dev, dev.buffer_attach(mem.data() + 5, mem.size() - 5));
    for (int round = 0; round < kRounds; ++round) {
      for (std::size_t i = 0; i < std::size(sizes); i += 2) {
        // Two messages outstanding at a time; the ack frees both.
        for (std::size_t k = i; k < std::min(i + 2, std::size(sizes)); ++k) {
          std::vector<unsigned char> d = pattern(sizes[k], static_cast<uint32_t>(k + 100 * round));
          ASSERT_OK(dev, dev.send(d.data(), sizes[k], byte(), 1, static_cast<int>(k), dev.world(), SendMode::Buffered));
        }
        notify(dev, ctl, 1, kSent);
        await(dev, ctl, 1, kAck);
      }
    }
    void* p = nullptr;
    std::size_t bytes = 0;
    ASSERT_OK(dev, dev.buffer_detach(&p, &bytes));
  });
}

// detach returns only when every buffered message has been transmitted:
// right after it returns, the buffer is overwritten; the receiver, which
// posts its receives late, must still get intact data.
TEST_P(Bsend, DetachWaitsForDelivery) {
  run(2, [](Device& dev) {
    adi3::Comm ctl = ctl_comm(dev);
    std::vector<std::size_t> sizes;
    for (int i = 0; i < 60; ++i) sizes.push_back(static_cast<std::size_t>(i % 6 == 5 ? 200000 : 150 + i));
    sizes.push_back(dev.eager_limit() + 1);
    if (dev.rank() == 1) {
      await(dev, ctl, 0, kSent);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let the sender sit in detach
      std::vector<unsigned char> buf(200000);
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        Status st;
        ASSERT_OK(dev, dev.recv(buf.data(), buf.size(), byte(), 0, static_cast<int>(i), dev.world(), &st));
        ASSERT_EQ(st.bytes, sizes[i]);
        ASSERT_TRUE(has_pattern(buf.data(), sizes[i], static_cast<uint32_t>(i))) << "message " << i;
      }
      notify(dev, ctl, 0, kAck);
      return;
    }
    const std::size_t owned = owned_requests(dev);
    std::size_t total = 0;
    for (std::size_t n : sizes) total += n + BsendBuffer::kOverhead;
    std::vector<unsigned char> attached(total);
    ASSERT_OK(dev, dev.buffer_attach(attached.data(), attached.size()));
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      std::vector<unsigned char> d = pattern(sizes[i], static_cast<uint32_t>(i));
      ASSERT_OK(dev, dev.send(d.data(), sizes[i], byte(), 1, static_cast<int>(i), dev.world(), SendMode::Buffered));
      std::memset(d.data(), 0, d.size());  // the user's buffer is free at once
    }
    notify(dev, ctl, 1, kSent);
    void* p = nullptr;
    std::size_t bytes = 0;
    ASSERT_OK(dev, dev.buffer_detach(&p, &bytes));
    std::memset(attached.data(), 0xDD, attached.size());
    EXPECT_EQ(p, attached.data());
    EXPECT_EQ(bytes, attached.size());
    EXPECT_EQ(owned_requests(dev), owned) << "buffered sends still live after detach";
    await(dev, ctl, 1, kAck);
  });
}

// Buffered sends to oneself, eager and rendezvous: bsend returns at once,
// the later receive gets the data out of the attached buffer.
TEST_P(Bsend, ToSelf) {
  run(1, [](Device& dev) {
    const std::size_t sizes[] = {0, 10, dev.eager_limit(), dev.eager_limit() + 1, 100000};
    std::size_t total = 0;
    for (std::size_t n : sizes) total += n + BsendBuffer::kOverhead;
    std::vector<unsigned char> attached(total);
    ASSERT_OK(dev, dev.buffer_attach(attached.data(), attached.size()));
    for (std::size_t i = 0; i < std::size(sizes); ++i) {
      std::vector<unsigned char> d = pattern(sizes[i], static_cast<uint32_t>(i));
      ASSERT_OK(dev, dev.send(d.data(), sizes[i], byte(), 0, static_cast<int>(i), dev.world(), SendMode::Buffered));
    }
    for (std::size_t i = std::size(sizes); i-- > 0;) {  // in reverse, by tag
      std::vector<unsigned char> buf(sizes[i]);
      Status st;
      ASSERT_OK(dev, dev.recv(buf.data(), buf.size(), byte(), 0, static_cast<int>(i), dev.world(), &st));
      EXPECT_EQ(st.bytes, sizes[i]);
      EXPECT_TRUE(has_pattern(buf.data(), sizes[i], static_cast<uint32_t>(i)));
    }
    void* p = nullptr;
    std::size_t bytes = 0;
    ASSERT_OK(dev, dev.buffer_detach(&p, &bytes));
  });
}

CORE_INSTANTIATE(Bsend);

}  // namespace
