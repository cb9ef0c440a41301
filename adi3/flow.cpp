// Eager flow control (see flow.hpp): the credit accounts and the Device's
// two uses of them, the Credit packet and the return of consumed credit.
#include "adi3/flow.hpp"

#include "adi3/device.hpp"

namespace adi3 {

EagerCredits::EagerCredits(std::size_t budget, int ranks) {
  if (budget == 0 || ranks <= 0) return;
  share_ = static_cast<int64_t>(std::min<std::size_t>(budget / static_cast<std::size_t>(ranks), INT64_MAX / 4));
  if (share_ == 0) share_ = 1;  // a budget below one byte per sender: everything by rendezvous
  peers_.reset(new PerPeer[static_cast<std::size_t>(ranks)]);
  for (int p = 0; p < ranks; ++p) peers_[static_cast<std::size_t>(p)].credit.store(share_, std::memory_order_relaxed);
}

bool EagerCredits::returned(int peer, uint64_t amount) {
  if (!enabled()) return amount == 0;
  if (amount == 0 || amount > static_cast<uint64_t>(share_)) return false;
  std::atomic<int64_t>& credit = peers_[static_cast<std::size_t>(peer)].credit;
  const int64_t now = add(credit, static_cast<int64_t>(amount));
  if (now > share_) {
    add(credit, -static_cast<int64_t>(amount));
    return false;
  }
  return true;
}

uint64_t EagerCredits::give_back(PerPeer& p) {
  const int64_t back =
      threaded() ? p.owed.exchange(0, std::memory_order_relaxed) : p.owed.load(std::memory_order_relaxed);
  if (!threaded()) p.owed.store(0, std::memory_order_relaxed);
  if (back <= 0) return 0;  // another thread took it
  add(p.used, -back);
  return static_cast<uint64_t>(back);
}

// An eager message of src was delivered or withdrawn: its credit goes back
// (in batches).
void Device::eager_consumed(int src, std::size_t bytes) {
  if (const uint64_t back = credits_.consumed(src, bytes)) {
    PacketHeader h{PacketType::Credit, 0, 0, 0, 0, 0, back, 0, 0, 0};
    send_control(src, h);
  }
}

void Device::on_credit(Device& d, int src, const PacketHeader& h, const void*, std::size_t bytes) {
  if (bytes != 0 || !d.credits_.returned(src, h.bytes)) {
    d.refuse(src, "credit of %llu bytes (with %zu payload bytes): more than the share of %lld it was given",
             static_cast<unsigned long long>(h.bytes), bytes, static_cast<long long>(d.credits_.share()));
  }
}

}  // namespace adi3
