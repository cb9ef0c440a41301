// Large puts and gets over the core's point-to-point large-message
// protocol (type 3 over type 1, as MPICH's ch3 sends an RMA payload through
// its LMT): the operation's packet names it (kRndv, no data) and its data
// travels as one message of a context of its own, from the origin buffer
// into the window (a put) or from the window into the origin buffer (a
// get), each side described by its own datatype. The core then moves it
// the way MPI_Send of that size goes: rendezvous, then the channel's
// single-copy get or its two-copy pipeline; no chunk of it passes through
// the RMA layer, and derived types stream through the core's Segments.
// Puts and gets go so when larger than one packet and the core may fetch
// their message in one copy (rndv_fits); those of more than 1 MiB whose
// data is one run on both sides go as several messages (pieces, below).
//
// Order: the packet goes before the message's request-to-send in the
// per-peer FIFO, so the target posts the put's receive before the message
// arrives, and each receiver's windows have tags of their own (slot x 2,
// + 1 for get replies), so messages of one pair match in issue order.
// Completion: a put counts as applied at the target when its receive is
// done, a get when its message has left; an unlock or flush is
// acknowledged only after the messages started before it are done
// (emul/target.cpp), and the origin's synchronizations wait for its own
// messages (rma/sync.hpp locally_done). rndv_reap, from the progress hook,
// ends them.
#include <algorithm>
#include <cstdio>

#include "adi3/device.hpp"
#include "emul/emul.hpp"
#include "rma/hub.hpp"

namespace adi3::emul {

using rma::Header;
using rma::Item;
using rma::Msg;
using rma::WindowState;
using Op = WindowState::RndvOp;

namespace {

// The context of the windows' messages (greq's ibarrier has + 1).
constexpr uint32_t kRmaContext = kInternalContext + 2;

int tag_of(uint32_t slot, bool reply) { return static_cast<int>(slot * 2 + (reply ? 1 : 0)); }

const Comm& comm_of(WindowState& w) {
  if (w.rndv_comm.size == 0) {
    w.rndv_comm = w.comm;
    w.rndv_comm.context = kRmaContext;
    w.rndv_comm.buffers = nullptr;
  }
  return w.rndv_comm;
}

// Room for n more records (so that track cannot throw once a message started).
void room(WindowState& w, std::size_t n = 1) {
  if (w.rndv.size() + n > w.rndv.capacity()) w.rndv.reserve(std::max<std::size_t>(16, 2 * w.rndv.size() + n));
}

void track(WindowState& w, const Op& op) {
  w.rndv.push_back(op);
  // The hook keeps running while any is pending (Window::free waits too),
  // except for a drain, which a hostile origin may never feed.
  if (op.role != Op::Drain) w.add_queued(1);
  w.hub->poke();
}

// Pieces: an operation of more than 1 MiB whose data is one run on both
// sides travels as messages of at most 1 MiB (at most kMaxPieces of them),
// all started at once. The channel fetches each in one copy as it does a
// 1 MiB message; one 4 MiB message was mostly left to shm's two-copy
// pipeline by its timed choice (s20: gets of 4 MiB 8.1 GB/s, of 1 MiB 18.8).
constexpr unsigned kPieceLog = 20;
constexpr unsigned kMinPieceLog = 16, kMaxPieceLog = 40;
constexpr std::size_t kMaxPieces = 4096;

unsigned piece_log_for(std::size_t total) {
  if (total <= (std::size_t{1} << kPieceLog)) return 0;
  unsigned lg = kPieceLog;
  while (lg < kMaxPieceLog && ((total - 1) >> lg) + 1 > kMaxPieces) ++lg;
  return lg;
}

std::size_t pieces_of(std::size_t total, unsigned lg) { return lg ? ((total - 1) >> lg) + 1 : 1; }

// Piece k of n of total bytes from base (the whole operation when n is 1).
struct Piece {
  char* at;
  std::size_t bytes;
};
Piece piece(char* base, std::size_t total, unsigned lg, std::size_t k) {
  if (!lg) return {base, total};
  const std::size_t off = k << lg;
  return {base + off, std::min(total - off, std::size_t{1} << lg)};
}

uint32_t next_group(WindowState& w) {
  if (++w.rndv_groups == 0) ++w.rndv_groups;
  return w.rndv_groups;
}

// A piece of a group ended while another of its group is pending: that one
// takes its error, bytes and request. False: it was the group's last.
bool hand_on(WindowState& w, const Op& op) {
  if (!op.group) return false;
  for (Op& o : w.rndv) {
    const bool same = o.role == op.role || (op.role == Op::PutOut && o.role == Op::OwedSend);
    if (o.group != op.group || !same || o.rank != op.rank) continue;
    if (!o.error) o.error = op.error;
    o.got += op.got;
    if (op.user) o.user = op.user;
    return true;
  }
  return false;
}

void record(WindowState& w, int e) {
  if (e && !w.deferred_error) w.deferred_error = e;
}

// Owed pieces: the peer waits for n pieces of a put that could not start
// here (no request or memory left). Each goes empty as soon as a request
// is free (the pieces that started free theirs): a zero-byte send from the
// origin (the target then finds the put short and refuses it), a drain at
// the target (the origin's message then completes). Messages of one pair
// and tag match in order, so until they have gone no later put's message
// to that target leaves (origin) and no later put's receive from that
// origin is posted (target). Room for them was made.
void owe(WindowState& w, const Op& like, Op::Role role, std::size_t n) {
  if (n == 0) return;
  Op op = like;
  op.role = role;
  op.msg = nullptr;
  op.user = nullptr;
  const auto r = static_cast<std::size_t>(op.rank);
  if (role == Op::OwedSend) {
    w.targets[r].rndv_owed += static_cast<int>(n);  // queued and counted out with the started pieces
  } else {
    op.group = 0;
    w.origins[r].rndv_owed += static_cast<int>(n);
    w.add_queued(static_cast<int>(n));  // the hook retries until they are posted
  }
  w.rndv.insert(w.rndv.end(), n, op);
  w.hub->poke();
}

// Starts an owed piece if a request is free; true if it did.
bool start_owed(WindowState& w, Op& op) {
  // None free: no attempt (each would log an error).
  if (w.dev.live_requests() >= w.dev.request_capacity()) return false;
  const Comm& c = comm_of(w);
  const auto r = static_cast<std::size_t>(op.rank);
  Request* m = nullptr;
  if (op.role == Op::OwedSend) {
    if (w.dev.isend_checked(&w, 0, Datatype::byte(), op.rank, tag_of(w.peers[r].win, false), c, SendMode::Standard,
                            &m)) {
      return false;
    }
    op.role = Op::PutOut;
    --w.targets[r].rndv_owed;
  } else {
    if (w.dev.irecv_checked(&w, 0, Datatype::byte(), op.rank, tag_of(w.slot, false), c, &m)) return false;
    op.role = Op::Drain;
    --w.origins[r].rndv_owed;
    w.add_queued(-1);  // as any drain, it no longer keeps the hook running
  }
  op.msg = m;
  return true;
}

// Starts the pieces owed in role to or from rank; true when none is left.
bool pay_owed(WindowState& w, Op::Role role, int rank) {
  for (Op& op : w.rndv) {
    if (op.role == role && op.rank == rank && !start_owed(w, op)) return false;
  }
  return true;
}

}  // namespace

// One rule for puts and gets, from the channel's capabilities: an
// operation whose data fits one packet goes as that packet (two copies, no
// round trip); a larger one rides a message wherever the core may fetch it
// in one copy (get_min), which is then a rendezvous too (the eager limit
// is at most one packet). Forced emulation over shm, 16 per flush on a
// create window, best flush of 200-300, 7 alternated launches at load
// 14-17 (30 Nov 2026), packets against messages: 32 KiB even (puts
// 7.8-9.2 against 7.9-8.9 GB/s, gets 7.5-10.9 against 7.5-11.7); 48 KiB
// puts 7.4-12.7 against 14.0-15.2, gets 7.7-12.2 against 13.7-14.5; 64 KiB
// puts 8.0-14.4 against 15.1-16.3, gets 7.8-12.9 against 15.0-15.8.
// Without a single copy (tcp, ADI3_RNDV_GET=0) the message would stream
// through the same channel after a round trip: gets of 256 KiB and 1 MiB
// ran even either way (7.6-13.3 GB/s); puts of 64 KiB ran slower as
// messages (session 19: 0.3-0.9 against 1.1-1.8 GB/s at load 20).
// Not on a dynamic window: its target may detach the memory while the
// message is still on its way (a packet is checked against the attached
// regions when it lands; tests/rma/dynamic_test.cpp DetachUnderAccess).
bool rndv_fits(const WindowState& w, Msg kind, int target, std::size_t bytes) {
  if ((kind != Msg::Put && kind != Msg::Get) || target == w.comm.rank || bytes <= w.dev.port().max_packet_payload() ||
      w.flavor == WinFlavor::Dynamic) {
    return false;
  }
  const int peer = w.comm.to_peer(target);
  return w.dev.rndv_get_to(peer) && bytes >= w.dev.caps_of(peer).get_min;
}

bool rndv_start(WindowState& w, int to, Item& it, Header& h) {
  rma::Target& t = w.targets[static_cast<std::size_t>(to)];
  const bool get = it.kind == Msg::Get;
  if (!get && t.rndv_owed && !pay_owed(w, Op::OwedSend, to)) return false;
  const Datatype* tt = it.ttype ? it.ttype : Datatype::builtin(static_cast<Builtin>(it.elem));
  const unsigned lg = it.utype->is_contiguous() && tt->is_contiguous() ? piece_log_for(it.total) : 0;
  const std::size_t n = pieces_of(it.total, lg);
  room(w, n);  // out of memory, nothing has started
  h.flags |= rma::kRndv;
  h.first = 0;
  h.len = 0;
  h.piece_log = static_cast<uint8_t>(lg);
  Op op;
  op.role = get ? Op::GetIn : Op::PutOut;
  op.rank = to;
  op.h.token = it.token;
  op.group = n > 1 ? next_group(w) : 0;
  const Comm& c = comm_of(w);
  const int tag = get ? tag_of(w.slot, true) : tag_of(w.peers[static_cast<std::size_t>(to)].win, false);
  char* base = static_cast<char*>(it.ubuf) + it.utype->true_lb();
  const std::size_t mark = w.rndv.size();
  auto start = [&](std::size_t k) {
    Op p = op;
    const Piece pc = piece(base, it.total, lg, k);
    const void* buf = lg ? pc.at : it.ubuf;
    const auto count = lg ? pc.bytes : static_cast<std::size_t>(it.ucount);
    const Datatype* type = lg ? Datatype::byte() : it.utype;
    const int e = get ? w.dev.irecv_checked(const_cast<void*>(buf), count, type, to, tag, c, &p.msg)
                      : w.dev.isend_checked(buf, count, type, to, tag, c, SendMode::Standard, &p.msg);
    if (!e) w.rndv.push_back(p);  // room was made
    return e;
  };
  int e = 0;
  if (get) {
    // The receives first: the reply may come as soon as the packet lands.
    for (std::size_t k = 0; k < n && !e; ++k) e = start(k);
    if (!e) e = send(w, to, h);
    if (e) {
      // The packet did not go: its receives are never answered.
      for (std::size_t i = mark; i < w.rndv.size(); ++i) {
        w.dev.cancel(w.rndv[i].msg);
        w.dev.release(w.rndv[i].msg);
      }
      w.rndv.resize(mark);
    }
  } else {
    // The packet first: the target posts the receives when it arrives,
    // and waits for every piece it announced.
    e = send(w, to, h);
    if (!e) {
      std::size_t k = 0;
      while (k < n && !(e = start(k))) ++k;
      if (e) owe(w, op, Op::OwedSend, n - k);
    }
  }
  it.utype->release();
  it.utype = nullptr;
  const std::size_t started = w.rndv.size() - mark;
  if (e) record(w, e);
  if (started == 0) {
    if (get) {
      get_done(w, to, it.token, e, 0);
    } else if (it.req) {
      it.req->status.error = e;
      w.dev.complete(it.req);
      it.req = nullptr;
    }
    return true;
  }
  // (A put whose later pieces could not start ends with that error: they
  // are owed.)
  if (e) w.rndv.back().error = e;
  if (!get) {
    w.rndv.back().user = it.req;  // an rput completes with its messages
    it.req = nullptr;
    t.rndv_out += static_cast<int>(started);
  }
  w.add_queued(static_cast<int>(started));
  w.hub->poke();
  return true;
}

void rndv_serve(WindowState& w, int o, const Header& h) {
  rma::Origin& O = w.origins[static_cast<std::size_t>(o)];
  if (h.kind != Msg::Put && h.kind != Msg::Get) {
    // A lawful origin sends no other kind so: no message follows it.
    ++O.applied;
    refuse(w, o, h, ErrorClass::Intern, "only a put or a get travels as a message");
    return;
  }
  const bool get = h.kind == Msg::Get;
  const Comm& c = comm_of(w);
  const Datatype* t = nullptr;
  char* addr = nullptr;
  const unsigned lg = h.piece_log;
  const bool lawful_lg = lg == 0 || (lg >= kMinPieceLog && lg <= kMaxPieceLog);
  const std::size_t n = lawful_lg ? std::min(pieces_of(h.total, lg), kMaxPieces) : 1;
  Op op;
  op.rank = o;
  op.h = h;
  room(w, n);
  int e = 0;
  bool ok = target_of(w, o, h, &t, &addr);
  if (ok && lg && (!lawful_lg || !t->is_contiguous() || pieces_of(h.total, lg) > kMaxPieces)) {
    refuse(w, o, h, ErrorClass::Intern, "its pieces of 2^%u bytes do not fit its target type", lg);
    ok = false;
  }
  if (ok) {
    op.role = get ? Op::GetOut : Op::PutIn;
    op.group = n > 1 ? next_group(w) : 0;
    const int tag = get ? tag_of(w.peers[static_cast<std::size_t>(o)].win, true) : tag_of(w.slot, false);
    const std::size_t mark = w.rndv.size();
    if (!get && O.rndv_owed && !pay_owed(w, Op::OwedDrain, o)) {
      e = w.dev.errors().raise(ErrorClass::NoMem, "rank %d: no request free to drain the put pieces rank %d still owes",
                               w.comm.rank, o);
    }
    for (std::size_t k = 0; k < n && !e; ++k) {
      Op p = op;
      const Piece pc = piece(addr + t->true_lb(), h.total, lg, k);
      void* buf = lg ? pc.at : addr;
      const auto count = lg ? pc.bytes : static_cast<std::size_t>(h.count);
      const Datatype* type = lg ? Datatype::byte() : t;
      e = get ? w.dev.isend_checked(buf, count, type, o, tag, c, SendMode::Standard, &p.msg)
              : w.dev.irecv_checked(buf, count, type, o, tag, c, &p.msg);
      if (!e) w.rndv.push_back(p);
    }
    const std::size_t started = w.rndv.size() - mark;
    // Pieces that could not start end the operation with that error when
    // the others are done (a get's origin then cancels the rest; a put's
    // origin sends them all: they are drained).
    if (started && e) w.rndv.back().error = e;
    if (!get && e) owe(w, op, Op::OwedDrain, n - started);
    if (started) {
      record(w, e);
      O.rndv_started += started;
      w.add_queued(static_cast<int>(started));
      w.hub->poke();
      return;
    }
  } else if (!get) {
    // Refused (reported): the put's messages are drained into no byte of
    // the window. (The get's origin cancels its receives on the refusal.)
    op.role = Op::Drain;
    std::size_t k = 0;
    if (!O.rndv_owed || pay_owed(w, Op::OwedDrain, o)) {
      for (; k < n; ++k) {
        if (w.dev.irecv_checked(&O, 0, Datatype::byte(), o, tag_of(w.slot, false), c, &op.msg)) break;
        track(w, op);
      }
    }
    owe(w, op, Op::OwedDrain, n - k);
  }
  ++O.applied;
  if (e) {
    // Out of requests or memory: the origin learns it (a get's receives
    // are then cancelled there).
    record(w, e);
    refuse(w, o, h, error_class_of(e), "its message could not start here");
  }
}

bool rndv_reap(WindowState& w) {
  bool any = false;
  std::size_t i = 0;
  while (i < w.rndv.size()) {
    if (!w.rndv[i].msg) {
      any |= start_owed(w, w.rndv[i]);  // ends in a later pass
      ++i;
      continue;
    }
    if (!w.rndv[i].msg->complete()) {
      ++i;
      continue;
    }
    Op op = w.rndv[i];
    w.rndv[i] = w.rndv.back();
    w.rndv.pop_back();
    if (op.role != Op::Drain) w.add_queued(-1);
    const int e = op.msg->status.error;
    if (!op.error) op.error = e;
    op.got += op.msg->status.bytes;
    w.dev.release(op.msg);
    any = true;
    // What each message ends, then what the operation's last one ends.
    if (op.role == Op::PutOut) {
      --w.targets[static_cast<std::size_t>(op.rank)].rndv_out;
      record(w, e);
    } else if (op.role == Op::PutIn || op.role == Op::GetOut) {
      ++w.origins[static_cast<std::size_t>(op.rank)].rndv_done;
    }
    if (hand_on(w, op)) continue;
    switch (op.role) {
      case Op::PutOut:
        if (op.user) {
          op.user->status.error = op.error;
          w.dev.complete(op.user);
        }
        break;
      case Op::GetIn:
        get_done(w, op.rank, op.h.token, op.error, op.got);
        break;
      case Op::PutIn:
      case Op::GetOut: {
        rma::Origin& O = w.origins[static_cast<std::size_t>(op.rank)];
        ++O.applied;
        // A put some of whose pieces came empty (its origin could not
        // start them) is short: refused, as a failed one. A message that
        // failed here is refused with its own class and reason (a piece
        // that found no request is ERR_NO_MEM, not a truncation).
        if (op.error) {
          char reason[160];  // no allocation: the reason may be a lack of memory
          if (!w.dev.errors().text(op.error, reason, sizeof reason)) {
            std::snprintf(reason, sizeof reason, "%s", error_class_text(error_class_of(op.error)));
          }
          refuse(w, op.rank, op.h, error_class_of(op.error), "its message failed (%zu of %llu bytes): %s", op.got,
                 static_cast<unsigned long long>(op.h.total), reason);
        } else if (op.role == Op::PutIn && op.got != op.h.total) {
          refuse(w, op.rank, op.h, ErrorClass::Truncate, "its message came short (%zu of %llu bytes)", op.got,
                 static_cast<unsigned long long>(op.h.total));
        }
        // An Ack waits for the messages started before it (a group's
        // pieces all start together: its last one ends after them).
        if (!O.out.empty()) pump_replies(w, op.rank);
        break;
      }
      case Op::Drain:
      case Op::OwedSend:  // (never here: no message yet)
      case Op::OwedDrain:
        break;
    }
  }
  // A flush, fence or Win_wait of this rank may sleep until these counts move.
  if (any && w.agent) w.dev.notify();
  return any;
}

void rndv_refused(WindowState& w, int from, uint64_t token) {
  for (Op& op : w.rndv) {
    if (op.role == Op::GetIn && op.rank == from && op.h.token == token) w.dev.cancel(op.msg);
  }
}

void rndv_end(WindowState& w) {
  for (Op& op : w.rndv) {
    if (!op.msg) continue;  // owed, never started
    if (!op.msg->complete()) w.dev.cancel(op.msg);
    w.dev.release(op.msg);
  }
  w.rndv.clear();
}

}  // namespace adi3::emul
