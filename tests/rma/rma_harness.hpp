// Helpers of the RMA suites: windows over the ranks of the core harness
// (thread-ranks over inproc here; processes over shm when
// tests/shm/core_adapter.hpp is force-included), freed by RAII.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "rma/window.hpp"
#include "segment/type_create.hpp"
#include "tests/core/harness.hpp"

namespace rma_test {

using adi3::Device;
using adi3::Window;
using core_test::why;

inline const adi3::Datatype* dt(adi3::Builtin b) { return adi3::Datatype::builtin(b); }
inline const adi3::Datatype* int_t() { return dt(adi3::Builtin::kInt); }

// The window's communicator: every rank, a context of its own.
inline adi3::Comm win_comm(const Device& dev, uint32_t context = 0x6100) {
  adi3::Comm c = dev.world();
  c.context = context;
  return c;
}

enum class Flavor { Create, Allocate, Dynamic };

// A window of `n` ints per rank, filled with 100 * rank + index.
struct IntWin {
  Device& dev;
  Window* win = nullptr;
  int* mem = nullptr;
  std::vector<int> own;  // Create / Dynamic memory
  std::size_t n;
  Flavor flavor;

  IntWin(Device& d, std::size_t count, Flavor f = Flavor::Allocate, adi3::WinInfo info = {})
      : dev(d), n(count), flavor(f) {
    int e = 0;
    adi3::Comm c = win_comm(dev);
    if (f == Flavor::Allocate) {
      void* base = nullptr;
      e = Window::allocate(dev, static_cast<std::ptrdiff_t>(n * sizeof(int)), sizeof(int), info, c, &base, &win);
      mem = static_cast<int*>(base);
    } else if (f == Flavor::Create) {
      own.resize(n);
      mem = own.data();
      e = Window::create(dev, mem, static_cast<std::ptrdiff_t>(n * sizeof(int)), sizeof(int), info, c, &win);
    } else {
      own.resize(n);
      mem = own.data();
      e = Window::create_dynamic(dev, info, c, &win);
      if (!e) e = win->attach(mem, static_cast<std::ptrdiff_t>(n * sizeof(int)));
    }
    EXPECT_EQ(e, 0) << why(dev, e);
    reset();
  }
  void reset() {
    for (std::size_t i = 0; i < n; ++i) mem[i] = static_cast<int>(100 * dev.rank() + i);
  }
  // Displacement of element i at rank r's window (dynamic: its address).
  std::ptrdiff_t disp(std::size_t i, const std::vector<std::ptrdiff_t>& bases, int r) const {
    if (flavor == Flavor::Dynamic)
      return bases[static_cast<std::size_t>(r)] + static_cast<std::ptrdiff_t>(i * sizeof(int));
    return static_cast<std::ptrdiff_t>(i);
  }
  ~IntWin() {
    if (!win) return;
    if (flavor == Flavor::Dynamic) win->detach(mem);
    int e = Window::free(&win);
    EXPECT_EQ(e, 0) << why(dev, e);
  }
};

// Every rank's address of its dynamic memory (0 elsewhere).
inline std::vector<std::ptrdiff_t> exchange_bases(Device& dev, const IntWin& w) {
  std::vector<std::ptrdiff_t> all(static_cast<std::size_t>(dev.size()));
  std::ptrdiff_t mine = w.flavor == Flavor::Dynamic ? reinterpret_cast<std::ptrdiff_t>(w.mem) : 0;
  adi3::Comm c = core_test::ctl_comm(dev, 0x6200);
  for (int r = 0; r < dev.size(); ++r) {
    if (r == dev.rank()) continue;
    EXPECT_EQ(dev.send(&mine, sizeof mine, adi3::Datatype::byte(), r, 7, c), 0);
  }
  for (int r = 0; r < dev.size(); ++r) {
    if (r == dev.rank()) {
      all[static_cast<std::size_t>(r)] = mine;
      continue;
    }
    EXPECT_EQ(dev.recv(&all[static_cast<std::size_t>(r)], sizeof mine, adi3::Datatype::byte(), r, 7, c, nullptr), 0);
  }
  return all;
}

// A committed derived type; released at scope end.
struct Type {
  adi3::Datatype* t = nullptr;
  Type() = default;
  explicit Type(adi3::Datatype* d) : t(d) {
    if (t) {
      EXPECT_EQ(adi3::type_commit(t), adi3::ErrorClass::Success);
    }
  }
  Type(const Type&) = delete;
  Type& operator=(const Type&) = delete;
  ~Type() {
    if (t) (void)adi3::type_free(&t);
  }
  operator const adi3::Datatype*() const { return t; }
};

inline adi3::Datatype* vector_of_ints(int count, int blocklen, int stride) {
  adi3::Datatype* t = nullptr;
  EXPECT_EQ(adi3::type_vector(count, blocklen, stride, int_t(), &t), adi3::ErrorClass::Success);
  return t;
}
inline adi3::Datatype* contiguous_ints(int count) {
  adi3::Datatype* t = nullptr;
  EXPECT_EQ(adi3::type_contiguous(count, int_t(), &t), adi3::ErrorClass::Success);
  return t;
}

}  // namespace rma_test
