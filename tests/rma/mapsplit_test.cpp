// Large puts and gets on windows in shared memory (allocate, shared
// contiguous and noncontiguous) split between origin and target (the shm
// channel's cma_split.cpp: the origin memcpy's one part while the target,
// asked through its inbox, copies the other by cross-memory attach). Every
// byte arrives, at odd sizes and offsets, in both directions: while the
// target polls in a barrier (it takes the asks), and while it computes
// without a call (the origin copies alone and the operations complete
// without it: the target learns the last one from its own memory).
// Over thread-ranks (inproc) the windows are emulated: the same bytes.
#include <atomic>
#include <chrono>
#include <cstring>

#include "rma/window_state.hpp"
#include "tests/rma/rma_harness.hpp"

namespace {

using namespace rma_test;

class RmaMapSplit : public core_test::CoreTest {};

constexpr std::size_t kPart = (2 << 20) + 3 * 4096;  // bytes per rank
// Sizes around 1 MiB (a threshold ADI3_SHM_WIN_SPLIT_MAPPED_MIN may set), odd
// ones, and offsets off a page.
constexpr std::size_t kSizes[] = {(1 << 20) - 8, 1 << 20, (1 << 20) + 4096 + 13, 2 << 20};
constexpr std::size_t kOffsets[] = {0, 8, 4096 + 24};

enum class Kind { Allocate, SharedContig, SharedNoncontig };

uint8_t pattern(std::size_t i, unsigned salt) { return static_cast<uint8_t>(i * 13 + salt * 31 + (i >> 12)); }

Window* make(Device& dev, Kind k, uint8_t** mem) {
  Window* win = nullptr;
  void* base = nullptr;
  adi3::WinInfo info;
  int e;
  if (k == Kind::Allocate) {
    e = Window::allocate(dev, static_cast<std::ptrdiff_t>(kPart), 1, info, win_comm(dev), &base, &win);
  } else {
    info.alloc_shared_noncontig = k == Kind::SharedNoncontig;
    e = Window::allocate_shared(dev, static_cast<std::ptrdiff_t>(kPart), 1, info, win_comm(dev), &base, &win);
    // No shared memory without the channel's mapped part (forced emulation,
    // thread-ranks): refused as MPI says (native_test covers that).
    if (adi3::error_class_of(e) == adi3::ErrorClass::RmaShared) return nullptr;
  }
  EXPECT_EQ(e, 0) << why(dev, e);
  *mem = static_cast<uint8_t*>(base);
  return win;
}

// Rank 0 puts to and gets from every other rank, each size at each offset,
// and checks what comes back; last it puts `done` at the window's last
// byte. Returns the salt of the last round.
unsigned origin_rounds(Device& dev, Window* win, uint8_t done) {
  const auto* u8 = dt(adi3::Builtin::kUint8);
  std::vector<uint8_t> out(kPart), got(kPart);
  unsigned salt = 0;
  EXPECT_EQ(win->lock_all(0), 0);
  for (int t = 1; t < dev.size(); ++t) {
    for (std::size_t len : kSizes) {
      for (std::size_t off : kOffsets) {
        if (off + len > kPart - 1) continue;
        ++salt;
        for (std::size_t i = 0; i < len; ++i) out[i] = pattern(i, salt);
        std::memset(got.data(), 0, len);
        const auto n = static_cast<int64_t>(len);
        const auto d = static_cast<std::ptrdiff_t>(off);
        EXPECT_EQ(win->put(out.data(), n, u8, t, d, n, u8), 0);
        EXPECT_EQ(win->flush(t), 0);
        EXPECT_EQ(win->get(got.data(), n, u8, t, d, n, u8), 0);
        EXPECT_EQ(win->flush(t), 0);
        for (std::size_t i = 0; i < len; ++i) {
          if (got[i] != out[i]) {
            ADD_FAILURE() << "rank " << t << ", " << len << " bytes at " << off << ": byte " << i << " is "
                          << int{got[i]} << ", want " << int{out[i]};
            break;
          }
        }
      }
    }
    // The target checks the last round in its own memory.
    EXPECT_EQ(win->put(&done, 1, u8, t, static_cast<std::ptrdiff_t>(kPart - 1), 1, u8), 0);
    EXPECT_EQ(win->flush(t), 0);
  }
  EXPECT_EQ(win->unlock_all(), 0);
  return salt;
}

// The bytes of the last round to rank me, in its own memory: the last size
// that fits at the last offset, with that round's salt.
void check_own(const uint8_t* mem, int me) {
  unsigned per_target = 0;
  std::size_t len = 0, off = 0;
  for (std::size_t l : kSizes) {
    for (std::size_t o : kOffsets) {
      if (o + l > kPart - 1) continue;
      ++per_target;
      len = l;
      off = o;
    }
  }
  const unsigned salt = per_target * static_cast<unsigned>(me);
  for (std::size_t i = 0; i < len; ++i) {
    if (mem[off + i] != pattern(i, salt)) {
      ADD_FAILURE() << "rank " << me << ": byte " << i << " of the last put is " << int{mem[off + i]} << ", want "
                    << int{pattern(i, salt)};
      return;
    }
  }
}

// Targets poll in the barrier: they take the origin's asks.
void polling(Device& dev, Kind k) {
  uint8_t* mem = nullptr;
  Window* win = make(dev, k, &mem);
  if (!win && k != Kind::Allocate) GTEST_SKIP() << "no shared memory here";
  ASSERT_NE(win, nullptr);
  std::memset(mem, 0, kPart);
  ASSERT_EQ(dev.barrier(), 0);
  if (dev.rank() == 0) origin_rounds(dev, win, 1);
  ASSERT_EQ(dev.barrier(), 0);
  if (dev.rank() != 0) {
    EXPECT_EQ(mem[kPart - 1], 1);
    check_own(mem, dev.rank());
  }
  ASSERT_EQ(dev.barrier(), 0);
  ASSERT_EQ(Window::free(&win), 0);
}

// Targets compute (no call) until the origin's last put lands in their
// memory: the large copies never wait for them. Over the emulation (no
// progress without the target) they poll instead.
void computing(Device& dev, Kind k) {
  uint8_t* mem = nullptr;
  Window* win = make(dev, k, &mem);
  if (!win && k != Kind::Allocate) GTEST_SKIP() << "no shared memory here";
  ASSERT_NE(win, nullptr);
  std::memset(mem, 0, kPart);
  const bool progress = win->passive_progress();
  ASSERT_EQ(dev.barrier(), 0);
  if (dev.rank() == 0) {
    origin_rounds(dev, win, 2);
  } else {
    std::atomic_ref<uint8_t> last(mem[kPart - 1]);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (last.load(std::memory_order_acquire) != 2 && std::chrono::steady_clock::now() < until) {
      if (!progress) dev.progress();
    }
    EXPECT_EQ(last.load(std::memory_order_acquire), 2) << "the origin's operations waited for a computing target";
    check_own(mem, dev.rank());
  }
  ASSERT_EQ(dev.barrier(), 0);
  ASSERT_EQ(Window::free(&win), 0);
}

TEST_P(RmaMapSplit, AllocatePollingNp2) {
  run(2, [](Device& d) { polling(d, Kind::Allocate); });
}
TEST_P(RmaMapSplit, AllocatePollingNp3) {
  run(3, [](Device& d) { polling(d, Kind::Allocate); });
}
TEST_P(RmaMapSplit, SharedContigPollingNp3) {
  run(3, [](Device& d) { polling(d, Kind::SharedContig); });
}
TEST_P(RmaMapSplit, SharedNoncontigPollingNp2) {
  run(2, [](Device& d) { polling(d, Kind::SharedNoncontig); });
}
TEST_P(RmaMapSplit, AllocateComputingNp2) {
  run(2, [](Device& d) { computing(d, Kind::Allocate); });
}
TEST_P(RmaMapSplit, SharedContigComputingNp3) {
  run(3, [](Device& d) { computing(d, Kind::SharedContig); });
}

INSTANTIATE_TEST_SUITE_P(Rma, RmaMapSplit, ::testing::ValuesIn(core_test::setups()), core_test::SetupName());

}  // namespace
