// The RMA layer's per-device state: its packet id, the table of this rank's
// windows (slot + generation, so a packet for a freed window is refused),
// the packet handler that hands arrivals to their window, and the progress
// hook that streams queued operations and replies.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <array>
#include <memory>
#include <mutex>
#include <vector>

#include "adi3/packet.hpp"
#include "channels/onesided.hpp"

namespace adi3 {
class Device;
}

namespace adi3::rma {

class WindowState;

class Hub {
 public:
  explicit Hub(Device& dev);
  ~Hub();
  Hub(const Hub&) = delete;
  Hub& operator=(const Hub&) = delete;

  // The hub of dev, made on first use (registers the packet id and hook).
  static Hub& of(Device& dev);

  uint8_t packet_id() const { return static_cast<uint8_t>(id_); }
  // Enters a window into the table; sets its slot and generation. Throws
  // std::length_error when kMaxWindows windows are live.
  void add(const std::shared_ptr<WindowState>& w);
  // Takes it out; once this returns no packet handler uses it any more.
  void remove(const WindowState& w);
  static constexpr std::size_t kChunk = 256, kChunks = 1024, kMaxWindows = kChunk * kChunks;
  // Something was queued: the hook has work (the device runs it on demand:
  // an idle progress pass skips the hooks).
  void poke();
  // The agent started for a window: it sleeps long while no work is
  // announced (emul/agent.hpp watch_hooks).
  void watch_agent();
  // MPI_Alloc_mem's shared regions (rma/memory.cpp): recorded here until
  // release_memory(base) gives them back to os (false: not one of ours).
  void add_memory(Region* r, OneSided* os);
  bool release_memory(void* base);
  // Native stores of this device's windows not yet followed by a full
  // fence (WindowState::unfenced points here).
  std::atomic<bool> unfenced{false};

 private:
  struct Slot {
    std::shared_ptr<WindowState> win;
    uint32_t gen = 0;
  };
  static void on_packet(void* ctx, int src, const void* hdr, std::size_t hdr_bytes, const void* payload,
                        std::size_t payload_bytes);
  static bool on_progress(void* ctx);
  // The live window of a packet's slot and generation, or null. Lock-free:
  // the handler pays no mutex and no reference count per packet; remove()
  // waits for running handlers instead.
  WindowState* find(uint32_t slot, uint32_t gen) const;

  Device& dev_;
  PacketType id_;
  int hook_ = -1;
  std::mutex mu_;
  std::vector<Slot> slots_;
  // find()'s view of slots_: chunks that never move once published.
  struct Chunk {
    std::atomic<WindowState*> win[kChunk];
  };
  std::array<std::atomic<Chunk*>, kChunks> chunks_{};
  std::atomic<std::size_t> high_{0};  // slots ever used (on_progress looks below it)
  std::atomic<bool> work_{false};
  struct Memory {
    Region* region;
    OneSided* os;
  };
  std::mutex mem_mu_;
  std::vector<Memory> memory_;
  std::atomic<int> live_{0};
};

}  // namespace adi3::rma
