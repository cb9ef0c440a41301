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
// their message in one copy (rndv_fits).
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

// Room for one more record (so that track cannot throw once a message started).
void room(WindowState& w) {
  if (w.rndv.size() == w.rndv.capacity()) w.rndv.reserve(std::max<std::size_t>(16, 2 * w.rndv.size()));
}

void track(WindowState& w, const Op& op) {
  w.rndv.push_back(op);
  // The hook keeps running while any is pending (Window::free waits too),
  // except for a drain, which a hostile origin may never feed.
  if (op.role != Op::Drain) w.add_queued(1);
  w.hub->poke();
}

void record(WindowState& w, int e) {
  if (e && !w.deferred_error) w.deferred_error = e;
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
  if ((kind != Msg::Put && kind != Msg::Get) || target == w.comm.rank || bytes <= w.dev.max_packet_payload() ||
      w.flavor == WinFlavor::Dynamic) {
    return false;
  }
  const int peer = w.comm.to_peer(target);
  return w.dev.rndv_get_to(peer) && bytes >= w.dev.caps_of(peer).get_min;
}

void rndv_start(WindowState& w, int to, Item& it, Header& h) {
  rma::Target& t = w.targets[static_cast<std::size_t>(to)];
  const bool get = it.kind == Msg::Get;
  room(w);  // out of memory, nothing has started
  h.flags |= rma::kRndv;
  h.first = 0;
  h.len = 0;
  Op op;
  op.role = get ? Op::GetIn : Op::PutOut;
  op.rank = to;
  op.h.token = it.token;
  const Comm& c = comm_of(w);
  const auto count = static_cast<std::size_t>(it.ucount);
  int e = 0;
  if (get) {
    // The receive first: the reply may come as soon as the packet lands.
    e = w.dev.irecv_checked(it.ubuf, count, it.utype, to, tag_of(w.slot, true), c, &op.msg);
    if (!e) e = send(w, to, h);
  } else {
    // The packet first: the target posts the receive when it arrives.
    e = send(w, to, h);
    if (!e)
      e = w.dev.isend_checked(it.ubuf, count, it.utype, to, tag_of(w.peers[static_cast<std::size_t>(to)].win, false), c,
                              SendMode::Standard, &op.msg);
  }
  it.utype->release();
  it.utype = nullptr;
  if (e) {
    record(w, e);
    if (op.msg) {
      // The get's packet did not go: its receive is never answered.
      w.dev.cancel(op.msg);
      w.dev.release(op.msg);
    }
    if (get) {
      get_done(w, to, it.token, e, 0);
    } else if (it.req) {
      it.req->status.error = e;
      w.dev.complete(it.req);
      it.req = nullptr;
    }
    return;
  }
  if (!get) {
    op.user = it.req;  // an rput completes with its message
    it.req = nullptr;
    ++t.rndv_out;
  }
  track(w, op);
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
  Op op;
  op.rank = o;
  op.h = h;
  room(w);
  int e;
  if (target_of(w, o, h, &t, &addr)) {
    op.role = get ? Op::GetOut : Op::PutIn;
    const auto count = static_cast<std::size_t>(h.count);
    e = get ? w.dev.isend_checked(addr, count, t, o, tag_of(w.peers[static_cast<std::size_t>(o)].win, true), c,
                                  SendMode::Standard, &op.msg)
            : w.dev.irecv_checked(addr, count, t, o, tag_of(w.slot, false), c, &op.msg);
    if (!e) {
      ++O.rndv_started;
      track(w, op);
      return;
    }
  } else if (!get) {
    // Refused (reported): the put's message is drained into no byte of
    // the window. (The get's origin cancels its receive on the refusal.)
    op.role = Op::Drain;
    e = w.dev.irecv_checked(&O, 0, Datatype::byte(), o, tag_of(w.slot, false), c, &op.msg);
    if (!e) track(w, op);
  } else {
    e = 0;
  }
  ++O.applied;
  if (e) {
    // Out of requests or memory: the origin learns it (a get's receive is
    // then cancelled there).
    record(w, e);
    refuse(w, o, h, error_class_of(e), "its message could not start here");
  }
}

bool rndv_reap(WindowState& w) {
  bool any = false;
  std::size_t i = 0;
  while (i < w.rndv.size()) {
    if (!w.rndv[i].msg->complete()) {
      ++i;
      continue;
    }
    const Op op = w.rndv[i];
    w.rndv[i] = w.rndv.back();
    w.rndv.pop_back();
    if (op.role != Op::Drain) w.add_queued(-1);
    const int e = op.msg->status.error;
    const std::size_t got = op.msg->status.bytes;
    w.dev.release(op.msg);
    any = true;
    switch (op.role) {
      case Op::PutOut:
        --w.targets[static_cast<std::size_t>(op.rank)].rndv_out;
        record(w, e);
        if (op.user) {
          op.user->status.error = e;
          w.dev.complete(op.user);
        }
        break;
      case Op::GetIn:
        get_done(w, op.rank, op.h.token, e, got);
        break;
      case Op::PutIn:
      case Op::GetOut: {
        rma::Origin& O = w.origins[static_cast<std::size_t>(op.rank)];
        ++O.applied;
        ++O.rndv_done;
        if (e) {
          refuse(w, op.rank, op.h, ErrorClass::Truncate, "its message failed (%zu of %llu bytes)", got,
                 static_cast<unsigned long long>(op.h.total));
        }
        if (!O.out.empty()) pump_replies(w, op.rank);
        break;
      }
      case Op::Drain:
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
    if (!op.msg->complete()) w.dev.cancel(op.msg);
    w.dev.release(op.msg);
  }
  w.rndv.clear();
}

}  // namespace adi3::emul
