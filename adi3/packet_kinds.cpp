#include "adi3/packet_kinds.hpp"

#include <stdexcept>

namespace adi3 {

PacketType PacketKinds::claim(const char* owner, PacketHandler fn, void* ctx) {
  if (!fn) throw std::invalid_argument(std::string("register_packet: null handler for ") + (owner ? owner : "?"));
  std::lock_guard<std::mutex> g(mutex_);
  for (std::size_t i = 0; i < kIds; ++i) {
    Entry& e = entries_[i];
    if (e.fn.load(std::memory_order_relaxed)) continue;
    e.ctx = ctx;
    e.owner = owner ? owner : "";
    // Published last: a poller that sees fn sees ctx too.
    e.fn.store(fn, std::memory_order_release);
    return static_cast<PacketType>(kCoreIds + i);
  }
  std::string taken;
  for (const Entry& e : entries_) taken += (taken.empty() ? "" : ", ") + e.owner;
  throw std::length_error("register_packet(" + std::string(owner ? owner : "?") + "): all " + std::to_string(kIds) +
                          " extension packet ids are taken (by " + taken + ")");
}

std::string PacketKinds::owner(PacketType id) const {
  const auto i = static_cast<std::size_t>(id);
  if (i < kCoreIds) return i <= static_cast<std::size_t>(PacketType::CancelAck) ? "core" : "";
  const Entry* e = entry(i);
  if (!e) return "";
  std::lock_guard<std::mutex> g(mutex_);
  return e->owner;
}

}  // namespace adi3
