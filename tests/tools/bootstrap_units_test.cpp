// Pure pieces of adi3/bootstrap: the PMI_process_mapping parser, the
// PMI-2 message codec and the choice of wire from the environment.
#include <gtest/gtest.h>

#include <cstdlib>

#include "adi3/bootstrap/common.hpp"
#include "adi3/bootstrap/pmi2_wire.hpp"

namespace {

using adi3::parse_process_mapping;

TEST(ProcessMapping, OneNodeAndBlocks) {
  auto m = parse_process_mapping("(vector,(0,1,4))", 4);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->nodes, 1);
  EXPECT_EQ(m->node_of, (std::vector<int>{0, 0, 0, 0}));
  // Two nodes, two ranks each, block order.
  m = parse_process_mapping("(vector,(0,2,2))", 4);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->node_of, (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(m->ranks_on(1), (std::vector<int>{2, 3}));
}

TEST(ProcessMapping, CyclicRepeatsThePattern) {
  // Round robin over 2 nodes: the vector repeats until every rank is placed.
  auto m = parse_process_mapping("( vector, (0,2,1) )", 5);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->node_of, (std::vector<int>{0, 1, 0, 1, 0}));
  // Uneven blocks; node ids need not start at 0 and become dense.
  m = parse_process_mapping("(vector,(3,1,3),(7,1,1))", 4);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->nodes, 2);
  EXPECT_EQ(m->node_of, (std::vector<int>{0, 0, 0, 1}));
}

TEST(ProcessMapping, RejectsMalformedText) {
  std::string why;
  for (const char* bad : {"", "(vector)", "(vector,(0,1))", "(vector,(0,1,0))", "(vector,(0,1,2)", "(vec,(0,1,2))",
                          "(vector,(0,1,2)) junk", "(vector,(99999999999,1,2))", "(vector,(-1,1,2))"}) {
    EXPECT_FALSE(parse_process_mapping(bad, 4, &why)) << bad;
    EXPECT_NE(why.find("PMI_process_mapping"), std::string::npos);
  }
}

TEST(Pmi2Wire, FramesAndParsesWithEscapedSemicolons) {
  adi3::pmi2::Message m{"kvs-put", {}};
  m.add("key", "k").add("value", "a;b;;c");
  std::string wire = adi3::pmi2::frame(m);
  ASSERT_GE(wire.size(), 6u);
  std::string body = wire.substr(6);
  EXPECT_EQ(std::stoul(wire.substr(0, 6)), body.size());
  EXPECT_EQ(body, "cmd=kvs-put;key=k;value=a;;b;;;;c;");
  auto back = adi3::pmi2::parse(body);
  EXPECT_EQ(back.cmd, "kvs-put");
  EXPECT_EQ(back.get("value"), "a;b;;c");
  EXPECT_EQ(adi3::pmi2::parse("cmd=fullinit-response;rank=3;size=4;rc=0;").get_int("size"), 4);
}

TEST(Pmi2Wire, MalformedMessagesThrow) {
  for (const char* bad : {"", "rank=3;", "cmd=;", "cmd=x;novalue;", "cmd=x;=v;"}) {
    EXPECT_THROW(adi3::pmi2::parse(bad), std::runtime_error) << bad;
  }
}

// Sets variables for one test and restores the environment after.
class WireChoice : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : kVars) unsetenv(v);
  }
  void TearDown() override { SetUp(); }
  static constexpr const char* kVars[] = {"ADI3_PMI", "PMIX_RANK", "PMIX_NAMESPACE",
                                          "PMI_FD",   "PMI_PORT",  "SLURM_MPI_TYPE"};
};

TEST_F(WireChoice, FromTheEnvironment) {
  EXPECT_EQ(adi3::detect_wire(), "singleton");
  setenv("PMI_FD", "5", 1);
  EXPECT_EQ(adi3::detect_wire(), "pmi1");
  setenv("SLURM_MPI_TYPE", "pmi2", 1);
  EXPECT_EQ(adi3::detect_wire(), "pmi2");
  setenv("PMIX_RANK", "0", 1);
  setenv("PMIX_NAMESPACE", "ns", 1);
  EXPECT_EQ(adi3::detect_wire(), "pmix");
  setenv("ADI3_PMI", "pmi1", 1);
  EXPECT_EQ(adi3::detect_wire(), "pmi1");
  unsetenv("PMI_FD");
  unsetenv("PMIX_RANK");
  unsetenv("ADI3_PMI");
  setenv("PMI_PORT", "host:1", 1);
  EXPECT_EQ(adi3::detect_wire(), "pmi2");
}

TEST_F(WireChoice, BadForcedValueIsNamed) {
  setenv("ADI3_PMI", "pmi3", 1);
  try {
    adi3::detect_wire();
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("'pmi3'"), std::string::npos);
  }
}

}  // namespace
