// Generalized requests across threads (the suite the TSan preset runs): the
// standard's example, how fast grequest_complete wakes a blocked wait, and
// races between completion, request_free and wait, with and without
// thread_multiple.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <thread>
#include <vector>

#include "greq/ibarrier.hpp"
#include "recorder.hpp"

namespace {

using namespace greq_test;
using Clock = std::chrono::steady_clock;

class GreqThreaded : public ::testing::TestWithParam<bool> {};  // thread_multiple

// MPI-3.1 example 12.1, in spirit: the operation (here, a sum) runs on a
// thread of its own, which calls grequest_complete when it is done.
struct SumJob {
  std::vector<double> data;
  double sum = 0;
  Request* req = nullptr;
  std::thread worker;
  int frees = 0;

  static int query(void* extra, Status* s) {
    auto* j = static_cast<SumJob*>(extra);
    adi3::status_set_elements(*s, adi3::Datatype::byte(), static_cast<int>(sizeof(double)));
    adi3::status_set_cancelled(*s, false);
    s->source = adi3::kProcNull;
    return j->sum > 0 ? 0 : adi3::error_code(adi3::ErrorClass::Other);
  }
  static int free(void* extra) {
    auto* j = static_cast<SumJob*>(extra);
    j->worker.join();  // the worker may still be returning from grequest_complete
    ++j->frees;
    return 0;
  }
  static int cancel(void*, int) { return 0; }  // too late to stop a sum
};

TEST_P(GreqThreaded, StandardExampleOperationOnAThread) {
  Solo s(GetParam());
  for (int round = 0; round < 20; ++round) {
    SumJob job;
    job.data.assign(100000, 0.5);
    ASSERT_EQ(adi3::grequest_start(s.dev, &SumJob::query, &SumJob::free, &SumJob::cancel, &job, &job.req), 0);
    Request* r = job.req;
    job.worker = std::thread([&job] {
      job.sum = std::accumulate(job.data.begin(), job.data.end(), 0.0);
      EXPECT_EQ(adi3::grequest_complete(job.req), 0);
    });
    Status st;
    ASSERT_EQ(s.dev.wait(&r, &st), 0);
    EXPECT_EQ(job.sum, 50000.0);
    EXPECT_EQ(st.bytes, sizeof(double));
    EXPECT_EQ(st.source, adi3::kProcNull);
    EXPECT_EQ(job.frees, 1);
  }
}

// A wait sleeping on the channel wakes as soon as another thread completes
// the request, not at the end of its sleep quantum (Config::sleep_us). The
// quantum is made long (200 ms) so that a wait nobody woke stands apart from
// a loaded machine's scheduling delay (a few ms at load 24).
constexpr int kLongQuantumUs = 200'000;

TEST_P(GreqThreaded, CompletionWakesABlockedWaitAtOnce) {
  Solo s(GetParam(), kLongQuantumUs);
  std::vector<double> us;
  for (int i = 0; i < 15; ++i) {
    Request* r = nullptr;
    ASSERT_EQ(adi3::grequest_start(s.dev, nullptr, nullptr, nullptr, nullptr, &r), 0);
    std::atomic<int64_t> t0{0};
    std::thread completer([r, &t0] {
      std::this_thread::sleep_for(std::chrono::milliseconds(15));  // the waiter is asleep by now
      t0.store(Clock::now().time_since_epoch().count());
      adi3::grequest_complete(r);
    });
    ASSERT_EQ(s.dev.wait(&r, nullptr), 0);
    int64_t t1 = Clock::now().time_since_epoch().count();
    completer.join();
    us.push_back(static_cast<double>(std::chrono::nanoseconds(t1 - t0.load()).count()) / 1000.0);
  }
  std::sort(us.begin(), us.end());
  double median = us[us.size() / 2], worst = us.back();
  std::printf("wake latency (%s): median %.1f us, max %.1f us, sleep quantum %d us\n",
              GetParam() ? "thread_multiple" : "single", median, worst, s.dev.config().sleep_us);
  RecordProperty("median_us", static_cast<int>(median));
  RecordProperty("max_us", static_cast<int>(worst));
  EXPECT_LT(median, kLongQuantumUs / 4.0);
}

// request_free and grequest_complete in either order, at the same time:
// free_fn runs exactly once, in whichever call came last, and the request
// goes back to the pool.
TEST_P(GreqThreaded, RequestFreeRacesComplete) {
  Solo s(GetParam());
  std::size_t base = s.dev.live_requests();
  for (int i = 0; i < 300; ++i) {
    Recorder rec;
    Request* r = rec.start(s.dev);
    Request* copy = r;
    std::atomic<bool> go{false};
    std::thread completer([&] {
      while (!go.load()) {
      }
      EXPECT_EQ(adi3::grequest_complete(copy), 0);
    });
    go = true;
    EXPECT_EQ(s.dev.request_free(&r), 0);
    completer.join();
    EXPECT_EQ(rec.frees.load(), 1);
    EXPECT_EQ(rec.queries.load(), 0);
  }
  s.dev.progress();  // without thread_multiple the last reference may wait for it
  EXPECT_EQ(s.dev.live_requests(), base);
}

TEST_P(GreqThreaded, WaitRacesComplete) {
  Solo s(GetParam());
  std::size_t base = s.dev.live_requests();
  for (int i = 0; i < 300; ++i) {
    Recorder rec;
    Request* r = rec.start(s.dev);
    Request* copy = r;
    std::thread completer([copy] { EXPECT_EQ(adi3::grequest_complete(copy), 0); });
    Status st;
    EXPECT_EQ(s.dev.wait(&r, &st), 0);
    EXPECT_EQ(st.bytes, 3u);
    completer.join();
    EXPECT_EQ(rec.trace(), "qf");
  }
  s.dev.progress();
  EXPECT_EQ(s.dev.live_requests(), base);
}

INSTANTIATE_TEST_SUITE_P(Greq, GreqThreaded, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return std::string(i.param ? "ThreadMultiple" : "Single");
                         });

// Thread-multiple: several threads of one rank wait on their own
// poll-driven requests while they all drive the same progress engine.
struct Countdown {
  std::atomic<Request*> self{nullptr};  // set after allocation; polls wait for it
  std::atomic<int> left{20};
  static int poll(void* e, Status*) {
    auto* c = static_cast<Countdown*>(e);
    Request* r = c->self.load(std::memory_order_acquire);
    if (r && c->left.fetch_sub(1) == 1) return adi3::grequest_complete(r);
    return 0;
  }
};

TEST(GreqThreadMultiple, ThreadsWaitOnPolledRequests) {
  Solo s(true);
  adi3::GreqClass* cls = nullptr;
  ASSERT_EQ(adi3::grequest_class_create(nullptr, nullptr, nullptr, &Countdown::poll, nullptr, &cls), 0);
  // The device's greq hub is made here, before other threads make progress.
  Countdown warm;
  Request* w = nullptr;
  ASSERT_EQ(adi3::grequest_class_allocate(s.dev, cls, &warm, &w), 0);
  warm.self.store(w);
  ASSERT_EQ(s.dev.wait(&w, nullptr), 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&s, cls] {
      for (int i = 0; i < 50; ++i) {
        Countdown cd;
        Request* r = nullptr;
        ASSERT_EQ(adi3::grequest_class_allocate(s.dev, cls, &cd, &r), 0);
        cd.self.store(r, std::memory_order_release);
        ASSERT_EQ(s.dev.wait(&r, nullptr), 0);
        EXPECT_LE(cd.left.load(), 0);
      }
    });
  }
  for (auto& t : threads) t.join();
  adi3::grequest_class_free(&cls);
}

// Thread-multiple ranks: one thread per rank runs nonblocking barriers while
// another exchanges messages on the same device.
TEST(GreqThreadMultiple, IbarrierBesideTraffic) {
  adi3::run_thread_ranks(
      3,
      [](Device& dev) {
        Request* warm = nullptr;  // make the hub before the second thread runs
        ASSERT_EQ(adi3::ibarrier(dev, &warm), 0);
        ASSERT_EQ(dev.wait(&warm, nullptr), 0);
        std::thread traffic([&dev] {
          const adi3::Datatype* byte = adi3::Datatype::byte();
          adi3::Comm c = dev.world();
          c.context = 0x7300;
          int n = dev.size(), me = dev.rank();
          for (int i = 0; i < 100; ++i) {
            int out = me * 1000 + i, in = -1;
            ASSERT_EQ(dev.sendrecv(&out, sizeof out, byte, (me + 1) % n, i, &in, sizeof in, byte, (me + n - 1) % n, i,
                                   c, nullptr),
                      0);
            EXPECT_EQ(in, ((me + n - 1) % n) * 1000 + i);
          }
        });
        for (int i = 0; i < 30; ++i) {
          Request* r = nullptr;
          ASSERT_EQ(adi3::ibarrier(dev, &r), 0);
          bool flag = false;
          while (!flag) ASSERT_EQ(dev.test(&r, &flag, nullptr), 0);
        }
        traffic.join();
      },
      config(true));
}

}  // namespace
