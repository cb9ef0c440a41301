// Starting a request (isend, irecv, persistent start): the request is not
// yet in any queue, so no other thread can set its bits, and single-threaded
// nobody else counts its references. Both steps then need no locked
// instruction, which a message-rate loop pays per message otherwise.
#pragma once
#include <atomic>
#include <cstdint>

#include "adi3/request.hpp"

namespace adi3 {

// Clears flag bits of a request being started; a fresh request has none set.
inline void clear_unshared(Request* r, uint8_t mask) {
  if (r->flags.load(std::memory_order_relaxed) & mask) {
    r->flags.fetch_and(static_cast<uint8_t>(~mask), std::memory_order_relaxed);
  }
}

// One more reference for the operation r starts. With threads a completing
// thread may still drop its own reference to a persistent request that is
// being restarted, so the increment stays atomic there.
inline void hold(Request* r, bool threads) {
  if (threads) {
    r->refs.fetch_add(1, std::memory_order_relaxed);
  } else {
    r->refs.store(r->refs.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
}

}  // namespace adi3
