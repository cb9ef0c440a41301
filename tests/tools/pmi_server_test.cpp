#include "mpiexec/pmi_server.hpp"

#include <gtest/gtest.h>

#include <string>

namespace adi3::mpiexec {
namespace {

PmiServer make_server(int size) { return PmiServer(PmiServerConfig{size, "kvs_test", 0, 0, 0}); }

// The single reply a request must produce.
std::string only_reply(const PmiOutcome& outcome, int rank) {
  EXPECT_FALSE(outcome.error) << *outcome.error;
  EXPECT_EQ(outcome.replies.size(), 1u);
  if (outcome.replies.size() != 1) {
    return {};
  }
  EXPECT_EQ(outcome.replies[0].first, rank);
  return outcome.replies[0].second;
}

TEST(PmiServer, AnswersInitAndQueries) {
  auto server = make_server(3);
  EXPECT_EQ(only_reply(server.handle_line(1, "cmd=init pmi_version=1 pmi_subversion=1"), 1),
            "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
  EXPECT_TRUE(server.initialized(1));
  EXPECT_FALSE(server.initialized(0));
  EXPECT_EQ(only_reply(server.handle_line(1, "cmd=get_maxes"), 1),
            "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024 rc=0\n");
  EXPECT_EQ(only_reply(server.handle_line(1, "cmd=get_my_kvsname"), 1), "cmd=my_kvsname kvsname=kvs_test rc=0\n");
  EXPECT_EQ(only_reply(server.handle_line(1, "cmd=get_universe_size"), 1), "cmd=universe_size size=3 rc=0\n");
  EXPECT_EQ(only_reply(server.handle_line(1, "cmd=get_appnum"), 1), "cmd=appnum appnum=0 rc=0\n");
}

TEST(PmiServer, RefusesOtherPmiVersions) {
  auto server = make_server(1);
  auto outcome = server.handle_line(0, "cmd=init pmi_version=2 pmi_subversion=0");
  ASSERT_EQ(outcome.replies.size(), 1u);
  EXPECT_NE(outcome.replies[0].second.find("rc=-1"), std::string::npos);
  EXPECT_TRUE(outcome.error);
}

TEST(PmiServer, PutThenGet) {
  auto server = make_server(2);
  EXPECT_EQ(only_reply(server.handle_line(0, "cmd=put kvsname=kvs_test key=k0 value=v%20x"), 0),
            "cmd=put_result rc=0 msg=success\n");
  EXPECT_EQ(only_reply(server.handle_line(1, "cmd=get kvsname=kvs_test key=k0"), 1),
            "cmd=get_result rc=0 msg=success value=v%20x\n");
  EXPECT_EQ(only_reply(server.handle_line(1, "cmd=get kvsname=kvs_test key=nope"), 1),
            "cmd=get_result rc=-1 msg=key_nope_not_found value=unknown\n");
  EXPECT_EQ(only_reply(server.handle_line(1, "cmd=get kvsname=kvs_test key=PMI_process_mapping"), 1),
            "cmd=get_result rc=0 msg=success value=(vector,(0,1,2))\n");
}

TEST(PmiServer, PutChecksKvsnameAndLimits) {
  auto server = make_server(1);
  auto reply = only_reply(server.handle_line(0, "cmd=put kvsname=other key=k value=v"), 0);
  EXPECT_NE(reply.find("rc=-1"), std::string::npos);
  reply = only_reply(server.handle_line(0, "cmd=put kvsname=kvs_test key=" + std::string(64, 'k') + " value=v"), 0);
  EXPECT_NE(reply.find("rc=-1"), std::string::npos);
  reply = only_reply(server.handle_line(0, "cmd=put kvsname=kvs_test key=k value=" + std::string(1024, 'v')), 0);
  EXPECT_NE(reply.find("rc=-1"), std::string::npos);
  reply = only_reply(server.handle_line(0, "cmd=put kvsname=kvs_test key=k value=" + std::string(1023, 'v')), 0);
  EXPECT_NE(reply.find("rc=0"), std::string::npos);
}

// No rank can grow the launcher without bound: puts beyond its keys or
// bytes are refused (and reported); replacing its own keys costs nothing
// more, and a key taken over by another rank is charged to that rank.
TEST(PmiServer, KeysAndBytesPerRankAreBounded) {
  PmiServer server(PmiServerConfig{2, "kvs_test", 0, 0, 0, 3, 100});
  auto put = [&](int rank, const std::string& k, const std::string& v) {
    return server.handle_line(rank, "cmd=put kvsname=kvs_test key=" + k + " value=" + v);
  };
  for (const char* k : {"a", "b", "c"})
    EXPECT_EQ(put(0, k, "v").replies[0].second, "cmd=put_result rc=0 msg=success\n");
  PmiOutcome refused = put(0, "d", "v");
  ASSERT_EQ(refused.replies.size(), 1u);
  EXPECT_NE(refused.replies[0].second.find("rc=-1 msg=rank_0_exceeds_its_limit_of_3_keys_or_100_bytes"),
            std::string::npos)
      << refused.replies[0].second;
  ASSERT_TRUE(refused.error);
  EXPECT_NE(refused.error->find("rank 0 put more than its 3 keys or 100 bytes"), std::string::npos) << *refused.error;
  // Replacing its own key adds no key; bytes count the new value.
  EXPECT_FALSE(put(0, "a", std::string(90, 'x')).error);
  EXPECT_TRUE(put(0, "b", std::string(20, 'x')).error) << "1+90 + 1+1 + 1+20 bytes > 100";
  EXPECT_EQ(only_reply(server.handle_line(1, "cmd=get kvsname=kvs_test key=b"), 1),
            "cmd=get_result rc=0 msg=success value=v\n")
      << "a refused put leaves the old value";
  // Rank 1 takes over "a": rank 0 is relieved of it.
  EXPECT_FALSE(put(1, "a", "w").error);
  EXPECT_FALSE(put(0, "d", std::string(90, 'y')).error);
  EXPECT_TRUE(put(1, std::string(60, 'k'), std::string(99, 'z')).error);
}

TEST(PmiServer, BarrierReleasesEveryoneAtOnce) {
  auto server = make_server(3);
  EXPECT_TRUE(server.handle_line(2, "cmd=barrier_in").replies.empty());
  EXPECT_TRUE(server.handle_line(0, "cmd=barrier_in").replies.empty());
  EXPECT_EQ(server.barrier_waiting(), 2);
  auto outcome = server.handle_line(1, "cmd=barrier_in");
  ASSERT_EQ(outcome.replies.size(), 3u);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(outcome.replies[static_cast<std::size_t>(r)].first, r);
    EXPECT_EQ(outcome.replies[static_cast<std::size_t>(r)].second, "cmd=barrier_out\n");
  }
  EXPECT_EQ(server.barrier_waiting(), 0);
  // The next barrier starts from zero.
  EXPECT_TRUE(server.handle_line(1, "cmd=barrier_in").replies.empty());
}

TEST(PmiServer, DoubleBarrierEntryIsAnError) {
  auto server = make_server(2);
  server.handle_line(0, "cmd=barrier_in");
  EXPECT_TRUE(server.handle_line(0, "cmd=barrier_in").error);
}

TEST(PmiServer, FinalizeAndAbort) {
  auto server = make_server(2);
  EXPECT_EQ(only_reply(server.handle_line(0, "cmd=finalize"), 0), "cmd=finalize_ack\n");
  EXPECT_TRUE(server.finalized(0));
  auto outcome = server.handle_line(1, "cmd=abort exitcode=7");
  EXPECT_TRUE(outcome.replies.empty());
  EXPECT_EQ(outcome.abort_code, 7);
}

TEST(PmiServer, ReportsUnsupportedAndMalformedLines) {
  auto server = make_server(1);
  auto unsupported = server.handle_line(0, "cmd=spawn nprocs=2");
  ASSERT_TRUE(unsupported.error);
  EXPECT_NE(unsupported.error->find("spawn"), std::string::npos);
  EXPECT_TRUE(server.handle_line(0, "garbage").error);
}

}  // namespace
}  // namespace adi3::mpiexec
