// ADI3_VERBS_* settings of the verbs channel.
#pragma once
#include <cstddef>
#include <span>

#include "adi3/config.hpp"
#include "channels/verbs/verbs_device.hpp"

namespace adi3::verbs {

std::span<const Knob> verbs_knobs();

struct VerbsSettings {
  DeviceChoice device;
  std::size_t slot_bytes = 0;   // one eager ring slot (a record)
  unsigned slots = 0;           // slots of each per-peer ring
  std::size_t cache_bytes = 0;  // idle registrations kept
  int connect_timeout_ms = 0;   // a peer that does not answer a connection request fails
  bool report = false;          // print the queue pairs made at close
  uint32_t put_min_run = 0;     // OneSidedCaps::put_min_run
  static VerbsSettings from_env();
};

}  // namespace adi3::verbs
