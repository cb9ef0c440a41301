// The verbs plugin's entry point: descriptor, knobs and factory.
#include <cstdio>
#include <exception>

#include "channels/plugin.hpp"
#include "channels/verbs/settings.hpp"
#include "channels/verbs/verbs_channel.hpp"

namespace {

adi3::Channel* create(adi3::ChannelBootstrap* boot, char* error, std::size_t error_bytes) {
  using namespace adi3::verbs;
  try {
    VerbsSettings s = VerbsSettings::from_env();
    DeviceParams p{boot->rank(), boot->size(), boot->job_id(), static_cast<int>(s.slots) + 8};
    std::unique_ptr<VerbsDevice> dev =
        s.device.kind == DeviceChoice::Soft ? open_soft_device(p) : open_ibv_device(p, s.device);
    return new VerbsChannel(*boot, s, std::move(dev));
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
      "verbs",
      "RDMA (InfiniBand, RoCE) through libibverbs: per-peer eager rings written with RDMA write with immediate, "
      "rendezvous by RDMA read into the receive buffer; ADI3_VERBS_DEVICE=soft for a software device on one host",
      adi3::kPointToPoint | adi3::kActiveRma | adi3::kPassiveRma,
      adi3::verbs::verbs_knobs().data(),
      adi3::verbs::verbs_knobs().size(),
      &create,
  };
  return &kPlugin;
}
