// Native dynamic windows (MPI_Win_create_dynamic): the regions a rank
// attaches are listed in a table after its control block, in shared
// memory, so origins find them without asking the target.
//
// Each entry holds the region's address range and the channel's key for it
// (shm: process id + address, reached by cross-memory attach; memory from
// MPI_Alloc_mem: its segment, mapped). An origin looks the target address
// up in the table, attaches the key once per entry and generation (cached),
// and copies through the channel's one-sided interface: no target call.
//
// Detach against in-flight access (erroneous by the standard, but it must
// neither corrupt memory nor crash): an origin counts itself into the
// entry's `users` and then re-reads its state; the owner clears the live
// bit and then waits until `users` is zero. Both sides use sequentially
// consistent operations, so either the origin sees the entry dead (and
// touches nothing) or the owner sees the origin and waits for its copy to
// end. Once Win_detach returns nobody writes into the memory.
//
// The words are written by other processes: a corrupt entry can only make
// an origin refuse the address or fail a copy (the key is checked by the
// channel's attach: it must name the target's own process), never write
// outside what the target exposed.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "channels/onesided.hpp"

namespace adi3::rma {

inline constexpr uint32_t kDynMagic = 0x44594e31;  // "DYN1"
inline constexpr std::size_t kDynSlots = 64;

struct DynSlot {
  // (generation << 1) | live. Grows on every attach and detach, so an
  // origin that saw a value knows the entry did not change while it equals
  // it (no ABA: 63 bits of generations).
  uint64_t state;
  uint64_t base, bytes;  // the owner's address range
  uint32_t users;        // origins inside a copy right now
  uint32_t key_bytes;
  uint64_t key[kMaxKeyBytes / 8];
};
static_assert(sizeof(DynSlot) == 128);

struct DynTable {
  uint32_t magic;
  uint32_t used;      // entries [0, used) may be live (a bound for the scan)
  uint32_t overflow;  // regions attached beyond the table: reached by the emulation only
  uint32_t pad[13];
  DynSlot slot[kDynSlots];
};
inline constexpr std::size_t kDynBytes = sizeof(DynTable);

template <class T>
std::atomic_ref<T> dyn_at(T& w) {
  return std::atomic_ref<T>(w);
}

}  // namespace adi3::rma
