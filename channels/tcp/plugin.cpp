// The tcp plugin's entry point: descriptor, knobs and factory.
#include <algorithm>

#include "channels/plugin.hpp"
#include "channels/tcp/tcp_channel.hpp"

namespace adi3::tcp {
namespace {

constexpr Knob kTcpKnobs[] = {
    {"ADI3_TCP_IF", "(unset)",
     "Network interface (e.g. eth1) each rank listens on and whose IPv4 address it publishes; wins over "
     "ADI3_TCP_ADDRESS."},
    {"ADI3_TCP_ADDRESS", "127.0.0.1 on one host, else the first interface that is up and not loopback",
     "IPv4 address each rank listens on and publishes; '*' listens on every interface (publishing the first "
     "non-loopback one)."},
    {"ADI3_TCP_PENDING_BYTES", "4194304",
     "Outgoing bytes a rank queues per peer when the socket is full before sends report Busy."},
    {"ADI3_TCP_CONNECT_TIMEOUT", "10000",
     "Milliseconds a connection may take to connect and authenticate before the peer is failed (and an "
     "unauthenticated incoming connection is closed)."},
    {"ADI3_TCP_TIMEOUT", "5000",
     "Milliseconds after which a peer host that stops answering (keepalive probes, unacknowledged data) is "
     "failed."},
};

Channel* make(ChannelBootstrap& boot) { return new TcpChannel(boot, TcpSettings::from_env()); }

}  // namespace

std::span<const Knob> tcp_knobs() { return kTcpKnobs; }

TcpSettings TcpSettings::from_env() {
  TcpSettings s;
  s.interface = env_string("ADI3_TCP_IF", "");
  s.address = env_string("ADI3_TCP_ADDRESS", "");
  int64_t limit = env_int("ADI3_TCP_PENDING_BYTES", 4 << 20);
  s.pending_limit = limit < 65536 ? 65536 : static_cast<std::size_t>(limit);
  s.connect_timeout_ms =
      static_cast<int>(std::clamp<int64_t>(env_int("ADI3_TCP_CONNECT_TIMEOUT", 10000), 100, 3600000));
  s.timeout_ms = static_cast<int>(std::clamp<int64_t>(env_int("ADI3_TCP_TIMEOUT", 5000), 1000, 3600000));
  return s;
}

}  // namespace adi3::tcp

ADI3_DEFINE_CHANNEL_PLUGIN("tcp",
                           "processes on any hosts, one authenticated TCP connection per pair made on first use; no "
                           "single-copy",
                           adi3::kPointToPoint, adi3::tcp::tcp_knobs(), adi3::tcp::make)
