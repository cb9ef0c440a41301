// End-to-end tests of mpiexec: run it on pmi_test and check exit status,
// messages, output and timing.
#include "run_process.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace adi3::test {
namespace {

// Limits from the launcher's contract: a launcher that fails to stop the
// job waits for the 30 s timeout, so 5 s tells the two apart while a loaded
// two-core machine (ranks and mpiexec scheduled late) does not fail it.
constexpr double kStopLimitSeconds = 5.0;

ProcessResult mpiexec(std::vector<std::string> args, const RunOptions& options = {}) {
  args.insert(args.begin(), {MPIEXEC_PATH, "--timeout", "30"});
  return run_process(args, options);
}

// Seconds from the failing rank's "failing at <ns>" line to mpiexec's exit.
double failure_to_exit_seconds(const ProcessResult& r) {
  std::smatch m;
  static const std::regex failing("failing at ([0-9]+)");
  if (!std::regex_search(r.err, m, failing)) {
    ADD_FAILURE() << "no 'failing at' line in stderr:\n" << r.err;
    return 1e9;
  }
  return static_cast<double>(monotonic_ns(r.ended) - std::stoll(m[1].str())) / 1e9;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(Mpiexec, SuccessfulJobExitsZero) {
  auto r = mpiexec({"-n", "3", PMI_TEST_PATH});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "pmi_test: OK (3 ranks)")) << r.out;
}

TEST(Mpiexec, AbortStopsTheJobWithinASecond) {
  auto r = mpiexec({"-n", "4", PMI_TEST_PATH, "abort", "1"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(std::regex_search(
      r.err, std::regex(R"(mpiexec: rank 1 \(pid [0-9]+\) called abort with code 3; stopping the job)")))
      << r.err;
  EXPECT_TRUE(contains(r.err, "pmi_test requested abort")) << r.err;
  double seconds = failure_to_exit_seconds(r);
  RecordProperty("abort_to_exit_ms", static_cast<int>(seconds * 1000));
  std::cout << "abort-to-exit: " << seconds * 1000 << " ms\n";
  EXPECT_LT(seconds, kStopLimitSeconds);
}

TEST(Mpiexec, RanksIgnoringSigtermAreKilled) {
  auto r = mpiexec({"-n", "3", PMI_TEST_PATH, "abort", "0", "ignore-term"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  double seconds = failure_to_exit_seconds(r);
  std::cout << "abort-to-exit with SIGTERM ignored: " << seconds * 1000 << " ms\n";
  EXPECT_LT(seconds, kStopLimitSeconds);
  EXPECT_GT(seconds, 0.4) << "the SIGKILL escalation did not wait out the grace period";
}

TEST(Mpiexec, RankKilledBySignalStopsTheJob) {
  auto r = mpiexec({"-n", "4", PMI_TEST_PATH, "sigkill", "2"});
  EXPECT_EQ(r.exit_code, 128 + SIGKILL) << r.err;
  EXPECT_TRUE(std::regex_search(
      r.err, std::regex(R"(mpiexec: rank 2 \(pid [0-9]+\) killed by signal 9 \(Killed\); stopping the job)")))
      << r.err;
  double seconds = failure_to_exit_seconds(r);
  std::cout << "sigkill-to-exit: " << seconds * 1000 << " ms\n";
  EXPECT_LT(seconds, kStopLimitSeconds);
}

TEST(Mpiexec, NonZeroExitBeforeFinalizeStopsTheJob) {
  auto r = mpiexec({"-n", "3", PMI_TEST_PATH, "exit", "2", "5"});
  EXPECT_EQ(r.exit_code, 5) << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(rank 2 \(pid [0-9]+\) exited with code 5; stopping the job)")))
      << r.err;
  EXPECT_LT(failure_to_exit_seconds(r), kStopLimitSeconds);
}

TEST(Mpiexec, ExitWhileOthersWaitInABarrierIsDetected) {
  auto r = mpiexec({"-n", "2", PMI_TEST_PATH, "exit", "1", "0"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "1 rank(s) exited while others wait in a barrier that can no longer complete")) << r.err;
  EXPECT_LT(failure_to_exit_seconds(r), kStopLimitSeconds);
}

TEST(Mpiexec, ExitCodeAfterFinalizePropagates) {
  auto r = mpiexec({"-n", "3", PMI_TEST_PATH, "exit-after", "1", "7"});
  EXPECT_EQ(r.exit_code, 7) << r.err;
  EXPECT_TRUE(contains(r.err, "exited with code 7 after finalize")) << r.err;
  EXPECT_FALSE(contains(r.err, "stopping the job")) << r.err;
}

TEST(Mpiexec, ProgramsWithoutPmiRun) {
  auto r = mpiexec({"-n", "2", "/bin/echo", "hi"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "hi\nhi\n");
}

TEST(Mpiexec, TagOutputPrefixesEveryLine) {
  auto r = mpiexec({"-n", "2", "--tag-output", PMI_TEST_PATH, "print"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (int rank = 0; rank < 2; ++rank) {
    std::string tag = std::string("[").append(std::to_string(rank)).append("] ");  // GCC 12 -Wrestrict
    std::string id = std::to_string(rank);
    EXPECT_TRUE(contains(r.out, tag + "out line from " + id + "\n")) << r.out;
    EXPECT_TRUE(contains(r.out, tag + "second out line from " + id + "\n")) << r.out;
    EXPECT_TRUE(contains(r.out, tag + "unterminated " + id + "\n")) << r.out;
    EXPECT_TRUE(contains(r.err, tag + "err line from " + id + "\n")) << r.err;
  }
  // Every line carries a tag: nothing was split or interleaved.
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_TRUE(std::regex_match(line, std::regex(R"(\[[01]\] .*)"))) << line;
  }
}

TEST(Mpiexec, UntaggedOutputIsForwardedVerbatim) {
  auto r = mpiexec({"-n", "1", PMI_TEST_PATH, "print"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "out line from 0\nsecond out line from 0\nunterminated 0");
  EXPECT_EQ(r.err, "err line from 0\n");
}

TEST(Mpiexec, ChannelAndGenvReachTheRanks) {
  auto r = mpiexec({"-n", "2", "--channel", "shm", "-genv", "ADI3_TEST_VAR", "hello world", PMI_TEST_PATH, "env"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"(channel=shm var=hello world jobid=([0-9]+-[0-9a-f]{8}))")))
      << r.out;
  // Both ranks see the same job id.
  EXPECT_EQ(r.out.find(m[1].str()) != r.out.rfind(m[1].str()), true) << r.out;
}

TEST(Mpiexec, TimeoutStopsTheJob) {
  auto r = run_process({MPIEXEC_PATH, "--timeout", "0.5", "-n", "2", PMI_TEST_PATH, "sleep", "30"});
  EXPECT_EQ(r.exit_code, 124) << r.err;
  EXPECT_TRUE(contains(r.err, "job exceeded its timeout of 0.5 s; stopping the job")) << r.err;
  EXPECT_LT(r.seconds, 0.5 + kStopLimitSeconds);
}

TEST(Mpiexec, TimeoutFromEnvironment) {
  RunOptions options;
  options.env.emplace_back("ADI3_MPIEXEC_TIMEOUT", "0.5");
  auto r = run_process({MPIEXEC_PATH, "-n", "1", PMI_TEST_PATH, "sleep", "30"}, options);
  EXPECT_EQ(r.exit_code, 124) << r.err;
  EXPECT_LT(r.seconds, 0.5 + kStopLimitSeconds);
}

// Hydra's variable, which MPICH-style test suites set.
TEST(Mpiexec, TimeoutFromHydraVariable) {
  RunOptions options;
  options.env.emplace_back("MPIEXEC_TIMEOUT", "1");
  auto r = run_process({MPIEXEC_PATH, "-n", "2", PMI_TEST_PATH, "sleep", "30"}, options);
  EXPECT_EQ(r.exit_code, 124) << r.err;
  EXPECT_TRUE(contains(r.err, "job exceeded its timeout of 1 s")) << r.err;
  EXPECT_LT(r.seconds, 1 + kStopLimitSeconds);
}

TEST(Mpiexec, InterruptStopsAllRanks) {
  for (int sig : {SIGINT, SIGTERM}) {
    RunOptions options;
    options.send_signal = {sig, std::chrono::milliseconds(300)};
    auto r = mpiexec({"-n", "3", PMI_TEST_PATH, "sleep", "30"}, options);
    EXPECT_EQ(r.exit_code, 128 + sig) << r.err;
    EXPECT_TRUE(contains(r.err, "received signal " + std::to_string(sig))) << r.err;
    EXPECT_LT(r.seconds, 0.3 + kStopLimitSeconds);
  }
}

TEST(Mpiexec, RemovesJobShmFiles) {
  auto r = mpiexec({"-n", "2", PMI_TEST_PATH, "shm"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  int checked = 0;
  for (std::string path; std::getline(lines, path); ++checked) {
    EXPECT_EQ(path.rfind("/dev/shm/adi3-", 0), 0u) << path;
    EXPECT_FALSE(std::filesystem::exists(path)) << path << " was left behind";
  }
  EXPECT_EQ(checked, 2) << r.out;
}

TEST(Mpiexec, ReportsMissingProgramAndBadUsage) {
  auto missing = run_process({MPIEXEC_PATH, "-n", "2", "/nonexistent/program"});
  EXPECT_EQ(missing.exit_code, 127);
  EXPECT_TRUE(contains(missing.err, "/nonexistent/program")) << missing.err;

  auto usage = run_process({MPIEXEC_PATH, "-n", "two", "prog"});
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_TRUE(contains(usage.err, "usage: mpiexec")) << usage.err;
}

}  // namespace
}  // namespace adi3::test
