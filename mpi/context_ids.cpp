#include "mpi/context_ids.hpp"

#include <bit>
#include <cstring>

namespace adi3::mpi {

ContextIds::ContextIds() {
  std::memset(free_, 0xff, sizeof free_);
  std::memset(reserved_, 0, sizeof reserved_);
  // 0: MPI_COMM_WORLD, 1: MPI_COMM_SELF.
  free_[0] &= ~3u;
}

void ContextIds::snapshot(Mask out) {
  std::lock_guard<std::mutex> g(lock_);
  std::memcpy(out, free_, sizeof free_);
}

int ContextIds::claim_lowest(const Mask agreed) {
  std::lock_guard<std::mutex> g(lock_);
  for (int w = 0; w < kWords; ++w) {
    uint32_t both = agreed[w] & free_[w];
    if (both) {
      int bit = std::countr_zero(both);
      free_[w] &= ~(1u << bit);
      return w * 32 + bit;
    }
  }
  return -1;
}

void ContextIds::release(int index) {
  if (index < 2) return;  // the predefined communicators keep theirs
  std::lock_guard<std::mutex> g(lock_);
  free_[index / 32] |= 1u << (index % 32);
}

int ContextIds::in_use() {
  std::lock_guard<std::mutex> g(lock_);
  int n = 0;
  for (uint32_t w : free_) n += 32 - std::popcount(w);
  return n;
}

bool ContextIds::reserve(const Mask wanted, Mask out) {
  std::lock_guard<std::mutex> g(lock_);
  bool others = false;
  for (int w = 0; w < kWords; ++w) {
    others = others || reserved_[w] != 0;
    out[w] = wanted[w] & free_[w] & ~reserved_[w];
    reserved_[w] |= out[w];
  }
  return others;
}

void ContextIds::unreserve(const Mask m) {
  std::lock_guard<std::mutex> g(lock_);
  for (int w = 0; w < kWords; ++w) reserved_[w] &= ~m[w];
}

}  // namespace adi3::mpi
