#include "coll/shm_node.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "adi3/spin_lock.hpp"
#include "channels/onesided.hpp"
#include "coll/nbc.hpp"

namespace adi3::coll::detail {

namespace {

constexpr uint64_t kMagic = 0x61646933636f6c6cull;  // "adi3coll"

std::size_t segment_bytes(int p) {
  const auto n = static_cast<std::size_t>(p);
  return kShmLine + n * kShmLine + kShmDepth * n * kShmSlot + kShmRing * n * kShmSmall + n * kShmChunk;
}

// What rank 0 sends each member during setup.
struct SetupOffer {
  uint32_t ok = 0;
  uint32_t key_bytes = 0;
  uint8_t key[kMaxKeyBytes] = {};
};

}  // namespace

// The device's nodes, by collective context. A context is reused after its
// communicator is freed; a node is kept only while the members match.
struct ShmNodes {
  std::mutex mu;  // taken only with threads enabled
  std::unordered_map<uint32_t, std::unique_ptr<ShmNode>> by_context;
  ShmNode* last = nullptr;  // the node of the previous call

  static bool matches(const ShmNode& n, const Comm& c) {
    return n.context_ == c.context && n.me_ == c.rank && n.p_ == c.size && n.peers_ == c.peers;
  }
  // The node of comm; *fresh when it was just made and needs its setup
  // (run by the caller outside the lock: it waits for the other members).
  ShmNode* find(Device& dev, const Comm& comm, bool* fresh) {
    *fresh = false;
    if (last && matches(*last, comm)) return last;
    auto it = by_context.find(comm.context);
    if (it == by_context.end() || !matches(*it->second, comm)) {
      std::unique_ptr<ShmNode> n(new ShmNode(dev, comm));
      ShmNode* made = n.get();
      // A replaced node (its context came back with other members) is
      // unmapped here: nothing can run on it any more.
      by_context[comm.context] = std::move(n);
      last = made;
      *fresh = true;
      return made;
    }
    last = it->second.get();
    return last;
  }
};

void ShmNode::forget(Device& dev, uint32_t context) {
  auto* nodes =
      static_cast<ShmNodes*>(dev.layer_state(Device::Layer::Coll, [] { return std::make_shared<ShmNodes>(); }));
  std::unique_ptr<ShmNode> gone;  // unmapped after the lock is released
  std::unique_lock g(nodes->mu, std::defer_lock);
  if (dev.threads_enabled()) g.lock();
  auto it = nodes->by_context.find(context);
  if (it == nodes->by_context.end()) return;
  if (nodes->last == it->second.get()) nodes->last = nullptr;
  gone = std::move(it->second);
  nodes->by_context.erase(it);
}

ShmNode* ShmNode::of(Device& dev, const Comm& comm, bool enabled, int* err) {
  *err = 0;
  if (!enabled || comm.size < 2 || comm.size > kShmMaxRanks) return nullptr;
  auto* nodes =
      static_cast<ShmNodes*>(dev.layer_state(Device::Layer::Coll, [] { return std::make_shared<ShmNodes>(); }));
  ShmNode* n = nullptr;
  bool fresh = false;
  if (dev.threads_enabled()) {
    std::lock_guard g(nodes->mu);
    n = nodes->find(dev, comm, &fresh);
  } else {
    n = nodes->find(dev, comm, &fresh);
  }
  // Only this thread uses comm now (MPI forbids concurrent collectives on
  // one communicator), so the setup needs no lock.
  if (fresh) *err = n->setup();
  return n->ready_ ? n : nullptr;
}

ShmNode* ShmNode::made(Device& dev, const Comm& comm, bool* ready) {
  *ready = false;
  auto* nodes =
      static_cast<ShmNodes*>(dev.layer_state(Device::Layer::Coll, [] { return std::make_shared<ShmNodes>(); }));
  std::unique_lock g(nodes->mu, std::defer_lock);
  if (dev.threads_enabled()) g.lock();
  auto it = nodes->by_context.find(comm.context);
  if (it == nodes->by_context.end() || !ShmNodes::matches(*it->second, comm)) return nullptr;
  *ready = it->second->ready_;
  return it->second.get();
}

ShmNode::ShmNode(Device& dev, const Comm& comm)
    : dev_(dev), comm_(comm), context_(comm.context), peers_(comm.peers), me_(comm.rank), p_(comm.size) {
  comm_.buffers = nullptr;
  for (int r = 0; r < p_; ++r) {
    if (r != me_) others_.push_back(comm.to_peer(r));
  }
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus > 0 && p_ > cpus) {
    slot_limit_ = kShmSlotData;
    crowding_ = static_cast<int>((p_ + cpus - 1) / cpus);
  }
}

ShmNode::~ShmNode() {
  if (remote_) os_->detach(remote_);
  if (region_) os_->release(region_);
}

// Collective over the communicator's members (tag ShmSetup of the
// collective context): rank 0 offers a segment, the others attach, rank 0
// tells everyone whether all could. Returns a transfer error, else 0 (with
// ready_ telling the outcome).
int ShmNode::setup() {
  const Comm& comm = comm_;
  const int tag = static_cast<int>(Tag::ShmSetup);
  const Datatype* byte = Datatype::byte();

  // Locally: does the channel map memory every member can reach?
  OneSided* os = dev_.channel_of(comm.to_peer(me_)).onesided();
  bool ok = os && (os->caps().native_ops & kOsLoadStore);
  for (int r = 0; ok && r < p_; ++r) {
    const int peer = comm.to_peer(r);
    ok = dev_.channel_of(peer).onesided() == os && os->reaches(peer);
  }
  os_ = os;
  const std::size_t bytes = segment_bytes(p_);
  Status st;
  uint32_t verdict = 0;
  if (me_ == 0) {
    SetupOffer offer;
    if (ok) region_ = os->allocate(bytes);
    if (region_ && region_->key_bytes <= kMaxKeyBytes) {
      offer.ok = 1;
      offer.key_bytes = static_cast<uint32_t>(region_->key_bytes);
      std::memcpy(offer.key, region_->key, region_->key_bytes);
    }
    for (int r = 1; r < p_; ++r) {
      if (int e = dev_.send(&offer, sizeof offer, byte, r, tag, comm, SendMode::Standard)) return e;
    }
    verdict = offer.ok;
    for (int r = 1; r < p_; ++r) {
      uint32_t theirs = 0;
      if (int e = dev_.recv(&theirs, sizeof theirs, byte, r, tag, comm, &st)) return e;
      if (theirs != 1) verdict = 0;
    }
    for (int r = 1; r < p_; ++r) {
      if (int e = dev_.send(&verdict, sizeof verdict, byte, r, tag, comm, SendMode::Standard)) return e;
    }
    if (verdict) {
      os->seal(region_);
      layout(static_cast<std::byte*>(region_->base));
      reinterpret_cast<std::atomic<uint64_t>*>(region_->base)->store(kMagic, std::memory_order_relaxed);
    }
  } else {
    SetupOffer offer;
    if (int e = dev_.recv(&offer, sizeof offer, byte, 0, tag, comm, &st)) return e;
    uint32_t mine = 0;
    if (ok && offer.ok == 1 && offer.key_bytes <= kMaxKeyBytes) {
      remote_ = os->attach(comm.to_peer(0), offer.key, offer.key_bytes);
      mine = remote_ && remote_->direct && (remote_->ops & kOsLoadStore) && remote_->bytes >= bytes;
    }
    if (int e = dev_.send(&mine, sizeof mine, byte, 0, tag, comm, SendMode::Standard)) return e;
    if (int e = dev_.recv(&verdict, sizeof verdict, byte, 0, tag, comm, &st)) return e;
    if (verdict == 1) layout(static_cast<std::byte*>(remote_->direct));
  }
  ready_ = verdict == 1;
  if (!ready_) {
    if (remote_) os->detach(remote_);
    if (region_) os->release(region_);
    remote_ = nullptr;
    region_ = nullptr;
  }
  return 0;
}

void ShmNode::layout(std::byte* base) {
  const auto n = static_cast<std::size_t>(p_);
  std::byte* at = base + kShmLine;  // the header line
  flags_ = at;
  at += n * kShmLine;
  slots_ = at;
  at += kShmDepth * n * kShmSlot;
  smalls_ = at;
  at += kShmRing * n * kShmSmall;
  areas_ = at;
  // Only the next rank writes its flag, and it moves at every stage: a read
  // of it right after is one crossing (the chooser's clue to the VM state).
  chooser_.watch(&flag((me_ + 1) % p_));
}

int ShmNode::claim_area(std::byte** mine) {
  const uint64_t need = std::max(area_free_, pieces_free_);
  if (need > known_all_) {
    if (int e = wait_all(need)) return e;
  }
  *mine = area(me_);
  return 0;
}

int ShmNode::claim_piece(int r, uint64_t g, std::byte** at) {
  const uint64_t need = std::max(area_free_, piece_free_[g % kShmPieces]);
  if (need > known_all_) {
    if (int e = wait_all(need)) return e;
  }
  *at = area(r) + (g % kShmPieces) * kShmPiece;
  return 0;
}

bool ShmNode::reached(int r, uint64_t s) const { return flag(r).load(std::memory_order_acquire) >= s; }

// After a short look at the flags alone (kShmFlagSpin), the device's one
// waiting policy (Device::block_until): spin while progressing the device
// (a rank blocked here still serves the traffic others send it, as the MPI
// progress rule asks), yield, then sleep on this rank's channel doorbell,
// which post() rings; fail rather than hang once a peer died and nothing
// moved. A wake owed (post_owed) is rung before any sleep can happen.
// ready() only turns true once.
template <class Ready>
int ShmNode::wait(Ready&& ready) {
  if (own_cores()) {
    for (int i = 0; i < kShmFlagSpin; ++i) {
      cpu_relax();
      if (ready()) {
        ring_owed();
        return 0;
      }
    }
  }
  ring_owed();
  return dev_.block_until(ready);
}

int ShmNode::wait_one(int r, uint64_t s) {
  return wait([&] { return reached(r, s); });
}

int ShmNode::wait_all_slow(uint64_t s) {
  return wait([&] { return all_reached(s); });
}

int ShmNode::wait_slot_slow(int r, uint64_t s) {
  return wait([&] { return stamp(r).load(std::memory_order_acquire) >= s; });
}

int ShmNode::wait_slots_from(int next, uint64_t s) {
  // Ranks found stamped are not read again.
  return wait([&] {
    for (; next < p_; ++next) {
      if (next != me_ && stamp(next).load(std::memory_order_acquire) < s) return false;
    }
    return true;
  });
}

}  // namespace adi3::coll::detail

namespace adi3::coll {
void forget_context(Device& dev, uint32_t context) { detail::ShmNode::forget(dev, context); }
}  // namespace adi3::coll
