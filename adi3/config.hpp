// ADI3_* environment settings: one table that adi3_info prints and docs/
// lists, and the parsed values a Device reads once at start.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace adi3 {

struct Knob {
  const char* name;          // "ADI3_EAGER_LIMIT"
  const char* default_text;  // as printed
  const char* meaning;
};

// Every ADI3_* setting the core reads (channels list their own the same way).
std::span<const Knob> core_knobs();

// Reads an integer setting; unset or malformed values give the default.
int64_t env_int(const char* name, int64_t fallback);
std::string env_string(const char* name, const char* fallback);

// ADI3_ASYNC_PROGRESS: when the progress agent (emul/agent.hpp) runs.
enum class AsyncProgress : uint8_t {
  Auto,  // started by the first layer that needs it
  On,    // started with the device
  Off,   // never (passive target then progresses only inside calls)
};

struct Config {
  // 0 = use the channel's own eager limit.
  std::size_t eager_limit = 0;
  // Bytes per rendezvous data packet (0 = the channel's maximum).
  std::size_t rndv_chunk = 0;
  // Blocking waits: busy polls, then sched_yield calls, then sleeps on the
  // channel's wakeup for at most sleep_us per round.
  int spin_count = 2000;
  int yield_count = 200;
  int sleep_us = 1000;
  // Whether a yield may hand the core to another rank of the job
  // (adi3/process.cpp: false when each rank has a core of its own and
  // ADI3_YIELD_COUNT is unset). When false only a THREAD_MULTIPLE rank
  // yields (to its own threads); others go from spinning to sleep, since a
  // yield would give the core to other programs for a whole time slice.
  bool yield_helps = true;
  // Ignore the channel's native one-sided capabilities (types 2-4) and use
  // their emulations (tests both). Point-to-point keeps its own single-copy
  // rendezvous (rndv_get), which the emulations ride too.
  bool force_emulation = false;
  // Force single communication types (CommType bits of channels/channel.hpp)
  // to their emulation: ADI3_FORCE_EMULATION=local,active,passive.
  uint32_t force_types = 0;
  // Point-to-point rendezvous may fetch a large message with the channel's
  // single-copy get (ChannelCaps::get_min); false: always streamed through
  // packets (tests the pipeline). ADI3_RNDV_GET.
  bool rndv_get = true;
  // MPI_THREAD_MULTIPLE: take the (otherwise skipped) locks.
  bool thread_multiple = false;
  AsyncProgress async_progress = AsyncProgress::Auto;
  // Unexpected eager bytes a rank may hold (0: no limit): each sender gets
  // an equal share as credit and sends by rendezvous when it runs out.
  std::size_t unexpected_bytes = std::size_t{64} << 20;
  // Most requests live at once (the pool's cap; rounded up to 64, at most
  // 1 Mi); beyond it calls fail with ERR_NO_MEM.
  std::size_t max_requests = std::size_t{1} << 20;

  // From the ADI3_* environment; a mode knob with an unknown value
  // (ADI3_ASYNC_PROGRESS) throws std::runtime_error naming it.
  static Config from_env();
  // Whether type t (a CommType bit) must take its emulation.
  bool forced(uint32_t t) const { return force_emulation || (force_types & t); }
};

// Parses ADI3_FORCE_EMULATION ("0", "1", "all", or "local,active,passive")
// into force_emulation / force_types; a bad word forces everything and says
// so on stderr.
void parse_force_emulation(const std::string& value, Config* c);

}  // namespace adi3
