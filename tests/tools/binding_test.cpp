// mpiexec's binding plan on synthetic machines (hwloc builds them from a
// description, so the cases do not depend on the machine running them).
#include <gtest/gtest.h>

#include "mpiexec/binding.hpp"

namespace {

using adi3::mpiexec::BindLevel;
using adi3::mpiexec::BindRequest;
using adi3::mpiexec::plan_binding;

// Two sockets, each one L3 with two cores of one PU: PUs 0-1 on socket 0, 2-3 on socket 1.
constexpr const char* kTwoSockets = "pack:2 l3:1 core:2 pu:1";

std::vector<int> cpus(const cpu_set_t& m) {
  std::vector<int> out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &m)) out.push_back(c);
  }
  return out;
}

TEST(Binding, DefaultIsOneCorePerRankInOrder) {
  auto plan = plan_binding(3, BindRequest{std::nullopt, BindLevel::Core, kTwoSockets});
  ASSERT_TRUE(plan.bound);
  EXPECT_EQ(plan.cores, 4);
  ASSERT_EQ(plan.masks.size(), 3u);
  EXPECT_EQ(cpus(plan.masks[0]), std::vector<int>{0});
  EXPECT_EQ(cpus(plan.masks[1]), std::vector<int>{1});
  EXPECT_EQ(cpus(plan.masks[2]), std::vector<int>{2});
  EXPECT_NE(plan.reports[0].find("cpus 0"), std::string::npos);
}

TEST(Binding, MapBySocketAlternatesSockets) {
  auto plan = plan_binding(4, BindRequest{BindLevel::Core, BindLevel::Socket, kTwoSockets});
  ASSERT_TRUE(plan.bound);
  EXPECT_EQ(cpus(plan.masks[0]), std::vector<int>{0});
  EXPECT_EQ(cpus(plan.masks[1]), std::vector<int>{2});
  EXPECT_EQ(cpus(plan.masks[2]), std::vector<int>{1});
  EXPECT_EQ(cpus(plan.masks[3]), std::vector<int>{3});
}

TEST(Binding, WiderLevelsBindToTheEnclosingObject) {
  for (BindLevel level : {BindLevel::Socket, BindLevel::L3Cache}) {
    auto plan = plan_binding(3, BindRequest{level, BindLevel::Core, kTwoSockets});
    ASSERT_TRUE(plan.bound);
    EXPECT_EQ(cpus(plan.masks[0]), (std::vector<int>{0, 1}));
    EXPECT_EQ(cpus(plan.masks[1]), (std::vector<int>{0, 1}));
    EXPECT_EQ(cpus(plan.masks[2]), (std::vector<int>{2, 3}));
  }
}

TEST(Binding, NoneLeavesRanksFree) {
  auto none = plan_binding(2, BindRequest{BindLevel::None, BindLevel::Core, kTwoSockets});
  EXPECT_FALSE(none.bound);
  EXPECT_NE(none.note.find("--bind-to none"), std::string::npos);
  EXPECT_TRUE(none.masks.empty());
}

// More ranks than cores: the deal starts again, so ranks r and r + 1 never
// share a core (a pair on one core waits for a context switch per message).
TEST(Binding, OversubscriptionDealsRanksRoundRobin) {
  auto over = plan_binding(10, BindRequest{std::nullopt, BindLevel::Core, kTwoSockets});
  ASSERT_TRUE(over.bound);
  EXPECT_NE(over.note.find("10 ranks on 4 cores"), std::string::npos);
  ASSERT_EQ(over.masks.size(), 10u);
  for (int r = 0; r < 10; ++r) EXPECT_EQ(cpus(over.masks[static_cast<std::size_t>(r)]), std::vector<int>{r % 4}) << r;
  auto by_socket = plan_binding(6, BindRequest{std::nullopt, BindLevel::Socket, kTwoSockets});
  ASSERT_TRUE(by_socket.bound);
  const std::vector<std::vector<int>> want = {{0}, {2}, {1}, {3}, {0}, {2}};
  for (int r = 0; r < 6; ++r)
    EXPECT_EQ(cpus(by_socket.masks[static_cast<std::size_t>(r)]), want[static_cast<std::size_t>(r)]) << r;
}

TEST(Binding, HyperthreadsStayTogether) {
  // One socket, 2 cores of 2 PUs: a rank gets both PUs of its core.
  auto plan = plan_binding(2, BindRequest{std::nullopt, BindLevel::Core, "pack:1 core:2 pu:2"});
  ASSERT_TRUE(plan.bound);
  EXPECT_EQ(cpus(plan.masks[0]), (std::vector<int>{0, 1}));
  EXPECT_EQ(cpus(plan.masks[1]), (std::vector<int>{2, 3}));
}

}  // namespace
