// The port the layers above the core (rma/, emul/, greq/, coll/) plug into:
// their packet kinds, ordered packets to a peer, progress hooks, run-time
// locking and the progress agent. A Device owns one (Device::port()); the
// point-to-point contract a caller of the ADI uses stays on Device.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "adi3/extension.hpp"
#include "adi3/packet.hpp"
#include "adi3/packet_kinds.hpp"
#include "adi3/progress_hooks.hpp"
#include "channels/channel.hpp"

namespace adi3 {

class Agent;
class Device;

class LayerPort {
 public:
  LayerPort(Device& dev, std::size_t max_header, std::size_t max_payload);
  ~LayerPort();
  LayerPort(const LayerPort&) = delete;
  LayerPort& operator=(const LayerPort&) = delete;

  // ---- packet kinds ----
  // A packet id for a layer (PacketKinds::claim: lowest free first, throws
  // when none is left); fn(ctx, ...) receives its packets in the progress
  // engine (under the poll lock, maybe on the agent thread). Not from
  // inside a packet handler.
  PacketType register_packet(const char* owner, PacketHandler fn, void* ctx) { return kinds_.claim(owner, fn, ctx); }
  // After it returns, fn runs no more (waits for a handler running on
  // another thread). Arrivals with the id are refused from then on.
  void unregister_packet(PacketType id) {
    kinds_.release(id, [this] { quiesce_handlers(); });
  }
  // Waits until no packet handler runs in another thread's poll: state a
  // handler looks up without a lock (rma's window table) may go after it.
  // Not from inside a packet handler.
  void quiesce_handlers();
  // The owner a registered id was given to ("" when free).
  std::string packet_owner(PacketType id) const { return kinds_.owner(id); }
  std::size_t max_packet_header() const { return max_header_; }  // >= kMinPacketHeader
  // The channel's caps are fixed when it is made: read once (not two
  // virtual calls per packet).
  std::size_t max_packet_payload() const { return max_payload_; }

  // ---- ordered packets ----
  // One packet of a registered extension id (the header's first byte) to
  // `peer` (channel rank), after every packet of any kind already queued for
  // that peer: per-peer order is one rule for all. Never drops: when the
  // channel is busy, header and payload are copied into the peer's queue.
  // Returns 0, an ERR_PROC_FAILED code when the peer is gone, or an ERR_ARG
  // code naming the bad value (peer, header size, id, payload size).
  int send_packet(int peer, const void* hdr, std::size_t hdr_bytes, const Payload& payload);
  // The same, but only if the channel takes the packet now: when it is busy
  // (or packets wait in the peer's queue) nothing is copied or queued and
  // *sent is false. A layer streaming large data sends its chunks so, which
  // keeps them from being copied twice (into the queue, then the channel).
  int try_send_packet(int peer, const void* hdr, std::size_t hdr_bytes, const Payload& payload, bool* sent);

  // ---- progress hooks ----
  // fn(ctx) runs on every progress() pass while registered (ProgressHooks);
  // on_demand: only in the passes after wake_hooks() (its work announced).
  int add_progress_hook(bool (*fn)(void* ctx), void* ctx, bool on_demand = false);
  void wake_hooks() { hooks_.wake(); }
  void remove_progress_hook(int id);
  bool has_progress_hooks() const { return hooks_.any(); }

  // ---- threads ----
  // Locking is decided at run time: a device takes no locks until something
  // turns threads on (MPI_THREAD_MULTIPLE at start, or the first layer that
  // starts the agent). Must be called while no other thread uses the
  // device (and not from a handler or hook); idempotent.
  void enable_threads();
  // Type 2 over type 1: a non-polling agent thread that runs progress() and
  // sleeps on the channel's doorbell when idle (emul/agent.*). Started on
  // first need; ADI3_ASYNC_PROGRESS=auto|on|off. Returns true if an agent
  // runs after the call.
  bool require_agent(const char* why);
  // Joins the agent (finalize does; locks stay on). A later require_agent
  // starts a new one.
  void stop_agent();
  bool agent_running() const { return agent_on_.load(std::memory_order_acquire); }
  // Why the agent was started ("" when it does not run).
  std::string agent_reason() const;
  // For the agent: one progress pass (channel, per-peer queues, hooks;
  // pollable requests stay with user threads, so user callbacks such as
  // generalized-request poll functions never run on the agent thread).
  bool agent_pass();
  // Progress calls made by user threads (only counted while an agent runs).
  uint64_t user_polls() const { return user_polls_.load(std::memory_order_relaxed); }
  // The agent's thread, or nullptr.
  Agent* agent() { return agent_.get(); }

 private:
  friend class Device;  // its progress engine dispatches, runs hooks, counts polls
  int check_packet(int peer, const void* hdr, std::size_t hdr_bytes, const Payload& payload);  // send_packet's
  void locks_on();  // enable_threads and require_agent

  Device& dev_;
  std::size_t max_header_;
  std::size_t max_payload_;
  PacketKinds kinds_;
  ProgressHooks hooks_;
  mutable std::mutex agent_mutex_;
  std::unique_ptr<Agent> agent_;  // stopped first in ~Device
  std::string agent_why_;
  std::atomic<bool> agent_on_{false};
  std::atomic<uint64_t> user_polls_{0};
};

}  // namespace adi3
