// Classes with poll and wait functions (MPIX_Grequest_*): the progress engine
// drives poll functions, so these requests finish with no thread of their
// own; wait and waitall hand requests of one class to its wait function.
#include <chrono>
#include <cmath>
#include <thread>

#include "recorder.hpp"

namespace {

using namespace greq_test;

struct Stats {
  int wait_calls = 0;
  int last_count = 0;
  double last_timeout = 0;
  int wait_rc = 0;
};

// One operation: done after `needed` polls (or when a wait function ends it).
struct Op {
  Request* self = nullptr;
  int needed = 3;
  int polls = 0;
  int queries = 0, frees = 0;
  int poll_rc = 0;  // returned by the first poll
  Stats* stats = nullptr;

  void finish() {
    Request* r = self;
    self = nullptr;
    if (r) {
      EXPECT_EQ(adi3::grequest_complete(r), 0);
    }
  }
};

int op_query(void* e, Status* s) {
  auto* op = static_cast<Op*>(e);
  ++op->queries;
  s->bytes = static_cast<std::size_t>(op->polls);
  return 0;
}
int op_free(void* e) {
  ++static_cast<Op*>(e)->frees;
  return 0;
}
int op_poll(void* e, Status* s) {
  EXPECT_NE(s, nullptr);
  auto* op = static_cast<Op*>(e);
  EXPECT_NE(op->self, nullptr) << "polled after completion";
  if (++op->polls >= op->needed) op->finish();
  return op->polls == 1 ? op->poll_rc : 0;
}
int op_wait(int count, void** states, double timeout, Status*) {
  auto* first = static_cast<Op*>(states[0]);
  Stats* st = first->stats;
  ++st->wait_calls;
  st->last_count = count;
  st->last_timeout = timeout;
  if (st->wait_rc) return st->wait_rc;
  for (int i = 0; i < count; ++i) static_cast<Op*>(states[i])->finish();
  return 0;
}

adi3::GreqClass* make_class(bool poll, bool wait) {
  adi3::GreqClass* c = nullptr;
  EXPECT_EQ(adi3::grequest_class_create(&op_query, &op_free, nullptr, poll ? &op_poll : nullptr,
                                        wait ? &op_wait : nullptr, &c),
            0);
  return c;
}

Request* allocate(Device& dev, adi3::GreqClass* c, Op& op) {
  Request* r = nullptr;
  EXPECT_EQ(adi3::grequest_class_allocate(dev, c, &op, &r), 0);
  op.self = r;
  return r;
}

TEST(GreqPoll, WaitDrivesThePollFunction) {
  Solo s;
  std::size_t base = s.dev.live_requests();
  adi3::GreqClass* c = make_class(true, false);
  Op op;
  op.needed = 4;
  Request* r = allocate(s.dev, c, op);
  Status st;
  EXPECT_EQ(s.dev.wait(&r, &st), 0);
  EXPECT_EQ(op.polls, 4);
  EXPECT_EQ(st.bytes, 4u);
  EXPECT_EQ(op.queries, 1);
  EXPECT_EQ(op.frees, 1);
  EXPECT_EQ(adi3::grequest_class_free(&c), 0);
  EXPECT_EQ(c, nullptr);
  s.dev.progress();
  EXPECT_EQ(s.dev.live_requests(), base);
}

TEST(GreqPoll, ProgressAloneFinishesIt) {
  Solo s;
  adi3::GreqClass* c = make_class(true, false);
  Op op;
  op.needed = 5;
  Request* r = allocate(s.dev, c, op);
  for (int i = 0; i < 5; ++i) {
    EXPECT_FALSE(r->complete());
    s.dev.progress();
  }
  EXPECT_TRUE(r->complete());
  EXPECT_EQ(op.queries, 0);  // nobody has asked yet
  bool flag = false;
  EXPECT_EQ(s.dev.test(&r, &flag, nullptr), 0);
  EXPECT_TRUE(flag);
  EXPECT_EQ(op.polls, 5);  // never polled once complete
  adi3::grequest_class_free(&c);
}

// The request finishes while its rank waits for something else entirely.
TEST(GreqPoll, FinishesDuringAnUnrelatedWait) {
  adi3::run_thread_ranks(
      2,
      [](Device& dev) {
        const adi3::Datatype* byte = adi3::Datatype::byte();
        if (dev.rank() == 1) {
          std::this_thread::sleep_for(std::chrono::milliseconds(30));
          dev.send(nullptr, 0, byte, 0, 1, dev.world());
          return;
        }
        adi3::GreqClass* c = make_class(true, false);
        Op op;
        op.needed = 10;
        Request* r = allocate(dev, c, op);
        adi3::grequest_class_free(&c);  // the class lives on with its request
        EXPECT_EQ(dev.recv(nullptr, 0, byte, 1, 1, dev.world(), nullptr), 0);
        EXPECT_TRUE(r->complete());
        EXPECT_EQ(op.queries, 0);
        EXPECT_EQ(dev.wait(&r, nullptr), 0);
        EXPECT_EQ(op.polls, 10);
      },
      config(false));
}

TEST(GreqPoll, FreedBeforeCompletionFreesInThePoll) {
  Solo s;
  std::size_t base = s.dev.live_requests();
  adi3::GreqClass* c = make_class(true, false);
  Op op;
  op.needed = 3;
  Request* r = allocate(s.dev, c, op);
  EXPECT_EQ(s.dev.request_free(&r), 0);
  EXPECT_EQ(op.frees, 0);
  for (int i = 0; i < 3; ++i) s.dev.progress();
  EXPECT_EQ(op.frees, 1);
  EXPECT_EQ(op.queries, 0);
  s.dev.progress();
  EXPECT_EQ(s.dev.live_requests(), base);
  adi3::grequest_class_free(&c);
}

TEST(GreqPoll, PollErrorIsReportedWithTheStatus) {
  Solo s;
  adi3::GreqClass* c = make_class(true, false);
  Op op;
  op.poll_rc = adi3::error_code(adi3::ErrorClass::Io);
  Request* r = allocate(s.dev, c, op);
  EXPECT_EQ(s.dev.wait(&r, nullptr), op.poll_rc);
  adi3::grequest_class_free(&c);
}

TEST(GreqPoll, StartPolledIsAClassOfItsOwn) {
  Solo s;
  Stats stats;
  Op a, b;
  a.stats = b.stats = &stats;
  a.needed = b.needed = 2;
  Request* reqs[2];
  ASSERT_EQ(adi3::grequest_start_polled(s.dev, &op_query, &op_free, nullptr, &op_poll, &op_wait, &a, &reqs[0]), 0);
  ASSERT_EQ(adi3::grequest_start_polled(s.dev, &op_query, &op_free, nullptr, &op_poll, &op_wait, &b, &reqs[1]), 0);
  a.self = reqs[0];
  b.self = reqs[1];
  // Two classes, so waitall does not batch them: their polls end them.
  EXPECT_EQ(s.dev.waitall(2, reqs, nullptr), 0);
  EXPECT_EQ(stats.wait_calls, 0);
  EXPECT_EQ(a.frees + b.frees, 2);
  // Alone, a request's own wait function ends it.
  Op c;
  c.stats = &stats;
  c.needed = 1 << 30;
  Request* r = nullptr;
  ASSERT_EQ(adi3::grequest_start_polled(s.dev, &op_query, &op_free, nullptr, &op_poll, &op_wait, &c, &r), 0);
  c.self = r;
  EXPECT_EQ(s.dev.wait(&r, nullptr), 0);
  EXPECT_EQ(stats.wait_calls, 1);
  EXPECT_EQ(stats.last_count, 1);
  EXPECT_EQ(c.frees, 1);
}

TEST(GreqClassWait, WaitallHandsTheWholeSetToTheWaitFunction) {
  Solo s;
  std::size_t base = s.dev.live_requests();
  adi3::GreqClass* c = make_class(false, true);
  Stats stats;
  Op ops[5];
  Request* reqs[5];
  for (int i = 0; i < 5; ++i) {
    ops[i].stats = &stats;
    reqs[i] = allocate(s.dev, c, ops[i]);
  }
  adi3::grequest_class_free(&c);
  Status sts[5];
  EXPECT_EQ(s.dev.waitall(5, reqs, sts), 0);
  EXPECT_EQ(stats.wait_calls, 1);
  EXPECT_EQ(stats.last_count, 5);
  EXPECT_TRUE(std::isinf(stats.last_timeout));
  for (Op& op : ops) {
    EXPECT_EQ(op.frees, 1);
    EXPECT_EQ(op.queries, 1);
  }
  s.dev.progress();
  EXPECT_EQ(s.dev.live_requests(), base);
}

TEST(GreqClassWait, CompletedRequestsAreLeftOut) {
  Solo s;
  adi3::GreqClass* c = make_class(false, true);
  Stats stats;
  Op ops[3];
  Request* reqs[4] = {nullptr, nullptr, nullptr, nullptr};  // a null slot too
  for (int i = 0; i < 3; ++i) {
    ops[i].stats = &stats;
    reqs[i] = allocate(s.dev, c, ops[i]);
  }
  ops[1].finish();
  EXPECT_EQ(s.dev.waitall(4, reqs, nullptr), 0);
  EXPECT_EQ(stats.wait_calls, 1);
  EXPECT_EQ(stats.last_count, 2);
  adi3::grequest_class_free(&c);
}

TEST(GreqClassWait, WaitOnOneRequest) {
  Solo s;
  adi3::GreqClass* c = make_class(false, true);
  Stats stats;
  Op op;
  op.stats = &stats;
  Request* r = allocate(s.dev, c, op);
  EXPECT_EQ(s.dev.wait(&r, nullptr), 0);
  EXPECT_EQ(stats.wait_calls, 1);
  EXPECT_EQ(stats.last_count, 1);
  adi3::grequest_class_free(&c);
}

TEST(GreqClassWait, MixedClassesAreNotBatched) {
  Solo s;
  adi3::GreqClass* c1 = make_class(true, true);
  adi3::GreqClass* c2 = make_class(true, true);
  Stats stats;
  Op ops[3];
  Request* reqs[3];
  for (int i = 0; i < 3; ++i) {
    ops[i].stats = &stats;
    reqs[i] = allocate(s.dev, i < 2 ? c1 : c2, ops[i]);
  }
  EXPECT_EQ(s.dev.waitall(3, reqs, nullptr), 0);  // the poll functions end them
  EXPECT_EQ(stats.wait_calls, 0);
  for (Op& op : ops) EXPECT_EQ(op.polls, 3);
  adi3::grequest_class_free(&c1);
  adi3::grequest_class_free(&c2);
}

TEST(GreqClassWait, WaitFunctionErrorLeavesTheRequestsActive) {
  Solo s;
  adi3::GreqClass* c = make_class(false, true);
  Stats stats;
  stats.wait_rc = adi3::error_code(adi3::ErrorClass::Other);
  Op ops[2];
  Request* reqs[2];
  for (int i = 0; i < 2; ++i) {
    ops[i].stats = &stats;
    reqs[i] = allocate(s.dev, c, ops[i]);
  }
  EXPECT_EQ(s.dev.waitall(2, reqs, nullptr), stats.wait_rc);
  EXPECT_NE(reqs[0], nullptr);
  EXPECT_NE(reqs[1], nullptr);
  EXPECT_EQ(ops[0].frees, 0);
  stats.wait_rc = 0;
  EXPECT_EQ(s.dev.waitall(2, reqs, nullptr), 0);
  EXPECT_EQ(ops[0].frees + ops[1].frees, 2);
  adi3::grequest_class_free(&c);
}

TEST(GreqPoll, WaitanyMixesPolledRequestsWithReceives) {
  adi3::run_thread_ranks(
      2,
      [](Device& dev) {
        const adi3::Datatype* byte = adi3::Datatype::byte();
        adi3::Comm ctl = dev.world();
        ctl.context = 0x7200;
        if (dev.rank() == 1) {
          dev.recv(nullptr, 0, byte, 0, 0, ctl, nullptr);
          dev.send(nullptr, 0, byte, 0, 4, dev.world());
          return;
        }
        adi3::GreqClass* c = make_class(true, false);
        Op op;
        op.needed = 20;
        Request* reqs[2] = {nullptr, nullptr};
        ASSERT_EQ(dev.irecv(nullptr, 0, byte, 1, 4, dev.world(), &reqs[0]), 0);
        reqs[1] = allocate(dev, c, op);
        int index = -1;
        EXPECT_EQ(dev.waitany(2, reqs, &index, nullptr), 0);
        EXPECT_EQ(index, 1);  // the receive cannot match yet
        dev.send(nullptr, 0, byte, 1, 0, ctl);
        EXPECT_EQ(dev.waitany(2, reqs, &index, nullptr), 0);
        EXPECT_EQ(index, 0);
        adi3::grequest_class_free(&c);
      },
      config(false));
}

}  // namespace
