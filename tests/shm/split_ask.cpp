// shm_split_ask: rank 1 of a 2-rank job writes asks no correct peer
// writes into its slot of rank 0's inbox (channels/shm/cma_split.cpp), as
// a buggy or hostile process could. Rank 0 may act on an ask only inside
// memory it exposed to rank 1 (a send buffer it offered it, a window), so
// every one below must be answered "failed" with nothing copied: a source
// rank 0 has not mapped; a source and length that wrap; a destination
// rank 1 has not mapped; a source rank 0 has mapped but never offered
// (its CMA probe word: rank 1's buffer must stay untouched); a copy into
// rank 0's memory outside any window (the probe word again: it must keep
// its value); a direction no asker writes; a copy that runs past the end
// of a segment rank 0 exposed for a window (MPI_Win_allocate's memory,
// which peers map) and one into a segment of rank 0 no window exposed.
// A copy into the exposed segment is done (rank 0 then finds the bytes in
// it). Then a 1 MiB exchange, split for real, arrives intact both ways.
//
//   mpiexec -n 2 shm_split_ask
//
// Prints "PASSED" on rank 1 and exits 0 when all holds.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "adi3/process.hpp"
#include "channels/onesided.hpp"
#include "channels/shm/cma.hpp"
#include "channels/shm/inbox.hpp"
#include "find_inbox.hpp"

using shm_test::fail;

int main() {
  auto dev = adi3::init_process();
  adi3::Device& d = *dev;
  if (d.size() != 2) {
    std::fprintf(stderr, "shm_split_ask needs 2 ranks\n");
    return 2;
  }
  const auto* byte = adi3::Datatype::byte();
  constexpr std::size_t kBig = 1 << 20;
  std::vector<char> out(kBig), in(kBig);
  for (std::size_t i = 0; i < kBig; ++i) out[i] = static_cast<char>(i * 7 + static_cast<std::size_t>(d.rank()));
  int failures = 0;
  char b = 0;
  // Rank 0's segments: one a window exposes, one no window does.
  constexpr std::size_t kSeg = 64 * 1024;
  adi3::OneSided* os = d.channel().onesided();
  if (!os) return fail("the shm channel has no one-sided part");
  uint64_t segs[2] = {0, 0};
  adi3::Region* seg[2] = {nullptr, nullptr};
  if (d.rank() == 0) {
    for (int i = 0; i < 2; ++i) {
      seg[i] = os->allocate(kSeg);
      if (!seg[i]) return fail("allocate");
      std::memset(seg[i]->base, 0x33, kSeg);
      segs[i] = reinterpret_cast<uintptr_t>(seg[i]->base);
    }
    os->exposed_for_window(*seg[0]);
    if (int e = d.send(segs, sizeof segs, byte, 1, 3, d.world())) return fail(d.errors().message(e).c_str());
  } else {
    if (int e = d.recv(segs, sizeof segs, byte, 0, 3, d.world(), nullptr)) return fail(d.errors().message(e).c_str());
  }
  if (d.rank() == 1) {
    char* base = shm_test::find_inbox(0);
    if (!base) return fail("rank 0's inbox is not mapped here");
    const auto* h = reinterpret_cast<adi3::shm::InboxHeader*>(base);
    adi3::shm::InboxLayout layout(h->ranks, h->ring_bytes);
    adi3::shm::SplitAsk& ask = *layout.ask(base, 1);
    const uint64_t mine = reinterpret_cast<uintptr_t>(in.data());
    using adi3::shm::SplitAsk;
    const uint64_t probe = h->cma_addr;  // a word of rank 0's own memory
    const pid_t pid0 = h->pid;
    struct Bad {
      uint64_t dir, src, dst, len;
      const char* what;
    } bad[] = {{SplitAsk::kAskToAsker, 4096, mine, 4096, "a source rank 0 has not mapped"},
               {SplitAsk::kAskToAsker, UINT64_MAX - 100, mine, 4096, "a source and length that wrap"},
               {SplitAsk::kAskToAsker, mine, 4096, 4096, "a destination rank 1 has not mapped"},
               {SplitAsk::kAskToAsker, probe, mine, 8, "a source rank 0 never offered"},
               {SplitAsk::kAskToOwner, mine, probe, 8, "a destination outside rank 0's windows"},
               {7, probe, mine, 8, "an unknown direction"},
               {SplitAsk::kAskToOwner, mine, segs[0] + kSeg - 8, 16, "a copy past the end of a window's segment"},
               {SplitAsk::kAskToOwner, mine, segs[1], 16, "a copy into a segment no window exposes"},
               {SplitAsk::kAskToAsker, segs[1], mine, 16, "a copy out of a segment no window exposes"}};
    std::memset(in.data(), 0x5a, 64);
    uint64_t seq = 1000;
    for (const Bad& x : bad) {
      ask.dir = x.dir;
      ask.src = x.src;
      ask.dst = x.dst;
      ask.len = x.len;
      ask.chunk = x.len;  // one chunk, well formed: only the addresses are wrong
      ask.cut.store(1, std::memory_order_relaxed);
      const uint64_t tag = ++seq << 3;
      ask.state.store(tag | 1, std::memory_order_release);  // offered
      layout.header(base)->asks.fetch_add(1, std::memory_order_seq_cst);
      layout.bell(base)->ring();
      // Rank 0 polls in its receive; it answers "failed" (4).
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      uint64_t st = 0;
      while ((st = ask.state.load(std::memory_order_acquire)) == (tag | 1) || st == (tag | 2)) {
        d.progress();
        if (std::chrono::steady_clock::now() > until) break;
      }
      if (st != (tag | 4)) {
        std::printf("FAIL: %s: rank 0 answered %llu, want %llu (failed)\n", x.what, static_cast<unsigned long long>(st),
                    static_cast<unsigned long long>(tag | 4));
        ++failures;
      }
      // Nothing written either way: our buffer keeps its bytes, rank 0's
      // probe word its value.
      for (std::size_t i = 0; i < 64; ++i) {
        if (in[i] != 0x5a) {
          std::printf("FAIL: %s: rank 0 wrote into rank 1's buffer (byte %zu)\n", x.what, i);
          ++failures;
          break;
        }
      }
      uint64_t word = 0;
      if (!adi3::shm::cma_read(pid0, &word, probe, sizeof word) || word != h->cma_value) {
        std::printf("FAIL: %s: rank 0's probe word changed (or cannot be read)\n", x.what);
        ++failures;
      }
    }
    // A good one: 4 KiB of ours into the window's segment, copied (3).
    std::memset(in.data(), 0x6c, 4096);
    ask.dir = SplitAsk::kAskToOwner;
    ask.src = mine;
    ask.dst = segs[0] + 4096;
    ask.len = 4096;
    ask.chunk = 1024;  // four chunks, all the owner's (our front claims none)
    ask.cut.store(4, std::memory_order_relaxed);
    const uint64_t tag = ++seq << 3;
    ask.state.store(tag | 1, std::memory_order_release);
    layout.header(base)->asks.fetch_add(1, std::memory_order_seq_cst);
    layout.bell(base)->ring();
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    uint64_t st = 0;
    while (((st = ask.state.load(std::memory_order_acquire)) == (tag | 1) || st == (tag | 2)) &&
           std::chrono::steady_clock::now() < until) {
      d.progress();
    }
    if (st != (tag | 3)) {
      std::printf("FAIL: a copy into a window's segment: rank 0 answered %llu, want %llu (copied)\n",
                  static_cast<unsigned long long>(st), static_cast<unsigned long long>(tag | 3));
      ++failures;
    }
    if (int e = d.send(&b, 1, byte, 0, 1, d.world())) return fail(d.errors().message(e).c_str());
  } else {
    if (int e = d.recv(&b, 1, byte, 1, 1, d.world(), nullptr)) return fail(d.errors().message(e).c_str());
    // Only the good ask wrote: its 4 KiB, nothing around them, nothing in
    // the segment no window exposes.
    const auto* w = static_cast<const unsigned char*>(seg[0]->base);
    const auto* u = static_cast<const unsigned char*>(seg[1]->base);
    for (std::size_t i = 0; i < kSeg; ++i) {
      const unsigned char want = i >= 4096 && i < 8192 ? 0x6c : 0x33;
      if (w[i] != want || u[i] != 0x33) {
        std::printf("FAIL: rank 0's segments: byte %zu is %d / %d, want %d / %d\n", i, w[i], u[i], want, 0x33);
        ++failures;
        break;
      }
    }
    os->release(seg[0]);
    os->release(seg[1]);
  }
  // Both ways, split for real (ADI3_SHM_CMA_SPLIT_MIN=0 in the test).
  adi3::Request* r = nullptr;
  if (int e = d.irecv(in.data(), kBig, byte, 1 - d.rank(), 2, d.world(), &r))
    return fail(d.errors().message(e).c_str());
  if (int e = d.send(out.data(), kBig, byte, 1 - d.rank(), 2, d.world())) return fail(d.errors().message(e).c_str());
  if (int e = d.wait(&r, nullptr)) return fail(d.errors().message(e).c_str());
  for (std::size_t i = 0; i < kBig; ++i) {
    if (in[i] != static_cast<char>(i * 7 + static_cast<std::size_t>(1 - d.rank()))) {
      std::printf("FAIL: rank %d: byte %zu of the exchange after the bad asks is wrong\n", d.rank(), i);
      ++failures;
      break;
    }
  }
  if (int e = d.barrier()) return fail(d.errors().message(e).c_str());
  if (d.rank() == 1 && !failures) std::printf("PASSED: rank 0 refused every bad ask and went on\n");
  std::fflush(stdout);
  return failures ? 1 : 0;
}
