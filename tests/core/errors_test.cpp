// Errors: truncation (class Truncate, the bytes that fit delivered and
// counted, nothing written past the buffer, the sender unaffected) for eager
// and rendezvous messages, and argument errors whose messages name the bad
// value (rank, tag, count).
#include "harness.hpp"
#include "segment/type_create.hpp"

namespace {

using namespace core_test;
using adi3::error_class_of;
using adi3::ErrorClass;
using adi3::kAnySource;
using adi3::kAnyTag;
using adi3::Request;
using adi3::SendMode;
using adi3::Status;

constexpr int kGo = 50;
constexpr unsigned char kUntouched = 0xEE;

class Errors : public CoreTest {};

enum class How { Blocking, Nonblocking, Unexpected };

// Rank 1 sends n bytes; rank 0 receives them into `cap` bytes.
void truncation_case(Device& dev, std::size_t n, std::size_t cap, How how, SendMode mode) {
  adi3::Comm ctl = ctl_comm(dev);
  const uint32_t seed = static_cast<uint32_t>(n + cap);
  if (dev.rank() == 1) {
    std::vector<unsigned char> d = pattern(n, seed);
    if (how != How::Unexpected) await(dev, ctl, 0, kGo);
    int e = dev.send(d.data(), n, byte(), 0, 4, dev.world(), mode);
    EXPECT_EQ(e, 0) << "the sender of a truncated message sees no error: " << why(dev, e);
    return;
  }
  std::vector<unsigned char> buf(n + 64, kUntouched);
  Status st;
  int e = 0;
  if (how == How::Blocking) {
    notify(dev, ctl, 1, kGo);  // no progress before the receive is posted
    e = dev.recv(buf.data(), cap, byte(), 1, 4, dev.world(), &st);
  } else {
    if (how == How::Unexpected) ASSERT_OK(dev, dev.probe(1, 4, dev.world(), &st));
    Request* r = nullptr;
    ASSERT_OK(dev, dev.irecv(buf.data(), cap, byte(), kAnySource, kAnyTag, dev.world(), &r));
    if (how == How::Nonblocking) notify(dev, ctl, 1, kGo);
    e = dev.wait(&r, &st);
    EXPECT_EQ(r, nullptr);
  }
  EXPECT_EQ(error_class_of(e), ErrorClass::Truncate) << why(dev, e);
  EXPECT_EQ(st.bytes, cap) << "status counts the bytes delivered";
  EXPECT_EQ(st.source, 1);
  EXPECT_EQ(st.tag, 4);
  EXPECT_EQ(error_class_of(st.error), ErrorClass::Truncate);
  EXPECT_TRUE(has_pattern(buf.data(), cap, seed)) << "the bytes that fit";
  EXPECT_TRUE(all_bytes(buf.data(), cap, buf.size(), kUntouched)) << "written past the receive buffer";
  std::string text = dev.errors().message(e);
  EXPECT_TRUE(contains(text, "MPI_ERR_TRUNCATE")) << text;
  EXPECT_TRUE(contains(text, std::to_string(n))) << "the message size: " << text;
  EXPECT_TRUE(contains(text, std::to_string(cap))) << "the buffer size: " << text;
}

TEST_P(Errors, Truncation) {
  run(2, [](Device& dev) {
    const std::size_t sizes[] = {dev.eager_limit(), dev.eager_limit() + 1, std::size_t{1} << 20};
    for (std::size_t n : sizes) {
      for (std::size_t cap : {std::size_t{0}, std::size_t{1}, n / 2, n - 1}) {
        for (How how : {How::Blocking, How::Nonblocking, How::Unexpected}) {
          for (SendMode mode : {SendMode::Standard, SendMode::Synchronous}) {
            SCOPED_TRACE("message " + std::to_string(n) + " bytes into " + std::to_string(cap) + ", " +
                         (how == How::Blocking      ? "blocking"
                          : how == How::Nonblocking ? "nonblocking"
                                                    : "unexpected") +
                         (mode == SendMode::Synchronous ? ", synchronous" : ""));
            truncation_case(dev, n, cap, how, mode);
            if (::testing::Test::HasFatalFailure()) return;
          }
        }
      }
    }
  });
}

// The error's message, checked to be of class c and to name `value`.
void expect_error(Device& dev, int code, ErrorClass c, const std::string& value, const char* what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(error_class_of(code), c) << why(dev, code);
  std::string text = dev.errors().message(code);
  EXPECT_TRUE(contains(text, adi3::error_class_name(c))) << text;
  if (!value.empty()) {
    EXPECT_TRUE(contains(text, value)) << "message should name " << value << ": " << text;
  }
}

TEST_P(Errors, BadArgumentsNameTheValue) {
  run(2, [](Device& dev) {
    if (dev.rank() == 1) return;
    const std::size_t owned = owned_requests(dev);
    const adi3::Comm& w = dev.world();
    unsigned char buf[8] = {};
    Request* r = reinterpret_cast<Request*>(0x1);
    Status st;
    bool flag = false;

    // Ranks.
    expect_error(dev, dev.send(buf, 1, byte(), 5, 0, w), ErrorClass::Rank, "5", "send to rank 5 of 2");
    expect_error(dev, dev.send(buf, 1, byte(), 2, 0, w), ErrorClass::Rank, "2", "send to rank 2 of 2");
    expect_error(dev, dev.isend(buf, 1, byte(), -7, 0, w, SendMode::Standard, &r), ErrorClass::Rank, "-7",
                 "isend to rank -7");
    EXPECT_EQ(r, nullptr) << "a failed isend returns no request";
    expect_error(dev, dev.send(buf, 1, byte(), kAnySource, 0, w), ErrorClass::Rank, std::to_string(kAnySource),
                 "send to ANY_SOURCE");
    expect_error(dev, dev.recv(buf, 1, byte(), 9, 0, w, &st), ErrorClass::Rank, "9", "recv from rank 9");
    r = reinterpret_cast<Request*>(0x1);
    expect_error(dev, dev.irecv(buf, 1, byte(), -4, 0, w, &r), ErrorClass::Rank, "-4", "irecv from rank -4");
    EXPECT_EQ(r, nullptr);
    expect_error(dev, dev.iprobe(3, 0, w, &flag, &st), ErrorClass::Rank, "3", "iprobe rank 3");
    expect_error(dev, dev.send_init(buf, 1, byte(), 12, 0, w, SendMode::Standard, &r), ErrorClass::Rank, "12",
                 "send_init to rank 12");
    expect_error(dev, dev.recv_init(buf, 1, byte(), 13, 0, w, &r), ErrorClass::Rank, "13", "recv_init rank 13");
    expect_error(dev, dev.sendrecv(buf, 1, byte(), 6, 0, buf, 1, byte(), 0, 0, w, &st), ErrorClass::Rank, "6",
                 "sendrecv to rank 6");

    // Tags.
    expect_error(dev, dev.send(buf, 1, byte(), 1, -5, w), ErrorClass::Tag, "-5", "send tag -5");
    expect_error(dev, dev.send(buf, 1, byte(), 1, kAnyTag, w), ErrorClass::Tag, std::to_string(kAnyTag),
                 "send with ANY_TAG");
    expect_error(dev, dev.send(buf, 1, byte(), 1, adi3::kTagUb + 1, w), ErrorClass::Tag,
                 std::to_string(adi3::kTagUb + 1), "send tag above TAG_UB");
    expect_error(dev, dev.isend(buf, 1, byte(), 1, -9, w, SendMode::Synchronous, &r), ErrorClass::Tag, "-9",
                 "issend tag -9");
    expect_error(dev, dev.recv(buf, 1, byte(), 1, -3, w, &st), ErrorClass::Tag, "-3", "recv tag -3");
    expect_error(dev, dev.irecv(buf, 1, byte(), 1, adi3::kTagUb + 2, w, &r), ErrorClass::Tag,
                 std::to_string(adi3::kTagUb + 2), "irecv tag above TAG_UB");
    expect_error(dev, dev.probe(1, -8, w, &st), ErrorClass::Tag, "-8", "probe tag -8");
    expect_error(dev, dev.send_init(buf, 1, byte(), 1, -11, w, SendMode::Standard, &r), ErrorClass::Tag, "-11",
                 "send_init tag -11");

    // Counts: a size_t that is negative as a signed number.
    const std::size_t minus3 = static_cast<std::size_t>(-3);
    expect_error(dev, dev.send(buf, minus3, byte(), 1, 0, w), ErrorClass::Count, "-3", "send count -3");
    expect_error(dev, dev.irecv(buf, minus3, byte(), 1, 0, w, &r), ErrorClass::Count, "-3", "irecv count -3");
    expect_error(dev, dev.recv_init(buf, minus3, byte(), 1, 0, w, &r), ErrorClass::Count, "-3", "recv_init count -3");

    // Counts whose bytes or memory span overflow: refused before anything
    // is computed from them, naming the numbers.
    adi3::Datatype* gib = nullptr;  // 2^30 bytes
    ASSERT_EQ(adi3::type_contiguous(1 << 30, byte(), &gib), ErrorClass::Success);
    ASSERT_EQ(adi3::type_commit(gib), ErrorClass::Success);
    const std::size_t huge = std::size_t{1} << 34;  // 2^64 bytes
    expect_error(dev, dev.send(buf, huge, gib, 1, 0, w), ErrorClass::Count, std::to_string(huge), "send 2^64 bytes");
    expect_error(dev, dev.send(buf, huge, gib, 1, 0, w, SendMode::Buffered), ErrorClass::Count, "1073741824",
                 "bsend 2^64 bytes");
    expect_error(dev, dev.irecv(buf, huge, gib, 1, 0, w, &r), ErrorClass::Count, std::to_string(huge),
                 "irecv 2^64 bytes");
    expect_error(dev, dev.send_init(buf, huge, gib, 1, 0, w, SendMode::Standard, &r), ErrorClass::Count,
                 std::to_string(huge), "send_init 2^64 bytes");
    expect_error(dev, dev.sendrecv_replace(buf, huge, gib, 1, 0, 1, 0, w, &st), ErrorClass::Count, std::to_string(huge),
                 "sendrecv_replace 2^64 bytes");
    adi3::Datatype* sparse = nullptr;  // 1 byte in an extent of 2^40
    ASSERT_EQ(adi3::type_resized(byte(), 0, std::ptrdiff_t{1} << 40, &sparse), ErrorClass::Success);
    ASSERT_EQ(adi3::type_commit(sparse), ErrorClass::Success);
    expect_error(dev, dev.send(buf, std::size_t{1} << 24, sparse, 1, 0, w), ErrorClass::Count,
                 std::to_string(std::ptrdiff_t{1} << 40), "send spanning 2^64 bytes");
    gib->release();
    sparse->release();

    // Datatype and buffer.
    expect_error(dev, dev.send(buf, 1, nullptr, 1, 0, w), ErrorClass::Type, "", "null datatype");
    expect_error(dev, dev.send(nullptr, 4, byte(), 1, 0, w), ErrorClass::Buffer, "4", "null buffer, count 4");
    expect_error(dev, dev.irecv(nullptr, 4, byte(), 1, 0, w, &r), ErrorClass::Buffer, "", "irecv null buffer");

    // Requests.
    expect_error(dev, dev.cancel(nullptr), ErrorClass::Request, "", "cancel of a null request");

    // Each code keeps its own message.
    int a = dev.send(buf, 1, byte(), 21, 0, w);
    int b = dev.send(buf, 1, byte(), 1, -22, w);
    EXPECT_NE(a, b);
    EXPECT_TRUE(contains(dev.errors().message(a), "21")) << dev.errors().message(a);
    EXPECT_TRUE(contains(dev.errors().message(b), "-22")) << dev.errors().message(b);
    // A code without a recorded message falls back to the class's text.
    EXPECT_EQ(dev.errors().message(adi3::error_code(ErrorClass::Rank)),
              std::string("MPI_ERR_RANK: ") + adi3::error_class_text(ErrorClass::Rank));

    EXPECT_EQ(owned_requests(dev), owned) << "failed calls left requests behind";
    EXPECT_EQ(dev.posted_depth(), 0u);
  });
}

CORE_INSTANTIATE(Errors);

}  // namespace
