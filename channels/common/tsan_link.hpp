// What ThreadSanitizer cannot see of a channel that orders through memory
// shared with another process, told to it explicitly (no-ops otherwise).
//
// A thread sets up a request, then sends a packet naming it to rank P over
// a shared-memory ring; P answers; another thread of ours handles the answer
// and reads the request. That order is real: our ring publish (release) ->
// P's acquire, P's answer publish (release) -> our acquire, and happens-before
// is transitive through P's thread. TSan models threads of one process only,
// so it reports every such field as a race. For a socket TSan itself assumes
// "a write to an fd happens before a later read from it"; link_sent and
// link_received say the same of the link to one peer: whatever this process
// did before a send to P happens before what it does after a later receive
// from P. (The tcp channel needs nothing: TSan models its sockets.)
#pragma once

#if defined(__SANITIZE_THREAD__)
#define ADI3_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ADI3_TSAN 1
#endif
#endif

#ifdef ADI3_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace adi3 {

// Before a packet to the peer of `link` becomes visible to it.
inline void link_sent([[maybe_unused]] const void* link) {
#ifdef ADI3_TSAN
  __tsan_release(const_cast<void*>(link));
#endif
}

// Before a packet from the peer of `link` is handled.
inline void link_received([[maybe_unused]] const void* link) {
#ifdef ADI3_TSAN
  __tsan_acquire(const_cast<void*>(link));
#endif
}

}  // namespace adi3
