#include "adi3/channel_set.hpp"

#include <pthread.h>
#include <signal.h>

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
  bool place(int src, const void* hdr, std::size_t hb, std::size_t pb, Placement* where) override {
    if (src < 0 || static_cast<std::size_t>(src) >= ranks_.size()) return false;
    return outer->place(ranks_[static_cast<std::size_t>(src)], hdr, hb, pb, where);
  }
  void on_placed(int src, const void* hdr, std::size_t hb, std::size_t pb) override {
    if (src < 0 || static_cast<std::size_t>(src) >= ranks_.size()) return;
    outer->on_placed(ranks_[static_cast<std::size_t>(src)], hdr, hb, pb);
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
  void exposed_for_window(Region& r) override { inner_.exposed_for_window(r); }
  void release(Region* r) override { inner_.release(r); }
  void seal(Region* r) override { inner_.seal(r); }
  bool reaches(int peer) const override { return set_.on_host(peer); }
  RemoteRegion* attach(int peer, const void* key, std::size_t key_bytes) override {
    if (!set_.on_host(peer)) {
      errno = EHOSTUNREACH;
      return nullptr;
    }
    RemoteRegion* r = inner_.attach(near(peer), key, key_bytes);
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
  int put_runs(RemoteRegion& r, const Run* runs, std::size_t n, const void* local) override {
    return inner_.put_runs(r, runs, n, local);
  }
  int get_runs(RemoteRegion& r, const Run* runs, std::size_t n, void* local) override {
    return inner_.get_runs(r, runs, n, local);
  }
  int flush(int peer) override {
    if (!set_.on_host(peer)) {
      errno = EHOSTUNREACH;
      return -1;
    }
    return inner_.flush(near(peer));
  }
  // The hints and wake-ups the near channel gives for its ranks. Without
  // them a job across hosts sent every operation on a create window by
  // cross-memory attach (attentive: never), and a same-host rank asleep in
  // an active-target wait saw the counter only at its sleep's timeout.
  bool attentive(int peer) override { return set_.on_host(peer) && inner_.attentive(near(peer)); }
  bool peer_alive(int peer) override { return !set_.on_host(peer) || inner_.peer_alive(near(peer)); }
  void wake(int peer) override {
    if (set_.on_host(peer)) inner_.wake(near(peer));
  }

 private:
  int near(int peer) const { return set_.near_index_[static_cast<std::size_t>(peer)]; }
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
  alone_ = local_ranks_.size() == 1;
  if (alone_) return;
  // The watcher takes none of the program's signals (they are meant for
  // its own threads): it starts with all of them blocked.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  try {
    watcher_ = std::thread([this] { watch_far(); });
  } catch (...) {
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    throw;
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  pthread_setname_np(watcher_.native_handle(), "adi3-netwatch");
}

ChannelSet::~ChannelSet() {
  if (!watcher_.joinable()) return;
  stop_.store(true, std::memory_order_seq_cst);
  sleeps_.fetch_add(1, std::memory_order_seq_cst);
  sleeps_.notify_all();
  far_->wake();
  watcher_.join();
}

// While a thread of this rank sleeps on the near channel's doorbell, wait
// on the network channel and ring that doorbell when it has something.
// It watches only after a sleep began (sleeps_ moved), so a rank that
// spins costs it at most one wakeup per sleep, never one per packet.
void ChannelSet::watch_far() {
  uint32_t handled = sleeps_.load(std::memory_order_acquire);
  for (;;) {
    sleeps_.wait(handled, std::memory_order_acquire);
    if (stop_.load(std::memory_order_acquire)) return;
    handled = sleeps_.load(std::memory_order_acquire);
    if (far_ready_.load(std::memory_order_acquire)) continue;  // the sleeper returns and polls it
    far_->wait(std::chrono::seconds(1));                       // ready, woken, or a (harmless) timeout
    if (stop_.load(std::memory_order_acquire)) return;
    far_ready_.store(true, std::memory_order_seq_cst);
    near_->wake();
  }
}

const ChannelCaps& ChannelSet::caps_for(int peer) const { return on_host(peer) ? near_->caps() : far_->caps(); }

SendResult ChannelSet::send(int dest, const void* hdr, std::size_t hdr_bytes, const Payload& payload) {
  if (dest < 0 || dest >= size_) return SendResult::Failed;
  const int near = near_index_[static_cast<std::size_t>(dest)];
  if (near >= 0) {
    const SendResult r = near_->send(near, hdr, hdr_bytes, payload);
    if (alone_) {  // to itself: a sleeper on the network channel must see it
      self_pending_.store(true, std::memory_order_seq_cst);
      if (far_sleepers_.load(std::memory_order_seq_cst) > 0) far_->wake();
    }
    return r;
  }
  return far_->send(dest, hdr, hdr_bytes, payload);
}

int ChannelSet::poll(PacketSink& sink) {
  translate_->outer = &sink;
  if (alone_ && self_pending_.load(std::memory_order_relaxed)) self_pending_.store(false, std::memory_order_relaxed);
  int n = near_->poll(*translate_);
  const bool ready = far_ready_.load(std::memory_order_relaxed);
  if (far_busy_ || ready || ++tick_ % kFarEvery == 0) {
    // Cleared before the poll: what arrives after it sets the flag again.
    if (ready) far_ready_.store(false, std::memory_order_relaxed);
    const int m = far_->poll(sink);
    far_busy_ = m > 0;
    n += m;
  }
  return n;
}

void ChannelSet::wait(std::chrono::microseconds timeout) { wait_until(timeout, WaitCondition{}); }

// The condition goes to the channel that sleeps (no lost wakeup there),
// with the watcher's flag: the watcher sets it before it rings.
void ChannelSet::wait_until(std::chrono::microseconds timeout, const WaitCondition& done) {
  if (alone_) {
    // Announce, then check: a send to itself after the check wakes the
    // network channel (its wakeups persist until consumed: an eventfd).
    far_sleepers_.fetch_add(1, std::memory_order_seq_cst);
    if (!self_pending_.load(std::memory_order_seq_cst) && !done()) {
      far_->wait(timeout);
      far_ready_.store(true, std::memory_order_relaxed);  // the next pass polls the network
    }
    far_sleepers_.fetch_sub(1, std::memory_order_relaxed);
    return;
  }
  auto woken = [&] { return far_ready_.load(std::memory_order_seq_cst) || done(); };
  if (woken()) return;
  sleeps_.fetch_add(1, std::memory_order_seq_cst);
  sleeps_.notify_one();
  WaitCondition c = WaitCondition::of(woken);
  c.idle = done.idle;
  near_->wait_until(timeout, c);
}

void ChannelSet::wake() {
  near_->wake();
  far_->wake();
}

int ChannelSet::get(int peer, void* local, uint64_t remote, std::size_t len) {
  if (!on_host(peer)) return -1;
  return near_->get(near_index_[static_cast<std::size_t>(peer)], local, remote, len);
}

int ChannelSet::get_crossing(int peer, void* local, uint64_t remote, std::size_t len) {
  if (!on_host(peer)) return -1;
  return near_->get_crossing(near_index_[static_cast<std::size_t>(peer)], local, remote, len);
}

int ChannelSet::put(int peer, uint64_t remote, const void* local, std::size_t len) {
  if (!on_host(peer)) return -1;
  return near_->put(near_index_[static_cast<std::size_t>(peer)], remote, local, len);
}

OneSided* ChannelSet::onesided() { return onesided_.get(); }

}  // namespace adi3
