// The shm plugin's entry point: descriptor, knobs and factory.
#include "channels/plugin.hpp"
#include "channels/shm/settings.hpp"
#include "channels/shm/shm_channel.hpp"

namespace adi3::shm {
namespace {

Channel* make(ChannelBootstrap& boot) { return new ShmChannel(boot, ShmSettings::from_env()); }

}  // namespace
}  // namespace adi3::shm

ADI3_DEFINE_CHANNEL_PLUGIN("shm",
                           "processes on one host: lock-free shared-memory rings, doorbell sleep, single-copy CMA "
                           "for large messages when the kernel permits process_vm_readv, windows in shared memory "
                           "(native passive target)",
                           adi3::kPointToPoint | adi3::kActiveRma | adi3::kPassiveRma, adi3::shm::shm_knobs(),
                           adi3::shm::make)
