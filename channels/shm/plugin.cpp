// The shm plugin's entry point: descriptor, knobs and factory.
#include <cstdio>
#include <exception>

#include "channels/plugin.hpp"
#include "channels/shm/settings.hpp"
#include "channels/shm/shm_channel.hpp"

namespace {

adi3::Channel* create(adi3::ChannelBootstrap* boot, char* error, std::size_t error_bytes) {
  try {
    return new adi3::shm::ShmChannel(*boot, adi3::shm::ShmSettings::from_env());
  } catch (const std::exception& e) {
    std::snprintf(error, error_bytes, "%s", e.what());
  } catch (...) {
    std::snprintf(error, error_bytes, "unknown exception");
  }
  return nullptr;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const adi3_channel_plugin* ADI3_CHANNEL_PLUGIN_ENTRY() {
  static const adi3_channel_plugin kPlugin = {
      adi3::kChannelAbiVersion,
      "shm",
      "processes on one host: lock-free shared-memory rings, doorbell sleep, single-copy CMA for large "
      "messages when the kernel permits process_vm_readv, windows in shared memory (native passive target)",
      adi3::kPointToPoint | adi3::kActiveRma | adi3::kPassiveRma,
      adi3::shm::shm_knobs().data(),
      adi3::shm::shm_knobs().size(),
      &create,
  };
  return &kPlugin;
}
