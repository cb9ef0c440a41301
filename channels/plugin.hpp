// The contract between libadi3 and a channel plugin (a shared library
// loaded by name at run time, e.g. libadi3_ch_shm.so).
//
// A plugin exports one C symbol, adi3_channel_plugin_v1, returning a static
// descriptor. The loader checks abi_version before touching anything else,
// so a plugin built against another layout of this header is refused with
// a clear message instead of crashing. Bump kChannelAbiVersion whenever
// this header, channel.hpp, onesided.hpp, packet.hpp or Knob change layout.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "adi3/config.hpp"
#include "channels/channel.hpp"

namespace adi3 {

// 3: OneSided gained a virtual (reaches: channel sets reach only their host).
// 4: OneSided gained a virtual (attentive); 5: OneSided gained wake (Channel: check_liveness).
// 6: Channel gained a virtual (connections: the verbs channel's lazy queue pairs).
// 7: Channel gained expect_payload, PacketSink place and on_placed (tcp reads rendezvous data into place).
// 8: Channel gained get_crossing (shm: one CMA choice for both directions of bidirectional traffic).
// 9: Channel gained offer_began/offer_ended (shm serves split asks inside offered buffers only).
inline constexpr uint32_t kChannelAbiVersion = 9;

// What a channel may use while it starts: who we are, and the launcher's
// key-value space and barrier (PMI, or a local stand-in for a singleton).
// Only valid during create(); a channel must not keep the pointer.
class ChannelBootstrap {
 public:
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Unique per job; safe in file names ([A-Za-z0-9_-] only).
  virtual const std::string& job_id() const = 0;
  // Publish key=value for the other ranks (visible after fence()).
  virtual void put(std::string_view key, std::string_view value) = 0;
  virtual void fence() = 0;
  // A value another rank put before the last fence, or nullopt.
  virtual std::optional<std::string> get(std::string_view key) = 0;
  virtual void barrier() = 0;
  // Longest value put() accepts.
  virtual std::size_t max_value_length() const = 0;
  // The job's shared secret when the launcher gave one (our mpiexec does);
  // nullopt else. Network channels authenticate connections with it.
  virtual std::optional<std::string> job_secret() const { return std::nullopt; }
  // How many hosts the job spans (network channels pick their interface).
  virtual int host_count() const { return 1; }

 protected:
  ~ChannelBootstrap() = default;
};

// A create() error that begins with this says the channel cannot run in
// this job at all, and that every rank reached that conclusion at the same
// collective point (agree_available): the process may then fall back to
// another channel (ADI3_NETMOD) without the ranks disagreeing.
inline constexpr std::string_view kChannelUnavailable = "unavailable: ";

// Every rank says whether it could open what the channel needs (`why`
// empty: it could); when any could not, every rank throws the same
// kChannelUnavailable error naming the first such rank and its reason.
// Collective: one fence, before any other exchange of the channel.
inline void agree_available(ChannelBootstrap& boot, std::string_view channel, const std::string& why) {
  // The reason travels hex-encoded: any PMI wire carries [0-9a-f].
  static constexpr char kHex[] = "0123456789abcdef";
  const std::string key = "adi3-" + std::string(channel) + "-avail-";
  std::string value = why.empty() ? std::string("ok") : std::string("no:");
  for (std::size_t i = 0; i < why.size() && value.size() + 2 <= boot.max_value_length(); ++i) {
    const auto c = static_cast<unsigned char>(why[i]);
    value += kHex[c >> 4];
    value += kHex[c & 15];
  }
  boot.put(key + std::to_string(boot.rank()), value);
  boot.fence();
  for (int r = 0; r < boot.size(); ++r) {
    std::optional<std::string> v = boot.get(key + std::to_string(r));
    if (v && *v == "ok") continue;
    std::string text;
    auto nibble = [](char c) { return c >= 'a' ? c - 'a' + 10 : c - '0'; };
    for (std::size_t i = 3; v && i + 1 < v->size(); i += 2) {
      const char c = static_cast<char>(nibble((*v)[i]) << 4 | nibble((*v)[i + 1]));
      text += c >= ' ' && c != 127 ? c : ' ';  // another rank's bytes: printable only
    }
    throw std::runtime_error(std::string(kChannelUnavailable) + "rank " + std::to_string(r) + ": " +
                             (text.empty() ? std::string("no device") : text));
  }
}

}  // namespace adi3

extern "C" {

struct adi3_channel_plugin {
  uint32_t abi_version;     // kChannelAbiVersion of the plugin's build
  const char* name;         // "shm": what ADI3_CHANNEL selects
  const char* description;  // one line for adi3_info
  uint32_t native;          // CommType bits it can do natively (at best)
  const adi3::Knob* knobs;  // its ADI3_* settings
  std::size_t knob_count;
  // Makes this rank's channel, or returns nullptr with a message in
  // error[0..error_bytes). Must not throw.
  adi3::Channel* (*create)(adi3::ChannelBootstrap* boot, char* error, std::size_t error_bytes);
};

// Every plugin defines this (with default visibility).
typedef const adi3_channel_plugin* (*adi3_channel_plugin_entry)();
}

// The entry point's symbol name; the "_v1" is the entry's own version,
// independent of abi_version (which versions the descriptor's contents).
#define ADI3_CHANNEL_PLUGIN_ENTRY adi3_channel_plugin_v1
#define ADI3_CHANNEL_PLUGIN_ENTRY_NAME "adi3_channel_plugin_v1"

namespace adi3 {

// A plugin's create(): runs make(boot), which may throw; the exception's
// message becomes the error the loader reports (create() must not throw).
template <Channel* (*Make)(ChannelBootstrap&)>
Channel* plugin_create(ChannelBootstrap* boot, char* error, std::size_t error_bytes) noexcept {
  try {
    return Make(*boot);
  } catch (const std::exception& e) {
    std::snprintf(error, error_bytes, "%s", e.what());
  } catch (...) {
    std::snprintf(error, error_bytes, "unknown exception");
  }
  return nullptr;
}

}  // namespace adi3

// Defines a plugin's entry point (once per plugin, at namespace scope):
// its name, one-line description, the CommType bits it can do natively,
// its knobs (a std::span<const adi3::Knob>) and its factory, a function
// adi3::Channel* (adi3::ChannelBootstrap&) that throws on failure.
#define ADI3_DEFINE_CHANNEL_PLUGIN(NAME, DESCRIPTION, NATIVE, KNOBS, MAKE)                                   \
  extern "C" __attribute__((visibility("default"))) const adi3_channel_plugin* ADI3_CHANNEL_PLUGIN_ENTRY() { \
    static const adi3_channel_plugin kPlugin = {                                                             \
        adi3::kChannelAbiVersion,  NAME, DESCRIPTION, NATIVE, (KNOBS).data(), (KNOBS).size(),                \
        &adi3::plugin_create<MAKE>};                                                                         \
    return &kPlugin;                                                                                         \
  }
