// The standard's rules for generalized requests, one rank: every order of
// grequest_complete, request_free, wait, test and request_get_status; when
// query_fn and free_fn run; cancel before and after completion; the status
// query_fn fills; mixing with receives.
#include <chrono>
#include <thread>

#include "greq/ibarrier.hpp"
#include "recorder.hpp"

namespace {

using namespace greq_test;

TEST(GreqSemantics, CompleteThenWaitRunsQueryThenFree) {
  Solo s;
  std::size_t base = s.dev.live_requests();
  Recorder rec;
  Request* r = rec.start(s.dev);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(adi3::grequest_complete(r), 0);
  EXPECT_EQ(rec.trace(), "");  // nothing runs at completion while the handle lives
  Status st;
  EXPECT_EQ(s.dev.wait(&r, &st), 0);
  EXPECT_EQ(r, nullptr);
  EXPECT_EQ(rec.trace(), "qf");
  EXPECT_EQ(st.bytes, 3u);
  EXPECT_EQ(st.source, 7);
  EXPECT_EQ(st.tag, 11);
  EXPECT_FALSE(st.cancelled);
  EXPECT_EQ(s.dev.live_requests(), base);
}

TEST(GreqSemantics, TestBeforeAndAfterComplete) {
  Solo s;
  Recorder rec;
  Request* r = rec.start(s.dev);
  bool flag = true;
  Status st;
  EXPECT_EQ(s.dev.test(&r, &flag, &st), 0);
  EXPECT_FALSE(flag);
  EXPECT_NE(r, nullptr);
  EXPECT_EQ(rec.trace(), "");
  EXPECT_EQ(adi3::grequest_complete(r), 0);
  EXPECT_EQ(s.dev.test(&r, &flag, &st), 0);
  EXPECT_TRUE(flag);
  EXPECT_EQ(r, nullptr);
  EXPECT_EQ(rec.trace(), "qf");
  EXPECT_EQ(st.bytes, 3u);
}

TEST(GreqSemantics, FreeThenCompleteRunsFreeInComplete) {
  Solo s;
  std::size_t base = s.dev.live_requests();
  Recorder rec;
  rec.free_rc = 0;
  Request* r = rec.start(s.dev);
  Request* copy = r;  // the user's copy stays valid until free_fn returns
  rec.phase = 1;
  EXPECT_EQ(s.dev.request_free(&r), 0);
  EXPECT_EQ(r, nullptr);
  EXPECT_EQ(rec.frees.load(), 0);
  rec.phase = 2;
  EXPECT_EQ(adi3::grequest_complete(copy), 0);
  EXPECT_EQ(rec.frees.load(), 1);
  EXPECT_EQ(rec.free_phase.load(), 2);  // ran inside grequest_complete
  EXPECT_EQ(rec.queries.load(), 0);     // nobody asks for the status
  s.dev.progress();
  EXPECT_EQ(s.dev.live_requests(), base);
}

TEST(GreqSemantics, CompleteThenFreeRunsFreeInRequestFree) {
  Solo s;
  std::size_t base = s.dev.live_requests();
  Recorder rec;
  rec.free_rc = adi3::error_code(adi3::ErrorClass::Other);
  Request* r = rec.start(s.dev);
  rec.phase = 1;
  EXPECT_EQ(adi3::grequest_complete(r), 0);
  EXPECT_EQ(rec.frees.load(), 0);
  rec.phase = 2;
  EXPECT_EQ(s.dev.request_free(&r), rec.free_rc);
  EXPECT_EQ(rec.frees.load(), 1);
  EXPECT_EQ(rec.free_phase.load(), 2);
  EXPECT_EQ(rec.queries.load(), 0);
  s.dev.progress();
  EXPECT_EQ(s.dev.live_requests(), base);
}

TEST(GreqSemantics, FreeThenCompleteReturnsFreeError) {
  Solo s;
  Recorder rec;
  rec.free_rc = adi3::error_code(adi3::ErrorClass::Io);
  Request* r = rec.start(s.dev);
  Request* copy = r;
  EXPECT_EQ(s.dev.request_free(&r), 0);
  EXPECT_EQ(adi3::grequest_complete(copy), rec.free_rc);
}

TEST(GreqSemantics, GetStatusQueriesOnlyOnceCompleteAndLeavesTheRequest) {
  Solo s;
  Recorder rec;
  Request* r = rec.start(s.dev);
  bool flag = true;
  Status st;
  EXPECT_EQ(s.dev.request_get_status(r, &flag, &st), 0);
  EXPECT_FALSE(flag);
  EXPECT_EQ(rec.queries.load(), 0);
  EXPECT_EQ(adi3::grequest_complete(r), 0);
  for (int i = 0; i < 3; ++i) {
    rec.elements = 10 + i;
    EXPECT_EQ(s.dev.request_get_status(r, &flag, &st), 0);
    EXPECT_TRUE(flag);
    EXPECT_EQ(st.bytes, static_cast<std::size_t>(10 + i));
  }
  EXPECT_EQ(rec.trace(), "qqq");
  EXPECT_EQ(s.dev.request_get_status(r, &flag, nullptr), 0);  // STATUS_IGNORE
  EXPECT_FALSE(rec.null_status.load());
  EXPECT_EQ(s.dev.wait(&r, &st), 0);
  EXPECT_EQ(rec.trace(), "qqqqqf");
}

TEST(GreqSemantics, StatusIgnoreStillGivesQueryAValidStatus) {
  Solo s;
  Recorder rec;
  Request* r = rec.start(s.dev);
  adi3::grequest_complete(r);
  EXPECT_EQ(s.dev.wait(&r, nullptr), 0);
  EXPECT_EQ(rec.queries.load(), 1);
  EXPECT_FALSE(rec.null_status.load());
}

int query_sets_error(void*, Status* s) {
  s->error = 1234;  // the standard forbids it; the call keeps its own value
  s->bytes = 5;
  return 0;
}

TEST(GreqSemantics, QueryCannotSetTheErrorField) {
  Solo s;
  Request* r = nullptr;
  ASSERT_EQ(adi3::grequest_start(s.dev, &query_sets_error, nullptr, nullptr, nullptr, &r), 0);
  adi3::grequest_complete(r);
  Status st;
  EXPECT_EQ(s.dev.wait(&r, &st), 0);
  EXPECT_EQ(st.error, 0);
  EXPECT_EQ(st.bytes, 5u);
}

TEST(GreqSemantics, NullCallbacksAreAllowed) {
  Solo s;
  Request* r = nullptr;
  ASSERT_EQ(adi3::grequest_start(s.dev, nullptr, nullptr, nullptr, nullptr, &r), 0);
  EXPECT_EQ(s.dev.cancel(r), 0);
  adi3::grequest_complete(r);
  Status st;
  EXPECT_EQ(s.dev.wait(&r, &st), 0);
  EXPECT_EQ(st.bytes, 0u);
}

TEST(GreqSemantics, CompletingTwiceIsAnError) {
  Solo s;
  Recorder rec;
  Request* r = rec.start(s.dev);
  EXPECT_EQ(adi3::grequest_complete(r), 0);
  int e = adi3::grequest_complete(r);
  EXPECT_EQ(adi3::error_class_of(e), adi3::ErrorClass::Request) << why(s.dev, e);
  EXPECT_EQ(s.dev.wait(&r, nullptr), 0);
  EXPECT_EQ(adi3::grequest_complete(nullptr), adi3::error_code(adi3::ErrorClass::Request));
}

TEST(GreqSemantics, CompleteRejectsOtherRequests) {
  adi3::run_thread_ranks(
      2,
      [](Device& dev) {
        if (dev.rank() != 0) return;
        Request* r = nullptr;
        ASSERT_EQ(dev.irecv(nullptr, 0, adi3::Datatype::byte(), adi3::kProcNull, 0, dev.world(), &r), 0);
        int e = adi3::grequest_complete(r);
        EXPECT_EQ(adi3::error_class_of(e), adi3::ErrorClass::Request);
        EXPECT_EQ(dev.wait(&r, nullptr), 0);
      },
      config(false));
}

TEST(GreqSemantics, CancelBeforeCompleteSaysIncomplete) {
  Solo s;
  Recorder rec;
  Request* r = rec.start(s.dev);
  EXPECT_EQ(s.dev.cancel(r), 0);
  EXPECT_EQ(rec.cancel_complete.load(), 0);
  // The operation honours the cancel: its query reports it, then it completes.
  rec.mark_cancelled = true;
  adi3::grequest_complete(r);
  Status st;
  EXPECT_EQ(s.dev.wait(&r, &st), 0);
  EXPECT_TRUE(st.cancelled);
  EXPECT_EQ(rec.trace(), "cqf");
}

TEST(GreqSemantics, CancelAfterCompleteSaysComplete) {
  Solo s;
  Recorder rec;
  rec.cancel_rc = adi3::error_code(adi3::ErrorClass::Other);
  Request* r = rec.start(s.dev);
  adi3::grequest_complete(r);
  EXPECT_EQ(s.dev.cancel(r), rec.cancel_rc);  // its code comes back
  EXPECT_EQ(rec.cancel_complete.load(), 1);
  Status st;
  EXPECT_EQ(s.dev.wait(&r, &st), 0);
  EXPECT_FALSE(st.cancelled);
}

TEST(GreqSemantics, StatusSetters) {
  Status st;
  EXPECT_EQ(adi3::status_set_elements(st, adi3::Datatype::byte(), 17), 0);
  EXPECT_EQ(st.bytes, 17u);
  EXPECT_EQ(adi3::status_set_elements_x(st, adi3::Datatype::byte(), int64_t{1} << 40), 0);
  EXPECT_EQ(st.bytes, std::size_t{1} << 40);
  EXPECT_EQ(adi3::status_set_elements(st, adi3::Datatype::byte(), -1), adi3::error_code(adi3::ErrorClass::Count));
  EXPECT_EQ(adi3::status_set_elements(st, nullptr, 1), adi3::error_code(adi3::ErrorClass::Type));
  EXPECT_EQ(st.bytes, std::size_t{1} << 40);  // failed calls leave it
  EXPECT_EQ(adi3::status_set_cancelled(st, true), 0);
  EXPECT_TRUE(st.cancelled);
  EXPECT_EQ(adi3::status_set_cancelled(st, false), 0);
  EXPECT_FALSE(st.cancelled);
}

// Generalized requests in the same wait/test calls as receives.
TEST(GreqSemantics, WaitanyAndWaitsomeMixWithReceives) {
  adi3::run_thread_ranks(
      2,
      [](Device& dev) {
        const adi3::Datatype* byte = adi3::Datatype::byte();
        adi3::Comm ctl = dev.world();
        ctl.context = 0x7100;
        if (dev.rank() == 1) {
          int v = 42;
          dev.recv(nullptr, 0, byte, 0, 0, ctl, nullptr);  // go
          dev.send(&v, sizeof v, byte, 0, 5, dev.world());
          dev.recv(nullptr, 0, byte, 0, 0, ctl, nullptr);  // go
          dev.send(&v, sizeof v, byte, 0, 6, dev.world());
          return;
        }
        Recorder rec;
        int got = 0;
        Request* reqs[3] = {nullptr, nullptr, nullptr};
        ASSERT_EQ(dev.irecv(&got, sizeof got, byte, 1, 5, dev.world(), &reqs[0]), 0);
        reqs[1] = rec.start(dev);
        // Only the generalized request can complete: waitany returns it.
        adi3::grequest_complete(reqs[1]);
        int index = -1;
        Status st;
        EXPECT_EQ(dev.waitany(2, reqs, &index, &st), 0);
        EXPECT_EQ(index, 1);
        EXPECT_EQ(st.tag, 11);
        EXPECT_EQ(rec.trace(), "qf");
        // Now only the receive is left.
        dev.send(nullptr, 0, byte, 1, 0, ctl);
        EXPECT_EQ(dev.waitany(2, reqs, &index, &st), 0);
        EXPECT_EQ(index, 0);
        EXPECT_EQ(st.tag, 5);
        EXPECT_EQ(got, 42);
        // waitsome: a receive and two generalized requests, all complete.
        Recorder a, b;
        ASSERT_EQ(dev.irecv(&got, sizeof got, byte, 1, 6, dev.world(), &reqs[0]), 0);
        reqs[1] = a.start(dev);
        reqs[2] = b.start(dev);
        adi3::grequest_complete(reqs[2]);
        dev.send(nullptr, 0, byte, 1, 0, ctl);
        int out = 0, idx[3];
        Status sts[3];
        int seen = 0;
        while (seen < 2) {
          EXPECT_EQ(dev.waitsome(3, reqs, &out, idx, sts), 0);
          for (int k = 0; k < out; ++k) {
            EXPECT_NE(idx[k], 1);  // a is not complete
            EXPECT_EQ(sts[k].tag, idx[k] == 0 ? 6 : 11);
          }
          seen += out;
        }
        EXPECT_EQ(reqs[0], nullptr);
        EXPECT_EQ(reqs[2], nullptr);
        adi3::grequest_complete(reqs[1]);
        EXPECT_EQ(dev.waitsome(3, reqs, &out, idx, sts), 0);
        EXPECT_EQ(out, 1);
        EXPECT_EQ(idx[0], 1);
        EXPECT_EQ(dev.waitsome(3, reqs, &out, idx, sts), 0);
        EXPECT_EQ(out, adi3::kUndefined);  // all null
      },
      config(false));
}

TEST(GreqSemantics, WaitallMixesWithPointToPoint) {
  adi3::run_thread_ranks(
      2,
      [](Device& dev) {
        const adi3::Datatype* byte = adi3::Datatype::byte();
        int peer = 1 - dev.rank();
        int out = dev.rank() + 10, in = -1;
        Recorder rec;
        Request* reqs[3];
        ASSERT_EQ(dev.irecv(&in, sizeof in, byte, peer, 8, dev.world(), &reqs[0]), 0);
        reqs[1] = rec.start(dev);
        ASSERT_EQ(dev.isend(&out, sizeof out, byte, peer, 8, dev.world(), adi3::SendMode::Standard, &reqs[2]), 0);
        std::thread completer([r = reqs[1]] {
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
          adi3::grequest_complete(r);
        });
        Status sts[3];
        EXPECT_EQ(dev.waitall(3, reqs, sts), 0);
        completer.join();
        EXPECT_EQ(in, peer + 10);
        EXPECT_EQ(sts[0].source, peer);
        EXPECT_EQ(sts[1].tag, 11);
        EXPECT_EQ(rec.trace(), "qf");
        for (Request* r : reqs) EXPECT_EQ(r, nullptr);
      },
      config(false));
}

TEST(GreqSemantics, TestanyAndTestallMixWithReceives) {
  adi3::run_thread_ranks(
      2,
      [](Device& dev) {
        const adi3::Datatype* byte = adi3::Datatype::byte();
        if (dev.rank() == 1) {
          int v = 9;
          dev.send(&v, sizeof v, byte, 0, 3, dev.world());
          return;
        }
        Recorder rec;
        int got = 0;
        Request* reqs[2] = {nullptr, nullptr};
        reqs[0] = rec.start(dev);
        ASSERT_EQ(dev.irecv(&got, sizeof got, byte, 1, 3, dev.world(), &reqs[1]), 0);
        bool flag = true;
        Status sts[2];
        EXPECT_EQ(dev.testall(2, reqs, &flag, sts), 0);
        EXPECT_FALSE(flag);
        EXPECT_EQ(rec.queries.load(), 0);  // not complete: no query
        adi3::grequest_complete(reqs[0]);
        while (!flag) EXPECT_EQ(dev.testall(2, reqs, &flag, sts), 0);
        EXPECT_EQ(sts[0].bytes, 3u);
        EXPECT_EQ(sts[1].bytes, sizeof got);
        EXPECT_EQ(rec.trace(), "qf");
        // testany over nulls only.
        int index = 0;
        EXPECT_EQ(dev.testany(2, reqs, &index, &flag, sts), 0);
        EXPECT_TRUE(flag);
        EXPECT_EQ(index, adi3::kUndefined);
      },
      config(false));
}

}  // namespace
