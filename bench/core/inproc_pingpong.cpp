// In-process ping-pong latency and streaming bandwidth between two
// thread-ranks, 0 B to 4 MiB. Prints one table.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "adi3/device.hpp"
#include "channels/inproc/inproc.hpp"

namespace {

using Clock = std::chrono::steady_clock;

int iterations_for(std::size_t bytes) {
  if (bytes <= 4096) return 20000;
  if (bytes <= 65536) return 4000;
  if (bytes <= (1u << 20)) return 400;
  return 60;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t max_bytes = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : (4u << 20);
  constexpr int kWindow = 64;
  std::vector<std::size_t> sizes = {0};
  for (std::size_t s = 1; s <= max_bytes; s *= 4) sizes.push_back(s);
  std::vector<double> lat_us(sizes.size()), bw_gbs(sizes.size());

  adi3::run_thread_ranks(2, [&](adi3::Device& dev) {
    const adi3::Comm& w = dev.world();
    const adi3::Datatype* byte = adi3::Datatype::byte();
    std::vector<char> buf(max_bytes + 1, 'x');
    int peer = 1 - dev.rank();
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      std::size_t n = sizes[k];
      int iters = iterations_for(n);
      dev.barrier();
      auto t0 = Clock::now();
      for (int i = -iters / 10; i < iters; ++i) {  // the first tenth warms up
        if (i == 0) t0 = Clock::now();
        if (dev.rank() == 0) {
          dev.send(buf.data(), n, byte, peer, 1, w);
          dev.recv(buf.data(), n, byte, peer, 1, w, nullptr);
        } else {
          dev.recv(buf.data(), n, byte, peer, 1, w, nullptr);
          dev.send(buf.data(), n, byte, peer, 1, w);
        }
      }
      double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
      if (dev.rank() == 0) lat_us[k] = us / iters / 2;

      // Streaming: windows of nonblocking sends, one zero-byte ack per window.
      int windows = std::max(4, iters / kWindow / 4);
      std::vector<adi3::Request*> reqs(kWindow);
      dev.barrier();
      t0 = Clock::now();
      for (int wdw = 0; wdw < windows; ++wdw) {
        for (int j = 0; j < kWindow; ++j) {
          if (dev.rank() == 0) {
            dev.isend(buf.data(), n, byte, peer, 2, w, adi3::SendMode::Standard, &reqs[static_cast<std::size_t>(j)]);
          } else {
            dev.irecv(buf.data(), n, byte, peer, 2, w, &reqs[static_cast<std::size_t>(j)]);
          }
        }
        dev.waitall(kWindow, reqs.data(), nullptr);
        if (dev.rank() == 0) {
          dev.recv(nullptr, 0, byte, peer, 3, w, nullptr);
        } else {
          dev.send(nullptr, 0, byte, peer, 3, w);
        }
      }
      double s = std::chrono::duration<double>(Clock::now() - t0).count();
      if (dev.rank() == 0) bw_gbs[k] = static_cast<double>(n) * kWindow * windows / s / 1e9;
    }
  });

  std::printf("# adi3 inproc (2 thread-ranks): one-way latency = round trip / 2\n");
  std::printf("%10s %12s %12s\n", "bytes", "latency_us", "bw_GB/s");
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    std::printf("%10zu %12.3f %12.3f\n", sizes[k], lat_us[k], bw_gbs[k]);
  }
  return 0;
}
