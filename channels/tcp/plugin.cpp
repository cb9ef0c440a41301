// The tcp plugin's entry point: descriptor, knobs and factory.
#include <cstdio>
#include <exception>

#include "channels/plugin.hpp"
#include "channels/tcp/tcp_channel.hpp"

namespace adi3::tcp {
namespace {

constexpr Knob kTcpKnobs[] = {
    {"ADI3_TCP_ADDRESS", "127.0.0.1",
     "IPv4 address each rank listens on and publishes to its peers (loopback: one host)."},
    {"ADI3_TCP_PENDING_BYTES", "4194304",
     "Outgoing bytes a rank queues per peer when the socket is full before sends report Busy."},
};

adi3::Channel* create(adi3::ChannelBootstrap* boot, char* error, std::size_t error_bytes) {
  try {
    return new TcpChannel(*boot, TcpSettings::from_env());
  } catch (const std::exception& e) {
    std::snprintf(error, error_bytes, "%s", e.what());
  } catch (...) {
    std::snprintf(error, error_bytes, "unknown exception");
  }
  return nullptr;
}

}  // namespace

std::span<const Knob> tcp_knobs() { return kTcpKnobs; }

TcpSettings TcpSettings::from_env() {
  TcpSettings s;
  s.address = env_string("ADI3_TCP_ADDRESS", "127.0.0.1");
  int64_t limit = env_int("ADI3_TCP_PENDING_BYTES", 4 << 20);
  s.pending_limit = limit < 65536 ? 65536 : static_cast<std::size_t>(limit);
  return s;
}

}  // namespace adi3::tcp

extern "C" __attribute__((visibility("default"))) const adi3_channel_plugin* ADI3_CHANNEL_PLUGIN_ENTRY() {
  static const adi3_channel_plugin kPlugin = {
      adi3::kChannelAbiVersion,
      "tcp",
      "processes connected pairwise by TCP sockets (loopback by default); simple, no single-copy",
      adi3::kPointToPoint,
      adi3::tcp::tcp_knobs().data(),
      adi3::tcp::tcp_knobs().size(),
      &adi3::tcp::create,
  };
  return &kPlugin;
}
