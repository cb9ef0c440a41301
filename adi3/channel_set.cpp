#include "adi3/channel_set.hpp"

#include <algorithm>
#include <cerrno>
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

// The near channel's one-sided part, addressed by job rank. Its remote
// regions carry the job rank in `peer` (the near channel keeps what it
// needs of the peer in its own region type).
class ChannelSet::NearOneSided final : public OneSided {
 public:
  NearOneSided(const ChannelSet& set, OneSided& inner) : set_(set), inner_(inner) {}
  ~NearOneSided() = default;

  const OneSidedCaps& caps() const override { return inner_.caps(); }
  Region* allocate(std::size_t bytes) override { return inner_.allocate(bytes); }
  Region* expose(void* base, std::size_t bytes) override { return inner_.expose(base, bytes); }
  void release(Region* r) override { inner_.release(r); }
  void seal(Region* r) override { inner_.seal(r); }
  bool reaches(int peer) const override { return set_.on_host(peer); }
  RemoteRegion* attach(int peer, const void* key, std::size_t key_bytes) override {
    if (!set_.on_host(peer)) {
      errno = EHOSTUNREACH;
      return nullptr;
    }
    RemoteRegion* r = inner_.attach(set_.near_index_[static_cast<std::size_t>(peer)], key, key_bytes);
    if (r) r->peer = peer;
    return r;
  }
  void detach(RemoteRegion* r) override { inner_.detach(r); }
  int put(RemoteRegion& r, uint64_t offset, const void* src, std::size_t len) override {
    return inner_.put(r, offset, src, len);
  }
  int get(RemoteRegion& r, uint64_t offset, void* dst, std::size_t len) override {
    return inner_.get(r, offset, dst, len);
  }
  int fetch_add(RemoteRegion& r, uint64_t offset, uint64_t operand, uint64_t* result, std::size_t width) override {
    return inner_.fetch_add(r, offset, operand, result, width);
  }
  int compare_swap(RemoteRegion& r, uint64_t offset, uint64_t compare, uint64_t swap, uint64_t* result,
                   std::size_t width) override {
    return inner_.compare_swap(r, offset, compare, swap, result, width);
  }
  int flush(int peer) override {
    if (!set_.on_host(peer)) {
      errno = EHOSTUNREACH;
      return -1;
    }
    return inner_.flush(set_.near_index_[static_cast<std::size_t>(peer)]);
  }

 private:
  const ChannelSet& set_;
  OneSided& inner_;
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
  if (OneSided* os = near_->onesided()) onesided_ = std::make_unique<NearOneSided>(*this, *os);
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

OneSided* ChannelSet::onesided() { return onesided_.get(); }

}  // namespace adi3
