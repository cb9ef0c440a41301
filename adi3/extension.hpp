// The seams the layers above the core (rma/, emul/, greq/, coll/) build on:
// their own packet kinds, dispatched by the progress engine with a per-layer
// context. See LayerPort::register_packet and LayerPort::send_packet.
#pragma once
#include <cstddef>

namespace adi3 {

// Every packet header starts with one byte: its packet id. Core ids are
// below PacketType::FirstExtension; layers get theirs from
// LayerPort::register_packet. An extension header is any size from 1 byte up to
// LayerPort::max_packet_header() (at least 128 on every channel); the layer
// defines the rest. The handler runs in the progress engine (under the poll
// lock, maybe on the agent thread); header and payload are valid only during
// the call, and every byte of them came from another process (check it).
using PacketHandler = void (*)(void* ctx, int src, const void* hdr, std::size_t hdr_bytes, const void* payload,
                               std::size_t payload_bytes);

// The smallest header limit every channel guarantees.
inline constexpr std::size_t kMinPacketHeader = 128;

}  // namespace adi3
