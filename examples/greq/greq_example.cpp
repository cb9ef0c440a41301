// Generalized requests, three ways, on N thread-ranks of the in-process
// channel:
//  1. the standard form: a helper thread checksums a buffer and calls
//     grequest_complete; the rank waits on the request like on any other;
//  2. a class with a poll function (a timer that is done once its deadline
//     passes): the progress engine finishes it while the rank waits for a
//     token going around the ring, with no thread of its own;
//  3. the nonblocking barrier built on the same machinery, overlapped with
//     local work.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <numeric>
#include <thread>
#include <vector>

#include "adi3/device.hpp"
#include "channels/inproc/inproc.hpp"
#include "greq/greq.hpp"
#include "greq/ibarrier.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// ---- 1: an operation carried out by a thread ----
struct Checksum {
  std::vector<unsigned char> data;
  unsigned long sum = 0;
  adi3::Request* req = nullptr;
  std::thread worker;

  static int query(void* extra, adi3::Status* s) {
    auto* c = static_cast<Checksum*>(extra);
    s->source = adi3::kProcNull;
    s->tag = 0;
    adi3::status_set_cancelled(*s, false);
    return adi3::status_set_elements(*s, adi3::Datatype::byte(), static_cast<int>(c->data.size()));
  }
  static int free(void* extra) {
    static_cast<Checksum*>(extra)->worker.join();
    return 0;
  }
  static int cancel(void*, int) { return 0; }  // a running checksum cannot be stopped
};

// ---- 2: an operation the progress engine polls ----
struct Timer {
  Clock::time_point deadline;
  adi3::Request* req = nullptr;
  int polls = 0;

  static int poll(void* extra, adi3::Status*) {
    auto* t = static_cast<Timer*>(extra);
    ++t->polls;
    if (t->req && Clock::now() >= t->deadline) {
      adi3::Request* r = t->req;
      t->req = nullptr;
      return adi3::grequest_complete(r);
    }
    return 0;
  }
};

}  // namespace

int main(int argc, char** argv) {
  int ranks = argc > 1 ? std::atoi(argv[1]) : 4;
  if (ranks < 2) ranks = 2;
  std::mutex out;
  adi3::GreqClass* timers = nullptr;
  adi3::grequest_class_create(nullptr, nullptr, nullptr, &Timer::poll, nullptr, &timers);

  adi3::run_thread_ranks(ranks, [&](adi3::Device& dev) {
    const adi3::Datatype* byte = adi3::Datatype::byte();
    int me = dev.rank(), n = dev.size();

    // 1. Standard generalized request completed by a helper thread.
    Checksum ck;
    ck.data.assign(1 << 20, static_cast<unsigned char>(me + 1));
    adi3::grequest_start(dev, &Checksum::query, &Checksum::free, &Checksum::cancel, &ck, &ck.req);
    adi3::Request* r = ck.req;
    ck.worker = std::thread([&ck] {
      ck.sum = std::accumulate(ck.data.begin(), ck.data.end(), 0ul);
      adi3::grequest_complete(ck.req);
    });
    adi3::Status st;
    int e = dev.wait(&r, &st);

    // 2. A 20 ms timer finishes while the rank waits for its neighbour.
    Timer t;
    t.deadline = Clock::now() + std::chrono::milliseconds(20);
    adi3::grequest_class_allocate(dev, timers, &t, &t.req);
    adi3::Request* timer = t.req;
    // A token goes around the ring once, starting late: every rank waits.
    int token = 0;
    if (me == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(40));
      dev.send(&token, sizeof token, byte, 1, 1, dev.world());
      dev.recv(&token, sizeof token, byte, n - 1, 1, dev.world(), nullptr);
    } else {
      dev.recv(&token, sizeof token, byte, me - 1, 1, dev.world(), nullptr);
      dev.send(&token, sizeof token, byte, (me + 1) % n, 1, dev.world());
    }
    bool done_before_wait = timer->complete();
    dev.wait(&timer, nullptr);

    // 3. Nonblocking barrier overlapped with local work.
    adi3::Request* bar = nullptr;
    adi3::ibarrier(dev, &bar);
    long work = 0, tests = 0;
    bool flag = false;
    while (!flag) {
      for (int i = 0; i < 1000; ++i) work += i % 7;
      dev.test(&bar, &flag, nullptr);
      ++tests;
    }

    std::lock_guard<std::mutex> g(out);
    std::printf(
        "rank %d: checksum %lu of %zu bytes (%s); timer done %s after %d polls; "
        "ibarrier done after %ld tests of overlapped work\n",
        me, ck.sum, st.bytes, e ? "error" : "ok", done_before_wait ? "during the exchange" : "in its wait", t.polls,
        tests);
  });
  adi3::grequest_class_free(&timers);
  std::printf("%d thread-ranks: generalized requests by thread, by poll function, and ibarrier\n", ranks);
  return 0;
}
