// A hash table of FIFO buckets whose nodes are the requests themselves.
// Entries with equal keys keep their insertion order, so "the first entry
// with key k" is the oldest one: matching a specific envelope costs one
// bucket scan whatever the queue depth, and enqueueing never allocates
// (only an occasional doubling of the bucket array).
#pragma once
#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

#include "adi3/request.hpp"
#include "adi3/hot_inline.hpp"

namespace adi3 {

struct MatchKey {
  uint32_t context;
  int32_t source;
  int32_t tag;
  bool operator==(const MatchKey&) const = default;
};

inline std::size_t hash_key(const MatchKey& k) {
  uint64_t x = (uint64_t{k.context} << 32) ^ (static_cast<uint64_t>(static_cast<uint32_t>(k.source)) << 16) ^
               static_cast<uint32_t>(k.tag);
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return static_cast<std::size_t>(x);
}

// KeyOf maps a request to the key it is filed under in this table.
template <class Tag, class KeyOf>
class HashedFifo {
 public:
  using List = RequestList<Tag>;
  using Hook = bi::list_base_hook<bi::tag<Tag>, AutoUnlink>;

  HashedFifo() : buckets_(kInitialBuckets) {}

  void push(Request* r) noexcept {
    if (size_ >= buckets_.size() * 2) {
      // Without memory for more buckets the chains just grow longer (the
      // old table is untouched until the new one exists).
      try {
        rehash(buckets_.size() * 2);
      } catch (const std::bad_alloc&) {
      }
    }
    bucket(KeyOf{}(*r)).push_back(*r);
    ++size_;
  }

  // The oldest entry filed under k, or nullptr.
  ADI3_HOT_INLINE Request* find(const MatchKey& k) {
    for (Request& r : bucket(k)) {
      if (KeyOf{}(r) == k) return &r;
    }
    return nullptr;
  }

  // The oldest entry filed under k for which pred holds, or nullptr.
  template <class Pred>
  Request* find_if(const MatchKey& k, Pred&& pred) {
    for (Request& r : bucket(k)) {
      if (KeyOf{}(r) == k && pred(r)) return &r;
    }
    return nullptr;
  }

  // Removes r (which must be in this table).
  void erase(Request* r) {
    static_cast<Hook*>(r)->unlink();
    --size_;
  }

  std::size_t size() const { return size_; }

  template <class F>
  void for_each(F&& f) {
    for (auto& b : buckets_) {
      for (Request& r : b) f(r);
    }
  }

 private:
  static constexpr std::size_t kInitialBuckets = 64;

  // The last key's bucket is kept: a window of receives (or arrivals) with
  // one envelope hashes once.
  List& bucket(const MatchKey& k) {
    if (memo_ && k == memo_key_) return *memo_;
    memo_key_ = k;
    memo_ = &buckets_[hash_key(k) & (buckets_.size() - 1)];
    return *memo_;
  }

  // Moving bucket by bucket, front to back, keeps equal keys in order.
  void rehash(std::size_t n) {
    std::vector<List> fresh(n);
    for (auto& b : buckets_) {
      while (!b.empty()) {
        Request& r = b.front();
        b.pop_front();
        fresh[hash_key(KeyOf{}(r)) & (n - 1)].push_back(r);
      }
    }
    buckets_.swap(fresh);
    memo_ = nullptr;
  }

  std::vector<List> buckets_;
  std::size_t size_ = 0;
  List* memo_ = nullptr;  // the bucket of memo_key_ (none after a rehash)
  MatchKey memo_key_{};
};

}  // namespace adi3
