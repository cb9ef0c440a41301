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

enum PacketFlags : uint8_t {
  kPacketSync = 1,   // synchronous send: acknowledge at the match
  kPacketReady = 2,  // ready send
};

}  // namespace adi3
