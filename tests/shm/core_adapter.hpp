// Runs the core suites (tests/core/*_test.cpp) with every rank a process:
// this header is force-included (-include) before a suite's source, so the
// suite compiles unchanged against process versions of the three harness
// names it uses: run_ranks(), setups() / threaded_setups() and the CoreTest
// fixture.
//
// Each process of an `mpiexec -n N suite --gtest_filter=*/Shm...` job runs
// the same tests; a test's body runs on the rank's own Device (one per
// process, made by init_process for the first test and kept for the rest,
// so one job runs one configuration). Tests written for another number of
// ranks than N are skipped; tests/common/strict_main.cpp fails a job in
// which every test was skipped. After each body: finalize, an out-of-band
// (PMI) barrier so no packet is in flight, the harness's cleanliness
// checks, and another barrier before the next test.
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>

#define run_ranks thread_run_ranks
#define setups thread_setups
#define threaded_setups thread_threaded_setups
#define CoreTest ThreadCoreTest
#include "tests/core/harness.hpp"
#undef run_ranks
#undef setups
#undef threaded_setups
#undef CoreTest

#include "adi3/process.hpp"

namespace core_test {

// The configurations of harness.hpp, for processes over the channel the
// job runs (ADI3_CHANNEL, shm by default), named after it: Shm, ShmEmulated,
// ShmSmallEagerRing; Tcp, TcpSmallEagerRing (tcp has no single-copy get, so
// an emulated configuration would repeat the plain one).
inline std::vector<Setup> setups() {
  const char* env = std::getenv("ADI3_CHANNEL");
  const std::string ch = env && *env ? env : "shm";
  const std::string prefix = ch == "tcp" ? "Tcp" : ch == "verbs" ? "Verbs" : "Shm";
  std::vector<Setup> v;
  adi3::Config base;
  v.push_back({prefix, base, 0});
  if (ch != "tcp") {
    adi3::Config emu = base;
    emu.force_emulation = true;  // one-sided types emulated,
    emu.rndv_get = false;        // and no single-copy get: data streams through the rings
    v.push_back({prefix + "Emulated", emu, 0});
    // One communication type forced at a time (ADI3_FORCE_EMULATION=active
    // or passive): the RMA suites run each so (native windows otherwise),
    // large emulated transfers riding point-to-point's single-copy get.
    adi3::Config active = base, passive = base;
    active.force_types = adi3::kActiveRma;
    passive.force_types = adi3::kPassiveRma;
    v.push_back({prefix + "ForceActive", active, 0});
    v.push_back({prefix + "ForcePassive", passive, 0});
  }
  adi3::Config small = base;
  small.eager_limit = 256;
  // Small rings (shm) or the smallest per-peer queue (tcp): back-pressure.
  v.push_back({prefix + "SmallEagerRing", small, ch == "tcp" ? 65536u : 8192u});
  for (Setup& s : v) s.processes = true;
  return v;
}

// The same with MPI_THREAD_MULTIPLE.
inline std::vector<Setup> threaded_setups() {
  std::vector<Setup> v = setups();
  for (Setup& s : v) s.config.thread_multiple = true;
  return v;
}

namespace process_mode {

// This process's Device, made once and finalized when the tests end.
class DeviceHolder : public ::testing::Environment {
 public:
  static DeviceHolder& get() {
    static DeviceHolder* self = static_cast<DeviceHolder*>(::testing::AddGlobalTestEnvironment(new DeviceHolder));
    return *self;
  }
  adi3::Device& device(const core_test::Setup& s) {
    if (!dev_) {
      if (s.ring_bytes) {
        ::setenv("ADI3_SHM_RING_BYTES", std::to_string(s.ring_bytes).c_str(), 1);
        ::setenv("ADI3_TCP_PENDING_BYTES", std::to_string(s.ring_bytes).c_str(), 1);
        ::setenv("ADI3_VERBS_SLOTS", "2", 1);  // the fewest credits
      }
      dev_ = adi3::init_process(s.config);
      setup_ = s.name;
    }
    return *dev_;
  }
  const std::string& setup() const { return setup_; }
  void TearDown() override {
    if (dev_) {
      dev_->finalize();
      dev_.reset();  // PMI finalize
    }
  }

 private:
  std::unique_ptr<adi3::Device> dev_;
  std::string setup_;
};

// Ranks other than 0 report only failures, prefixed with their rank.
class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(std::string rank) : rank_(std::move(rank)) {}
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (r.failed()) {
      std::fprintf(stderr, "[rank %s] %s:%d: Failure\n%s\n", rank_.c_str(), r.file_name() ? r.file_name() : "?",
                   r.line_number(), r.message());
    }
  }

 private:
  std::string rank_;
};

inline bool quiet_other_ranks() {
  const char* rank = std::getenv("PMI_RANK");
  if (!rank || std::string(rank) == "0") return false;
  auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
  delete listeners.Release(listeners.default_result_printer());
  listeners.Append(new FailurePrinter(rank));
  return true;
}
inline const bool kQuiet = quiet_other_ranks();

}  // namespace process_mode

inline void run_ranks(const Setup& s, int n, const std::function<void(Device&)>& body, RunOptions opt = {}) {
  // Skipped before the device is made: it keeps the configuration of the
  // first test that runs, not of one written for another rank count.
  if (const char* np = std::getenv("PMI_SIZE"); np && std::atoi(np) != n) {
    GTEST_SKIP() << "written for " << n << " ranks; this job has " << np;
  }
  auto& holder = process_mode::DeviceHolder::get();
  Device& dev = holder.device(s);
  if (holder.setup() != s.name) {
    FAIL() << "this job runs configuration " << holder.setup() << "; select one per job with --gtest_filter";
  }
  if (dev.size() != n) GTEST_SKIP() << "written for " << n << " ranks; this job has " << dev.size();
  // The job's one device was made for whichever test ran first; a test of
  // threaded_setups() (same name, MPI_THREAD_MULTIPLE) after one without
  // would otherwise run its threads on a device that takes no locks and
  // takes the single-threaded fast paths (rma/native_fast.hpp). Turn the
  // locks on as MPI_Init_thread would have: this thread is its only user.
  if (s.config.thread_multiple) dev.port().enable_threads();
  try {
    body(dev);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "rank " << dev.rank() << " threw: " << e.what();
  }
  int e = dev.finalize();
  EXPECT_EQ(e, 0) << "rank " << dev.rank() << ": finalize: " << dev.errors().message(e);
  adi3::process_barrier(dev);  // nothing in flight from here on
  if (opt.check_clean) {
    EXPECT_EQ(dev.live_requests(), 0u) << "rank " << dev.rank() << ": requests still live after finalize";
    EXPECT_EQ(dev.posted_depth(), 0u) << "rank " << dev.rank() << ": receives still posted after finalize";
    EXPECT_EQ(dev.unexpected_depth(), 0u) << "rank " << dev.rank() << ": messages nobody received";
  }
  adi3::process_barrier(dev);
}

class CoreTest : public ::testing::TestWithParam<Setup> {
 protected:
  void run(int n, const std::function<void(Device&)>& body, RunOptions opt = {}) {
    run_ranks(GetParam(), n, body, opt);
  }
};

}  // namespace core_test
