// MPI matching: the posted-receive queue and the unexpected-message queue.
//
// Posted receives sit in one table keyed by their pattern (wildcards
// included) and carry a posting sequence number; an arrival looks up its
// exact key and, only when wildcard receives exist, the three wildcard
// keys, and takes the oldest candidate. Unexpected messages sit in four
// tables at once (exact, by source, by tag, by context), so a receive of any
// wildcard shape finds the oldest matching arrival with one lookup.
// Both "search, else enqueue" operations are atomic under one lock that is
// taken only with MPI_THREAD_MULTIPLE.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "adi3/hashed_fifo.hpp"
#include "adi3/request.hpp"
#include "adi3/spin_lock.hpp"
#include "adi3/types.hpp"

namespace adi3 {

class Matcher {
 public:
  explicit Matcher(bool thread_safe = false) : thread_safe_(thread_safe) {}
  // Takes its lock from now on (LayerPort::enable_threads, while no other
  // thread uses it).
  void enable_threads() { thread_safe_.store(true, std::memory_order_relaxed); }

  // An arrival with envelope k: the oldest matching posted receive (removed
  // from the queue), or, when none, the request make_unexpected() returns,
  // which is filed as unexpected (nothing when it returns nullptr: memory
  // ran out). Atomic.
  template <class MakeUnexpected>
  Request* arrive(const MatchKey& k, MakeUnexpected&& make_unexpected) {
    MaybeLock g(lock_, thread_safe_.load(std::memory_order_relaxed));
    // The solo receive is the oldest posted one: when it matches, it wins.
    if (Request* s = solo_) {
      if (s->context == k.context && s->source == k.source && s->tag == k.tag) {
        solo_ = nullptr;
        return s;
      }
    }
    // Without wildcard receives the exact key alone decides (inline).
    Request* r = posted_wildcards_ ? find_posted(k) : posted_.size() ? posted_.find(k) : nullptr;
    if (r) {
      posted_erase(r);
      return r;
    }
    if (Request* u = make_unexpected()) file_unexpected(u);
    return nullptr;
  }

  // A new receive: the oldest matching unexpected message (removed), or,
  // when none, recv is filed as posted and nullptr returned. Atomic.
  Request* post(Request* recv) {
    // The common case inline: one thread, nothing unexpected, no wildcard.
    if (!thread_safe_.load(std::memory_order_relaxed) && exact_.size() == 0 && recv->source != kAnySource &&
        recv->tag != kAnyTag) [[likely]] {
      recv->seq = next_seq_++;
      // Alone in the queue: no hash, no bucket (a ping-pong's receive).
      if (!solo_ && posted_.size() == 0) [[likely]]
        solo_ = recv;
      else
        posted_.push(recv);
      return nullptr;
    }
    return post_general(recv);
  }

  // Probe: the oldest matching unexpected message, left in place (or removed
  // when `remove`, for mprobe). Its envelope is copied into *status under
  // the lock, since another thread may take a message left in place.
  Request* probe(const MatchKey& pattern, bool remove, Status* status);

  // Removes and returns the unexpected message that request `sreq` of
  // channel rank `peer` sent with envelope k (a cancelled send); nullptr if
  // a receive already took it.
  Request* withdraw(const MatchKey& k, int peer, uint64_t sreq);

  // Cancels a posted receive still waiting; false if it already matched.
  bool cancel(Request* recv);

  std::size_t posted_size() const { return posted_.size() + (solo_ ? 1 : 0); }
  std::size_t unexpected_size() const { return exact_.size(); }

  // Drains every unexpected entry (at device teardown).
  template <class F>
  void drain_unexpected(F&& f) {
    while (Request* u = first_unexpected()) {
      unfile_unexpected(u);
      f(u);
    }
  }

 private:
  struct PostedKey {
    MatchKey operator()(const Request& r) const { return {r.context, r.source, r.tag}; }
  };
  struct SrcKey {
    MatchKey operator()(const Request& r) const { return {r.context, r.source, kAnyTag}; }
  };
  struct TagKey {
    MatchKey operator()(const Request& r) const { return {r.context, kAnySource, r.tag}; }
  };
  struct CtxKey {
    MatchKey operator()(const Request& r) const { return {r.context, kAnySource, kAnyTag}; }
  };

  Request* post_general(Request* recv);
  Request* find_posted(const MatchKey& k);
  void posted_erase(Request* r) {
    if (r == solo_) {
      solo_ = nullptr;
      return;
    }
    if (r->source == kAnySource || r->tag == kAnyTag) --posted_wildcards_;
    posted_.erase(r);
  }
  Request* find_unexpected(const MatchKey& pattern);
  void file_unexpected(Request* u);
  void unfile_unexpected(Request* u);
  Request* first_unexpected();

  std::atomic<bool> thread_safe_{false};
  SpinLock lock_;
  uint64_t next_seq_ = 0;
  std::size_t posted_wildcards_ = 0;
  // The oldest posted receive, outside posted_ (and in no list), when it
  // was posted into an empty queue with an exact envelope: every receive
  // posted while it waits is younger. A ping-pong's receive is filed and
  // found without a hash.
  Request* solo_ = nullptr;
  HashedFifo<QueueTag, PostedKey> posted_;
  HashedFifo<QueueTag, PostedKey> exact_;
  HashedFifo<BySrcTag, SrcKey> by_src_;
  HashedFifo<ByTagTag, TagKey> by_tag_;
  HashedFifo<ByCtxTag, CtxKey> by_ctx_;
};

}  // namespace adi3
