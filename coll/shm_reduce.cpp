// A reduce of p ranks that outnumber the processors, read directly: each
// rank exposes its input, a few ranks read their slice of every other
// input with cross-memory attach and fold it in rank order, then the root
// copies the reduced slices out of the folders' areas. The long reduction
// instead has every rank stream (p - 1)/p of its input into its area and
// fold out of memory: a write of the vector to memory per rank that the
// reads here skip.
#include <algorithm>
#include <cstring>

#include "coll/shm_direct.hpp"
#include "coll/shm_node.hpp"
#include "coll/shm_reduction.hpp"

namespace adi3::coll::detail {

namespace {
constexpr std::size_t kAlign = 64;
std::size_t round_up(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }
}  // namespace

// Stages: s agrees (shm_direct.hpp), s + 1 says "my slice is reduced and I
// read nobody's input any more", s + 2 "the root copied the slices out"
// (the areas may be rewritten). A rank that folds nothing posts s + 2 at
// once; every rank but the root then waits for s + 1 everywhere: its input
// must stay put while others read it.
//
// Folders: one rank a processor (p / crowding), the root and the ranks
// after it, each reading a 1/q slice of every input. With every rank
// folding, a rank read p - 1 slices of 1/p: at 8 ranks on 2 cores and 64
// KiB, 56 system calls of 8 KiB a call, whose fixed cost the work of 2
// cores does not hide; the others only expose their input and wait.
bool sliced_direct_reduce(Device& dev, ShmNode& n, const Reduction& red, const void* in, void* out, std::size_t count,
                          int root, int* err) {
  const int me = n.rank(), p = n.size();
  const std::size_t ext = red.ext;
  Offer o;
  o.base = static_cast<const std::byte*>(in);
  o.len = o.sent = count * ext;
  // Where ranks outnumber the cores a read's time is the scheduler's more
  // than the lines' (shm_gather.cpp's alltoall): no rate verdict.
  const Rate rate{&n.direct_verdict, 0};
  uint64_t s = 0;
  Region* region = nullptr;
  bool fast = true;
  const Agreed a = agree_direct(n, o, rate, 3, &s, &region, &fast, err);
  OneSided& os = n.onesided();
  if (a != Agreed::Direct) {
    if (region) os.release(region);
    return a == Agreed::Failed;
  }
  const int q = std::clamp((p + n.crowding() - 1) / n.crowding(), 1, p);
  const int f = (me - root + p) % p;  // folder f < q reduces slice f
  if (f >= q) {
    n.post(s + 2);
    const int e = n.wait_all(s + 1);
    os.release(region);
    n.areas_free_at(s + 2);
    if (!*err) *err = e;
    return true;
  }
  const std::size_t lo = cut(count, f, q), len = cut(count, f + 1, q) - lo;
  std::byte* area = nullptr;
  if ((*err = n.claim_area(&area))) {
    os.release(region);
    return true;
  }
  // My slice of the result: straight in the root's receive buffer, unless
  // in place (the input the fold reads is there); else at the start of my
  // area, where the root finds it. Slices read from the others land in
  // runs after it.
  const bool at_root = me == root && in != out;
  std::byte* acc = at_root ? static_cast<std::byte*>(out) + lo * ext : area;
  std::byte* tmp = at_root ? area : area + round_up(len * ext);
  const std::size_t run = std::min(len, (kShmChunk - static_cast<std::size_t>(tmp - area)) / ext);
  const auto* mine = static_cast<const std::byte*>(in) + lo * ext;
  bool first = true;
  // acc = x[p-1]; acc = x[j] op acc for j from p - 2 down: rank order for
  // any op (a commutative op gets the same order, which costs nothing).
  for (int j = p - 1; j >= 0 && len > 0 && !*err; --j) {
    if (j == me) {
      if (j == p - 1) {
        std::memcpy(acc, mine, len * ext);
      } else {
        red.combine(mine, acc, len);
      }
      continue;
    }
    if (j == p - 1) {
      read_member(dev, n, j, lo * ext, acc, len * ext, rate, &first, err);
      continue;
    }
    for (std::size_t at = 0; at < len && !*err; at += run) {
      const std::size_t k = std::min(run, len - at);
      if (read_member(dev, n, j, (lo + at) * ext, tmp, k * ext, rate, &first, err)) red.combine(tmp, acc + at * ext, k);
    }
  }
  // Even after a failed read: the others wait for these posts.
  n.post(me == root ? s + 1 : s + 2);
  const int e = n.wait_all(s + 1);
  os.release(region);
  if (me == root) {
    for (int g = 0; g < q && !e; ++g) {
      if (g == 0 && at_root) continue;
      const std::size_t gl = cut(count, g, q), gh = cut(count, g + 1, q);
      std::memcpy(static_cast<std::byte*>(out) + gl * ext, n.area((root + g) % p), (gh - gl) * ext);
    }
    n.post(s + 2);
  }
  n.areas_free_at(s + 2);
  if (!*err) *err = e;
  return true;
}

}  // namespace adi3::coll::detail
