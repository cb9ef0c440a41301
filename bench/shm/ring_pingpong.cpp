// The shm ring's one-way time against the cache line's, measured in the
// same seconds: two threads pinned to cores 0 and 1 play ping-pong
//
//   flag   one cache line, each side waits for its turn and writes the next
//          value (bench/mpi/baseline.c's probe: one line transfer a trip)
//   ring   0-byte packets (a 32-byte header) through two RingProducer /
//          RingConsumer pairs (channels/shm/shm_ring.hpp), as the channel
//          drives them: push, then poll ready() and drain one record
//
// The modes alternate batch by batch, so a change of the VM's state (the
// cache line's cost moves 4-10x within seconds) hits both. Every round
// trip is timed (TSC) and a batch's figure is the median trip, halved: on
// a loaded host a preempted thread stalls a few trips, not the median.
// Printed: the medians over the batches, and the ring's ratio to the line.
// No MPI. Usage: shm_ring_pingpong [batches=15] [trips=20000]
#include <pthread.h>
#include <sched.h>
#include <x86intrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

#include "channels/shm/shm_ring.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using adi3::Payload;
using adi3::shm::RingConsumer;
using adi3::shm::RingProducer;
using adi3::shm::ShmRing;

constexpr std::size_t kRingBytes = 64 * 1024;

void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Both directions' rings, laid out as in an inbox: the shared heads and
// tails together, the data areas page-aligned after them.
struct Rings {
  ShmRing shared[2];
  alignas(4096) char data[2][kRingBytes];
};

struct alignas(64) Line {
  std::atomic<long> v{0};
};

// Round trips timed by the side that starts them (TSC ticks).
struct Trips {
  std::vector<uint32_t> ticks;
  uint64_t last = 0;
  void start() { last = __rdtsc(); }
  void lap() {
    const uint64_t t = __rdtsc();
    ticks.push_back(static_cast<uint32_t>(std::min<uint64_t>(t - last, UINT32_MAX)));
    last = t;
  }
};

// A thread's turn of `trips` round trips; side 0 starts each trip.
struct Flag {
  Line* line;
  long base = 0;
  void run(int me, long trips, Trips* clock) {
    for (long i = 0; i < trips; ++i) {
      const long want = base + 2 * i + me;
      while (line->v.load(std::memory_order_acquire) != want) {
      }
      if (clock) clock->lap();
      line->v.store(want + 1, std::memory_order_release);
    }
    base += 2 * trips;
  }
};

struct RingSide {
  RingProducer out;
  RingConsumer in;
  char hdr[32] = {};
  void send() {
    while (out.push(hdr, sizeof hdr, Payload{}) != RingProducer::Push::Sent) {
    }
  }
  void receive() {
    while (!in.ready()) {
    }
    in.drain(1, [](const void*, std::size_t, const void*, std::size_t) {});
  }
  void run(bool first, long trips, Trips* clock) {
    for (long i = 0; i < trips; ++i) {
      if (first) {
        send();
        receive();
        if (clock) clock->lap();
      } else {
        receive();
        send();
      }
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  const int batches = argc > 1 ? std::atoi(argv[1]) : 15;
  const long trips = argc > 2 ? std::atol(argv[2]) : 20000;
  auto rings = std::make_unique<Rings>();
  auto line = std::make_unique<Line>();
  RingSide side[2];
  for (int s = 0; s < 2; ++s) {
    // Side s sends on ring s and receives on ring 1 - s.
    side[s].out = RingProducer(&rings->shared[s], rings->data[s], kRingBytes);
    side[s].in = RingConsumer(&rings->shared[1 - s], rings->data[1 - s], kRingBytes, 64);
  }
  Flag flag[2] = {{line.get()}, {line.get()}};

  // The second thread follows the first's commands through `go`.
  std::atomic<int> go{0};  // 1 flag, 2 ring, -1 stop; 0 between batches
  std::atomic<int> done{0};
  std::thread peer([&] {
    pin(1);
    for (;;) {
      int g;
      while ((g = go.load(std::memory_order_acquire)) == 0) {
      }
      if (g < 0) return;
      if (g == 1) flag[1].run(1, trips, nullptr);
      if (g == 2) side[1].run(false, trips, nullptr);
      go.store(0, std::memory_order_relaxed);
      done.store(1, std::memory_order_release);
    }
  });
  pin(0);
  std::vector<double> t_flag, t_ring;
  // TSC ticks per microsecond, from the steady clock over the run.
  const auto c0 = Clock::now();
  const uint64_t k0 = __rdtsc();
  Trips clock;
  clock.ticks.reserve(static_cast<std::size_t>(trips));
  auto batch = [&](int mode) {
    done.store(0, std::memory_order_relaxed);
    clock.ticks.clear();
    go.store(mode, std::memory_order_release);
    clock.start();
    if (mode == 1) flag[0].run(0, trips, &clock);
    if (mode == 2) side[0].run(true, trips, &clock);
    while (!done.load(std::memory_order_acquire)) {
    }
    std::vector<uint32_t>& v = clock.ticks;
    std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
    return double(v[v.size() / 2]) / 2;  // ticks, one way
  };
  batch(1);
  batch(2);  // warm-up
  for (int b = 0; b < batches; ++b) {
    const bool flag_first = b % 2 == 0;
    const double x = batch(flag_first ? 1 : 2), y = batch(flag_first ? 2 : 1);
    t_flag.push_back(flag_first ? x : y);
    t_ring.push_back(flag_first ? y : x);
  }
  go.store(-1, std::memory_order_release);
  peer.join();
  const double per_us = double(__rdtsc() - k0) / std::chrono::duration<double, std::micro>(Clock::now() - c0).count();
  for (double& x : t_flag) x /= per_us;
  for (double& x : t_ring) x /= per_us;
  const double f = median(t_flag), r = median(t_ring);
  for (std::size_t b = 0; b < t_flag.size(); ++b)
    std::printf("# batch %zu: flag %.3f ring %.3f us\n", b, t_flag[b], t_ring[b]);
  std::printf("flag %.3f us\nring %.3f us\nring/flag %.2f\n", f, r, r / f);
  return 0;
}
