// The emulated communication types of the RMA layer:
//  - type 3 over type 1 (origin.cpp and quick.cpp at the origin, apply.cpp
//    and target.cpp at the target): operations travel as packets of the
//    device and are applied by the target's progress engine;
//    every sync packet carries the count of operations sent before it;
//    an operation that fits one packet leaves at once from the caller's
//    buffer when nothing is queued ahead of it; in a passive epoch a small
//    put or accumulate is held back (its data copied) until the next call,
//    so that a flush or unlock right behind it rides on it (one packet and
//    one Ack per flush), and a flush behind a get-like operation sends
//    nothing (the reply says the target applied everything before it);
//  - type 4 over type 2 (target.cpp, lock_queue.*): lock requests, unlock
//    and flush are packets served by the target's agent thread, so passive
//    target progresses while the target computes.
// All functions run with the window's mutex held unless they say otherwise.
#pragma once
#include <cstddef>
#include <cstdint>

#include "channels/channel.hpp"
#include "coll/op.hpp"
#include "rma/window_state.hpp"

namespace adi3::emul {

// ---- origin side (origin.cpp) ----
// Queues item to target (comm rank) behind everything queued before it
// (with the lazy lock request first when one is due) and emits what may go.
void push(rma::WindowState& w, int target, rma::Item&& item);
// Emits queued items to target while their gates are open; large data goes
// one chunk per call when the peer is busy. True if anything was emitted
// (a stall on a busy peer is not progress: the progress engine may sleep).
bool pump(rma::WindowState& w, int target);
// One chunk of a stream of several packets, addressed as send does, only
// if the channel takes it now (never copied into the device's queue: the
// rest of the stream waits for the next pass instead). False: busy,
// nothing sent. A failure is recorded as the window's error and counts as
// sent (the stream ends; its synchronization reports it).
bool send_chunk(rma::WindowState& w, int to, rma::Header& h, const Payload& p);
// Sends the packets of a stream of total bytes (h names its operation) from
// byte *first on, chunk bytes each, packed from direct or else from src
// (neither: the chunks carry no data). A stream of one packet goes whole
// (the device copies it when the channel is busy); each chunk of a longer
// one goes by send_chunk, the rest waiting for the next pass. Advances
// *first; returns the number of packets sent. The one piece of code that
// streams: the origin's puts and accumulates, the target's replies.
std::size_t stream(rma::WindowState& w, int to, rma::Header& h, std::size_t* first, std::size_t total,
                   std::size_t chunk, const char* direct, Segment* src);
// A flush of target (sequence number seq, under a lock it holds) right
// behind a get-like operation: that operation's reply says the target
// applied everything before it (it answers in order), so no Flush packet
// and no Ack; seq counts as acknowledged when no reply is outstanding.
void flush_on_reply(rma::WindowState& w, int target, uint64_t seq);
// Takes the mutex: pumps every target and every reply queue (progress hook).
bool pump_all(rma::WindowState& w);
// Sends one packet of the rma protocol to comm rank `to` (fills in h's
// receiver's packet id and window slot: no copy of the header). Returns
// the device's error code.
int send(rma::WindowState& w, int to, rma::Header& h, const Payload& p = {});
// A reply of one packet: straight into the channel when it takes it now
// (send_chunk), else as send does (copied into the device's queue).
void send_reply(rma::WindowState& w, int to, rma::Header& h, const Payload& p);

// ---- the short origin path (quick.cpp; take the mutex themselves) ----
// A put or get of count elements of one predefined contiguous type (the
// same on both sides) to a target it may leave for now, on a window no
// rank maps: sent as one packet at once. False (nothing done) sends it the
// general way (rma/ops.cpp issue), which also names every error.
bool quick_put_now(rma::WindowState& w, const void* origin, int64_t count, const Datatype* type, int target,
                   std::ptrdiff_t disp);
bool quick_get_now(rma::WindowState& w, void* result, int64_t count, const Datatype* type, int target,
                   std::ptrdiff_t disp);
// An accumulate of the same kind (op: a predefined op the elements take,
// not NO_OP) in a fence epoch or flushed after each operation: one packet
// at once (the latter asking for the flush's Ack).
bool quick_acc_now(rma::WindowState& w, const void* origin, int64_t count, const Datatype* type, int target,
                   std::ptrdiff_t disp, coll::OpKind op);
// A get_accumulate (kind GetAcc: count elements, op a predefined op the
// elements take, NO_OP and REPLACE included), fetch_and_op (Fop) or
// compare_and_swap (Cas, op unused) of one packet: its reply lands in
// result, through a record of the window's fixed table (rma::QuickReply).
bool quick_fetch_now(rma::WindowState& w, rma::Msg kind, const void* origin, const void* compare, void* result,
                     int64_t count, const Datatype* type, int target, std::ptrdiff_t disp, coll::OpKind op);
// quick_fetch_now of a fetch_and_op or compare_and_swap whose arguments
// the caller proved (rma/native_cma.cpp cma_atomic_known: one element of
// predefined type b, es bytes without padding, an op it takes, the
// operands there, a target of a window from create): only the range is
// checked here.
bool quick_fetch_known(rma::WindowState& w, rma::Msg kind, const void* origin, const void* compare, void* result,
                       Builtin b, std::size_t es, int target, std::ptrdiff_t disp, coll::OpKind op);
// Their first tests, inline: an operation they never take (a mapped
// window, mixed types) pays a few instructions. A small put goes the
// general way (held for the flush behind it) unless a flush follows each
// operation: then it leaves at once asking for that flush's Ack.
inline bool quick_types(const rma::WindowState& w, int64_t ocount, const Datatype* otype, int64_t tcount,
                        const Datatype* ttype) {
  return !w.native_usable && otype == ttype && ttype && ocount == tcount && tcount > 0 && tcount <= (int64_t{1} << 40);
}
inline bool quick_put(rma::WindowState& w, const void* origin, int64_t ocount, const Datatype* otype, int target,
                      std::ptrdiff_t disp, int64_t tcount, const Datatype* ttype) {
  return quick_types(w, ocount, otype, tcount, ttype) && quick_put_now(w, origin, tcount, ttype, target, disp);
}
inline bool quick_get(rma::WindowState& w, void* result, int64_t ocount, const Datatype* otype, int target,
                      std::ptrdiff_t disp, int64_t tcount, const Datatype* ttype) {
  return quick_types(w, ocount, otype, tcount, ttype) && quick_get_now(w, result, tcount, ttype, target, disp);
}
inline bool quick_acc(rma::WindowState& w, const void* origin, int64_t ocount, const Datatype* otype, int target,
                      std::ptrdiff_t disp, int64_t tcount, const Datatype* ttype, coll::OpKind op) {
  return op < coll::OpKind::NoOp && quick_types(w, ocount, otype, tcount, ttype) &&
         quick_acc_now(w, origin, tcount, ttype, target, disp, op);
}

inline bool quick_fop(rma::WindowState& w, const void* origin, void* result, const Datatype* type, int target,
                      std::ptrdiff_t disp, coll::OpKind op) {
  return !w.native_usable && type &&
         quick_fetch_now(w, rma::Msg::Fop, origin, nullptr, result, 1, type, target, disp, op);
}
inline bool quick_cas(rma::WindowState& w, const void* origin, const void* compare, void* result, const Datatype* type,
                      int target, std::ptrdiff_t disp) {
  return !w.native_usable && type &&
         quick_fetch_now(w, rma::Msg::Cas, origin, compare, result, 1, type, target, disp, coll::OpKind::Replace);
}
inline bool quick_get_acc(rma::WindowState& w, const void* origin, int64_t ocount, const Datatype* otype, void* result,
                          int64_t rcount, const Datatype* rtype, int target, std::ptrdiff_t disp, int64_t tcount,
                          const Datatype* ttype, coll::OpKind op) {
  return rtype == ttype && rcount == tcount && quick_types(w, ocount, otype, tcount, ttype) &&
         quick_fetch_now(w, rma::Msg::GetAcc, origin, nullptr, result, tcount, ttype, target, disp, op);
}

// ---- small puts and gets coalesced per target (batch.cpp) ----
// Origin, under w.mu: appends a put of bytes of predefined type b at byte
// offset off of target's window to its batch (the data is copied, so the
// origin buffer is free at once), or a get of them whose reply (token,
// registered in w.pending) lands at the origin buffer; false (nothing
// done) when the operation is too large for a batch or room for one
// cannot be had.
bool batch_put(rma::WindowState& w, int target, Builtin b, uint64_t off, const void* data, std::size_t bytes);
bool batch_get(rma::WindowState& w, int target, Builtin b, uint64_t off, std::size_t bytes, uint64_t token);
// An accumulate with op of bytes of predefined type b (data copied), the
// same way; the target applies it in order with the records around it.
bool batch_acc(rma::WindowState& w, int target, Builtin b, coll::OpKind op, uint64_t off, const void* data,
               std::size_t bytes);
// Sends target's batch, if any, as one Batch packet (flags and token:
// the flush or unlock riding on it, rma::kAckAfter). Every packet to
// target goes after it (emul::send and the short path call this first).
void send_batch(rma::WindowState& w, int target, uint8_t flags = 0, uint64_t token = 0);
// Target, under w.mu: checks and applies every record of a Batch from
// origin in order, its gets answered by one BatchResp; each counts as
// applied, refused ones too (reported to origin).
void apply_batch(rma::WindowState& w, int origin, const rma::Header& h, const void* payload, std::size_t bytes);
// Stores n bytes of a put at dst (one aligned element as one atomic store).
void put_bytes(char* dst, const void* src, std::size_t n);

// ---- large puts and gets as point-to-point messages (rndv.cpp) ----
// Whether a put or get of bytes to target (comm rank) sends its data as a
// message of the core (its large-message protocol) instead of in packets.
bool rndv_fits(const rma::WindowState& w, rma::Msg kind, int target, std::size_t bytes);
// Origin: sends the packet of such an operation (h, addressed as send
// does) and starts its message: a put's from the origin buffer, a get's
// receive into it (before the packet). The item's request, if any, now
// completes with the message. False: a put waits (nothing sent) while
// pieces of an earlier put to that target are still owed.
bool rndv_start(rma::WindowState& w, int to, rma::Item& it, rma::Header& h);
// Target: such a packet from origin: checked as apply checks any
// operation, then the put's receive into the window or the get's message
// from it started; a refused put's message is drained (a refused get's
// origin cancels its receive: rndv_refused).
void rndv_serve(rma::WindowState& w, int origin, const rma::Header& h);
// Both sides: ends the operations whose messages are done (counts a put
// or get as applied at the target, answers the acks waiting for them).
// True if any ended.
bool rndv_reap(rma::WindowState& w);
// Origin: the target refused the get of token: its receive is cancelled
// (no message comes; rndv_reap then finds it done).
void rndv_refused(rma::WindowState& w, int from, uint64_t token);
// Window free: cancels the receives left to drain refused puts that never came.
void rndv_end(rma::WindowState& w);
// Origin: the get whose reply token is token, to target from, is over:
// its message arrived with got bytes (fewer than the get's is an error),
// or failed with error.
void get_done(rma::WindowState& w, int from, uint64_t token, int error, std::size_t got);
// Target: an operation's target datatype and window address, checked
// (datatype, count, stream size, range); false: refused (reported to
// origin; not counted).
bool target_of(rma::WindowState& w, int origin, const rma::Header& h, const Datatype** type, char** addr);

// ---- target side (target.cpp) ----
// A packet from channel rank peer for this window (takes the mutex).
void on_packet(rma::WindowState& w, int peer, const rma::Header& h, const void* payload, std::size_t bytes);
// Emits queued replies to origin (get data, grants, acks). True if anything
// was emitted.
bool pump_replies(rma::WindowState& w, int origin);
// A TypeDesc packet from origin (desc_in.cpp): gathered with the parts
// before it, then rebuilt as the target type of origin's next operations;
// a bad or unbuildable one is refused (reported to origin).
void take_desc(rma::WindowState& w, int origin, const rma::Header& h, const void* payload, std::size_t bytes);

// ---- target side, applying operations (plain.cpp, apply.cpp) ----
// A put, accumulate, get or fetching operation of a contiguous run of one
// predefined type in a window with a fixed base, applied (and answered)
// as apply would, in a few tests; false (nothing done) for anything else,
// errors included. Allocates nothing.
bool apply_plain(rma::WindowState& w, int origin, const rma::Header& h, const void* payload, std::size_t bytes);
// Put, Acc, Get, GetAcc, Fop or Cas from comm rank origin: checked, then
// applied (a get's data sent or queued). A refused one, or one this rank
// runs out of memory applying, is reported to its origin and still counts
// as applied, so the origin's synchronization ends (with the error).
void apply(rma::WindowState& w, int origin, const rma::Header& h, const void* payload, std::size_t bytes);
// Logs a refused packet here and reports it to its origin (with the reply
// token, so a get-like operation waiting for data completes with it).
__attribute__((format(printf, 5, 6))) void refuse(rma::WindowState& w, int origin, const rma::Header& h, ErrorClass c,
                                                  const char* fmt, ...);

}  // namespace adi3::emul
