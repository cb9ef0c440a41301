// Type 3 over type 1, origin side: the per-target queue of operations and
// synchronization packets, emitted in order once their gate is open. Data
// is packed from the origin buffer straight into each packet (Payload over
// the origin's Segment), so a large put streams chunk by chunk, each only
// when the channel takes it now (stream(), which the target's replies use
// too): no whole-message temporary, and no chunk copied into a queue.
#include <algorithm>
#include <cstring>
#include <string>

#include "adi3/device.hpp"
#include "emul/emul.hpp"
#include "rma/hub.hpp"
#include "rma/type_desc.hpp"

namespace adi3::emul {

using rma::Gate;
using rma::Header;
using rma::Item;
using rma::Msg;
using rma::Target;
using rma::WindowState;

namespace {

void record_error(WindowState& w, int code) {
  if (code && !w.deferred_error) w.deferred_error = code;
}

// Sends the description of a derived target type unless the target holds it.
void send_desc(WindowState& w, int to, Item& it) {
  Target& t = w.targets[static_cast<std::size_t>(to)];
  it.desc_sent = true;
  it.flags |= rma::kUseDesc;
  if (t.last_desc == it.ttype) return;
  std::vector<uint8_t> bytes = std::move(it.desc);
  if (bytes.empty()) {
    // The target held the type when the operation was issued, no longer:
    // checked then (rma/ops.cpp emulate), so this succeeds.
    std::string why;
    rma::encode_type(it.ttype, bytes, &why);
  }
  // A long description (an indexed type of thousands of blocks) goes in
  // several packets, in order; the target decodes it once it has them all.
  Header h{};
  h.kind = Msg::TypeDesc;
  h.total = bytes.size();
  const std::size_t chunk = w.dev.port().max_packet_payload();
  do {
    h.len = std::min(chunk, bytes.size() - h.first);
    record_error(w, send(w, to, h, Payload{bytes.data() + h.first, h.len, nullptr, 0}));
    h.first += h.len;
  } while (h.first < bytes.size());
  it.ttype->retain();
  if (t.last_desc) t.last_desc->release();
  t.last_desc = it.ttype;
}

// Emits what may go of one operation; true when all of it has left.
bool emit_op(WindowState& w, int to, Item& it) {
  Target& t = w.targets[static_cast<std::size_t>(to)];
  if (it.ttype && !it.desc_sent) send_desc(w, to, it);
  Header h{};
  h.kind = it.kind;
  h.op = it.op;
  h.elem = it.elem;
  h.flags = it.flags;
  h.disp = it.disp;
  h.count = it.count;
  h.total = it.total;
  h.token = it.token;
  if (it.rndv) {
    if (!rndv_start(w, to, it, h)) return false;  // stays queued
    ++t.sent_ops;
    return true;
  }
  switch (it.kind) {
    case Msg::Get:
      record_error(w, send(w, to, h));
      ++t.sent_ops;
      return true;
    case Msg::Fop:
    case Msg::Cas:
      h.len = it.total;  // one element (compare_and_swap: its compare operand follows)
      record_error(w, send(w, to, h, Payload{it.inline_data, it.inline_len, nullptr, 0}));
      ++t.sent_ops;
      return true;
    default:
      break;
  }
  // Put, Acc, GetAcc: chunks of the packed stream. GetAcc with NO_OP
  // carries no data: the chunk only names the range to fetch.
  const bool data = !(it.kind == Msg::GetAcc && it.op == static_cast<uint8_t>(coll::OpKind::NoOp));
  t.sent_ops += stream(w, to, h, &it.sent, it.total, it.chunk, data ? it.data : nullptr, data ? it.src.get() : nullptr);
  return it.sent == it.total;
}

void emit_sync(WindowState& w, int to, Item& it) {
  Target& t = w.targets[static_cast<std::size_t>(to)];
  Header h{};
  h.kind = it.kind;
  h.op = it.op;
  h.flags = it.flags;
  h.count = t.sent_ops;
  h.token = it.token;
  record_error(w, send(w, to, h));
}

// Emits what may go of an item whose gate is open; true when all of it has
// left (then it is done with: its request completes, its type is released).
bool emit(WindowState& w, int to, Item& it) {
  if (!it.is_op()) {
    emit_sync(w, to, it);
    return true;
  }
  if (!emit_op(w, to, it)) return false;  // the rest streams from the progress hook
  // A request-based put or accumulate is locally complete (a put sent as a
  // message completes with it: rndv_start took its request).
  if (it.req) w.dev.complete(it.req);
  if (it.ttype) it.ttype->release();
  return true;
}

bool fetches(Msg k) { return k == Msg::Get || k == Msg::GetAcc || k == Msg::Fop || k == Msg::Cas; }

// A put or accumulate of one packet can carry the flush or unlock behind it.
bool can_carry(const Target& t, const Item& op, const Item& sync) {
  return (op.kind == Msg::Put || op.kind == Msg::Acc) && op.sent == 0 && op.total <= op.chunk &&
         (sync.kind == Msg::Flush || sync.kind == Msg::Unlock) && gate_open(t, sync.gate);
}

void carry(Item& op, const Item& sync) {
  op.flags |= rma::kAckAfter;
  if (sync.kind == Msg::Unlock && !(sync.flags & rma::kNoCheck)) op.flags |= rma::kRelease;
  op.token = sync.token;
}

// Worth holding back: a small put or accumulate in a passive epoch (a
// flush or unlock is likely to follow), no request waiting on it. Its data
// is copied into the item, so the origin buffer is free at once (a
// flush_local needs nothing from a held item).
bool holdable(const WindowState& w, const Item& it) {
  return (w.access == WindowState::Access::Lock || w.access == WindowState::Access::LockAll) &&
         (it.kind == Msg::Put || it.kind == Msg::Acc) && !it.req && it.total <= sizeof it.inline_data &&
         it.total <= it.chunk;
}

// The target was flushed after every operation lately: the operation
// leaves now (from the caller's buffer) and asks for the Ack that the flush
// expected behind it waits for (rma/passive.cpp, flush_target).
void ask_ack(Target& t, Item& it) {
  it.flags |= rma::kAckAfter;
  it.token = ++t.sync_seq;
  t.spec_seq = it.token;
  t.spec_ops = t.queued_ops;
}

// A put or accumulate of one packet in a passive epoch: it can ask for the
// Ack of the flush behind it (no copy needed, so any size up to a packet).
bool askable(const WindowState& w, const Item& it) {
  return (w.access == WindowState::Access::Lock || w.access == WindowState::Access::LockAll) &&
         (it.kind == Msg::Put || it.kind == Msg::Acc) && !it.desc_sent && !it.ttype && it.total <= it.chunk;
}

void hold(WindowState& w, Target& t, Item&& item) {
  t.held = std::move(item);
  Item& h = t.held;
  if (h.data) {
    std::memcpy(h.inline_data, h.data, h.total);
  } else if (h.src) {
    h.src->pack(0, h.total, h.inline_data);
    h.src.reset();
  }
  h.data = reinterpret_cast<const char*>(h.inline_data);
  t.hold = true;
  // Counted as queued: the next progress pass sends it if no push does.
  w.add_queued(1);
  w.hub->poke();
}

// A small put or accumulate that opens a lock epoch (its request not yet
// sent): held with the request owed, so that an unlock right behind it
// takes request, operation and unlock in one packet (rmabench's
// lock/acc/unlock: one round trip instead of two).
bool lock_holdable(const WindowState& w, const Target& t, const Item& it) {
  return holdable(w, it) && !it.ttype && it.gate.kind == Gate::Lock && t.q.empty() && !t.hold && !t.batch_len;
}

// The held operation's lock request goes first after all, then it, through
// the queue (its data stays inline).
void unhold_lock(WindowState& w, Target& t) {
  t.hold_lock = false;
  t.hold = false;
  Item req;
  req.kind = Msg::LockReq;
  req.op = static_cast<uint8_t>(t.lock_kind);
  t.q.push_back(std::move(req));
  t.q.push_back(std::move(t.held));
  Item& op = t.q.back();
  op.data = reinterpret_cast<const char*>(op.inline_data);
  t.held = Item{};
  w.add_queued(1);  // the hold counted one of the two
}

void release_held(WindowState& w, int to) {
  Target& t = w.targets[static_cast<std::size_t>(to)];
  t.hold = false;
  w.add_queued(-1);
  // One packet, the queue empty and the gate open when it was held: it
  // leaves whole (the device copies it when the channel is busy).
  emit(w, to, t.held);
  t.held = Item{};
}

}  // namespace

namespace {
// Addresses h to to's window (after the batch bound there, which goes first).
const rma::PeerWin& address(WindowState& w, int to, Header& h) {
  if (w.targets[static_cast<std::size_t>(to)].batch_len) send_batch(w, to);
  const rma::PeerWin& pw = w.peers[static_cast<std::size_t>(to)];
  h.id = pw.pkt;
  h.win = pw.win;
  h.gen = pw.gen;
  return pw;
}
}  // namespace

int send(WindowState& w, int to, Header& h, const Payload& p) {
  const rma::PeerWin& pw = address(w, to, h);
  return w.dev.port().send_packet(pw.peer, &h, rma::header_bytes(h, p.bytes), p);
}

bool send_chunk(WindowState& w, int to, Header& h, const Payload& p) {
  const rma::PeerWin& pw = address(w, to, h);
  bool sent = false;
  const int e = w.dev.port().try_send_packet(pw.peer, &h, rma::header_bytes(h, p.bytes), p, &sent);
  record_error(w, e);
  return sent || e;  // a failure does not retry (the error reports it)
}

void send_reply(WindowState& w, int to, Header& h, const Payload& p) {
  // The origin reads no total from a reply (it knows its own): one that
  // starts the stream and holds the payload goes in the short form
  // (rma/protocol.hpp header_bytes), whose receiver sets total to the
  // payload's bytes; an 8-byte fetch's reply then takes one cache line of
  // the shm ring, not two.
  if (h.first == 0 && h.len == p.bytes && h.total == 0) h.total = p.bytes;
  if (!send_chunk(w, to, h, p)) record_error(w, send(w, to, h, p));
}

std::size_t stream(WindowState& w, int to, Header& h, std::size_t* first, std::size_t total, std::size_t chunk,
                   const char* direct, Segment* src) {
  std::size_t packets = 0;
  while (*first < total) {
    const std::size_t n = std::min(chunk, total - *first);
    h.first = *first;
    h.len = n;
    Payload p;
    if (direct) {
      p = Payload{direct + *first, n, nullptr, 0};
    } else if (src) {
      p = Payload{nullptr, n, src, *first};
    }
    if (n < total) {
      if (!send_chunk(w, to, h, p)) break;
    } else {
      record_error(w, send(w, to, h, p));  // one packet: copied if the channel is busy
    }
    *first += n;
    ++packets;
  }
  return packets;
}

void flush_on_reply(WindowState& w, int to, uint64_t seq) {
  Target& t = w.targets[static_cast<std::size_t>(to)];
  if (t.batch_len) send_batch(w, to);  // a batch ending with a get leaves now
  if (t.replies == 0) {
    t.acked = std::max(t.acked, seq);
  } else {
    t.ack_on_reply = seq;
  }
}

void push(WindowState& w, int to, Item&& item) {
  Target& t = w.targets[static_cast<std::size_t>(to)];
  if (t.hold_lock) {
    if (item.kind == Msg::Unlock && !(item.flags & rma::kNoCheck)) {
      // Lock request, operation and unlock in one packet. No LockGrant
      // comes for it: the Ack says it was granted, applied and released.
      Item& op = t.held;
      op.flags |= rma::kLockReq | rma::kAckAfter | rma::kRelease;
      if (t.lock_kind == rma::LockKind::Exclusive) op.flags |= rma::kLockExcl;
      op.token = item.token;
      ++t.grants;
      t.hold_lock = false;
      release_held(w, to);
      return;
    }
    unhold_lock(w, t);
  }
  if (t.lock_pending && item.is_op() && lock_holdable(w, t, item)) {
    t.lock_pending = false;
    t.lock_epoch = ++t.lock_reqs;
    item.gate.n = t.lock_epoch;
    ++t.queued_ops;
    t.tail_fetch = false;
    hold(w, t, std::move(item));
    t.hold_lock = true;
    return;
  }
  if (t.lock_pending) {
    // The lazy lock request goes out with the first thing that needs it.
    Item req;
    req.kind = Msg::LockReq;
    req.op = static_cast<uint8_t>(t.lock_kind);
    t.q.push_back(std::move(req));  // first: a queue that cannot grow leaves the lock pending
    t.lock_pending = false;
    t.lock_epoch = ++t.lock_reqs;
    w.add_queued(1);
    if (item.gate.kind == Gate::Lock) item.gate.n = t.lock_epoch;
  }
  if (item.is_op()) {
    ++t.queued_ops;
    // A put's message may land after a later get's reply: until the next
    // flush, that reply does not say the put was applied.
    if (item.rndv && item.kind == Msg::Put) t.rndv_put = true;
    t.tail_fetch = fetches(item.kind) && !t.rndv_put;
  } else if (item.kind == Msg::Flush && t.tail_fetch) {
    flush_on_reply(w, to, item.token);
    return;
  } else if (item.kind == Msg::Flush || item.kind == Msg::Unlock) {
    t.rndv_put = false;  // its Ack waits for those messages (emul/target.cpp)
  }
  if (t.batch_len && !t.hold && t.q.empty() && (item.kind == Msg::Flush || item.kind == Msg::Unlock) &&
      gate_open(t, item.gate)) {
    // The flush or unlock rides on the batch of puts before it.
    const bool release = item.kind == Msg::Unlock && !(item.flags & rma::kNoCheck);
    send_batch(w, to, static_cast<uint8_t>(rma::kAckAfter | (release ? rma::kRelease : 0)), item.token);
    return;
  }
  if (t.hold) {
    // The held operation leaves now, carrying this item if it is its flush
    // or unlock.
    if (can_carry(t, t.held, item)) {
      carry(t.held, item);
      release_held(w, to);
      return;
    }
    release_held(w, to);
  }
  if (t.q.empty() && gate_open(t, item.gate)) {
    if (holdable(w, item) || (t.flush_each_op && askable(w, item))) {
      if (!t.flush_each_op) return hold(w, t, std::move(item));
      ask_ack(t, item);
    }
    // Nothing ahead of it and its gate open: it leaves now, without a trip
    // through the queue (what does not fit the channel yet is queued).
    if (emit(w, to, item)) return;
  }
  t.q.push_back(std::move(item));
  w.add_queued(1);
  pump(w, to);
  if (!t.q.empty()) w.hub->poke();
}

bool pump(WindowState& w, int to) {
  Target& t = w.targets[static_cast<std::size_t>(to)];
  bool any = false;
  if (t.batch_len) {
    // The puts coalesced so far wait no longer either.
    send_batch(w, to);
    any = true;
  }
  if (t.hold_lock) {
    // A progress pass came before the next push: the lock request goes now
    // and the operation behind it once granted.
    unhold_lock(w, t);
    any = true;
  } else if (t.hold) {
    // A progress pass came before the next push: it waits no longer.
    release_held(w, to);
    any = true;
  }
  while (!t.q.empty()) {
    Item& it = t.q.front();
    if (!gate_open(t, it.gate)) break;
    const bool carried = t.q.size() > 1 && can_carry(t, it, t.q[1]);
    if (carried) carry(it, t.q[1]);
    const std::size_t sent = it.sent;
    // A stall (the peer's queue busy) is no progress: see pump_replies.
    if (!emit(w, to, it)) return any || it.sent != sent;
    t.q.pop_front();
    w.add_queued(-1);
    if (carried) {
      t.q.pop_front();
      w.add_queued(-1);
    }
    any = true;
  }
  return any;
}

bool pump_all(WindowState& w) {
  const MaybeLock g(w.mu, w.dev.threads_enabled());  // as on_packet
  bool any = false;
  const bool counters = w.native_active();
  if (!w.rndv.empty()) any |= rndv_reap(w);
  for (std::size_t i = 0; i < w.targets.size(); ++i) {
    if (!w.targets[i].q.empty() || w.targets[i].hold || w.targets[i].batch_len) {
      // Native active target: the gates open on the control blocks' counts.
      if (counters) rma::native::refresh(w, static_cast<int>(i));
      any |= pump(w, static_cast<int>(i));
    }
    if (!w.origins[i].out.empty()) any |= pump_replies(w, static_cast<int>(i));
  }
  return any;
}

}  // namespace adi3::emul
