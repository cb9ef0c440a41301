#include "channels/verbs/settings.hpp"

#include <algorithm>
#include <string>

namespace adi3::verbs {
namespace {

constexpr Knob kVerbsKnobs[] = {
    {"ADI3_VERBS_DEVICE", "auto",
     "RDMA device of the verbs channel. auto: the first device ibv_get_device_list reports (the channel "
     "fails to start, saying so, when there is none). soft: the software device (processes of one host, "
     "shared memory and cross-memory attach, same completion and error rules; for testing without RDMA "
     "hardware). Any other value: the hardware device of that name (e.g. mlx5_0)."},
    {"ADI3_VERBS_PORT", "1", "Port of the hardware device."},
    {"ADI3_VERBS_SLOT_BYTES", "16896",
     "Bytes of one slot of a per-peer eager ring (one packet: 40-byte record header, core header, payload); "
     "the largest packet payload is this minus 168. At least 512."},
    {"ADI3_VERBS_SLOTS", "32",
     "Slots of each per-peer eager ring (the sender's credits); 2 to 512. Each rank registers two rings of "
     "this many slots per peer (receive and staging)."},
    {"ADI3_VERBS_MR_CACHE_BYTES", "67108864",
     "Bytes of unused memory registrations the registration cache keeps for reuse (only where registrations "
     "follow the mappings: the software device; pinned hardware registrations go at their last use)."},
    {"ADI3_VERBS_CONNECT_TIMEOUT", "120",
     "Seconds a rank waits for a peer to answer its request to connect a queue pair (sent, and resent, as "
     "datagrams when the channel first talks to that peer) before it reports the peer failed. The peer "
     "answers from its progress (any MPI call that polls)."},
    {"ADI3_VERBS_REPORT", "0",
     "1: at close, each rank prints to stderr how many reliable-connected queue pairs it made and to "
     "which peers (they are made on first use)."},
    {"ADI3_VERBS_PUT_MIN_RUN", "64 (soft: 512)",
     "A noncontiguous put to a window whose target runs average fewer bytes than this goes to the emulation "
     "(a packet the target unpacks) instead of one RDMA write per run, where the target serves packets anyway "
     "and the epoch's end waits for them (a PSCW epoch, or a passive one when the window has the agent); "
     "counted as emulated. 0: always RDMA. The software device's default is where its CPU cost per byte met the "
     "emulation's (a page pinned per run): 4-byte runs cost about 25x the emulation's CPU, 64-byte 2x, 512-byte the "
     "same."},
};

}  // namespace

std::span<const Knob> verbs_knobs() { return kVerbsKnobs; }

VerbsSettings VerbsSettings::from_env() {
  VerbsSettings s;
  std::string dev = env_string("ADI3_VERBS_DEVICE", "auto");
  if (dev == "soft") {
    s.device.kind = DeviceChoice::Soft;
  } else if (dev == "auto" || dev.empty()) {
    s.device.kind = DeviceChoice::Auto;
  } else {
    s.device.kind = DeviceChoice::Hardware;
    s.device.ib_name = dev;
  }
  s.device.port = static_cast<int>(std::clamp<int64_t>(env_int("ADI3_VERBS_PORT", 1), 1, 255));
  s.slot_bytes = static_cast<std::size_t>(std::clamp<int64_t>(env_int("ADI3_VERBS_SLOT_BYTES", 16896), 512, 1 << 24));
  s.slot_bytes = (s.slot_bytes + 63) / 64 * 64;
  s.slots = static_cast<unsigned>(std::clamp<int64_t>(env_int("ADI3_VERBS_SLOTS", 32), 2, 512));
  int64_t cache = env_int("ADI3_VERBS_MR_CACHE_BYTES", 64 << 20);
  s.cache_bytes = cache < 0 ? 0 : static_cast<std::size_t>(cache);
  s.connect_timeout_ms =
      static_cast<int>(std::clamp<int64_t>(env_int("ADI3_VERBS_CONNECT_TIMEOUT", 120), 1, 86400) * 1000);
  s.report = env_int("ADI3_VERBS_REPORT", 0) != 0;
  const int64_t min_run = s.device.kind == DeviceChoice::Soft ? 512 : 64;
  s.put_min_run = static_cast<uint32_t>(std::clamp<int64_t>(env_int("ADI3_VERBS_PUT_MIN_RUN", min_run), 0, 1 << 20));
  return s;
}

}  // namespace adi3::verbs
