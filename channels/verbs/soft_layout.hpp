// The software device's shared segment, one per rank ("the NIC's memory"):
//
//   [header][key table: kKeySlots][atomic locks: kLockStripes][recv queue x ranks]
//   [datagram queue x ranks]
//
// The key table is the protection domain: an initiator checks every access
// against the target's entry before touching the target's memory. Receive
// queue s carries the write-with-immediate completions from rank s (one
// producer, the target consumes) and says which of rank s's queue pairs
// the owner's queue pair for s is connected to. Datagram queue s carries
// rank s's datagrams (the UD queue pair's receive queue, split per sender;
// full means no receive posted: the datagram is dropped). Everything in a peer's segment may be
// garbage written by a faulty peer: readers check it before use.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "channels/common/doorbell.hpp"

namespace adi3::verbs::soft {

inline constexpr uint64_t kMagic = 0x61646933736f6674ull;  // "adi3soft"
inline constexpr uint32_t kVersion = 2;
inline constexpr uint32_t kKeySlots = 4096;  // power of two
inline constexpr uint32_t kLockStripes = 64;
inline constexpr uint32_t kQueueDepth = 1024;  // most receives posted per peer

struct alignas(64) Header {
  uint64_t magic;
  uint32_t version;
  int32_t ranks;
  int32_t owner;
  int32_t pid;
  Doorbell bell;  // rung when a receive completion arrives
};

// key = generation << 12 | slot; 0 is never a valid key. `key` is written
// last when a region is registered and cleared first when it goes, so a
// reader that sees the same key before and after reading the fields saw
// a consistent entry.
struct KeySlot {
  std::atomic<uint32_t> key;
  uint32_t access;
  uint64_t addr;
  uint64_t len;
};

struct alignas(64) LockStripe {
  std::atomic<uint32_t> held;
};

struct RecvEntry {
  std::atomic<uint64_t> seq;  // position + 1 once written
  uint32_t imm;
  uint32_t bytes;
};

struct alignas(64) RecvQueue {
  alignas(64) std::atomic<uint64_t> posted;    // receives posted (by the owner)
  std::atomic<uint32_t> connected_to;          // the sender's queue pair number (0: not connected)
  alignas(64) std::atomic<uint64_t> produced;  // completions written (by the sender)
  alignas(64) RecvEntry entries[kQueueDepth];
};

inline constexpr uint32_t kDgramDepth = 16;  // datagram receives per sender
inline constexpr uint32_t kDgramBytes = 192;

struct DgramEntry {
  std::atomic<uint64_t> seq;  // position + 1 once written
  uint32_t len;
  char data[kDgramBytes];
};

struct alignas(64) DgramQueue {
  alignas(64) std::atomic<uint64_t> taken;     // by the owner
  alignas(64) std::atomic<uint64_t> produced;  // by the sender
  alignas(64) DgramEntry entries[kDgramDepth];
};

struct Layout {
  int ranks;
  std::size_t keys_at() const { return sizeof(Header); }
  std::size_t locks_at() const { return keys_at() + sizeof(KeySlot) * kKeySlots; }
  std::size_t queues_at() const { return (locks_at() + sizeof(LockStripe) * kLockStripes + 63) / 64 * 64; }
  std::size_t dgrams_at() const { return queues_at() + sizeof(RecvQueue) * static_cast<std::size_t>(ranks); }
  std::size_t total() const { return dgrams_at() + sizeof(DgramQueue) * static_cast<std::size_t>(ranks); }

  static Header* header(char* base) { return reinterpret_cast<Header*>(base); }
  KeySlot* keys(char* base) const { return reinterpret_cast<KeySlot*>(base + keys_at()); }
  LockStripe* locks(char* base) const { return reinterpret_cast<LockStripe*>(base + locks_at()); }
  RecvQueue* queue(char* base, int src) const { return reinterpret_cast<RecvQueue*>(base + queues_at()) + src; }
  DgramQueue* dgrams(char* base, int src) const { return reinterpret_cast<DgramQueue*>(base + dgrams_at()) + src; }
};

}  // namespace adi3::verbs::soft
