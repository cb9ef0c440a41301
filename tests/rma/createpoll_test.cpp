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
// A put or get of 16 KiB or more takes cross-memory attach whatever the target does.
// Atomics from several ranks by every path at once stay exact (MixedAtomicsExact).
#include <signal.h>
#include <unistd.h>

#include <atomic>
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

adi3::Comm ctl(Device& dev) { return core_test::ctl_comm(dev, 0x6500); }

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

// A put or get of 16 KiB or more takes cross-memory attach even while the
// target polls (route_op, rma::bulk_by_cma: one kernel copy beats two
// through the ring); a smaller one may go either way. Every put lands and
// every get reads the target's bytes, by the lean path (predefined type on
// both sides) and the general one (a contiguous derived origin type).
void large_copy(Device& dev) {
  constexpr std::size_t kBulk = 16 * 1024, kBytes = 256 * 1024;
  const int me = dev.rank();
  std::vector<uint8_t> own(kBytes);
  for (std::size_t i = 0; i < kBytes; ++i) own[i] = static_cast<uint8_t>(i * 7 + me);
  Window* win = nullptr;
  int e = Window::create(dev, own.data(), kBytes, 1, {}, win_comm(dev), &win);
  ASSERT_EQ(e, 0) << why(dev, e);
  adi3::rma::WindowState& st = win->state();
  const adi3::RemoteRegion* r1 = st.native_usable ? st.native->peers[1].mem_r : nullptr;
  // Native under lock_all unless passive target is forced to the emulation.
  const bool cma = st.native_usable && !st.native->peers[1].mem && r1 && (r1->ops & adi3::kOsGet) &&
                   (st.native->passive || adi3::rma::queue_lock_native(st, 1));
  const auto* u8 = dt(adi3::Builtin::kUint8);
  adi3::Datatype* two = nullptr;
  ASSERT_EQ(adi3::type_contiguous(2, u8, &two), adi3::ErrorClass::Success);
  const Type pair(two);  // two bytes: the general path
  ASSERT_EQ(dev.barrier(), 0);
  if (me == 0) {
    ASSERT_EQ(win->lock_all(0), 0);
    int round = 0;
    for (std::size_t len : {kBulk - 8, kBulk, kBytes}) {
      for (const bool derived : {false, true}) {
        const auto n = static_cast<int64_t>(len);
        const uint8_t salt = static_cast<uint8_t>(++round * 31);
        std::vector<uint8_t> out(len), got(len, 0);
        for (std::size_t i = 0; i < len; ++i) out[i] = static_cast<uint8_t>(i * 13 + salt);
        const uint64_t native = st.native_ops;
        if (derived) {
          ASSERT_EQ(win->put(out.data(), n / 2, pair, 1, 0, n, u8), 0);
        } else {
          ASSERT_EQ(win->put(out.data(), n, u8, 1, 0, n, u8), 0);
        }
        ASSERT_EQ(win->flush(1), 0);
        if (derived) {
          ASSERT_EQ(win->get(got.data(), n / 2, pair, 1, 0, n, u8), 0);
        } else {
          ASSERT_EQ(win->get(got.data(), n, u8, 1, 0, n, u8), 0);
        }
        ASSERT_EQ(win->flush(1), 0);
        if (cma && len >= kBulk) {
          EXPECT_EQ(st.native_ops, native + 2)
              << "a put and a get of " << len << " bytes did not both take cross-memory attach";
        }
        for (std::size_t i = 0; i < len; ++i) ASSERT_EQ(got[i], out[i]) << len << " bytes, byte " << i;
      }
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

// A window from create over own (8 int64, heap: reached by cross-memory
// attach) whose rank 2 forces its atomics to the emulation.
Window* mixed_window(Device& dev, std::vector<int64_t>& own, int disp_unit) {
  adi3::WinInfo info;
  if (dev.rank() == 2 && !info.set("adi3_emulate_ops", "fetch_and_op,compare_and_swap")) return nullptr;
  own.assign(8, 0);
  Window* win = nullptr;
  const int e = Window::create(dev, own.data(), 8 * sizeof(int64_t), disp_unit, info, win_comm(dev), &win);
  EXPECT_EQ(e, 0) << why(dev, e);
  return e ? nullptr : win;
}

// fetch_and_op and compare_and_swap from every other rank into the same
// elements of rank 0's heap window, by every path at once: rank 0 first
// computes outside the library (rank 1 reaches it by cross-memory attach:
// the lean path, rma/native_cma.hpp; rank 2 forces its atomics to the
// emulation, applied by rank 0's agent), then polls in a barrier (rank 1's
// go as packets). int64 and int32 counters count up exactly, every fetched
// value comes once, and a compare-and-swap increment loop loses nothing.
void mixed_atomics(Device& dev) {
  constexpr int kIters = 120;
  const int n = dev.size(), me = dev.rank();
  // [1] int64 sum, [2] two int32 sums, [3] cas counter, [4] halfway count, [4 + r] origin r's own slot
  std::vector<int64_t> own;
  Window* win = mixed_window(dev, own, 1);
  ASSERT_NE(win, nullptr);
  adi3::rma::WindowState& st = win->state();
  const auto* i64 = dt(adi3::Builtin::kInt64);
  const auto* i32 = dt(adi3::Builtin::kInt32);
  const Op sum(OpKind::Sum), no_op(OpKind::NoOp);
  ASSERT_EQ(dev.barrier(), 0);
  int64_t mine = 0, mine32 = 0;
  if (me == 0) {
    // Computes until every origin is halfway (or 20 s: the checks then say what is missing).
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    std::atomic_ref<int64_t> half(own[4]);
    while (half.load(std::memory_order_acquire) < n - 1 && std::chrono::steady_clock::now() < until) {
    }
  } else {
    const int64_t one = 1;
    const int32_t one32 = 1;
    std::vector<int64_t> seen(kIters);
    std::vector<int32_t> seen32(kIters);
    ASSERT_EQ(win->lock_all(0), 0);
    for (int i = 0; i < kIters; ++i) {
      const auto k = static_cast<std::size_t>(i);
      ASSERT_EQ(win->fetch_and_op(&one, &seen[k], i64, 0, 8, sum), 0);
      ASSERT_EQ(win->fetch_and_op(&one32, &seen32[k], i32, 0, 16 + 4 * (i % 2), sum), 0);
      ASSERT_EQ(win->flush(0), 0);
      int64_t cur = -1, old = -1;
      ASSERT_EQ(win->fetch_and_op(nullptr, &cur, i64, 0, 24, no_op), 0);
      ASSERT_EQ(win->flush(0), 0);
      for (int tries = 0;; ++tries) {
        ASSERT_LT(tries, 1000000) << "compare_and_swap never succeeded";
        const int64_t next = cur + 1;
        ASSERT_EQ(win->compare_and_swap(&next, &cur, &old, i64, 0, 24), 0);
        ASSERT_EQ(win->flush(0), 0);
        if (old == cur) break;
        cur = old;
      }
      // A put then a get of this origin's own slot after a flush (the lean
      // copies while the target computes, packets while it polls).
      const int64_t v = 1000 * me + i;
      int64_t got = -1;
      ASSERT_EQ(win->put(&v, 1, i64, 0, 32 + 8 * me, 1, i64), 0);
      ASSERT_EQ(win->flush(0), 0);
      ASSERT_EQ(win->get(&got, 1, i64, 0, 32 + 8 * me, 1, i64), 0);
      ASSERT_EQ(win->flush(0), 0);
      ASSERT_EQ(got, v) << "iteration " << i << ": a get after the flush missed the put before it";
      if (i == kIters / 2) {
        int64_t ignored = 0;
        ASSERT_EQ(win->fetch_and_op(&one, &ignored, i64, 0, 32, sum), 0);
        ASSERT_EQ(win->flush(0), 0);
      }
    }
    ASSERT_EQ(win->unlock_all(), 0);
    for (int64_t x : seen) mine += x;
    for (int32_t x : seen32) mine32 += x;
    // kIters * 6 + 1 operations, plus the compare-and-swap retries: all counted.
    EXPECT_GE(st.native_ops + st.emulated_ops, 6u * kIters + 1);

    const adi3::RemoteRegion* r0 = st.native_usable ? st.native->peers[0].mem_r : nullptr;
    const bool cma = st.native_usable && !st.native->peers[0].mem && r0 &&
                     (r0->ops & (adi3::kOsGet | adi3::kOsPut)) == (adi3::kOsGet | adi3::kOsPut) && st.native->passive &&
                     st.native->cma_acc;
    if (me == 1 && cma) {
      EXPECT_GT(st.native_ops, 0u) << "no atomic reached the computing target by cross-memory attach";
    }
  }
  ASSERT_EQ(dev.barrier(), 0);  // rank 0 polls in here: the origins' last atomics go as packets
  const int64_t k = int64_t{n - 1} * kIters;
  const int64_t total = core_test::sum_at_root(dev, ctl(dev), mine, 3);
  const int64_t total32 = core_test::sum_at_root(dev, ctl(dev), mine32, 4);
  if (me == 0) {
    int32_t halves[2];
    std::memcpy(halves, &own[2], sizeof halves);
    EXPECT_EQ(own[1], k);
    EXPECT_EQ(int64_t{halves[0]} + halves[1], k);
    EXPECT_EQ(own[3], k) << "a compare_and_swap increment was lost";
    EXPECT_EQ(own[4], n - 1);
    for (int r = 1; r < n; ++r) EXPECT_EQ(own[static_cast<std::size_t>(4 + r)], 1000 * r + kIters - 1);
    EXPECT_EQ(total, k * (k - 1) / 2) << "a fetch_and_op value was seen twice or never";
    // Two int32 counters, each counting up from 0 over its own k / 2 adds
    // (n - 1 origins, kIters even): every value once on each.
    const int64_t h = k / 2;
    EXPECT_EQ(total32, h * (h - 1));
  }
  ASSERT_EQ(Window::free(&win), 0);
}

// Lock epochs of one operation each (rmabench's lock rows: MPI_Win_lock,
// the operation, MPI_Win_unlock) into rank 0's heap window while it polls
// in a barrier: the unlock of an epoch whose operation fetches (or asked
// for the Ack) sends no packet of its own (rma/passive.cpp unlock_target).
// Every other rank does fetch_and_op, compare_and_swap increments, and a
// put then a get of its own slot, under shared and exclusive locks; rank 2
// forces its atomics to the emulation. Counts stay exact, every fetched
// value comes once, each get sees the put of the epoch before.
void lock_epochs(Device& dev) {
  constexpr int kIters = 150;
  const int n = dev.size(), me = dev.rank();
  // [0] fetch_and_op sum, [1] compare_and_swap counter, [2 + r] origin r's slot
  std::vector<int64_t> own;
  Window* win = mixed_window(dev, own, sizeof(int64_t));
  ASSERT_NE(win, nullptr);
  const auto* i64 = dt(adi3::Builtin::kInt64);
  const Op sum(OpKind::Sum);
  ASSERT_EQ(dev.barrier(), 0);
  int64_t mine = 0;
  if (me != 0) {
    const int64_t one = 1;
    for (int i = 0; i < kIters; ++i) {
      const auto kind = i % 3 == 0 ? adi3::LockType::Exclusive : adi3::LockType::Shared;
      int64_t old = -1;
      ASSERT_EQ(win->lock(kind, 0, 0), 0);
      ASSERT_EQ(win->fetch_and_op(&one, &old, i64, 0, 0, sum), 0);
      ASSERT_EQ(win->unlock(0), 0);
      ASSERT_GE(old, 0) << "iteration " << i << ": the unlock returned before the fetched value";
      mine += old;
      int64_t cur = 0;
      for (int tries = 0;; ++tries) {
        ASSERT_LT(tries, 1000000) << "compare_and_swap never succeeded";
        const int64_t next = cur + 1;
        old = -1;
        ASSERT_EQ(win->lock(kind, 0, 0), 0);
        ASSERT_EQ(win->compare_and_swap(&next, &cur, &old, i64, 0, 1), 0);
        ASSERT_EQ(win->unlock(0), 0);
        ASSERT_GE(old, 0);
        if (old == cur) break;
        cur = old;
      }
      const int64_t v = 1000 * me + i;
      int64_t got = -1;
      ASSERT_EQ(win->lock(kind, 0, 0), 0);
      ASSERT_EQ(win->put(&v, 1, i64, 0, 2 + me, 1, i64), 0);
      ASSERT_EQ(win->unlock(0), 0);
      ASSERT_EQ(win->lock(adi3::LockType::Shared, 0, 0), 0);
      ASSERT_EQ(win->get(&got, 1, i64, 0, 2 + me, 1, i64), 0);
      ASSERT_EQ(win->unlock(0), 0);
      ASSERT_EQ(got, v) << "iteration " << i << ": a get missed the put of the epoch before";
    }
    // Rank 0 waits in a blocking call throughout: served by packets at
    // least while it is awake, when cross-memory attach reaches it.
    const adi3::rma::WindowState& st = win->state();
    const adi3::RemoteRegion* r0 = st.native_usable ? st.native->peers[0].mem_r : nullptr;
    if (me == 1 && r0 && !st.native->peers[0].mem && (r0->ops & adi3::kOsPut) && st.native->passive) {
      EXPECT_GT(st.emulated_ops, 0u);
    }
  }
  ASSERT_EQ(dev.barrier(), 0);  // rank 0 polls in here while the others work
  const int64_t k = int64_t{n - 1} * kIters;
  const int64_t total = core_test::sum_at_root(dev, ctl(dev), mine, 5);
  if (me == 0) {
    EXPECT_EQ(own[0], k);
    EXPECT_EQ(own[1], k) << "a compare_and_swap increment was lost";
    EXPECT_EQ(total, k * (k - 1) / 2) << "a fetch_and_op value was seen twice or never";
    for (int r = 1; r < n; ++r) EXPECT_EQ(own[static_cast<std::size_t>(2 + r)], 1000 * r + kIters - 1);
  }
  ASSERT_EQ(Window::free(&win), 0);
}

TEST_P(RmaCreatePoll, PollingTargetNp2) { run(2, polling_target); }
TEST_P(RmaCreatePoll, LateAnswerNp2) { run(2, late_answer); }
TEST_P(RmaCreatePoll, LargeCopyNp2) { run(2, large_copy); }
TEST_P(RmaCreatePoll, MixedAtomicsExactNp3) { run(3, mixed_atomics); }
TEST_P(RmaCreatePoll, LockEpochsNp2) { run(2, lock_epochs); }
TEST_P(RmaCreatePoll, LockEpochsNp3) { run(3, lock_epochs); }

INSTANTIATE_TEST_SUITE_P(Rma, RmaCreatePoll, ::testing::ValuesIn(core_test::setups()), core_test::SetupName());

}  // namespace
