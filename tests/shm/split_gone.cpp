// shm_split_gone: a target that takes an origin's split ask on a mapped
// window (channels/shm/cma_split.cpp) and dies before copying its chunk.
// Rank 0 allocates a segment as a window's memory and hands its key to
// rank 1, which maps it. Rank 0 then leaves the library and, instead of
// serving the ask, takes it by hand (as its poll would), claims the last
// chunk, marks the segment past the put's bytes, and vanishes (_exit
// without finalize: the launcher does not count it a failure). Rank 1 puts
// 2 MiB again and again (rank 0 may not run at all during one put on a
// loaded host) until it sees the mark; every put must land whole in the
// segment (the origin copies a dead target's chunks itself: the mapping
// outlives it) and return success, not hang.
//
//   mpiexec -n 2 shm_split_gone
//
// Prints "PASSED" on rank 1 and exits 0 when all holds.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "adi3/process.hpp"
#include "channels/onesided.hpp"
#include "channels/shm/inbox.hpp"
#include "find_inbox.hpp"

using shm_test::fail;

int main() {
  auto dev = adi3::init_process();
  adi3::Device& d = *dev;
  if (d.size() != 2) {
    std::fprintf(stderr, "shm_split_gone needs 2 ranks\n");
    return 2;
  }
  const auto* byte = adi3::Datatype::byte();
  constexpr std::size_t kBytes = 2 << 20;
  adi3::OneSided* os = d.channel().onesided();
  if (!os) return fail("the shm channel has no one-sided part");
  uint8_t key[adi3::kMaxKeyBytes] = {};
  uint64_t key_bytes = 0;
  volatile uint8_t* mark = nullptr;  // past the put's bytes: rank 0 took an ask
  if (d.rank() == 0) {
    adi3::Region* r = os->allocate(kBytes + 4096);
    if (!r) return fail("allocate");
    std::memset(r->base, 0, kBytes + 4096);
    mark = static_cast<volatile uint8_t*>(r->base) + kBytes;
    os->exposed_for_window(*r);
    std::memcpy(key, r->key, r->key_bytes);
    key_bytes = r->key_bytes;
    if (int e = d.send(&key_bytes, sizeof key_bytes, byte, 1, 1, d.world())) return fail(d.errors().message(e).c_str());
    if (int e = d.send(key, sizeof key, byte, 1, 2, d.world())) return fail(d.errors().message(e).c_str());
    char go = 0;
    if (int e = d.recv(&go, 1, byte, 1, 3, d.world(), nullptr)) return fail(d.errors().message(e).c_str());
    if (!go) return 77;  // not split here (more ranks than CPUs, no CMA)
    char* base = shm_test::find_inbox(0);
    if (!base) return fail("our own inbox is not mapped");
    // Out of the library after this send (eager: it returns at once, and
    // rank 1 asks only once it has it): take rank 1's ask by hand.
    if (int e = d.send(&go, 1, byte, 1, 4, d.world())) return fail(d.errors().message(e).c_str());
    const auto* h = reinterpret_cast<adi3::shm::InboxHeader*>(base);
    adi3::shm::InboxLayout layout(h->ranks, h->ring_bytes);
    adi3::shm::SplitAsk& ask = *layout.ask(base, 1);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (;;) {
      uint64_t st = ask.state.load(std::memory_order_acquire);
      if ((st & 7) == 1 && ask.state.compare_exchange_strong(st, (st & ~uint64_t{7}) | 2)) break;
      if (std::chrono::steady_clock::now() > until) return fail("rank 1's ask never came");
    }
    // Claim the last chunk, as a serving target would, and die holding it.
    uint64_t c = ask.cut.load(std::memory_order_acquire);
    while ((c >> 32) < (c & 0xffffffffu) && !ask.cut.compare_exchange_weak(c, c - 1)) {
    }
    *mark = 1;
    std::fflush(stdout);
    _exit(0);
  }
  if (int e = d.recv(&key_bytes, sizeof key_bytes, byte, 0, 1, d.world(), nullptr))
    return fail(d.errors().message(e).c_str());
  if (int e = d.recv(key, sizeof key, byte, 0, 2, d.world(), nullptr)) return fail(d.errors().message(e).c_str());
  adi3::RemoteRegion* r = os->attach(0, key, key_bytes);
  if (!r || !r->direct) return fail("rank 0's segment cannot be mapped");
  char go = os->caps().split_min <= kBytes ? 1 : 0;
  if (int e = d.send(&go, 1, byte, 0, 3, d.world())) return fail(d.errors().message(e).c_str());
  if (!go) {
    std::printf("SKIPPED: puts of %zu bytes are not split here\n", kBytes);
    return 77;
  }
  if (int e = d.recv(&go, 1, byte, 0, 4, d.world(), nullptr)) return fail(d.errors().message(e).c_str());
  std::vector<uint8_t> out(kBytes);
  for (std::size_t i = 0; i < kBytes; ++i) out[i] = static_cast<uint8_t>(i * 7 + (i >> 12) + 1);
  mark = static_cast<volatile uint8_t*>(r->direct) + kBytes;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  int puts = 0;
  double ms = 0;
  while (!*mark) {
    if (std::chrono::steady_clock::now() > until) return fail("rank 0 never took an ask");
    out[0] = static_cast<uint8_t>(++puts);
    const auto t0 = std::chrono::steady_clock::now();
    if (os->put(*r, 0, out.data(), kBytes) != 0) return fail("a put failed");
    ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (std::memcmp(r->direct, out.data(), kBytes) != 0) return fail("a put did not land whole");
  }
  os->detach(r);
  std::printf("PASSED: the put completed whole (%.1f ms, put %d) after its target died holding the ask\n", ms, puts);
  std::fflush(stdout);
  return 0;
}
