#include "channels/loader.hpp"

#include <dirent.h>
#include <dlfcn.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>

namespace adi3 {
namespace {

constexpr Knob kLoaderKnobs[] = {
    {"ADI3_PLUGIN_PATH", "(unset)",
     "Colon-separated directories searched for channel plugins (libadi3_ch_<name>.so) after the "
     "directory of libadi3 itself."},
};

constexpr std::string_view kPrefix = "libadi3_ch_";
constexpr std::string_view kSuffix = ".so";

// Any function of libadi3 tells dladdr which file we were loaded from.
std::string own_directory() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&plugin_search_path), &info) || !info.dli_fname) return {};
  std::string path = info.dli_fname;
  auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

std::string file_for(const std::string& dir, std::string_view name) {
  return dir + "/" + std::string(kPrefix) + std::string(name) + std::string(kSuffix);
}

// Opens one file and checks its descriptor; returns nullptr with `why`.
const adi3_channel_plugin* open_plugin(const std::string& path, std::string& why) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = dlerror();
    why = e ? e : "dlopen failed";
    return nullptr;
  }
  // The handle is deliberately never closed (see loader.hpp).
  auto entry = reinterpret_cast<adi3_channel_plugin_entry>(dlsym(handle, ADI3_CHANNEL_PLUGIN_ENTRY_NAME));
  if (!entry) {
    why = "no " ADI3_CHANNEL_PLUGIN_ENTRY_NAME "() entry point: not an adi3 channel plugin";
    return nullptr;
  }
  const adi3_channel_plugin* p = entry();
  if (!p) {
    why = "its entry point returned no descriptor";
    return nullptr;
  }
  if (p->abi_version != kChannelAbiVersion) {
    why = "built for channel ABI version " + std::to_string(p->abi_version) + ", but this libadi3 expects " +
          std::to_string(kChannelAbiVersion) + " (rebuild the plugin against this libadi3)";
    return nullptr;
  }
  if (!p->name || !p->create) {
    why = "its descriptor has no name or no factory";
    return nullptr;
  }
  return p;
}

std::string available_text(const PluginScan& scan) {
  std::string out;
  for (const auto& f : scan.found) {
    out += "\n  " + std::string(f.plugin->name) + "  (" + f.path + ")";
  }
  if (out.empty()) out = "\n  (no plugins found)";
  out += "\n  inproc  (built in; thread-ranks of one process only)";
  std::string dirs;
  for (const auto& d : plugin_search_path()) dirs += (dirs.empty() ? "" : ":") + d;
  out += "\nsearched: " + dirs + " (add directories with ADI3_PLUGIN_PATH)";
  for (const auto& p : scan.problems) out += "\nnot loadable: " + p;
  return out;
}

}  // namespace

std::span<const Knob> loader_knobs() { return kLoaderKnobs; }

std::vector<std::string> plugin_search_path() {
  std::vector<std::string> dirs;
  auto add = [&](std::string d) {
    while (d.size() > 1 && d.back() == '/') d.pop_back();
    if (!d.empty() && std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.push_back(std::move(d));
  };
  add(own_directory());
  std::string extra = env_string("ADI3_PLUGIN_PATH", "");
  std::size_t start = 0;
  while (start <= extra.size()) {
    std::size_t colon = extra.find(':', start);
    if (colon == std::string::npos) colon = extra.size();
    add(extra.substr(start, colon - start));
    start = colon + 1;
  }
  return dirs;
}

PluginScan scan_channel_plugins() {
  PluginScan scan;
  for (const auto& dir : plugin_search_path()) {
    DIR* d = opendir(dir.c_str());
    if (!d) continue;
    std::vector<std::string> files;
    while (dirent* e = readdir(d)) {
      std::string_view n = e->d_name;
      if (n.size() > kPrefix.size() + kSuffix.size() && n.starts_with(kPrefix) && n.ends_with(kSuffix)) {
        files.emplace_back(n);
      }
    }
    closedir(d);
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      std::string path = dir + "/" + f;
      std::string why;
      const adi3_channel_plugin* p = open_plugin(path, why);
      if (!p) {
        scan.problems.push_back(path + ": " + why);
        continue;
      }
      bool seen = std::any_of(scan.found.begin(), scan.found.end(),
                              [&](const ChannelPluginInfo& i) { return std::string_view(i.plugin->name) == p->name; });
      if (!seen) scan.found.push_back({path, p});
    }
  }
  return scan;
}

ChannelPluginInfo load_channel_plugin(std::string_view name) {
  if (name == "inproc") {
    throw ChannelLoadError(
        "channel 'inproc' runs ranks as threads of one process (adi3::run_thread_ranks) and cannot "
        "connect processes; choose a process channel with ADI3_CHANNEL:" +
        available_text(scan_channel_plugins()));
  }
  for (const auto& dir : plugin_search_path()) {
    std::string path = file_for(dir, name);
    if (access(path.c_str(), F_OK) != 0) continue;
    std::string why;
    if (const adi3_channel_plugin* p = open_plugin(path, why)) {
      if (std::string_view(p->name) == name) return {path, p};
      why = "it calls itself '" + std::string(p->name) + "'";
    }
    throw ChannelLoadError("channel plugin " + path + " cannot be used: " + why +
                           "\navailable channels:" + available_text(scan_channel_plugins()));
  }
  throw ChannelLoadError("no channel named '" + std::string(name) +
                         "' (ADI3_CHANNEL); available channels:" + available_text(scan_channel_plugins()));
}

std::unique_ptr<Channel> create_channel(const ChannelPluginInfo& info, ChannelBootstrap& boot) {
  char error[512] = {};
  Channel* ch = info.plugin->create(&boot, error, sizeof error);
  if (!ch) {
    std::string why = error[0] ? std::string(error) : std::string("no reason given");
    const bool unavailable = why.starts_with(kChannelUnavailable);
    if (unavailable) why.erase(0, kChannelUnavailable.size());
    throw ChannelLoadError("channel '" + std::string(info.plugin->name) + "' failed to start: " + why, unavailable);
  }
  return std::unique_ptr<Channel>(ch);
}

std::string describe_comm_types(uint32_t bits) {
  static constexpr struct {
    uint32_t bit;
    const char* text;
  } kNames[] = {{kPointToPoint, "point-to-point"},
                {kLocalCompletion, "local completion"},
                {kActiveRma, "active RMA (single-copy get/put)"},
                {kPassiveRma, "passive RMA"}};
  std::string out;
  for (const auto& n : kNames) {
    if (bits & n.bit) out += (out.empty() ? "" : ", ") + std::string(n.text);
  }
  return out.empty() ? "none" : out;
}

}  // namespace adi3
