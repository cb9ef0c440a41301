// Random nested datatypes for property tests: every constructor, depth up
// to 4, negative strides, shuffled block orders, resized bounds. Layouts
// never overlap (each type keeps its data inside [lb, ub) and copies are
// spaced at least one extent apart), so unpacking is well defined.
#pragma once
#include <cstdint>
#include <random>
#include <string>

#include "test_util.hpp"

namespace adi3::test {

class TypeGen {
 public:
  explicit TypeGen(std::uint64_t seed) : rng_(seed) {}
  // A committed-able type of nesting depth at most `depth`; `what`
  // accumulates a readable description for failure messages.
  TypeRef make(int depth, std::string* what);
  int rnd(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  std::mt19937_64& rng() { return rng_; }

 private:
  std::mt19937_64 rng_;
  TypeRef basic(std::string* what);
  TypeRef child(int depth, std::string* what);
  TypeRef derived(int depth, std::string* what);
};

}  // namespace adi3::test
