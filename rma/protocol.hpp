// The packets of the RMA emulation (type 3 over type 1, type 4 over type 2):
// one fixed header for every kind, so the target checks one size and one
// layout before it reads anything. Counts of operations are cumulative per
// (origin, target, window) over the window's life, so a fence, complete,
// unlock or flush carries "everything I sent you so far" and the target
// compares it with what it applied: no extra round trip, no reset races.
#pragma once
#include <cstddef>
#include <cstdint>

namespace adi3::rma {

enum class Msg : uint8_t {
  Put,        // data of [first, first + payload) of the packed stream into the window
  Acc,        // the same, combined with op
  Get,        // read count elements of the target type: answered by GetResp packets
  GetAcc,     // read then combine one chunk: answered by one GetResp
  Fop,        // fetch_and_op: one element; answered by GetResp
  Cas,        // compare_and_swap: payload = origin element then compare element
  Batch,      // count small puts and gets: payload = count records (BatchRec, then data or token)
  TypeDesc,   // the target datatype of the following operations (payload = description)
  Fence,      // count = operations sent so far; seq = the sender's fence number
  Post,       // the target opened an exposure epoch to the receiver
  Complete,   // count = operations sent so far (end of a start/complete epoch)
  LockReq,    // op = LockKind; asks the target's lock queue
  LockGrant,  // the lock is held
  Unlock,     // count = operations sent so far; seq is echoed by Ack
  Flush,      // count = operations sent so far; seq is echoed by Ack
  Ack,        // unlock or flush done at the target: seq
  GetResp,    // token, first: reply data
  BatchResp,  // the data of a Batch's gets: payload = count records (RespRec, then len data bytes)
  Error,      // the target refused an operation: op = error class, payload = text
  Last
};

enum class LockKind : uint8_t { Shared = 0, Exclusive = 1 };

enum HeaderFlags : uint8_t {
  kUseDesc = 1,  // target type is the one of the last TypeDesc (else elem x count, predefined)
  kNoCheck = 2,  // lock taken with MPI_MODE_NOCHECK (no lock request was sent)
  // A put or accumulate of one packet that carries the flush or unlock
  // behind it: token is then that sync's sequence number, echoed by Ack.
  kAckAfter = 4,
  kRelease = 8,  // with kAckAfter: an unlock (release the lock once applied)
  // With kAckAfter | kRelease on a put or accumulate of one small packet:
  // it also carries the epoch's lock request (kLockExcl: exclusive), so
  // lock/op/unlock is one round trip; the target parks it until granted.
  kLockReq = 16,
  kLockExcl = 32,
  // With the short header: the stream is count elements of elem (total =
  // len = count x the element's bytes), not the payload (a get or a
  // get_accumulate with NO_OP: a request that carries no data).
  kCounted = 64,
  // A large put or get whose data travels as a point-to-point message of
  // the core (its large-message protocol: rendezvous, then the channel's
  // single-copy get or its pipeline), not in packets: the packet names the
  // operation only (emul/rndv.cpp).
  kRndv = 128,
};

struct Header {
  uint8_t id;  // the receiver's packet id for "rma"
  Msg kind;
  uint8_t op;     // coll::OpKind for Acc/GetAcc/Fop; LockKind for LockReq; error class for Error
  uint8_t elem;   // Builtin: element type (accumulates) or the predefined target type
  uint8_t flags;  // HeaderFlags
  // kRndv: 0, its data is one message; else log2 of the bytes of each of
  // the messages it travels as, in order (emul/rndv.cpp).
  uint8_t piece_log;
  uint8_t pad[2];
  uint32_t win;    // the receiver's window slot
  uint32_t gen;    // the receiver's window generation (stale packets are refused)
  uint64_t disp;   // byte displacement in the window (dynamic windows: absolute address)
  uint64_t token;  // origin's reply token (get-like ops) or sequence number (sync)
  // Left out of a one-element header (below).
  uint64_t count;  // elements of the target type; sync packets: cumulative operations
  // Left out of a short header (below).
  uint64_t first;  // offset of this chunk in the packed stream
  uint64_t total;  // bytes of the whole packed stream
  uint64_t len;    // bytes of this chunk (data ops: equals the payload; GetAcc NO_OP has none)
};
static_assert(sizeof(Header) == 64);

// A packet that is its whole stream, all of it in its payload (first 0,
// total and len the payload's bytes: every sync packet and Ack, a small
// put, accumulate, fetch_and_op or reply) goes with the header's first
// kShortHeader bytes; the receiver fills in the rest from the payload.
// With the shm ring's 16-byte record head, an 8-byte put and its Ack then
// take one cache line each instead of two.
inline constexpr std::size_t kShortHeader = offsetof(Header, first);
static_assert(kShortHeader == 40);
inline std::size_t header_bytes(const Header& h, std::size_t payload_bytes) {
  return h.first == 0 && h.total == payload_bytes && h.len == payload_bytes ? kShortHeader : sizeof(Header);
}
// A packet whose stream is one element of the predefined type elem (count
// 1, first 0, total and len the element's bytes: a compare_and_swap, whose
// payload is two operands) may go with the header's first kOneHeader
// bytes; the receiver fills in the rest from elem. A compare_and_swap of 8
// bytes then takes one cache line of the shm ring (16 + 32 + 16 bytes).
inline constexpr std::size_t kOneHeader = offsetof(Header, count);
static_assert(kOneHeader == 32);

// One operation of a Batch packet: a put (kind kBatchPut) of len bytes of
// the predefined type elem at byte displacement disp, its data following,
// a get (kBatchGet) of them, its reply token (8 bytes) following, or an
// accumulate (kBatchAcc) with op, its data following.
enum BatchKind : uint8_t { kBatchPut = 0, kBatchGet = 1, kBatchAcc = 2 };
struct BatchRec {
  uint64_t disp;
  uint32_t len;
  uint8_t elem;
  uint8_t kind;  // BatchKind
  uint8_t op;    // kBatchAcc: coll::OpKind
  uint8_t pad;
};
static_assert(sizeof(BatchRec) == 16);

// The data of one get of a Batch in a BatchResp, in the Batch's order.
struct RespRec {
  uint64_t token;
  uint32_t len;
  uint32_t pad;
};
static_assert(sizeof(RespRec) == 16);

}  // namespace adi3::rma
