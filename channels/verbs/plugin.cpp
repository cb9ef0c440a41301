// The verbs plugin's entry point: descriptor, knobs and factory.
#include "channels/plugin.hpp"
#include "channels/verbs/settings.hpp"
#include "channels/verbs/verbs_channel.hpp"

namespace adi3::verbs {
namespace {

// The device is opened first, alone; then every rank says whether it got
// one (a rank without any must not leave the others waiting in the
// exchange): if any did not, every rank fails alike and a job across hosts
// falls back to tcp (adi3/process.cpp).
Channel* make(ChannelBootstrap& boot) {
  VerbsSettings s = VerbsSettings::from_env();
  DeviceParams p{boot.rank(), boot.size(), boot.job_id(), static_cast<int>(s.slots) + 8};
  std::unique_ptr<VerbsDevice> dev;
  std::string why;
  try {
    dev = s.device.kind == DeviceChoice::Soft ? open_soft_device(p) : open_ibv_device(p, s.device);
  } catch (const std::exception& e) {
    why = e.what();
  }
  if (!dev && why.empty()) why = "the verbs device could not be opened";
  agree_available(boot, "verbs", why);
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
