// Shared helpers of the collective tests: thread-rank jobs with a
// collective communicator, deterministic data, typed buffers compared
// byte for byte (gaps included), and the datatypes the tests use.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "adi3/device.hpp"
#include "channels/inproc/inproc.hpp"
#include "coll/coll.hpp"
#include "segment/type_create.hpp"

namespace adi3::coll::test {

inline const Datatype* const kInt = Datatype::builtin(Builtin::kInt);

inline const std::vector<int>& rank_counts() {
  static const std::vector<int> n{1, 2, 3, 4, 5, 8};
  return n;
}

// Runs fn on n thread-ranks; the Comm has its own context, as the MPI
// binding's collective context would. Ranks sleep early: 2 cores are shared.
inline void run(int n, const std::function<void(Device&, const Comm&)>& fn) {
  Config cfg = Config::from_env();
  cfg.spin_count = 50;
  cfg.yield_count = 20;
  run_thread_ranks(
      n,
      [&](Device& dev) {
        Comm c = dev.world();
        c.context = 7;
        fn(dev, c);
      },
      cfg);
}

inline std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
inline std::uint64_t key(std::uint64_t a, std::uint64_t b, std::uint64_t c = 0) {
  return mix(a * 1000003u + mix(b * 7919u + mix(c)));
}

// A committed derived type, freed at scope exit.
class Type {
 public:
  explicit Type(Datatype* t) : t_(t) { EXPECT_EQ(type_commit(t_), ErrorClass::Success); }
  ~Type() {
    if (t_) (void)type_free(&t_);
  }
  Type(const Type&) = delete;
  Type& operator=(const Type&) = delete;
  const Datatype* get() const { return t_; }
  operator const Datatype*() const { return t_; }

 private:
  Datatype* t_;
};

inline const Datatype* B(Builtin b) { return Datatype::builtin(b); }

inline Datatype* vector_of(const Datatype* old, int count, int blocklen, int stride) {
  Datatype* t = nullptr;
  EXPECT_EQ(type_vector(count, blocklen, stride, old, &t), ErrorClass::Success);
  return t;
}
inline Datatype* contiguous_of(const Datatype* old, int count) {
  Datatype* t = nullptr;
  EXPECT_EQ(type_contiguous(count, old, &t), ErrorClass::Success);
  return t;
}
// n elements of old starting one element in: contiguous, but true_lb > 0.
inline Datatype* shifted_of(const Datatype* old, int n) {
  Datatype* t = nullptr;
  int len = n, disp = 1;
  EXPECT_EQ(type_indexed(1, &len, &disp, old, &t), ErrorClass::Success);
  return t;
}

// count elements of type in a buffer pre-filled with a sentinel, so a
// comparison of whole buffers also checks that gaps were left alone.
class Typed {
 public:
  Typed(const Datatype* type, std::size_t count)
      : type_(type),
        count_(count),
        mem_(static_cast<std::size_t>(type->extent()) * (count + 1) + static_cast<std::size_t>(type->true_ub()) + 16,
             std::byte{0xA5}) {}
  void* ptr() { return mem_.data(); }
  const void* ptr() const { return mem_.data(); }
  std::byte* elem(std::size_t i) { return mem_.data() + static_cast<std::ptrdiff_t>(i) * type_->extent(); }
  std::size_t bytes() const { return count_ * type_->size(); }
  void set(const std::vector<std::byte>& packed) { unpack(packed.data(), mem_.data(), count_, type_); }
  std::vector<std::byte> get() const {
    std::vector<std::byte> out(bytes());
    pack(mem_.data(), count_, type_, out.data());
    return out;
  }
  const std::vector<std::byte>& raw() const { return mem_; }

 private:
  const Datatype* type_;
  std::size_t count_;
  std::vector<std::byte> mem_;
};

// Reports the first differing byte, once.
inline void expect_same(const std::vector<std::byte>& got, const std::vector<std::byte>& want,
                        const std::string& what) {
  if (got.size() != want.size()) {
    ADD_FAILURE() << what << ": size " << got.size() << " != " << want.size();
    return;
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i] != want[i]) {
      ADD_FAILURE() << what << ": first difference at byte " << i << " of " << got.size() << " (got " << int(got[i])
                    << ", want " << int(want[i]) << ")";
      return;
    }
  }
}

// Deterministic packed bytes of a rank's data (plain byte noise).
inline std::vector<std::byte> noise(std::size_t bytes, std::uint64_t a, std::uint64_t b) {
  std::vector<std::byte> v(bytes);
  for (std::size_t i = 0; i < bytes; ++i) v[i] = static_cast<std::byte>(key(a, b, i) & 0xff);
  return v;
}

inline std::string where(const char* coll, int n, int rank, const std::string& more) {
  return std::string(coll) + " ranks=" + std::to_string(n) + " rank=" + std::to_string(rank) + " " + more;
}

}  // namespace adi3::coll::test
