// Pack throughput of adi3's segment for four layouts, next to memcpy of
// the same number of bytes. Prints one line per case:
//   case  packed-bytes  adi3-GB/s  memcpy-GB/s
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench_types.h"
#include "segment/segment.hpp"
#include "segment/type_create.hpp"

using namespace adi3;

namespace {

// Bandwidth of f moving `bytes` bytes, from its fastest call in ~0.3 s
// (the minimum is the least disturbed by other load on the machine).
double gbps(std::size_t bytes, const std::function<void()>& f) {
  using clock = std::chrono::steady_clock;
  f();  // warm up: page faults, caches
  double best = 1e30, total = 0;
  for (int calls = 0; calls < 5 || total < 0.3; ++calls) {
    auto t0 = clock::now();
    f();
    double secs = std::chrono::duration<double>(clock::now() - t0).count();
    best = std::min(best, secs);
    total += secs;
  }
  return static_cast<double>(bytes) / best / 1e9;
}

// Packs (buf, count, t) into out in one call, as a send of it would.
void pack_once(void* buf, std::size_t count, const Datatype* t, char* out) {
  Segment seg(buf, count, t);
  seg.pack(0, seg.size(), out);
}

void report(const char* name, void* buf, std::size_t count, const Datatype* t) {
  std::size_t bytes = count * t->size();
  std::vector<char> out(bytes), src(bytes, 1);
  double pack = gbps(bytes, [&] { pack_once(buf, count, t, out.data()); });
  double mem = gbps(bytes, [&] { std::memcpy(out.data(), src.data(), bytes); });
  std::printf("%-24s %12zu %8.2f %8.2f\n", name, bytes, pack, mem);
}

void check(ErrorClass e, Datatype* const* t) {
  if (e != ErrorClass::Success || !*t) {
    std::fprintf(stderr, "type construction failed\n");
    std::exit(1);
  }
  (*t)->commit();
}

}  // namespace

int main() {
  const Datatype* dbl = Datatype::builtin(Builtin::kDouble);
  std::printf("%-24s %12s %8s %8s\n", "case", "bytes", "GB/s", "memcpy");

  {  // (a)
    Datatype* t = nullptr;
    check(type_vector(BENCH_VEC_COUNT, 1, 2, dbl, &t), &t);
    std::vector<double> a(2 * BENCH_VEC_COUNT, 1.0);
    report("a_vector_stride2", a.data(), 1, t);
    (void)type_free(&t);
  }
  {  // (b) the three faces of the cube
    const int n = BENCH_CUBE_N;
    std::vector<double> cube(static_cast<std::size_t>(n) * n * n, 1.0);
    int sizes[3] = {n, n, n}, starts[3] = {0, 0, n / 2};
    const char* names[3] = {"b_face_x_strided", "b_face_y_rows", "b_face_z_contig"};
    for (int f = 0; f < 3; ++f) {
      int sub[3] = {n, n, n};
      int st[3] = {0, 0, 0};
      sub[2 - f] = 1;  // x fixes the fastest index: one double every n
      st[2 - f] = starts[2];
      (void)sizes;
      Datatype* t = nullptr;
      check(type_subarray(3, sizes, sub, st, kOrderC, dbl, &t), &t);
      report(names[f], cube.data(), 1, t);
      (void)type_free(&t);
    }
  }
  {  // (c)
    bench_mixed m{};
    int bl[5] = {1, 1, 3, 2, 1};
    std::ptrdiff_t d[5] = {offsetof(bench_mixed, a), offsetof(bench_mixed, b), offsetof(bench_mixed, c),
                           offsetof(bench_mixed, d), offsetof(bench_mixed, e)};
    const Datatype* ts[5] = {Datatype::builtin(Builtin::kInt), dbl, Datatype::builtin(Builtin::kChar),
                             Datatype::builtin(Builtin::kFloat), Datatype::builtin(Builtin::kShort)};
    Datatype* t = nullptr;
    check(type_struct(5, bl, d, ts, &t), &t);
    if (t->extent() != static_cast<std::ptrdiff_t>(sizeof m)) std::fprintf(stderr, "struct extent mismatch\n");
    std::vector<bench_mixed> a(BENCH_STRUCT_COUNT);
    report("c_struct_mixed", a.data(), a.size(), t);
    (void)type_free(&t);
  }
  {  // (d)
    std::vector<int> bl(BENCH_INDEXED_BLOCKS), dis(BENCH_INDEXED_BLOCKS);
    int ext = 0;
    bench_indexed_layout(bl.data(), dis.data(), &ext);
    Datatype* t = nullptr;
    check(type_indexed(BENCH_INDEXED_BLOCKS, bl.data(), dis.data(), dbl, &t), &t);
    std::vector<double> a(static_cast<std::size_t>(ext) * BENCH_INDEXED_COUNT, 1.0);
    report("d_indexed_1000", a.data(), BENCH_INDEXED_COUNT, t);
    (void)type_free(&t);
  }
  return 0;
}
