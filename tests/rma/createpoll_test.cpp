// Windows from create whose memory the channel reaches by cross-memory
// attach (shm): while the target polls inside a blocking call (here
// Device::barrier), an operation goes as a packet (route_op), through the
// emulation's short path when it takes it (rma/ops.cpp polls_short) and the
// general path otherwise. The two mix with the system-call path on one
// window and stay in order: every get after a flush sees the last put,
// whichever path each took, and the sums stay exact; fetch_and_op and
// compare_and_swap (the short path's quick_fetch_now, or cross-memory
// attach under the element's lock) return every old value exactly once.
// rma::polls_now answers only for targets reached by cross-memory attach.
// A get of 256 KiB or more takes cross-memory attach whatever the target does.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "rma/route.hpp"
#include "rma/window_state.hpp"
#include "tests/rma/rma_harness.hpp"

namespace {

using namespace rma_test;
using adi3::coll::Op;
using adi3::coll::OpKind;

class RmaCreatePoll : public core_test::CoreTest {};

void polling_target(Device& dev) {
  constexpr int kIters = 600;
  const int me = dev.rank();
  std::vector<int64_t> own(16, 0);  // the window's memory (heap: reached by cross-memory attach)
  Window* win = nullptr;
  int e = Window::create(dev, own.data(), 16 * sizeof(int64_t), sizeof(int64_t), {}, win_comm(dev), &win);
  ASSERT_EQ(e, 0) << why(dev, e);
  void* base = nullptr;
  Window* alloc = nullptr;
  e = Window::allocate(dev, 64, 8, {}, win_comm(dev), &base, &alloc);
  ASSERT_EQ(e, 0) << why(dev, e);
  adi3::rma::WindowState& st = win->state();
  // The rule is the channel's verdict on memory it does not map: never on
  // mapped memory (allocate), nor on a window the channel cannot reach.
  EXPECT_EQ(adi3::rma::polls_now(alloc->state(), 1 - me), -1);
  EXPECT_EQ(adi3::rma::polls_now(st, adi3::kProcNull), -1);
  if (!st.native_usable) {
    EXPECT_EQ(adi3::rma::polls_now(st, 1 - me), -1);
  }
  const adi3::RemoteRegion* r1 = st.native_usable ? st.native->peers[1].mem_r : nullptr;
  const bool cma = st.native_usable && !st.native->peers[1].mem && r1 && (r1->ops & adi3::kOsPut);
  const auto* i64 = dt(adi3::Builtin::kInt64);
  const auto* i32 = dt(adi3::Builtin::kInt32);
  const Op sum(OpKind::Sum);
  ASSERT_EQ(dev.barrier(), 0);
  if (me == 0) {
    if (cma) {
      EXPECT_NE(adi3::rma::polls_now(st, 1), -1);
    }
    ASSERT_EQ(win->lock_all(0), 0);
    const int64_t one = 1;
    for (int i = 0; i < kIters; ++i) {
      // An 8-byte put (the short path's), or the same bytes as two int32
      // (types differ: the general path), then a get of them after a flush.
      const int64_t v = 1000 + i;
      if (i % 3 == 2) {
        int32_t halves[2];
        std::memcpy(halves, &v, sizeof v);
        ASSERT_EQ(win->put(halves, 2, i32, 1, 0, 1, i64), 0);
      } else {
        ASSERT_EQ(win->put(&v, 1, i64, 1, 0, 1, i64), 0);
      }
      ASSERT_EQ(win->accumulate(&one, 1, i64, 1, 1, 1, i64, sum), 0);
      ASSERT_EQ(win->flush(1), 0);
      int64_t got = -1;
      if (i % 2) {
        ASSERT_EQ(win->get(&got, 1, i64, 1, 0, 1, i64), 0);
      } else {
        int32_t halves[2] = {-1, -1};
        ASSERT_EQ(win->get(halves, 2, i32, 1, 0, 1, i64), 0);
        ASSERT_EQ(win->flush(1), 0);
        std::memcpy(&got, halves, sizeof got);
      }
      ASSERT_EQ(win->flush(1), 0);
      ASSERT_EQ(got, v) << "iteration " << i << ": a get after the flush missed the put before it";
      // Slot 2 counts up by fetch_and_op, slot 3 by compare_and_swap: each
      // old value is the iteration's.
      int64_t old = -1;
      ASSERT_EQ(win->fetch_and_op(&one, &old, i64, 1, 2, sum), 0);
      ASSERT_EQ(win->flush(1), 0);
      ASSERT_EQ(old, i) << "iteration " << i << ": fetch_and_op";
      const int64_t expect = i, next = i + 1;
      old = -1;
      ASSERT_EQ(win->compare_and_swap(&next, &expect, &old, i64, 1, 3), 0);
      ASSERT_EQ(win->flush(1), 0);
      ASSERT_EQ(old, i) << "iteration " << i << ": compare_and_swap";
    }
    ASSERT_EQ(win->unlock_all(), 0);
    EXPECT_EQ(st.native_ops + st.emulated_ops, 5u * kIters);
    // Rank 1 waits in a blocking call throughout (InboxHeader::calls): its
    // memory is served by packets at least while it is awake.
    if (cma) {
      EXPECT_GT(st.emulated_ops, 0u);
    }
  }
  ASSERT_EQ(dev.barrier(), 0);  // rank 1 polls in here throughout
  if (me == 1) {
    EXPECT_EQ(own[0], 1000 + kIters - 1);
    EXPECT_EQ(own[1], kIters);
    EXPECT_EQ(own[2], kIters);
    EXPECT_EQ(own[3], kIters);
  }
  ASSERT_EQ(Window::free(&alloc), 0);
  ASSERT_EQ(Window::free(&win), 0);
}

// A get of 256 KiB or more takes cross-memory attach even while the target
// polls (route_op: one kernel copy beats the reply streamed through the
// ring); a smaller one may go either way. Both read the target's bytes.
void large_get(Device& dev) {
  constexpr std::size_t kBig = 256 * 1024, kSmall = kBig - 8;
  const int me = dev.rank();
  std::vector<uint8_t> own(kBig);
  for (std::size_t i = 0; i < kBig; ++i) own[i] = static_cast<uint8_t>(i * 7 + me);
  Window* win = nullptr;
  int e = Window::create(dev, own.data(), kBig, 1, {}, win_comm(dev), &win);
  ASSERT_EQ(e, 0) << why(dev, e);
  adi3::rma::WindowState& st = win->state();
  const adi3::RemoteRegion* r1 = st.native_usable ? st.native->peers[1].mem_r : nullptr;
  // Native under lock_all unless passive target is forced to the emulation.
  const bool cma = st.native_usable && !st.native->peers[1].mem && r1 && (r1->ops & adi3::kOsGet) &&
                   (st.native->passive || adi3::rma::queue_lock_native(st, 1));
  const auto* u8 = dt(adi3::Builtin::kUint8);
  ASSERT_EQ(dev.barrier(), 0);
  if (me == 0) {
    ASSERT_EQ(win->lock_all(0), 0);
    for (std::size_t len : {kSmall, kBig}) {
      std::vector<uint8_t> got(len, 0);
      const uint64_t native = st.native_ops;
      ASSERT_EQ(win->get(got.data(), static_cast<int64_t>(len), u8, 1, 0, static_cast<int64_t>(len), u8), 0);
      ASSERT_EQ(win->flush(1), 0);
      if (cma && len >= kBig) {
        EXPECT_EQ(st.native_ops, native + 1) << "a get of " << len << " bytes did not take cross-memory attach";
      }
      for (std::size_t i = 0; i < len; ++i) ASSERT_EQ(got[i], static_cast<uint8_t>(i * 7 + 1)) << "byte " << i;
    }
    ASSERT_EQ(win->unlock_all(), 0);
  }
  ASSERT_EQ(dev.barrier(), 0);  // rank 1 polls in here throughout
  ASSERT_EQ(Window::free(&win), 0);
}

// The state letter of process pid (/proc/PID/stat's third field; 'T':
// stopped), '?' when unreadable.
char proc_state(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(f, line);
  const std::size_t close = line.rfind(')');
  return close == std::string::npos || close + 2 >= line.size() ? '?' : line[close + 2];
}

// A target counted as polling in a blocking call (Device::barrier) that
// does not run (stopped here, as a loaded host deschedules it): the answer
// to a packet put comes late, and the next operation to it takes
// cross-memory attach (rma::answered), which needs nobody. Rank 0 stops
// rank 1 (a process of its own) until a put after the stop went as a
// packet (a target asleep in the barrier gets copies: the stream rule's
// waking packet then leaves it polling), then lets it run again after
// kStop while its flush waits.
void late_answer(Device& dev) {
  constexpr auto kStop = std::chrono::milliseconds(60);
  const int me = dev.rank();
  std::vector<int64_t> own(4, 0);
  own[0] = static_cast<int64_t>(getpid());
  Window* win = nullptr;
  int e = Window::create(dev, own.data(), 4 * sizeof(int64_t), sizeof(int64_t), {}, win_comm(dev), &win);
  ASSERT_EQ(e, 0) << why(dev, e);
  adi3::rma::WindowState& st = win->state();
  const adi3::RemoteRegion* r1 = st.native_usable ? st.native->peers[1].mem_r : nullptr;
  const bool cma = st.native_usable && !st.native->peers[1].mem && r1 && (r1->ops & adi3::kOsPut) &&
                   (st.native->passive || adi3::rma::queue_lock_native(st, 1));
  const auto* i64 = dt(adi3::Builtin::kInt64);
  ASSERT_EQ(dev.barrier(), 0);
  if (me == 0) {
    int64_t last = 0;
    ASSERT_EQ(win->lock_all(0), 0);
    int64_t pid = 0;
    ASSERT_EQ(win->get(&pid, 1, i64, 1, 0, 1, i64), 0);
    ASSERT_EQ(win->flush(1), 0);
    if (cma && pid != static_cast<int64_t>(getpid())) {
      const auto target = static_cast<pid_t>(pid);
      bool late = false;
      for (int attempt = 0; attempt < 200 && !late; ++attempt) {
        last = 2 * attempt + 1;
        ASSERT_EQ(win->put(&last, 1, i64, 1, 1, 1, i64), 0);  // a packet wakes it, or a copy
        ASSERT_EQ(win->flush(1), 0);
        ASSERT_EQ(kill(target, SIGSTOP), 0);
        for (int k = 0; k < 5000 && proc_state(target) != 'T'; ++k)
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        ASSERT_EQ(proc_state(target), 'T') << "rank 1 did not stop";
        const uint64_t emulated = st.emulated_ops;
        last = 2 * attempt + 2;
        ASSERT_EQ(win->put(&last, 1, i64, 1, 1, 1, i64), 0);
        late = st.emulated_ops == emulated + 1;
        std::thread cont([target, late, kStop] {
          if (late) std::this_thread::sleep_for(kStop);
          kill(target, SIGCONT);
        });
        const int f = win->flush(1);
        cont.join();
        ASSERT_EQ(f, 0);
      }
      ASSERT_TRUE(late) << "no put to the stopped target went as a packet";
      const uint64_t native = st.native_ops;
      last += 1;
      ASSERT_EQ(win->put(&last, 1, i64, 1, 1, 1, i64), 0);
      ASSERT_EQ(win->flush(1), 0);
      EXPECT_EQ(st.native_ops, native + 1) << "the put after a late answer did not take cross-memory attach";
    }
    int64_t got = -1;
    ASSERT_EQ(win->get(&got, 1, i64, 1, 1, 1, i64), 0);
    ASSERT_EQ(win->flush(1), 0);
    EXPECT_EQ(got, last) << "a get after the flush missed the last put";
    ASSERT_EQ(win->unlock_all(), 0);
  }
  ASSERT_EQ(dev.barrier(), 0);  // rank 1 polls in here throughout
  ASSERT_EQ(Window::free(&win), 0);
}

TEST_P(RmaCreatePoll, PollingTargetNp2) { run(2, polling_target); }
TEST_P(RmaCreatePoll, LateAnswerNp2) { run(2, late_answer); }
TEST_P(RmaCreatePoll, LargeGetNp2) { run(2, large_get); }

INSTANTIATE_TEST_SUITE_P(Rma, RmaCreatePoll, ::testing::ValuesIn(core_test::setups()), core_test::SetupName());

}  // namespace
