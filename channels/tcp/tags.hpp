// What an epoll event of the TCP channel is about: kind in the top byte,
// a peer rank or an incoming-connection id below.
#pragma once
#include <cstdint>

namespace adi3::tcp {

enum class Tag : uint8_t { Wake = 1, Listen, Conn, Dial, Incoming };

inline uint64_t tag(Tag kind, uint64_t id) { return (static_cast<uint64_t>(kind) << 56) | id; }
inline Tag tag_kind(uint64_t t) { return static_cast<Tag>(t >> 56); }
inline uint64_t tag_id(uint64_t t) { return t & ((uint64_t{1} << 56) - 1); }

}  // namespace adi3::tcp
