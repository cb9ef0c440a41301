// The memory-registration cache: user buffers of rendezvous sends (and
// later windows) are registered once and the registration reused while it
// covers the next buffer. Regions are whole pages.
//
// A registration must not outlive the memory it names: pinned pages stay
// with the old mapping when the program frees a buffer and gets the same
// addresses back. So idle regions are kept only when the device's
// registrations follow the mappings (the software device; on-demand
// paging); otherwise a region is dropped when its last user releases it.
// invalidate() drops every region overlapping freed memory at once (the
// window layer calls it; a region in use goes when it is released).
#pragma once
#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <utility>

#include "channels/verbs/verbs_device.hpp"

namespace adi3::verbs {

class MrCache {
 public:
  // Keeps at most `idle_bytes` of unused registrations (when allowed).
  MrCache(VerbsDevice& dev, uint32_t access, std::size_t idle_bytes);
  ~MrCache();
  MrCache(const MrCache&) = delete;
  MrCache& operator=(const MrCache&) = delete;

  // A region covering [addr, addr + len), held until release(). Throws
  // std::runtime_error when the device refuses to register.
  Region acquire(const void* addr, std::size_t len);
  void release(const Region& r);
  void invalidate(const void* addr, std::size_t len);

  std::size_t hits() const { return hits_; }
  std::size_t misses() const { return misses_; }
  std::size_t regions() const { return entries_.size(); }

 private:
  struct Entry {
    Region region;
    unsigned users = 0;
    std::list<uintptr_t>::iterator lru;  // valid when idle
  };
  using Map = std::map<uintptr_t, Entry>;  // by start address
  void drop(Map::iterator it);
  // Takes the regions overlapping [a, end) out of the map: idle ones are
  // deregistered, ones in use move to stale_ until their release.
  void evict(uintptr_t a, uintptr_t end);
  void trim();

  VerbsDevice& dev_;
  uint32_t access_;
  std::size_t idle_limit_;
  bool keep_idle_;
  Map entries_;
  std::list<std::pair<Region, unsigned>> stale_;  // region, users
  std::list<uintptr_t> idle_;                     // least recently used first
  std::size_t idle_bytes_ = 0;
  std::size_t hits_ = 0, misses_ = 0;
};

}  // namespace adi3::verbs
