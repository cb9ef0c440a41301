#include "channels/verbs/mr_cache.hpp"

#include <unistd.h>

#include <stdexcept>

namespace adi3::verbs {
namespace {

uintptr_t page_size() {
  static const uintptr_t p = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  return p;
}

}  // namespace

MrCache::MrCache(VerbsDevice& dev, uint32_t access, std::size_t idle_bytes)
    : dev_(dev), access_(access), idle_limit_(idle_bytes), keep_idle_(dev.registrations_follow_mappings()) {}

MrCache::~MrCache() {
  for (auto& [start, e] : entries_) dev_.dereg(e.region);
  for (auto& [r, users] : stale_) dev_.dereg(r);
}

Region MrCache::acquire(const void* addr, std::size_t len) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  const uintptr_t end = a + (len ? len : 1);
  // Regions never overlap, so only the last one starting at or before a
  // can cover it.
  auto it = entries_.upper_bound(a);
  if (it != entries_.begin()) {
    auto prev = std::prev(it);
    Entry& e = prev->second;
    if (prev->first + e.region.len >= end) {
      ++hits_;
      if (e.users++ == 0) {
        idle_.erase(e.lru);
        idle_bytes_ -= e.region.len;
      }
      return e.region;
    }
  }
  ++misses_;
  const uintptr_t start = a & ~(page_size() - 1);
  const uintptr_t stop = (end + page_size() - 1) & ~(page_size() - 1);
  evict(start, stop);  // the new region may span neighbours
  Region r = dev_.reg(reinterpret_cast<void*>(start), stop - start, access_);
  Entry& e = entries_[start];
  e.region = r;
  e.users = 1;
  return r;
}

void MrCache::release(const Region& r) {
  auto it = entries_.find(r.addr);
  if (it == entries_.end() || it->second.region.rkey != r.rkey) {
    for (auto s = stale_.begin(); s != stale_.end(); ++s) {
      if (s->first.rkey == r.rkey && s->first.addr == r.addr) {
        if (--s->second == 0) {
          dev_.dereg(s->first);
          stale_.erase(s);
        }
        return;
      }
    }
    return;
  }
  Entry& e = it->second;
  if (--e.users) return;
  if (!keep_idle_) {
    dev_.dereg(e.region);
    entries_.erase(it);
    return;
  }
  e.lru = idle_.insert(idle_.end(), it->first);
  idle_bytes_ += e.region.len;
  trim();
}

void MrCache::invalidate(const void* addr, std::size_t len) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  evict(a, a + len);
}

void MrCache::evict(uintptr_t a, uintptr_t end) {
  auto o = entries_.upper_bound(a);
  if (o != entries_.begin()) --o;  // the one before may reach into [a, end)
  while (o != entries_.end() && o->first < end) {
    auto next = std::next(o);
    if (o->first + o->second.region.len > a) {
      if (o->second.users) {
        stale_.emplace_back(o->second.region, o->second.users);
        entries_.erase(o);
      } else {
        drop(o);
      }
    }
    o = next;
  }
}

void MrCache::drop(Map::iterator it) {
  if (it->second.users == 0) {
    idle_.erase(it->second.lru);
    idle_bytes_ -= it->second.region.len;
  }
  dev_.dereg(it->second.region);
  entries_.erase(it);
}

void MrCache::trim() {
  while (idle_bytes_ > idle_limit_ && !idle_.empty()) drop(entries_.find(idle_.front()));
}

}  // namespace adi3::verbs
