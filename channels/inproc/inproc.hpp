// The in-process channel: ranks are threads of one process. Every ordered
// pair of ranks has its own lock-free SPSC ring; a sleeping rank waits on
// its doorbell. One-sided access is native (same address space: memcpy).
#pragma once
#include <functional>
#include <memory>
#include <span>

#include "adi3/config.hpp"
#include "channels/channel.hpp"

namespace adi3 {

class Device;
struct InprocShared;

// The shared state of one job of thread-ranks.
class InprocFabric {
 public:
  explicit InprocFabric(int ranks);
  ~InprocFabric();
  int size() const;
  // The channel of one rank; each rank's channel is made once.
  std::unique_ptr<Channel> channel(int rank);

 private:
  std::shared_ptr<InprocShared> shared_;
};

std::span<const Knob> inproc_knobs();

// Runs fn on `ranks` threads, each with its own Device over one fabric, and
// joins them. For tests, benchmarks and the demo.
void run_thread_ranks(int ranks, const std::function<void(Device&)>& fn, const Config& config);
void run_thread_ranks(int ranks, const std::function<void(Device&)>& fn);

}  // namespace adi3
