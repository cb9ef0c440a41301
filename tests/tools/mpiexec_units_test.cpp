// Unit tests for mpiexec's pure parts: options, output lines,
// environment and /dev/shm cleanup.
#include "mpiexec/environment.hpp"
#include "mpiexec/line_forwarder.hpp"
#include "mpiexec/options.hpp"
#include "mpiexec/shm_cleanup.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace adi3::mpiexec {
namespace {

TEST(MpiexecOptions, ParsesFullCommandLine) {
  auto opts = parse_options({"-n", "4", "--channel", "shm", "-genv", "A", "1", "-genv", "B", "x y", "--tag-output",
                             "--timeout", "2.5", "prog", "-n", "9"},
                            nullptr);
  EXPECT_EQ(opts.nprocs, 4);
  EXPECT_EQ(opts.channel, "shm");
  ASSERT_EQ(opts.genv.size(), 2u);
  EXPECT_EQ(opts.genv[1], (std::pair<std::string, std::string>{"B", "x y"}));
  EXPECT_TRUE(opts.tag_output);
  EXPECT_EQ(opts.timeout_seconds, 2.5);
  EXPECT_EQ(opts.command, (std::vector<std::string>{"prog", "-n", "9"}));
}

TEST(MpiexecOptions, AcceptsAliasesAndInlineValues) {
  auto opts = parse_options({"-np", "2", "--channel=tcp", "--", "-prog"}, nullptr);
  EXPECT_EQ(opts.nprocs, 2);
  EXPECT_EQ(opts.channel, "tcp");
  EXPECT_EQ(opts.command, (std::vector<std::string>{"-prog"}));
}

TEST(MpiexecOptions, TimeoutComesFromEnvironmentUnlessGiven) {
  EXPECT_EQ(parse_options({"prog"}, "7").timeout_seconds, 7.0);
  EXPECT_EQ(parse_options({"--timeout", "3", "prog"}, "7").timeout_seconds, 3.0);
  EXPECT_FALSE(parse_options({"prog"}, nullptr).timeout_seconds);
  EXPECT_EQ(parse_options({"prog"}, nullptr).nprocs, 1);
}

TEST(MpiexecOptions, RejectsBadInput) {
  EXPECT_THROW(parse_options({"-n", "0", "prog"}, nullptr), UsageError);
  EXPECT_THROW(parse_options({"-n", "x", "prog"}, nullptr), UsageError);
  EXPECT_THROW(parse_options({"-n", "2"}, nullptr), UsageError);
  EXPECT_THROW(parse_options({"--bogus", "prog"}, nullptr), UsageError);
  EXPECT_THROW(parse_options({"--timeout", "-1", "prog"}, nullptr), UsageError);
  EXPECT_THROW(parse_options({"prog"}, "soon"), UsageError);
  EXPECT_THROW(parse_options({"-genv", "A"}, nullptr), UsageError);
  EXPECT_THROW(parse_options({"--tag-output=yes", "prog"}, nullptr), UsageError);
  EXPECT_TRUE(parse_options({"--help"}, nullptr).help);
}

TEST(LineForwarder, EmitsWholeTaggedLines) {
  LineForwarder fwd("[3] ");
  EXPECT_EQ(fwd.feed("hel"), "");
  EXPECT_EQ(fwd.feed("lo\nwor"), "[3] hello\n");
  EXPECT_EQ(fwd.feed("ld\n\nx"), "[3] world\n[3] \n");
  EXPECT_EQ(fwd.finish(), "[3] x\n");
  EXPECT_EQ(fwd.finish(), "");
}

TEST(LineForwarder, UntaggedTailIsPassedAsIs) {
  LineForwarder fwd("");
  EXPECT_EQ(fwd.feed("a\nb"), "a\n");
  EXPECT_EQ(fwd.finish(), "b");
}

TEST(LineForwarder, HugeLinesAreNotBufferedForever) {
  LineForwarder fwd("[0] ");
  std::string chunk(LineForwarder::kMaxPending, 'z');
  EXPECT_EQ(fwd.feed(chunk), "[0] " + chunk);
  EXPECT_EQ(fwd.feed("end\n"), "end\n");
}

TEST(MpiexecEnvironment, DropsOuterPmiVariablesAndSetsNew) {
  const char* envp[] = {"PATH=/bin", "PMI_FD=5", "PMI_PORT=x", "HOME=/root", nullptr};
  auto env = inherited_environment(envp);
  EXPECT_EQ(env, (std::vector<std::string>{"PATH=/bin", "HOME=/root"}));
  set_env(env, "PATH", "/usr/bin");
  set_env(env, "ADI3_CHANNEL", "shm");
  EXPECT_EQ(env, (std::vector<std::string>{"PATH=/usr/bin", "HOME=/root", "ADI3_CHANNEL=shm"}));
}

TEST(MpiexecEnvironment, JobIdsAreUniqueAndFileNameSafe) {
  auto a = make_job_id();
  auto b = make_job_id();
  EXPECT_NE(a, b);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef-"), std::string::npos) << a;
  EXPECT_EQ(a.rfind(std::to_string(::getpid()) + "-", 0), 0u) << a;
}

TEST(ShmCleanup, RemovesOnlyThisJobsFiles) {
  auto dir = std::filesystem::temp_directory_path() / ("adi3-shm-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const char* name : {"adi3-12-ab-seg0", "adi3-12-ab-seg1", "adi3-12-abc-seg0", "adi3-13-ab-seg0", "other"}) {
    std::ofstream(dir / name) << "x";
  }
  auto removed = remove_job_shm_files("12-ab", dir.string());
  EXPECT_EQ(removed.size(), 2u);
  EXPECT_FALSE(std::filesystem::exists(dir / "adi3-12-ab-seg0"));
  EXPECT_FALSE(std::filesystem::exists(dir / "adi3-12-ab-seg1"));
  EXPECT_TRUE(std::filesystem::exists(dir / "adi3-12-abc-seg0"));
  EXPECT_TRUE(std::filesystem::exists(dir / "adi3-13-ab-seg0"));
  EXPECT_TRUE(remove_job_shm_files("", dir.string()).empty());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace adi3::mpiexec
