#include "adi3/config.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace adi3 {
namespace {

constexpr Knob kCoreKnobs[] = {
    {"ADI3_EAGER_LIMIT", "channel's own (inproc 16384, shm 16384)",
     "Largest message (bytes) sent eagerly; larger ones use rendezvous."},
    {"ADI3_RNDV_CHUNK", "channel's maximum packet",
     "Bytes per rendezvous data packet when data is streamed through packets."},
    {"ADI3_SPIN_COUNT", "2000", "Polls a blocking wait spins before it starts yielding."},
    {"ADI3_YIELD_COUNT", "200",
     "sched_yield rounds before a blocking wait sleeps; unset, none unless the host's ranks outnumber its "
     "cores or the rank runs in MPI_THREAD_MULTIPLE (see ADI3_OVERSUBSCRIBE)."},
    {"ADI3_SLEEP_US", "1000",
     "Longest sleep (microseconds) of a blocking wait between checks; senders "
     "wake a sleeping rank at once, so this only bounds missed wakeups."},
    {"ADI3_RNDV_GET", "1",
     "1: a point-to-point rendezvous message of at least the channel's threshold is fetched by the receiver "
     "with the channel's single-copy get where it has one (shm cross-memory attach, verbs RDMA read). 0: "
     "always streamed through packets. ADI3_FORCE_EMULATION leaves this alone."},
    {"ADI3_FORCE_EMULATION", "0",
     "1 (or all): ignore the channel's native one-sided capabilities (shared-memory windows, cross-memory "
     "attach to windows, local completion) and use the emulated protocols, so both paths can be tested; "
     "point-to-point, which the emulations ride, keeps its own single-copy rendezvous (ADI3_RNDV_GET). A "
     "comma list of local, active, passive forces only those communication types (local completion, "
     "active-target RMA, passive-target RMA)."},
    {"ADI3_ASYNC_PROGRESS", "auto",
     "Progress agent (a thread per rank that progresses the device while the program computes, sleeping on "
     "the channel's doorbell when idle). auto: started when something needs it (a window allowing passive "
     "target, a send cancel). on: started with the device. off: never (passive target and send cancel then "
     "progress only inside MPI calls)."},
    {"ADI3_UNEXPECTED_BYTES", "64M",
     "Budget of eager bytes a rank holds unexpected (arrived before their receive), counting each message's "
     "bytes plus its request slot (256 B). Each sender gets an equal share as credit; a send that lacks "
     "credit goes by rendezvous instead (only its envelope waits at the receiver), and credit comes back as "
     "messages are received. 0: no limit. Must be the same on every rank (a sender exceeding its share is "
     "refused as failed)."},
    {"ADI3_MAX_REQUESTS", "1048576",
     "Most requests (nonblocking point-to-point, unexpected messages, persistent requests, nonblocking and "
     "persistent collectives, generalized requests, request-based RMA, MPI_Comm_idup) live at once per rank "
     "(rounded up to a multiple of 64; at most the default). A call that needs one more fails with "
     "MPI_ERR_NO_MEM naming the cap; a message arriving when none is left ends the conversation with its "
     "sender (its waits fail with MPI_ERR_NO_MEM)."},
    {"ADI3_CHANNEL", "inproc for thread-ranks, shm for processes",
     "Channel plugin to load by name, for every peer. Unset, processes use shm on one host, and across hosts "
     "shm within a host and ADI3_NETMOD (tcp) between hosts."},
};

}  // namespace

void parse_force_emulation(const std::string& v, Config* c) {
  c->force_emulation = false;
  c->force_types = 0;
  if (v.empty() || v == "0" || v == "none") return;
  if (v == "1" || v == "all") {
    c->force_emulation = true;
    return;
  }
  // Bits as in channels/channel.hpp's CommType (not included here: the
  // configuration knows nothing of channels).
  std::size_t at = 0;
  while (at <= v.size()) {
    std::size_t end = v.find(',', at);
    if (end == std::string::npos) end = v.size();
    const std::string w = v.substr(at, end - at);
    if (w == "local") {
      c->force_types |= 1u << 1;
    } else if (w == "active") {
      c->force_types |= 1u << 2;
    } else if (w == "passive") {
      c->force_types |= 1u << 3;
    } else if (!w.empty()) {
      std::fprintf(stderr,
                   "adi3: ADI3_FORCE_EMULATION=%s: '%s' is not 0, 1, all or a list of local, active, passive; "
                   "forcing every emulation\n",
                   v.c_str(), w.c_str());
      c->force_emulation = true;
      return;
    }
    at = end + 1;
  }
}

std::span<const Knob> core_knobs() { return kCoreKnobs; }

int64_t env_int(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  errno = 0;
  long long x = std::strtoll(v, &end, 0);
  if (errno || end == v) return fallback;
  // Accept k/m/g suffixes for sizes.
  switch (*end) {
    case 'k':
    case 'K':
      x <<= 10;
      break;
    case 'm':
    case 'M':
      x <<= 20;
      break;
    case 'g':
    case 'G':
      x <<= 30;
      break;
    default:
      break;
  }
  return x;
}

std::string env_string(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : std::string(fallback);
}

Config Config::from_env() {
  Config c;
  c.eager_limit = static_cast<std::size_t>(env_int("ADI3_EAGER_LIMIT", 0));
  c.rndv_chunk = static_cast<std::size_t>(env_int("ADI3_RNDV_CHUNK", 0));
  c.spin_count = static_cast<int>(env_int("ADI3_SPIN_COUNT", c.spin_count));
  c.yield_count = static_cast<int>(env_int("ADI3_YIELD_COUNT", c.yield_count));
  c.sleep_us = static_cast<int>(env_int("ADI3_SLEEP_US", c.sleep_us));
  parse_force_emulation(env_string("ADI3_FORCE_EMULATION", "0"), &c);
  c.rndv_get = env_int("ADI3_RNDV_GET", 1) != 0;
  const int64_t ub = env_int("ADI3_UNEXPECTED_BYTES", static_cast<int64_t>(c.unexpected_bytes));
  c.unexpected_bytes = ub > 0 ? static_cast<std::size_t>(ub) : 0;
  const int64_t mr = env_int("ADI3_MAX_REQUESTS", static_cast<int64_t>(c.max_requests));
  if (mr > 0 && static_cast<std::size_t>(mr) < c.max_requests) c.max_requests = static_cast<std::size_t>(mr);
  std::string ap = env_string("ADI3_ASYNC_PROGRESS", "auto");
  if (ap == "on" || ap == "1") {
    c.async_progress = AsyncProgress::On;
  } else if (ap == "off" || ap == "0") {
    c.async_progress = AsyncProgress::Off;
  } else if (ap != "auto") {
    // As ADI3_PMI: a misspelt mode is an error, not a silent default.
    throw std::runtime_error("ADI3_ASYNC_PROGRESS='" + ap + "' is not one of auto, on, off (or 1, 0)");
  }
  return c;
}

}  // namespace adi3
