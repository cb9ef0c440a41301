// Ping-pong latency and streaming bandwidth over the ADI (adi3::Device),
// between ranks paired as (0,1), (2,3), ... Same method as pingpong_mpi.c,
// so run_vs_peers.sh can put the numbers side by side.
//
//   mpiexec -n 2 pingpong [--min B] [--max B] [--lat-only|--bw-only] [--no-pin] [--iters N]
//   mpiexec -n 2 pingpong --overlap US [--min B] [--max B]
//
// Latency is half the round trip of one message, averaged over many round
// trips after a warm-up (timed until all pairs are done). Bandwidth streams a window of 64 nonblocking sends
// per receiver acknowledgement. With more than 2 ranks every pair runs at
// once and rank 0 reports its own pair (the oversubscribed case).
// --overlap: rank 1 posts a nonblocking send, then computes for US
// microseconds without calling the library, then waits; rank 0 reports
// how long its receive took (single copy by the receiver alone finishes
// during the computation, a pipeline that needs the sender cannot).
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "adi3/process.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::size_t min = 0, max = std::size_t{4} << 20;
  bool bw = true, lat = true, pin = true;
  long iters = 0;  // 0: scaled by size
  long overlap_us = 0;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::strtoull(argv[++i], nullptr, 0) : 0ull; };
    if (a == "--min")
      o.min = next();
    else if (a == "--max")
      o.max = next();
    else if (a == "--bw-only")
      o.lat = false;
    else if (a == "--lat-only")
      o.bw = false;
    else if (a == "--no-pin")
      o.pin = false;
    else if (a == "--iters")
      o.iters = static_cast<long>(next());
    else if (a == "--overlap")
      o.overlap_us = static_cast<long>(next());
    else {
      std::fprintf(stderr,
                   "usage: pingpong [--min B] [--max B] [--lat-only|--bw-only] [--no-pin] [--iters N] "
                   "[--overlap US]\n");
      std::exit(2);
    }
  }
  return o;
}

long iterations(const Options& o, std::size_t bytes) {
  if (o.iters) return o.iters;
  if (bytes <= 4096) return 20000;
  if (bytes <= 65536) return 5000;
  if (bytes <= (1u << 20)) return 500;
  return 100;
}

void check(adi3::Device& dev, int e, const char* what) {
  if (!e) return;
  std::fprintf(stderr, "rank %d: %s: %s\n", dev.rank(), what, dev.errors().message(e).c_str());
  std::exit(1);
}

// Half round trip in microseconds.
double latency(adi3::Device& dev, int peer, bool first, char* buf, std::size_t bytes, long iters) {
  const auto* byte = adi3::Datatype::byte();
  const adi3::Comm& w = dev.world();
  long warm = std::max(10L, iters / 10);
  Clock::time_point t0;
  for (long i = -warm; i < iters; ++i) {
    if (i == 0) t0 = Clock::now();
    if (first) {
      check(dev, dev.send(buf, bytes, byte, peer, 1, w), "send");
      check(dev, dev.recv(buf, bytes, byte, peer, 1, w, nullptr), "recv");
    } else {
      check(dev, dev.recv(buf, bytes, byte, peer, 1, w, nullptr), "recv");
      check(dev, dev.send(buf, bytes, byte, peer, 1, w), "send");
    }
  }
  // Until every pair is done: with more ranks than cores one pair could
  // otherwise finish early by holding both cores.
  check(dev, dev.barrier(), "barrier");
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / (2.0 * iters);
}

// MB/s (10^6 bytes per second) of a window-of-64 stream.
double bandwidth(adi3::Device& dev, int peer, bool sender, char* buf, std::size_t bytes, long iters) {
  constexpr int kWindow = 64;
  const auto* byte = adi3::Datatype::byte();
  const adi3::Comm& w = dev.world();
  long rounds = std::max(4L, iters / kWindow);
  long warm = 2;
  std::vector<adi3::Request*> reqs(kWindow);
  char ack = 0;
  Clock::time_point t0;
  for (long r = -warm; r < rounds; ++r) {
    if (r == 0) t0 = Clock::now();
    for (int k = 0; k < kWindow; ++k) {
      int e = sender ? dev.isend(buf, bytes, byte, peer, 2, w, adi3::SendMode::Standard, &reqs[k])
                     : dev.irecv(buf, bytes, byte, peer, 2, w, &reqs[k]);
      check(dev, e, "post");
    }
    check(dev, dev.waitall(kWindow, reqs.data(), nullptr), "waitall");
    if (sender) {
      check(dev, dev.recv(&ack, 1, byte, peer, 3, w, nullptr), "ack");
    } else {
      check(dev, dev.send(&ack, 1, byte, peer, 3, w), "ack");
    }
  }
  double s = std::chrono::duration<double>(Clock::now() - t0).count();
  return static_cast<double>(bytes) * kWindow * static_cast<double>(rounds) / s / 1e6;
}

// Receive time at rank 0 while rank 1 computes for `us` after its isend.
double overlap(adi3::Device& dev, char* buf, std::size_t bytes, long us) {
  const auto* byte = adi3::Datatype::byte();
  const adi3::Comm& w = dev.world();
  constexpr int kReps = 5;
  double total = 0;
  for (int rep = -1; rep < kReps; ++rep) {
    check(dev, dev.barrier(), "barrier");
    auto t0 = Clock::now();
    if (dev.rank() == 0) {
      check(dev, dev.recv(buf, bytes, byte, 1, 4, w, nullptr), "recv");
      if (rep >= 0) total += std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    } else if (dev.rank() == 1) {
      adi3::Request* r = nullptr;
      check(dev, dev.isend(buf, bytes, byte, 0, 4, w, adi3::SendMode::Standard, &r), "isend");
      while (Clock::now() - t0 < std::chrono::microseconds(us)) {
      }
      check(dev, dev.wait(&r, nullptr), "wait");
    }
  }
  return total / kReps;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  std::unique_ptr<adi3::Device> dev;
  try {
    dev = adi3::init_process();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pingpong: %s\n", e.what());
    return 1;
  }
  int rank = dev->rank(), size = dev->size();
  if (size < 2 || size % 2) {
    if (rank == 0) std::fprintf(stderr, "pingpong: needs an even number of ranks (got %d)\n", size);
    dev->finalize();
    return 2;
  }
  if (o.pin) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(rank % std::max(1, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN))), &set);
    sched_setaffinity(0, sizeof set, &set);
  }
  int peer = rank ^ 1;
  bool first = rank % 2 == 0;
  std::vector<char> buf(std::max<std::size_t>(o.max, 1), 'x');
  if (o.overlap_us) {
    if (rank == 0) {
      std::printf("# adi3 overlap: the sender computes %ld us after its isend; channel %s\n", o.overlap_us,
                  dev->channel().name());
      std::printf("%12s %14s\n", "bytes", "recv_us");
    }
    for (std::size_t bytes = std::max<std::size_t>(o.min, 1); bytes <= o.max; bytes *= 2) {
      double t = overlap(*dev, buf.data(), bytes, o.overlap_us);
      if (rank == 0) std::printf("%12zu %14.1f\n", bytes, t);
    }
    dev->finalize();
    return 0;
  }
  if (rank == 0) {
    std::printf("# adi3 pingpong: %d ranks, channel %s%s\n", size, dev->channel().name(),
                dev->rndv_get_to(0) ? " (single-copy get)" : "");
    std::printf("%12s %14s %14s\n", "bytes", "latency_us", "bw_MBps");
  }
  for (std::size_t bytes = o.min; bytes <= o.max; bytes = bytes ? bytes * 2 : 1) {
    long iters = iterations(o, bytes);
    dev->barrier();
    double lat = o.lat ? latency(*dev, peer, first, buf.data(), bytes, iters) : 0;
    dev->barrier();
    double bw = o.bw && bytes ? bandwidth(*dev, peer, first, buf.data(), bytes, iters) : 0;
    if (rank == 0) {
      std::printf("%12zu %14.3f %14.1f\n", bytes, lat, bw);
      std::fflush(stdout);
    }
  }
  dev->finalize();
  return 0;
}
