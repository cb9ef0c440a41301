// The per-peer FIFO of outgoing items: requests that still have a packet to
// emit (what they emit is their phase) and copies of packets the channel
// could not take at once (control and extension packets). One queue for
// every kind of packet, so nothing overtakes anything queued before it for
// the same peer. A ring of item slots that only grows: steady-state
// queueing allocates nothing.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "adi3/request.hpp"
#include "channels/channel.hpp"

namespace adi3 {

// A packet copied aside (header, then payload), made when the channel is busy.
struct OutPacket {
  uint32_t hdr_bytes;
  uint32_t payload_bytes;
  const char* hdr() const { return reinterpret_cast<const char*>(this + 1); }
  const char* payload() const { return hdr() + ((hdr_bytes + 7) & ~7u); }
  // nullptr when memory ran out.
  static OutPacket* make(const void* hdr, std::size_t hdr_bytes, const Payload& payload);
  static void destroy(OutPacket* p);
};

// Exactly one of the two is set.
struct OutItem {
  Request* req;
  OutPacket* pkt;
};

class SendQueue {
 public:
  SendQueue() = default;
  SendQueue(SendQueue&&) = default;
  ~SendQueue();
  bool empty() const { return head_ == tail_; }
  std::size_t size() const { return tail_ - head_; }
  OutItem& front() { return slots_[head_ & (slots_.size() - 1)]; }
  void pop_front() { ++head_; }
  // False (nothing queued) when the queue could not grow.
  [[nodiscard]] bool push_back(OutItem item) noexcept;
  // Takes r out wherever it is, keeping the others' order (MPI_Cancel of
  // a send that has not left). False when r is not queued.
  bool remove(const Request* r);

 private:
  std::vector<OutItem> slots_;  // a power of two in size
  std::size_t head_ = 0, tail_ = 0;
};

}  // namespace adi3
