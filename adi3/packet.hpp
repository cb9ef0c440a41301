// The core's packet header and packet types. Channels carry the header as
// opaque bytes; the device dispatches on `type` through a handler table, so
// adding a protocol (RMA, emulations) is one table entry.
#pragma once
#include <cstddef>
#include <cstdint>

namespace adi3 {

enum class PacketType : uint8_t {
  Eager,                // envelope + the whole message
  Rts,                  // rendezvous request-to-send: envelope + size (+ address)
  Cts,                  // clear-to-send: receiver request + bytes wanted
  Data,                 // rendezvous data at an offset
  Fin,                  // receiver fetched the data itself (native get): sender done
  SyncAck,              // a synchronous send matched
  CancelSend,           // withdraw an unmatched message (MPI_Cancel of a send)
  CancelAck,            // the answer: bytes = 1 when it was withdrawn
  Credit,               // eager credit given back: bytes (adi3/flow.hpp)
  Refused,              // the sender treats us as failed (out of memory): its reason (adi3/nomem.cpp)
  FirstExtension = 16,  // rma/, emul/, greq/ register from here on
  Count = 64,
};

struct PacketHeader {
  PacketType type;
  uint8_t flags;
  uint16_t reserved;
  uint32_t context;
  int32_t source;  // sender's rank in the communicator
  int32_t tag;
  uint64_t bytes;  // message size; Cts: bytes wanted
  uint64_t sreq;   // sender's request id
  uint64_t rreq;   // receiver's request id
  uint64_t addr;   // Rts: sender's buffer (0: no native get); Data: offset
};
static_assert(sizeof(PacketHeader) == 48);
// An eager packet carries only the header's first 32 bytes (up to sreq:
// rreq and addr mean nothing to it), so a record of the shm ring with an
// eager message of up to 16 bytes fills one cache line (16-byte record
// head + 32 + 16). The receiver reads the missing fields as 0.
inline constexpr std::size_t kEagerHeaderBytes = 32;
static_assert(offsetof(PacketHeader, rreq) == kEagerHeaderBytes);

enum PacketFlags : uint8_t {
  kPacketSync = 1,   // synchronous send: acknowledge at the match
  kPacketReady = 2,  // ready send
};

}  // namespace adi3
