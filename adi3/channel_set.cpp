#include "adi3/channel_set.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace adi3 {

// Renumbers the near channel's deliveries into job ranks.
class ChannelSet::Translate final : public PacketSink {
 public:
  explicit Translate(const std::vector<int>& ranks) : ranks_(ranks) {}
  PacketSink* outer = nullptr;
  void on_packet(int src, const void* hdr, std::size_t hb, const void* payload, std::size_t pb) override {
    if (src < 0 || static_cast<std::size_t>(src) >= ranks_.size()) return;  // the near channel checks this already
    outer->on_packet(ranks_[static_cast<std::size_t>(src)], hdr, hb, payload, pb);
  }
  void on_peer_failed(int peer, const char* why) override {
    if (peer < 0 || static_cast<std::size_t>(peer) >= ranks_.size()) return;
    // Its text counts ranks within this host: say which job rank that is.
    std::string text;  // appended piecewise: GCC 12's -Wrestrict false positive
    text.append("host-local rank ").append(std::to_string(peer)).append(" is job rank ");
    text.append(std::to_string(ranks_[static_cast<std::size_t>(peer)])).append(": ").append(why);
    outer->on_peer_failed(ranks_[static_cast<std::size_t>(peer)], text.c_str());
  }

 private:
  const std::vector<int>& ranks_;
};

ChannelSet::ChannelSet(int rank, int size, std::vector<int> local_ranks, std::unique_ptr<Channel> near,
                       std::unique_ptr<Channel> far)
    : rank_(rank),
      size_(size),
      local_ranks_(std::move(local_ranks)),
      near_index_(static_cast<std::size_t>(size), -1),
      near_(std::move(near)),
      far_(std::move(far)),
      translate_(std::make_unique<Translate>(local_ranks_)) {
  if (near_->size() != static_cast<int>(local_ranks_.size()) || far_->size() != size_ || far_->rank() != rank_) {
    throw std::logic_error("channel set: channel sizes do not match the host layout");
  }
  for (std::size_t i = 0; i < local_ranks_.size(); ++i)
    near_index_[static_cast<std::size_t>(local_ranks_[i])] = static_cast<int>(i);
  const ChannelCaps& a = near_->caps();
  const ChannelCaps& b = far_->caps();
  caps_.native = a.native & b.native;
  caps_.max_header = std::min(a.max_header, b.max_header);
  caps_.max_payload = std::min(a.max_payload, b.max_payload);
  caps_.eager_limit = std::min(a.eager_limit, b.eager_limit);
  caps_.get_min = std::max(a.get_min, b.get_min);
  name_ = std::string(near_->name()) + "+" + far_->name();
}

ChannelSet::~ChannelSet() = default;

const ChannelCaps& ChannelSet::caps_for(int peer) const { return on_host(peer) ? near_->caps() : far_->caps(); }

SendResult ChannelSet::send(int dest, const void* hdr, std::size_t hdr_bytes, const Payload& payload) {
  if (dest < 0 || dest >= size_) return SendResult::Failed;
  const int near = near_index_[static_cast<std::size_t>(dest)];
  if (near >= 0) return near_->send(near, hdr, hdr_bytes, payload);
  return far_->send(dest, hdr, hdr_bytes, payload);
}

int ChannelSet::poll(PacketSink& sink) {
  translate_->outer = &sink;
  int n = near_->poll(*translate_);
  if (far_busy_ || ++tick_ % kFarEvery == 0) {
    const int m = far_->poll(sink);
    far_busy_ = m > 0;
    n += m;
  }
  return n;
}

void ChannelSet::wait(std::chrono::microseconds timeout) { near_->wait(std::min(timeout, kFarSlice)); }

// The condition goes to the channel that sleeps (no lost wakeup there).
void ChannelSet::wait_until(std::chrono::microseconds timeout, const WaitCondition& done) {
  near_->wait_until(std::min(timeout, kFarSlice), done);
}

void ChannelSet::wake() {
  near_->wake();
  far_->wake();
}

int ChannelSet::get(int peer, void* local, uint64_t remote, std::size_t len) {
  if (!on_host(peer)) return -1;
  return near_->get(near_index_[static_cast<std::size_t>(peer)], local, remote, len);
}

int ChannelSet::put(int peer, uint64_t remote, const void* local, std::size_t len) {
  if (!on_host(peer)) return -1;
  return near_->put(near_index_[static_cast<std::size_t>(peer)], remote, local, len);
}

}  // namespace adi3
