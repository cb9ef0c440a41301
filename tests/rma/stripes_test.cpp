// The accumulate stripes of rma/atomic_acc.hpp between threads of one
// process (the same protocol processes follow through shared memory):
// whole-range sums applied by the vectorised kernel under the stripes of
// the range, the same under stripes the caller took once (as an origin's
// native accumulate does), single elements, strided runs with the old
// values fetched, and compare-and-swap increments, all at once on one
// array: every element ends exact. Under TSan (label "threaded") an
// element combined without its stripe is a reported race.
#include <gtest/gtest.h>

#include <cstdint>
#include <atomic>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "rma/atomic_acc.hpp"
#include "rma/native.hpp"
#include "rma/native_sync.hpp"
#include "segment/type_create.hpp"

namespace {

using adi3::Builtin;
using adi3::Datatype;
using adi3::coll::OpKind;
using adi3::rma::AccTarget;
using adi3::rma::Control;

constexpr int kElems = 4096, kRounds = 100, kStride = 16;

TEST(RmaStripes, RunsElementsAndCasStayExact) {
  auto block = std::make_unique<uint64_t[]>(adi3::rma::kControlBytes / 8);  // zeroed: every stripe free
  auto* ctl = reinterpret_cast<Control*>(block.get());
  std::vector<int64_t> mem(kElems, 0);
  char* data = reinterpret_cast<char*>(mem.data());
  const Datatype* i64 = Datatype::builtin(Builtin::kInt64);
  const AccTarget shared{ctl, data, false, nullptr};
  const std::vector<int64_t> ones(kElems, 1), twos(kElems / kStride, 2);
  const std::size_t bytes = kElems * sizeof(int64_t);
  adi3::Datatype* vt = nullptr;
  ASSERT_EQ(adi3::type_vector(kElems / kStride, 1, kStride, i64, &vt), adi3::ErrorClass::Success);
  ASSERT_EQ(adi3::type_commit(vt), adi3::ErrorClass::Success);
  std::vector<std::thread> ts;
  // The threads start together (each waits until all four exist).
  std::atomic<int> ready{0};
  auto start = [&] {
    ready.fetch_add(1);
    while (ready.load() < 4) std::this_thread::yield();
  };
  // A whole-range sum per round: the run takes its stripes itself.
  ts.emplace_back([&] {
    start();
    for (int k = 0; k < kRounds; ++k) {
      adi3::rma::combine_atomic(shared, data, kElems, i64, 0, bytes, ones.data(), OpKind::Sum, Builtin::kInt64,
                                nullptr);
    }
  });
  // The same with the stripes of the range taken once by the caller.
  ts.emplace_back([&] {
    start();
    for (int k = 0; k < kRounds; ++k) {
      const adi3::rma::StripeRange s(*ctl, 0, bytes);
      s.lock();
      const AccTarget held{ctl, data, true, nullptr};
      adi3::rma::combine_atomic(held, data, kElems, i64, 0, bytes, ones.data(), OpKind::Sum, Builtin::kInt64, nullptr);
      s.unlock();
    }
  });
  // Single elements, and a strided get_accumulate (runs of one element).
  std::vector<int64_t> old(kElems / kStride);
  ts.emplace_back([&] {
    start();
    for (int k = 0; k < kRounds; ++k) {
      for (int j = 0; j < 64; ++j) {
        char* at = data + static_cast<std::size_t>((k * 61 + j * 67) % kElems) * 8;
        adi3::rma::combine_atomic(shared, at, 1, i64, 0, 8, ones.data(), OpKind::Sum, Builtin::kInt64, nullptr);
      }
      adi3::rma::combine_atomic(shared, data + (k % kStride) * 8, 1, vt, 0, bytes / kStride, twos.data(), OpKind::Sum,
                                Builtin::kInt64, old.data());
    }
  });
  // Compare-and-swap increments of the last element.
  ts.emplace_back([&] {
    start();
    char* last = data + bytes - 8;
    for (int k = 0; k < kRounds; ++k) {
      int64_t seen = 0;
      for (;;) {
        const int64_t want = seen + 1;
        int64_t prev = 0;
        adi3::rma::native::cas_element(ctl, data, last, Builtin::kInt64, &want, &seen, &prev);
        if (prev == seen) break;
        seen = prev;
      }
    }
  });
  for (auto& t : ts) t.join();
  std::vector<int64_t> want(kElems, 2 * kRounds);
  for (int k = 0; k < kRounds; ++k) {
    for (int j = 0; j < 64; ++j) want[static_cast<std::size_t>((k * 61 + j * 67) % kElems)] += 1;
    for (int i = k % kStride; i < kElems; i += kStride) want[static_cast<std::size_t>(i)] += 2;
    want[kElems - 1] += 1;
  }
  int bad = 0;
  for (int i = 0; i < kElems && bad < 5; ++i) {
    if (mem[static_cast<std::size_t>(i)] != want[static_cast<std::size_t>(i)]) {
      ADD_FAILURE() << "element " << i << ": " << mem[static_cast<std::size_t>(i)] << ", want "
                    << want[static_cast<std::size_t>(i)];
      ++bad;
    }
  }
  // Every stripe is free again.
  for (std::size_t s = 0; s < adi3::rma::kStripes; ++s) EXPECT_EQ(ctl->stripe[s], 0u) << "stripe " << s;
  (void)adi3::type_free(&vt);
}

}  // namespace
