// The lock queue of a window at the target (emul/lock_queue.hpp), alone:
// requests are granted in arrival order, a stream of shared requests does
// not starve a waiting exclusive one, writers do not starve readers, and
// an origin never holds or waits more than twice.
#include "emul/lock_queue.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "rma/protocol.hpp"

namespace {

using adi3::emul::LockQueue;
using adi3::rma::LockKind;
constexpr LockKind kShared = LockKind::Shared, kExcl = LockKind::Exclusive;

TEST(LockQueue, SharedStreamDoesNotStarveAWriter) {
  LockQueue q;
  q.reserve(4);
  EXPECT_TRUE(q.request(0, kShared));
  EXPECT_TRUE(q.request(1, kShared));
  EXPECT_FALSE(q.request(2, kExcl));    // waits for the readers
  EXPECT_FALSE(q.request(3, kShared));  // behind the writer, though compatible with the holders
  EXPECT_EQ(q.shared_holders(), 2);
  std::vector<int> granted;
  EXPECT_TRUE(q.release(0, &granted));
  EXPECT_TRUE(granted.empty());
  EXPECT_FALSE(q.request(0, kShared));  // a new reader queues too
  EXPECT_TRUE(q.release(1, &granted));
  EXPECT_EQ(granted, std::vector<int>{2});
  EXPECT_TRUE(q.exclusive_held());
  granted.clear();
  EXPECT_TRUE(q.release(2, &granted));
  EXPECT_EQ(granted, (std::vector<int>{3, 0}));  // both readers at once
  EXPECT_EQ(q.shared_holders(), 2);
  EXPECT_TRUE(q.release(3, nullptr));
  EXPECT_TRUE(q.release(0, nullptr));
  EXPECT_TRUE(q.idle());
}

TEST(LockQueue, WritersDoNotStarveReaders) {
  LockQueue q;
  q.reserve(3);
  EXPECT_TRUE(q.request(0, kExcl));
  EXPECT_FALSE(q.request(1, kShared));
  EXPECT_FALSE(q.request(2, kExcl));
  std::vector<int> granted;
  EXPECT_TRUE(q.release(0, &granted));
  EXPECT_EQ(granted, std::vector<int>{1});  // the reader that came first
  EXPECT_FALSE(q.request(0, kExcl));
  granted.clear();
  EXPECT_TRUE(q.release(1, &granted));
  EXPECT_EQ(granted, std::vector<int>{2});
  granted.clear();
  EXPECT_TRUE(q.release(2, &granted));
  EXPECT_EQ(granted, std::vector<int>{0});
  EXPECT_TRUE(q.release(0, &granted));
  EXPECT_TRUE(q.idle());
}

TEST(LockQueue, WithdrawnRequestsAndBounds) {
  LockQueue q;
  q.reserve(2);
  EXPECT_FALSE(q.release(1, nullptr));  // held nothing, waited for nothing
  EXPECT_TRUE(q.request(0, kExcl));
  EXPECT_TRUE(q.has_room_for(1));
  EXPECT_FALSE(q.request(1, kShared));
  EXPECT_TRUE(q.has_room_for(1));  // its next epoch's request may come early
  EXPECT_FALSE(q.request(1, kExcl));
  EXPECT_FALSE(q.has_room_for(1));  // a third is no legal sequence of epochs
  std::vector<int> granted;
  EXPECT_TRUE(q.release(1, &granted));  // withdraws its first waiting request
  EXPECT_TRUE(granted.empty());
  EXPECT_TRUE(q.release(0, &granted));
  EXPECT_EQ(granted, std::vector<int>{1});
  EXPECT_TRUE(q.exclusive_held());
  EXPECT_TRUE(q.release(1, nullptr));
  EXPECT_TRUE(q.idle());
}

}  // namespace
