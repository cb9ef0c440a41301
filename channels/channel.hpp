// The channel interface: everything the core knows about a transport.
//
// A channel moves packets (a small header the core defines, plus a payload)
// between ranks, in order per pair of ranks, never blocking. It says which
// of the ADI-3 communication types it does natively; the core runs the rest
// through the emulations in emul/. Threading contract: the core serializes
// send() calls per destination and serializes poll() calls; wait() and
// wake() may be called from any thread.
#pragma once
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "channels/common/small_copy.hpp"
#include "channels/onesided.hpp"
#include "segment/segment.hpp"

namespace adi3 {

// The four communication types of the ADI-3 rationale.
enum CommType : uint32_t {
  kPointToPoint = 1u << 0,     // (1) two-party send/receive
  kLocalCompletion = 1u << 1,  // (2) completes without the target's help
  kActiveRma = 1u << 2,        // (3) put/get completed by target sync
  kPassiveRma = 1u << 3,       // (4) put/get/atomics with no target call
};

struct ChannelCaps {
  uint32_t native = kPointToPoint;  // CommType bits done natively
  std::size_t max_header = 128;     // largest header a packet carries (>= 128)
  std::size_t max_payload = 0;      // largest payload of one packet
  std::size_t eager_limit = 0;      // default eager/rendezvous switch
  // The bulk copy of two-party protocols: a point-to-point rendezvous
  // message of at least this size may be fetched by the receiver with
  // get() (single copy) instead of streamed in packets; SIZE_MAX: no such
  // copy. Type 1's own capability, apart from the one-sided bits above, so
  // forcing those to their emulation (which rides type 1) leaves it alone.
  std::size_t get_min = SIZE_MAX;
};

// The payload of one outgoing packet: plain bytes, or bytes [first, first +
// bytes) of a segment, packed straight into the channel's buffer.
struct Payload {
  const void* data = nullptr;
  std::size_t bytes = 0;
  Segment* seg = nullptr;
  std::size_t first = 0;

  void copy_to(void* dst) const {
    if (seg) {
      seg->pack(first, first + bytes, dst);
    } else {
      copy_bytes(dst, data, bytes);
    }
  }
};

enum class SendResult { Sent, Busy, Failed };

// What a sleeper waits for (Channel::wait_until): a function and its
// context, so the virtual call needs neither a template nor an allocation.
struct WaitCondition {
  bool (*fn)(void*) = nullptr;
  void* ctx = nullptr;
  // A helper thread's idle sleep (the progress agent's), not a blocking
  // call's: peers do not count it as a rank waiting for them.
  bool idle = false;
  bool operator()() const { return fn && fn(ctx); }
  template <class F>
  static WaitCondition of(F& f) {
    return {[](void* c) { return static_cast<bool>((*static_cast<F*>(c))()); },
            const_cast<void*>(static_cast<const void*>(&f))};
  }
};

// Where a payload is to be received in place (PacketSink::place): bytes
// [first, first + n) of seg's packed stream, or n bytes at data.
struct Placement {
  Segment* seg = nullptr;
  char* data = nullptr;
  std::size_t first = 0;
};

// Where poll() delivers packets. Payload memory is valid during the call.
class PacketSink {
 public:
  virtual void on_packet(int src, const void* hdr, std::size_t hdr_bytes, const void* payload,
                         std::size_t payload_bytes) = 0;
  // The channel learned that a peer died (its process exited or crashed).
  virtual void on_peer_failed(int peer, const char* why) = 0;
  // A channel that reads payloads off a byte stream (tcp) may ask, once a
  // packet's header has arrived and before (all of) its payload has, where
  // the payload belongs, so it reads it there directly instead of into a
  // staging buffer the sink then copies from. true: *where is set, the
  // channel writes the payload there (in pieces, over several polls) and
  // then calls on_placed with the same header; nothing else from src is
  // delivered in between. false: on_packet as usual. The sink checks the
  // header before it says true (the payload is untrusted bytes).
  virtual bool place(int /*src*/, const void* /*hdr*/, std::size_t /*hdr_bytes*/, std::size_t /*payload_bytes*/,
                     Placement* /*where*/) {
    return false;
  }
  virtual void on_placed(int /*src*/, const void* /*hdr*/, std::size_t /*hdr_bytes*/, std::size_t /*payload_bytes*/) {}

 protected:
  ~PacketSink() = default;
};

class Channel {
 public:
  virtual ~Channel() = default;
  virtual const char* name() const = 0;
  virtual const ChannelCaps& caps() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Queues one packet for dest. Busy: no room now; poll and try again.
  virtual SendResult send(int dest, const void* hdr, std::size_t hdr_bytes, const Payload& payload) = 0;
  // Delivers arrived packets to sink; returns how many.
  virtual int poll(PacketSink& sink) = 0;
  // Sleeps until a packet may have arrived, wake() was called, or timeout.
  virtual void wait(std::chrono::microseconds timeout) = 0;
  // Ends a wait() of this rank early (called by another thread of the rank).
  virtual void wake() = 0;
  // wait() that never sleeps past `done` (the lost wakeup): a completion
  // published by another thread, which then calls wake(), between the
  // caller's last check and the sleep must not cost a whole timeout. A
  // channel whose wake() rings only announced sleepers (a doorbell) checks
  // done after the announcement, under the doorbell. done may be called
  // more than once, on the sleeping thread. The default checks it once
  // before wait(), which leaves the window open for such channels (fine
  // for one whose wakeups persist until consumed, such as an eventfd).
  virtual void wait_until(std::chrono::microseconds timeout, const WaitCondition& done) {
    if (!done()) wait(timeout);
  }

  // Copy between local memory and an address the peer exposed: the bulk
  // copy of point-to-point rendezvous (get_min) and native one-sided access
  // (kActiveRma / kPassiveRma). Return 0, or -1 if unsupported.
  virtual int get(int /*peer*/, void* /*local*/, uint64_t /*remote*/, std::size_t /*len*/) { return -1; }
  virtual int put(int /*peer*/, uint64_t /*remote*/, const void* /*local*/, std::size_t /*len*/) { return -1; }
  // get() for a rendezvous receive that crosses a send of ours: this rank
  // offered the peer its own buffer and waits for the answer, so the peer
  // is deciding the same question for our message at about the same time
  // (bidirectional traffic). A channel whose choice depends on what the
  // peer does answers both alike here. Default: get().
  virtual int get_crossing(int peer, void* local, uint64_t remote, std::size_t len) {
    return get(peer, local, remote, len);
  }

  // A rendezvous send offered peer its buffer [buf, +len) for get(), until
  // offer_ended (answered, cancelled). A channel whose peers may ask it to
  // copy part of such a get (shm: cma_split.cpp) copies out of offered
  // memory only. Default: nothing.
  virtual void offer_began(int /*peer*/, const void* /*buf*/, std::size_t /*len*/) {}
  virtual void offer_ended(int /*peer*/, const void* /*buf*/, std::size_t /*len*/) {}

  // The capabilities that hold for traffic with `peer` (a channel set
  // answers for the channel serving it; a single channel has one answer).
  virtual const ChannelCaps& caps_for(int /*peer*/) const { return caps(); }

  // The one-sided part (channels/onesided.hpp): regions with keys and
  // nonblocking operations on them; nullptr when the channel has none (the
  // core then emulates every window operation over packets).
  virtual OneSided* onesided() { return nullptr; }

  // A word peers can read, in which the core counts its threads waiting in
  // a blocking call (Device::block_until, from its first unmet check to its
  // end); nullptr when no peer looks (the core then counts nothing). The
  // shm channel's one-sided part sends packets rather than cross-memory
  // attach copies to a rank that waits so (shm_onesided.cpp, attentive).
  virtual std::atomic<uint32_t>* call_count() { return nullptr; }

  // The channel that moves the packets, when this one only wraps another
  // (the process channel adds the launcher's bootstrap): the core sends
  // and polls through it directly, one virtual call per packet instead of
  // two. Everything else still goes through the wrapper.
  virtual Channel* data_path() { return this; }

  // Looks for failed peers now if the channel's liveness check is due (for
  // calls that move no packets, such as native one-sided synchronization,
  // so never reach poll or wait); a failure found is reported by the next
  // poll.
  virtual void check_liveness() {}

  // Connections this channel has made to peers so far (queue pairs of the
  // verbs channel, which makes them on first use); 0 for a channel without
  // per-peer connection state. Any thread may ask (MPI_T pvar
  // channel_connections).
  virtual uint64_t connections() const { return 0; }

  // The core expects payloads from `peer` that it can take in place (it
  // just asked for rendezvous data): a stream channel then reads that
  // peer's next packet headers on their own, so the payload that follows
  // is read into place (PacketSink::place) rather than staged. A hint;
  // any thread.
  virtual void expect_payload(int /*peer*/) {}
};

}  // namespace adi3
