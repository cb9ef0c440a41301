// Finds channel plugins (libadi3_ch_<name>.so) and loads them by name.
//
// Search path: the directory libadi3 itself was loaded from, then the
// directories of ADI3_PLUGIN_PATH (colon-separated). Plugins stay loaded
// for the life of the process: a channel's code must outlive every object
// it made, and unloading gains nothing here.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "adi3/config.hpp"
#include "channels/plugin.hpp"

namespace adi3 {

// ADI3_PLUGIN_PATH.
std::span<const Knob> loader_knobs();

struct ChannelPluginInfo {
  std::string path;                   // the file it came from
  const adi3_channel_plugin* plugin;  // valid for the process lifetime
};

struct PluginScan {
  std::vector<ChannelPluginInfo> found;  // first of each name wins
  std::vector<std::string> problems;     // files that failed to load
};

// Directories searched, in order.
std::vector<std::string> plugin_search_path();
// Every plugin on the search path (adi3_info, error messages).
PluginScan scan_channel_plugins();

class ChannelLoadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  ChannelLoadError(const std::string& what, bool unavailable) : std::runtime_error(what), unavailable_(unavailable) {}
  // The channel cannot run in this job, and every rank agreed so
  // (kChannelUnavailable): falling back to another channel is safe.
  bool unavailable() const { return unavailable_; }

 private:
  bool unavailable_ = false;
};

// The plugin named `name`. Throws ChannelLoadError saying what is wrong
// (missing, unloadable, wrong ABI version, in-process only) and listing
// the channels that are available.
ChannelPluginInfo load_channel_plugin(std::string_view name);

// Runs the plugin's factory; throws ChannelLoadError with its message.
std::unique_ptr<Channel> create_channel(const ChannelPluginInfo& info, ChannelBootstrap& boot);

// Text for CommType bits: "point-to-point, active RMA".
std::string describe_comm_types(uint32_t bits);

}  // namespace adi3
