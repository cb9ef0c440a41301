// Test harness of the core suites: runs a per-rank test body (a function of
// Device&) on N ranks under one of several configurations, and fails instead
// of hanging when the ranks do not finish in time.
//
// Rules for test bodies, so that process-based configurations (the shared
// memory channel) can run them unchanged later:
//  - a body talks to other ranks only through its Device (no variables shared
//    between ranks; deterministic plans are computed identically by each rank);
//  - assertions are made by the rank that observes the value;
//  - a body leaves nothing behind: after finalize() the harness checks that
//    no request is live and both matching queues are empty.
#pragma once
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "adi3/device.hpp"
#include "channels/inproc/inproc.hpp"

namespace core_test {

// The names every suite uses.
using adi3::Device;
using adi3::error_class_of;
using adi3::ErrorClass;
using adi3::PacketHeader;
using adi3::PacketType;
using adi3::Request;
using adi3::SendMode;
using adi3::Status;

// ---------------------------------------------------------------------------
// Configurations

struct Setup {
  std::string name;  // gtest parameter name
  adi3::Config config;
  std::size_t ring_bytes = 0;  // inproc: ADI3_INPROC_RING_BYTES (0: the default)
  bool processes = false;      // ranks are processes (tests/shm/core_adapter.hpp), not threads
};

// (a) inproc as is, (b) inproc with every native capability off (the
// one-sided types emulated, and point-to-point rendezvous streamed instead
// of fetched with the single-copy get), (c) inproc with a small eager limit
// and small rings (channel back-pressure).
inline std::vector<Setup> setups() {
  std::vector<Setup> v;
  adi3::Config base;  // explicit: not from the environment
  v.push_back({"Inproc", base, 0});
  adi3::Config emu = base;
  emu.force_emulation = true;
  emu.rndv_get = false;
  v.push_back({"InprocEmulated", emu, 0});
  adi3::Config small = base;
  small.eager_limit = 256;
  v.push_back({"InprocSmallEagerRing", small, 8192});
  return v;
}

// The same configurations with MPI_THREAD_MULTIPLE.
inline std::vector<Setup> threaded_setups() {
  std::vector<Setup> v = setups();
  for (Setup& s : v) s.config.thread_multiple = true;
  return v;
}

// gtest prints parameters with this (test names in ctest stay readable).
inline void PrintTo(const Setup& s, std::ostream* os) { *os << s.name; }

struct SetupName {
  std::string operator()(const ::testing::TestParamInfo<Setup>& i) const { return i.param.name; }
};

// ---------------------------------------------------------------------------
// Running ranks

struct RunOptions {
  std::chrono::milliseconds timeout{60000};
  // After finalize: no live request, empty posted and unexpected queues.
  bool check_clean = true;
};

namespace detail {

struct RankState {
  std::atomic<int> stage{0};  // 0 running the body, 1 finalizing, 2 done
  std::atomic<const char*> where{"start"};
};

inline thread_local std::atomic<const char*>* t_where = nullptr;

// Sets an environment variable for the lifetime of the object.
class EnvOverride {
 public:
  EnvOverride(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~EnvOverride() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  EnvOverride(const EnvOverride&) = delete;
  EnvOverride& operator=(const EnvOverride&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace detail

// Names what the calling rank is doing, for the report of a timeout.
inline void step(const char* what) {
  if (detail::t_where) detail::t_where->store(what, std::memory_order_relaxed);
}

// Runs body on n thread-ranks (one Device each, over one in-process fabric),
// then finalizes every device. A run that does not finish within the timeout,
// or that keeps running 30 s after a failure was recorded, reports where each
// rank was and ends the test process with a failure (threads cannot be
// cancelled, so a hung run cannot be recovered from).
inline void run_ranks(const Setup& s, int n, const std::function<void(Device&)>& body, RunOptions opt = {}) {
  std::shared_ptr<adi3::InprocFabric> fabric;
  {
    detail::EnvOverride env("ADI3_INPROC_RING_BYTES",
                            s.ring_bytes ? std::optional<std::string>(std::to_string(s.ring_bytes)) : std::nullopt);
    fabric = std::make_shared<adi3::InprocFabric>(n);  // reads the ring size now
  }
  auto states = std::shared_ptr<detail::RankState[]>(new detail::RankState[static_cast<std::size_t>(n)]);
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([fabric, states, r, &s, &body, opt] {
      detail::RankState& st = states[static_cast<std::size_t>(r)];
      detail::t_where = &st.where;
      {
        Device dev(fabric->channel(r), s.config);
        try {
          body(dev);
        } catch (const std::exception& e) {
          ADD_FAILURE() << "rank " << r << " threw: " << e.what();
        } catch (...) {
          ADD_FAILURE() << "rank " << r << " threw a non-standard exception";
        }
        st.stage.store(1);
        step("finalize");
        int e = dev.finalize();
        EXPECT_EQ(e, 0) << "rank " << r << ": finalize: " << dev.errors().message(e);
        if (opt.check_clean) {
          EXPECT_EQ(dev.live_requests(), 0u) << "rank " << r << ": requests still live after finalize";
          EXPECT_EQ(dev.posted_depth(), 0u) << "rank " << r << ": receives still posted after finalize";
          EXPECT_EQ(dev.unexpected_depth(), 0u) << "rank " << r << ": messages nobody received";
        }
      }
      detail::t_where = nullptr;
      st.stage.store(2);
    });
  }
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + opt.timeout;
  std::optional<Clock::time_point> failed_at;
  for (;;) {
    bool all = true;
    for (int r = 0; r < n; ++r) all &= states[static_cast<std::size_t>(r)].stage.load() == 2;
    if (all) break;
    auto now = Clock::now();
    if (!failed_at && ::testing::Test::HasFailure()) failed_at = now;
    bool timed_out = now > deadline;
    bool stuck_after_failure = failed_at && now - *failed_at > std::chrono::seconds(30);
    if (timed_out || stuck_after_failure) {
      std::fprintf(stderr, "\n*** %s: %d ranks (%s) did not finish %s; where each rank is:\n",
                   ::testing::UnitTest::GetInstance()->current_test_info()->name(), n, s.name.c_str(),
                   timed_out ? "before the timeout" : "within 30 s of a failure");
      for (int r = 0; r < n; ++r) {
        const detail::RankState& st = states[static_cast<std::size_t>(r)];
        static const char* const kStage[] = {"body", "finalize", "done"};
        std::fprintf(stderr, "    rank %d: %s, at \"%s\"\n", r, kStage[st.stage.load()], st.where.load());
      }
      std::fflush(stdout);
      std::fflush(stderr);
      ADD_FAILURE() << "ranks hung";
      std::_Exit(1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (auto& t : threads) t.join();
}

// Runs body on n thread-ranks over inproc with no finalize: for jobs that
// end with a refused or failed rank (tests of the untrusted wire), where the
// finalize barrier of run_ranks, which needs every rank, cannot complete.
inline void run_job(int n, const adi3::Config& config, const std::function<void(Device&)>& body) {
  auto fabric = std::make_shared<adi3::InprocFabric>(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      Device dev(fabric->channel(r), config);
      try {
        body(dev);
      } catch (const std::exception& e) {
        ADD_FAILURE() << "rank " << r << " threw: " << e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
}

// Fixture of the suites parameterized by configuration only.
class CoreTest : public ::testing::TestWithParam<Setup> {
 protected:
  void run(int n, const std::function<void(Device&)>& body, RunOptions opt = {}) {
    run_ranks(GetParam(), n, body, opt);
  }
};

// ---------------------------------------------------------------------------
// Helpers for bodies

inline const adi3::Datatype* byte() { return adi3::Datatype::byte(); }

// A communicator of the same ranks as world with its own context: handshakes
// on it never match the traffic under test.
inline adi3::Comm ctl_comm(const Device& dev, uint32_t context = 0x7000) {
  adi3::Comm c = dev.world();
  c.context = context;
  return c;
}

// Zero-byte notifications on a control communicator.
inline void notify(Device& dev, const adi3::Comm& ctl, int to, int tag = 0) {
  int e = dev.send(nullptr, 0, byte(), to, tag, ctl);
  ASSERT_EQ(e, 0) << dev.errors().message(e);
}
inline void await(Device& dev, const adi3::Comm& ctl, int from, int tag = 0) {
  adi3::Status st;
  int e = dev.recv(nullptr, 0, byte(), from, tag, ctl, &st);
  ASSERT_EQ(e, 0) << dev.errors().message(e);
}
// An integer message on a control communicator.
inline void send_int(Device& dev, const adi3::Comm& ctl, int to, int64_t v, int tag = 1) {
  int e = dev.send(&v, sizeof v, byte(), to, tag, ctl);
  ASSERT_EQ(e, 0) << dev.errors().message(e);
}
inline int64_t recv_int(Device& dev, const adi3::Comm& ctl, int from, int tag = 1) {
  int64_t v = -1;
  int e = dev.recv(&v, sizeof v, byte(), from, tag, ctl, nullptr);
  EXPECT_EQ(e, 0) << dev.errors().message(e);
  return v;
}
// The sum of every rank's v, at rank 0 (the others get 0).
inline int64_t sum_at_root(Device& dev, const adi3::Comm& ctl, int64_t v, int tag = 1) {
  if (dev.rank() != 0) {
    send_int(dev, ctl, 0, v, tag);
    return 0;
  }
  int64_t total = v;
  for (int r = 1; r < dev.size(); ++r) total += recv_int(dev, ctl, r, tag);
  return total;
}

// The byte at offset i of the test pattern `seed`.
inline unsigned char pattern_byte(std::size_t i, uint32_t seed) {
  uint32_t x = static_cast<uint32_t>(i) * 2654435761u ^ (seed * 0x9e3779b9u + static_cast<uint32_t>(i >> 16));
  x ^= x >> 15;
  return static_cast<unsigned char>(x ^ (x >> 8));
}
inline std::vector<unsigned char> pattern(std::size_t n, uint32_t seed) {
  std::vector<unsigned char> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = pattern_byte(i, seed);
  return v;
}
inline void fill_pattern(void* buf, std::size_t n, uint32_t seed) {
  auto* p = static_cast<unsigned char*>(buf);
  for (std::size_t i = 0; i < n; ++i) p[i] = pattern_byte(i, seed);
}
// Checks bytes [0, n) of buf against the pattern, naming the first mismatch.
inline ::testing::AssertionResult has_pattern(const void* buf, std::size_t n, uint32_t seed) {
  const auto* p = static_cast<const unsigned char*>(buf);
  std::size_t bad = 0, first = n;
  for (std::size_t i = 0; i < n; ++i) {
    if (p[i] != pattern_byte(i, seed)) {
      if (first == n) first = i;
      ++bad;
    }
  }
  if (!bad) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << n << " bytes differ from pattern " << seed
                                       << "; first at offset " << first << ": got " << int(p[first]) << ", want "
                                       << int(pattern_byte(first, seed));
}
// Checks that bytes [from, to) of buf all equal v (memory that must stay untouched).
inline ::testing::AssertionResult all_bytes(const void* buf, std::size_t from, std::size_t to, unsigned char v) {
  const auto* p = static_cast<const unsigned char*>(buf);
  for (std::size_t i = from; i < to; ++i) {
    if (p[i] != v) {
      return ::testing::AssertionFailure() << "byte " << i << " is " << int(p[i]) << ", want " << int(v);
    }
  }
  return ::testing::AssertionSuccess();
}

// A packet straight into the channel, past the device's own checks and send
// queue: how the wire tests play a peer that breaks the protocol.
inline void raw_send(Device& dev, int peer, const void* hdr, std::size_t hdr_bytes, const void* payload = nullptr,
                     std::size_t bytes = 0) {
  while (dev.channel().send(peer, hdr, hdr_bytes, adi3::Payload{payload, bytes, nullptr, 0}) ==
         adi3::SendResult::Busy) {
    dev.progress();
  }
}
inline void raw_send(Device& dev, int peer, const adi3::PacketHeader& h, const void* payload = nullptr,
                     std::size_t bytes = 0) {
  raw_send(dev, peer, &h, sizeof h, payload, bytes);
}

// Drives progress until pred() holds; false after `limit`.
template <class Pred>
bool progress_until(Device& dev, Pred&& pred, std::chrono::seconds limit = std::chrono::seconds(20)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > end) return false;
    if (!dev.progress()) std::this_thread::yield();
  }
  return true;
}

// Requests the calling rank owns or has in flight: live requests less the
// unexpected messages (which may include other ranks' later traffic, such as
// the finalize barrier of a rank that already finished its body).
inline std::size_t owned_requests(const Device& dev) { return dev.live_requests() - dev.unexpected_depth(); }

// An error code as text, for assertion messages.
inline std::string why(Device& dev, int code) { return code ? dev.errors().message(code) : std::string("success"); }

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The status MPI calls empty (null or inactive requests).
inline ::testing::AssertionResult is_empty_status(const adi3::Status& s) {
  if (s.source == adi3::kAnySource && s.tag == adi3::kAnyTag && s.error == 0 && !s.cancelled && s.bytes == 0) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "status not empty: source " << s.source << " tag " << s.tag << " error "
                                       << s.error << " cancelled " << s.cancelled << " bytes " << s.bytes;
}

}  // namespace core_test

#define CORE_INSTANTIATE(Suite) \
  INSTANTIATE_TEST_SUITE_P(Channels, Suite, ::testing::ValuesIn(core_test::setups()), core_test::SetupName{})

// Expects an ADI call to succeed, printing the error's message otherwise.
#define EXPECT_OK(dev, expr)                                                                  \
  do {                                                                                        \
    int expect_ok_code_ = (expr);                                                             \
    EXPECT_EQ(expect_ok_code_, 0) << #expr << ": " << core_test::why((dev), expect_ok_code_); \
  } while (0)
#define ASSERT_OK(dev, expr)                                                                  \
  do {                                                                                        \
    int assert_ok_code_ = (expr);                                                             \
    ASSERT_EQ(assert_ok_code_, 0) << #expr << ": " << core_test::why((dev), assert_ok_code_); \
  } while (0)
