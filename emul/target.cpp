// The target side of the emulations, synchronization and replies: every
// arriving packet is checked against the window before it is used (window
// slot and generation, membership of the sender); operations are applied
// by emul/apply.cpp; fence, post, complete, lock requests, unlock and flush
// are answered here, and the origin's side of the replies (get data, acks,
// grants, refusals) lands here.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include "adi3/device.hpp"
#include "emul/emul.hpp"
#include "rma/hub.hpp"

namespace adi3::emul {

using rma::Header;
using rma::Msg;
using rma::Origin;
using rma::Reply;
using rma::WindowState;

namespace {

void notify_waiters(WindowState& w) {
  if (w.agent) w.dev.notify();
}

// Origin side: a get-like operation has all its reply. With none left, a
// flush that rode on the replies (emul/origin.cpp) is done.
void reply_done(rma::Target& t) {
  if (--t.replies == 0 && t.ack_on_reply > t.acked) t.acked = t.ack_on_reply;
}

// Origin side: a get-like operation is over. Its record goes back to the
// window's spares (a few), so the next get allocates nothing.
void retire(WindowState& w, decltype(w.pending)::iterator it) {
  auto node = w.pending.extract(it);
  *node.mapped() = rma::Pending{};  // releases an unpacker (and its type) now
  constexpr std::size_t kSpares = 64;
  auto& spare = w.spare_pending;
  if (spare.size() == spare.capacity()) {
    if (spare.size() >= kSpares) return;
    try {
      spare.reserve(kSpares);
    } catch (const std::bad_alloc&) {
      return;  // freed instead
    }
  }
  spare.push_back(std::move(node));
}

// Origin side: the short path's reply record that token names, when it
// waits for a reply from `from`; null otherwise.
rma::QuickReply* quick_record(WindowState& w, int from, uint64_t token) {
  rma::QuickReply& q = w.quick[token % rma::kQuickSlots];
  return q.token == token && q.target == from ? &q : nullptr;
}

// Origin side: a short-path operation is over; its record is free again.
void quick_done(WindowState& w, rma::QuickReply& q) {
  q.token = 0;
  w.quick_free |= uint64_t{1} << static_cast<unsigned>(&q - w.quick.data());
  reply_done(w.targets[static_cast<std::size_t>(q.target)]);
}

// Origin side: data of a get-like operation arrived.
void on_reply(WindowState& w, int from, const Header& h, const void* payload, std::size_t bytes) {
  if (h.token & rma::kQuickToken) {
    // One packet holds all of it, straight into the caller's buffer.
    rma::QuickReply* q = quick_record(w, from, h.token);
    if (!q || h.first != 0 || bytes != q->len || h.len != bytes) {
      w.dev.errors().raise(ErrorClass::Intern,
                           "rank %d: reply of %zu bytes at %llu from rank %d refused: operation %llu expects %zu",
                           w.comm.rank, bytes, static_cast<unsigned long long>(h.first), from,
                           static_cast<unsigned long long>(h.token), q ? q->len : std::size_t{0});
      return;
    }
    std::memcpy(q->dst, payload, bytes);
    quick_done(w, *q);
    return;  // on_packet wakes the waiters
  }
  auto it = w.pending.find(h.token);
  if (it == w.pending.end() || it->second->target != from) {
    w.dev.errors().raise(ErrorClass::Intern, "rank %d: reply from rank %d for unknown operation %llu refused",
                         w.comm.rank, from, static_cast<unsigned long long>(h.token));
    return;
  }
  rma::Pending& p = *it->second;
  if (h.first > p.total || bytes > p.total - h.first || bytes != h.len) {
    w.dev.errors().raise(ErrorClass::Intern,
                         "rank %d: reply from rank %d of %zu bytes at %llu exceeds the %zu expected", w.comm.rank, from,
                         bytes, static_cast<unsigned long long>(h.first), p.total);
    return;
  }
  if (p.direct) {
    std::memcpy(p.direct + h.first, payload, bytes);
  } else {
    p.dst->unpack(h.first, h.first + bytes, payload);
  }
  p.got += bytes;
  if (p.got < p.total) return;
  reply_done(w.targets[static_cast<std::size_t>(from)]);
  if (p.req) {
    p.req->status.error = p.error;
    w.dev.complete(p.req);
  }
  retire(w, it);
  notify_waiters(w);
}

// Origin side: the data of the gets of a Batch (emul/batch.cpp), each
// checked against the get it names before a byte is written.
void on_batch_reply(WindowState& w, int from, const Header& h, const void* payload, std::size_t bytes) {
  const auto* p = static_cast<const char*>(payload);
  std::size_t at = 0;
  for (uint64_t i = 0; i < h.count; ++i) {
    rma::RespRec r;
    if (bytes - at < sizeof r) break;
    std::memcpy(&r, p + at, sizeof r);
    at += sizeof r;
    if (r.token & rma::kQuickToken) {
      rma::QuickReply* q = quick_record(w, from, r.token);
      if (!q || r.len != q->len || r.len > bytes - at) break;
      std::memcpy(q->dst, p + at, r.len);
      at += r.len;
      quick_done(w, *q);
      continue;
    }
    auto it = w.pending.find(r.token);
    if (r.len > bytes - at || it == w.pending.end() || it->second->target != from || !it->second->direct ||
        it->second->got != 0 || r.len != it->second->total) {
      break;
    }
    rma::Pending& g = *it->second;
    std::memcpy(g.direct, p + at, r.len);
    at += r.len;
    reply_done(w.targets[static_cast<std::size_t>(from)]);
    if (g.req) {
      g.req->status.error = g.error;
      w.dev.complete(g.req);
    }
    retire(w, it);
  }
  if (at != bytes || bytes != h.len) {
    w.dev.errors().raise(ErrorClass::Intern,
                         "rank %d: reply of %zu bytes from rank %d for %llu batched gets refused after %zu bytes",
                         w.comm.rank, bytes, from, static_cast<unsigned long long>(h.count), at);
  }
  notify_waiters(w);
}

void on_error(WindowState& w, int from, const Header& h, const void* payload, std::size_t bytes) {
  std::string text(static_cast<const char*>(payload), std::min<std::size_t>(bytes, 255));
  auto c = h.op < static_cast<uint8_t>(ErrorClass::LastCode) ? static_cast<ErrorClass>(h.op) : ErrorClass::Other;
  int code = w.dev.errors().raise(c, "%s", text.c_str());
  if (!w.deferred_error) w.deferred_error = code;
  if (!h.token) return;
  if (h.token & rma::kQuickToken) {
    // Whatever else was coming for it will not come.
    if (rma::QuickReply* q = quick_record(w, from, h.token)) quick_done(w, *q);
    notify_waiters(w);
    return;
  }
  if (!w.rndv.empty()) rndv_refused(w, from, h.token);  // a get sent as a message
  auto it = w.pending.find(h.token);
  if (it == w.pending.end() || it->second->target != from) return;
  rma::Pending& p = *it->second;
  p.error = code;
  // Whatever else was coming for it will not come.
  reply_done(w.targets[static_cast<std::size_t>(from)]);
  if (p.req) {
    p.req->status.error = code;
    w.dev.complete(p.req);
  }
  retire(w, it);
  notify_waiters(w);
}

void queue_reply(WindowState& w, int o, Reply&& r) {
  w.origins[static_cast<std::size_t>(o)].out.push_back(std::move(r));
  w.add_queued(1);
}

void sync_ack(WindowState& w, int o, uint64_t seq, bool release);

// A parked operation (see lock_first) whose lock was just granted: applied,
// then acknowledged as the unlock it carries, which releases the lock.
void replay(WindowState& w, int o) {
  Origin& O = w.origins[static_cast<std::size_t>(o)];
  O.parked = false;
  const Header h = O.parked_h;
  apply(w, o, h, O.parked_data, h.len);
  sync_ack(w, o, h.token, true);
}

// Grants the lock to the origins in granted (a release just let them in).
void grant(WindowState& w, int o, const std::vector<int>& granted) {
  for (int g : granted) {
    if (w.origins[static_cast<std::size_t>(g)].parked) {
      replay(w, g);
      continue;
    }
    Reply gr;
    gr.kind = Msg::LockGrant;
    queue_reply(w, g, std::move(gr));
    if (g != o) pump_replies(w, g);
  }
  if (!granted.empty()) pump_replies(w, o);
}

// The Ack of an unlock or flush with nothing queued ahead of it.
void ack_now(WindowState& w, int o, uint64_t token, bool release) {
  Header h{};
  h.kind = Msg::Ack;
  h.token = token;
  if (!release || !w.lockq.waiting()) {
    // Nobody waits for the lock (the common case): no grants to collect.
    if (release) w.lockq.release(o, nullptr);
    send(w, o, h);
    return;
  }
  std::vector<int> granted;
  w.lockq.release(o, &granted);
  send(w, o, h);
  grant(w, o, granted);
}

// Answers an unlock or flush (sequence number seq) once everything owed to
// the origin before it has left and the messages of its large puts and
// gets started before it are done (emul/rndv.cpp).
void sync_ack(WindowState& w, int o, uint64_t seq, bool release) {
  const Origin& O = w.origins[static_cast<std::size_t>(o)];
  if (O.out.empty() && O.rndv_done == O.rndv_started) {
    ack_now(w, o, seq, release);
    return;
  }
  Reply r;
  r.kind = Msg::Ack;
  r.token = seq;
  r.release = release;
  r.rndv = O.rndv_started;
  queue_reply(w, o, std::move(r));
  pump_replies(w, o);
}

// A put or accumulate that carries its epoch's lock request and unlock
// (rma::kLockReq, emul/origin.cpp): true when the lock is granted now (it
// is then applied and acknowledged as any carried unlock). Otherwise it is
// parked (copied: at most 64 bytes, one per origin, as a lawful origin
// waits for its Ack) until the lock queue grants it, or refused, counted
// as applied and acknowledged without a release, so the origin's unlock
// ends with the error.
bool lock_first(WindowState& w, int o, const Header& h, const void* payload, std::size_t bytes) {
  Origin& O = w.origins[static_cast<std::size_t>(o)];
  auto no = [&](ErrorClass c, const char* why) {
    ++O.applied;
    refuse(w, o, h, c, "its lock request: %s", why);
    if (h.flags & rma::kAckAfter) sync_ack(w, o, h.token, false);
    return false;
  };
  const uint8_t ride = rma::kAckAfter | rma::kRelease;
  if ((h.kind != Msg::Put && h.kind != Msg::Acc) || (h.flags & ride) != ride || (h.flags & rma::kUseDesc)) {
    return no(ErrorClass::RmaSync, "only a put or accumulate that ends its epoch carries one");
  }
  if (w.info.no_locks) return no(ErrorClass::RmaSync, "the window was created with no_locks=true");
  if (O.parked || !w.lockq.has_room_for(o)) {
    return no(ErrorClass::RmaSync, "a lock request while it already holds or waits for the lock");
  }
  if (bytes > sizeof O.parked_data || bytes != h.len)
    return no(ErrorClass::Count, "more data than such a packet holds");
  const auto kind = (h.flags & rma::kLockExcl) ? rma::LockKind::Exclusive : rma::LockKind::Shared;
  if (w.lockq.request(o, kind)) return true;
  O.parked = true;
  O.parked_h = h;
  std::memcpy(O.parked_data, payload, bytes);
  return false;
}

}  // namespace

void get_done(WindowState& w, int from, uint64_t token, int error, std::size_t got) {
  auto it = w.pending.find(token);
  if (it == w.pending.end() || it->second->target != from) return;  // ended by an Error packet
  rma::Pending& p = *it->second;
  if (!error && got != p.total) {
    error = w.dev.errors().raise(ErrorClass::Intern, "rank %d: the reply of a get from rank %d held %zu bytes, not %zu",
                                 w.comm.rank, from, got, p.total);
    if (!w.deferred_error) w.deferred_error = error;
  }
  reply_done(w.targets[static_cast<std::size_t>(from)]);
  if (p.req) {
    p.req->status.error = error ? error : p.error;
    w.dev.complete(p.req);
  }
  retire(w, it);
  notify_waiters(w);
}

bool pump_replies(WindowState& w, int o) {
  Origin& O = w.origins[static_cast<std::size_t>(o)];
  const std::size_t chunk = w.dev.port().max_packet_payload();
  std::vector<int> granted;
  bool any = false;
  while (!O.out.empty()) {
    Reply& r = O.out.front();
    Header h{};
    h.kind = r.kind;
    h.token = r.token;
    if (r.kind == Msg::GetResp) {
      // What was sent counts as progress, a stall does not (an agent that
      // took it for progress would spin on a full ring instead of sleeping
      // until the origin drains it and rings our doorbell).
      any |= stream(w, o, h, &r.first, r.total, chunk, r.direct, r.direct ? nullptr : &r.src) != 0;
      if (r.first < r.total) break;  // stalled (the grants collected so far still go out)
      ++O.applied;
    } else if (r.kind == Msg::Ack) {
      if (O.rndv_done < r.rndv) break;  // rndv_reap pumps again
      // Everything before it has left: the epoch's operations are applied.
      if (r.release) w.lockq.release(o, &granted);
      send(w, o, h);
    } else {
      send(w, o, h);
    }
    O.out.pop_front();
    w.add_queued(-1);
    any = true;
  }
  grant(w, o, granted);
  if (any) notify_waiters(w);
  return any;
}

void on_packet(WindowState& w, int peer, const Header& h, const void* payload, std::size_t bytes) {
  // Single-threaded (no agent, no MPI_THREAD_MULTIPLE), no other thread
  // can touch the window: no lock (only this thread turns threads on).
  const MaybeLock g(w.mu, w.dev.threads_enabled());
  // The sender must be a rank of the window.
  const int src = peer >= 0 && static_cast<std::size_t>(peer) < w.comm_of_peer.size()
                      ? w.comm_of_peer[static_cast<std::size_t>(peer)]
                      : -1;
  if (src < 0) {
    w.dev.errors().raise(ErrorClass::Win, "rank %d refused an rma packet from rank %d: not a rank of the window",
                         w.dev.rank(), peer);
    return;
  }
  Origin& O = w.origins[static_cast<std::size_t>(src)];
  rma::Target& T = w.targets[static_cast<std::size_t>(src)];
  switch (h.kind) {
    case Msg::Put:
    case Msg::Acc:
    case Msg::Get:
    case Msg::GetAcc:
    case Msg::Fop:
    case Msg::Cas:
      if (h.flags & rma::kRndv) {
        rndv_serve(w, src, h);
        break;
      }
      if ((h.flags & rma::kLockReq) && !lock_first(w, src, h, payload, bytes)) break;
      apply(w, src, h, payload, bytes);
      if ((h.flags & rma::kAckAfter) && (h.kind == Msg::Put || h.kind == Msg::Acc)) {
        // It carried a flush or unlock: answer as for one.
        sync_ack(w, src, h.token, (h.flags & rma::kRelease) != 0);
      }
      break;
    case Msg::Batch:
      apply_batch(w, src, h, payload, bytes);
      if (h.flags & rma::kAckAfter) sync_ack(w, src, h.token, (h.flags & rma::kRelease) != 0);
      break;
    case Msg::TypeDesc:
      take_desc(w, src, h, payload, bytes);
      break;
    case Msg::Fence:
      ++O.fences;
      O.announced = std::max(O.announced, h.count);
      // Our lazy operations to it (after a NOPRECEDE fence) may go now.
      ++T.fences;
      if (!T.q.empty()) pump(w, src);
      break;
    case Msg::Complete:
      ++O.completes;
      O.announced = std::max(O.announced, h.count);
      break;
    case Msg::Post:
      ++T.posts;
      if (!T.q.empty()) pump(w, src);
      break;
    case Msg::LockReq:
      if (h.op > 1) {
        refuse(w, src, h, ErrorClass::Locktype, "lock type %u", h.op);
        break;
      }
      if (w.info.no_locks) {
        refuse(w, src, h, ErrorClass::RmaSync, "the window was created with no_locks=true");
        break;
      }
      if (!w.lockq.has_room_for(src)) {
        refuse(w, src, h, ErrorClass::RmaSync, "a lock request while it already holds or waits for the lock twice");
        break;
      }
      if (w.lockq.request(src, static_cast<rma::LockKind>(h.op))) {
        if (O.out.empty()) {
          Header r{};
          r.kind = Msg::LockGrant;
          send(w, src, r);
          break;
        }
        Reply r;
        r.kind = Msg::LockGrant;
        queue_reply(w, src, std::move(r));
        pump_replies(w, src);
      }
      break;
    case Msg::LockGrant:
      ++T.grants;
      if (!T.q.empty()) pump(w, src);
      break;
    case Msg::Unlock:
    case Msg::Flush: {
      O.announced = std::max(O.announced, h.count);
      sync_ack(w, src, h.token, h.kind == Msg::Unlock && !(h.flags & rma::kNoCheck));
      break;
    }
    case Msg::Ack:
      T.acked = std::max(T.acked, h.token);
      break;
    case Msg::GetResp:
      on_reply(w, src, h, payload, bytes);
      break;
    case Msg::BatchResp:
      on_batch_reply(w, src, h, payload, bytes);
      break;
    case Msg::Error:
      on_error(w, src, h, payload, bytes);
      break;
    default:
      w.dev.errors().raise(ErrorClass::Intern, "rank %d: rma packet of unknown kind %u from rank %d refused",
                           w.comm.rank, static_cast<unsigned>(h.kind), src);
      return;
  }
  if (!O.out.empty() || !T.q.empty()) w.hub->poke();
  // A thread of this rank may sleep until a sync packet or reply arrives, or
  // (fence, Win_wait) until the operations an origin announced are applied;
  // any other operation wakes nobody (the doorbell's line is the senders'
  // too: ringing it at every packet would move it between cores).
  if (h.kind > Msg::TypeDesc || O.applied == O.announced) notify_waiters(w);
}

}  // namespace adi3::emul
