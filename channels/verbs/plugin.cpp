// The verbs plugin's entry point: descriptor, knobs and factory.
#include "channels/plugin.hpp"
#include "channels/verbs/settings.hpp"
#include "channels/verbs/verbs_channel.hpp"

namespace adi3::verbs {
namespace {

Channel* make(ChannelBootstrap& boot) {
  VerbsSettings s = VerbsSettings::from_env();
  DeviceParams p{boot.rank(), boot.size(), boot.job_id(), static_cast<int>(s.slots) + 8};
  std::unique_ptr<VerbsDevice> dev =
      s.device.kind == DeviceChoice::Soft ? open_soft_device(p) : open_ibv_device(p, s.device);
  return new VerbsChannel(boot, s, std::move(dev));
}

}  // namespace
}  // namespace adi3::verbs

ADI3_DEFINE_CHANNEL_PLUGIN("verbs",
                           "RDMA (InfiniBand, RoCE) through libibverbs: per-peer eager rings written with RDMA "
                           "write with immediate, rendezvous by RDMA read into the receive buffer, windows in "
                           "registered memory (NIC atomics); ADI3_VERBS_DEVICE=soft for a software device on one "
                           "host",
                           adi3::kPointToPoint | adi3::kActiveRma | adi3::kPassiveRma, adi3::verbs::verbs_knobs(),
                           adi3::verbs::make)
