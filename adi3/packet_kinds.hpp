// The packet kinds the layers above the core (rma/, emul/, greq/, coll/)
// registered with a device: per extension id its handler, the handler's
// context and the owner's name. The device dispatches arrivals through it
// (Device::on_packet) and checks outgoing ids against it.
#pragma once
#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>

#include "adi3/extension.hpp"
#include "adi3/packet.hpp"

namespace adi3 {

class PacketKinds {
 public:
  static constexpr std::size_t kCoreIds = static_cast<std::size_t>(PacketType::FirstExtension);
  static constexpr std::size_t kIds = static_cast<std::size_t>(PacketType::Count) - kCoreIds;

  // Reserves the lowest free extension id for owner ("rma", "emul.cancel",
  // ...), so the same registration order on every rank gives the same ids.
  // Throws std::length_error when all ids are taken (the message names their
  // owners) and std::invalid_argument for a null fn.
  PacketType claim(const char* owner, PacketHandler fn, void* ctx);
  // Frees id: arrivals with it are refused from the moment this is called;
  // quiesce() runs before ctx and owner are forgotten, so it can wait for a
  // handler still running on another thread. Not an extension id: no-op.
  template <class Quiesce>
  void release(PacketType id, Quiesce&& quiesce) {
    Entry* e = entry(static_cast<std::size_t>(id));
    if (!e) return;
    std::lock_guard<std::mutex> g(mutex_);
    e->fn.store(nullptr, std::memory_order_release);
    quiesce();
    e->ctx = nullptr;
    e->owner.clear();
  }
  // The owner of id: "core" for the core's own kinds, "" when free.
  std::string owner(PacketType id) const;
  // Whether id (the header's first byte) is a registered extension id.
  bool registered(std::size_t id) const {
    const Entry* e = entry(id);
    return e && e->fn.load(std::memory_order_relaxed);
  }
  // For dispatch: the handler of extension id (nullptr when free) and, in
  // *ctx, its context. id must be an extension id.
  PacketHandler handler(std::size_t id, void** ctx) const {
    const Entry& e = entries_[id - kCoreIds];
    PacketHandler fn = e.fn.load(std::memory_order_acquire);  // published after ctx
    *ctx = e.ctx;
    return fn;
  }

 private:
  struct Entry {
    std::atomic<PacketHandler> fn{nullptr};
    void* ctx = nullptr;
    std::string owner;
  };
  Entry* entry(std::size_t id) { return id >= kCoreIds && id < kCoreIds + kIds ? &entries_[id - kCoreIds] : nullptr; }
  const Entry* entry(std::size_t id) const { return const_cast<PacketKinds*>(this)->entry(id); }

  Entry entries_[kIds];
  mutable std::mutex mutex_;  // registration (rare)
};

}  // namespace adi3
