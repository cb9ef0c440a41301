// A channel plugin built for another ABI version: the loader must refuse
// it with a clear message instead of calling into it.
#include "channels/plugin.hpp"

namespace {
adi3::Channel* never(adi3::ChannelBootstrap*, char*, std::size_t) { return nullptr; }
}  // namespace

extern "C" __attribute__((visibility("default"))) const adi3_channel_plugin* ADI3_CHANNEL_PLUGIN_ENTRY() {
  static const adi3_channel_plugin kPlugin = {
      adi3::kChannelAbiVersion + 1, "badabi", "a plugin from the future", adi3::kPointToPoint, nullptr, 0, &never,
  };
  return &kPlugin;
}
