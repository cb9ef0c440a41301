// Out of memory is an error, never a crash: a call that cannot get a
// request, a segment or a copy buffer returns ERR_NO_MEM saying what could
// not be allocated; the progress engine, which cannot return an error to
// anyone, ends the conversation with the peer whose message it could not
// keep (a lost message must not pass unnoticed), so waits on that peer fail
// with ERR_NO_MEM instead of hanging.
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "adi3/device.hpp"
#include "segment/segment.hpp"

namespace adi3 {

int Device::no_memory(const char* fmt, ...) {
  char what[240];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return errors_.raise(ErrorClass::NoMem, "rank %d: out of memory allocating %s", rank_, what);
}

int Device::no_request(const char* what, int rank) {
  const std::size_t live = pool_.live(), cap = pool_.capacity();
  char whom[24] = "";
  if (rank >= 0) std::snprintf(whom, sizeof whom, " (rank %d)", rank);  // the peer, when there is one
  if (live >= cap) {
    return no_memory("a request for %s%s (%zu bytes): all %zu requests of the pool are live (ADI3_MAX_REQUESTS)", what,
                     whom, sizeof(Request), cap);
  }
  return no_memory("a request for %s%s (%zu bytes): the system refused memory for more (%zu live)", what, whom,
                   sizeof(Request), live);
}

void Device::lost_to_memory(int peer, const char* fmt, ...) {
  char why[240];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  char text[400];
  std::snprintf(text, sizeof text, "rank %d ran out of memory (%zu of at most %zu requests live): %s", rank_,
                pool_.live(), pool_.capacity(), why);
  errors_.raise(ErrorClass::NoMem, "%s", text);
  if (peer < 0 || peer >= size_ || peer_failed_[static_cast<std::size_t>(peer)]) return;
  std::fprintf(stderr, "adi3: %s; rank %d is treated as failed\n", text, peer);
  // Told, the peer's waits on us fail with this reason (an origin's RMA
  // unlock waits for an answer we will never send); best effort: without
  // memory to queue the packet it waits as before.
  PacketHeader h{PacketType::Refused, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  (void)queue_packet(peer, &h, sizeof h, Payload{text, std::strlen(text), nullptr, 0});
  // Nothing more is read from it: what follows would be out of order.
  peer_refused_[static_cast<std::size_t>(peer)] = 1;
  refused_peers_.fetch_add(1, std::memory_order_relaxed);  // check_refused looks from now on
  on_peer_failed(peer, text);
  failure_class_ = ErrorClass::NoMem;
}

Segment* Device::make_segment(const void* buf, std::size_t count, const Datatype* type) noexcept {
  try {
    return new Segment(const_cast<void*>(buf), count, type);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

// A peer ran out of memory and no longer reads from us (lost_to_memory
// above): our waits that depend on it fail with its reason, as for a
// failed peer, with the class NO_MEM. Its text is untrusted: cut and made
// printable.
void Device::on_refused(Device& d, int src, const PacketHeader&, const void* payload, std::size_t bytes) {
  if (d.peer_failed_[static_cast<std::size_t>(src)]) return;
  char why[256];
  const std::size_t n = std::min(bytes, sizeof why - 1);
  for (std::size_t i = 0; i < n; ++i) {
    const char c = static_cast<const char*>(payload)[i];
    why[i] = c >= ' ' && c <= '~' ? c : '?';
  }
  why[n] = '\0';
  char text[320];
  std::snprintf(text, sizeof text, "rank %d no longer reads from rank %d: %s", src, d.rank_, why);
  d.on_peer_failed(src, text);
  d.failure_class_ = ErrorClass::NoMem;
}

}  // namespace adi3
