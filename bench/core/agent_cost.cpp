// The progress agent's cost (emul/agent.*): 8-byte ping-pong latency and
// message rate between two thread-ranks with the agent off and on, and
// the CPU time an idle agent uses over an interval.
//   agent_cost [idle_seconds=10] [iterations=20000]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "adi3/device.hpp"
#include "channels/inproc/inproc.hpp"
#include "emul/agent.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Figures {
  double latency_us = 0;
  double rate_mps = 0;  // million messages per second
};

Figures measure(bool agent, int iters) {
  adi3::Config c;
  c.async_progress = agent ? adi3::AsyncProgress::On : adi3::AsyncProgress::Off;
  Figures f;
  adi3::run_thread_ranks(
      2,
      [&](adi3::Device& dev) {
        const adi3::Comm& w = dev.world();
        const adi3::Datatype* byte = adi3::Datatype::byte();
        char buf[8] = {};
        int peer = 1 - dev.rank();
        dev.barrier();
        auto t0 = Clock::now();
        for (int i = -iters / 10; i < iters; ++i) {
          if (i == 0) t0 = Clock::now();
          if (dev.rank() == 0) {
            dev.send(buf, 8, byte, peer, 1, w);
            dev.recv(buf, 8, byte, peer, 1, w, nullptr);
          } else {
            dev.recv(buf, 8, byte, peer, 1, w, nullptr);
            dev.send(buf, 8, byte, peer, 1, w);
          }
        }
        double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
        if (dev.rank() == 0) f.latency_us = us / iters / 2;

        constexpr int kWindow = 64;
        int windows = iters / kWindow;
        std::vector<adi3::Request*> reqs(kWindow);
        dev.barrier();
        t0 = Clock::now();
        for (int k = 0; k < windows; ++k) {
          for (int j = 0; j < kWindow; ++j) {
            if (dev.rank() == 0) {
              dev.isend(buf, 8, byte, peer, 2, w, adi3::SendMode::Standard, &reqs[static_cast<std::size_t>(j)]);
            } else {
              dev.irecv(buf, 8, byte, peer, 2, w, &reqs[static_cast<std::size_t>(j)]);
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
        if (dev.rank() == 0) f.rate_mps = static_cast<double>(windows) * kWindow / s / 1e6;
      },
      c);
  return f;
}

double process_cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

}  // namespace

int main(int argc, char** argv) {
  double idle_s = argc > 1 ? std::atof(argv[1]) : 10.0;
  int iters = argc > 2 ? std::atoi(argv[2]) : 20000;

  std::printf("# adi3 progress agent cost: 2 thread-ranks over inproc, 8-byte messages, %d iterations\n", iters);
  std::printf("%-6s %14s %16s\n", "agent", "latency_us", "rate_Mmsg/s");
  // Interleaved repeats: the machine is shared, so keep the best of three.
  Figures best[2];
  for (int rep = 0; rep < 3; ++rep) {
    for (int on = 0; on < 2; ++on) {
      Figures f = measure(on != 0, iters);
      if (rep == 0 || f.latency_us < best[on].latency_us) best[on].latency_us = f.latency_us;
      if (f.rate_mps > best[on].rate_mps) best[on].rate_mps = f.rate_mps;
    }
  }
  for (int on = 0; on < 2; ++on) {
    std::printf("%-6s %14.3f %16.3f\n", on ? "on" : "off", best[on].latency_us, best[on].rate_mps);
  }

  // An idle agent: one rank, nothing to do, the main thread asleep.
  adi3::InprocFabric fabric(1);
  adi3::Config c;
  c.async_progress = adi3::AsyncProgress::On;
  adi3::Device dev(fabric.channel(0), c);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  double agent0 = dev.port().agent()->cpu_seconds(), proc0 = process_cpu_seconds();
  uint64_t sleeps0 = dev.port().agent()->doorbell_sleeps();
  std::this_thread::sleep_for(std::chrono::duration<double>(idle_s));
  double agent_cpu = dev.port().agent()->cpu_seconds() - agent0, proc_cpu = process_cpu_seconds() - proc0;
  std::printf("# idle agent over %.1f s: agent thread CPU %.3f ms, whole process CPU %.3f ms, %llu doorbell sleeps\n",
              idle_s, agent_cpu * 1e3, proc_cpu * 1e3,
              static_cast<unsigned long long>(dev.port().agent()->doorbell_sleeps() - sleeps0));
  return 0;
}
