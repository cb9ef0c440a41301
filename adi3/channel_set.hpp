// A channel per peer: the on-host channel (shm) for ranks of this host,
// the network channel (ADI3_NETMOD, tcp) for the others, behind the one
// Channel interface the Device drives, in the job's rank numbering.
//
// The near channel runs over this host's ranks only (its own numbering,
// translated here); the network channel spans the job but is only used
// for ranks of other hosts (it connects lazily, so it never touches a
// same-host peer). A one-host job never builds a set (process.cpp picks
// the on-host channel alone), so it pays nothing for the network.
//
// Capabilities: caps() is what holds for every peer (native types that
// both channels do, the smaller size limits); caps_for(peer) is the
// channel serving that peer. onesided() is the near channel's one-sided
// part in job ranks: it reaches this host's ranks only (reaches(peer);
// attach to another host's rank fails with EHOSTUNREACH), so a window
// spanning hosts is native to same-host targets and emulated to the others
// (rma/native.cpp, docs/rma.md). Progress polls both; the network channel
// is polled every pass while it is busy, else every kFarEvery passes, and
// at once when the watcher (below) saw it ready.
// Sleeping: on the near channel's doorbell. The network channel's arrivals
// cannot ring that doorbell (a futex in shared memory; the network's is an
// fd), so a watcher thread, started with the set, waits on the network
// channel while a thread of this rank sleeps and rings the doorbell when
// the network has something (far_ready_, checked under the doorbell, so
// no lost wakeup). Without it a rank asleep on the doorbell saw a network
// packet only at its next timeout: milliseconds of latency across hosts.
// A rank alone on its host (the near channel serves only itself) needs no
// watcher: it sleeps on the network channel itself, one wakeup fewer, and
// a send to itself (the near channel's only traffic) wakes that sleep
// (self_pending_, checked after the sleep's announcement).
#pragma once
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "channels/channel.hpp"

namespace adi3 {

class ChannelSet final : public Channel {
 public:
  static constexpr int kFarEvery = 4;

  // local_ranks: this host's ranks, ascending (the near channel's rank i is
  // local_ranks[i]); near has local_ranks.size() ranks, far has `size`.
  ChannelSet(int rank, int size, std::vector<int> local_ranks, std::unique_ptr<Channel> near,
             std::unique_ptr<Channel> far);
  ~ChannelSet() override;

  const char* name() const override { return name_.c_str(); }
  const ChannelCaps& caps() const override { return caps_; }
  const ChannelCaps& caps_for(int peer) const override;
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  SendResult send(int dest, const void* hdr, std::size_t hdr_bytes, const Payload& payload) override;
  int poll(PacketSink& sink) override;
  void wait(std::chrono::microseconds timeout) override;
  void wait_until(std::chrono::microseconds timeout, const WaitCondition& done) override;
  void check_liveness() override { near_->check_liveness(); }
  void wake() override;
  int get(int peer, void* local, uint64_t remote, std::size_t len) override;
  int get_crossing(int peer, void* local, uint64_t remote, std::size_t len) override;
  int put(int peer, uint64_t remote, const void* local, std::size_t len) override;
  void offer_began(int peer, const void* buf, std::size_t len) override {
    if (on_host(peer)) near_->offer_began(near_index_[static_cast<std::size_t>(peer)], buf, len);
  }
  void offer_ended(int peer, const void* buf, std::size_t len) override {
    if (on_host(peer)) near_->offer_ended(near_index_[static_cast<std::size_t>(peer)], buf, len);
  }
  OneSided* onesided() override;
  std::atomic<uint32_t>* call_count() override { return near_->call_count(); }
  uint64_t connections() const override { return near_->connections() + far_->connections(); }
  void expect_payload(int peer) override {
    if (peer >= 0 && peer < size_ && !on_host(peer)) far_->expect_payload(peer);
  }

  // True when `peer` is served by the on-host channel.
  bool on_host(int peer) const { return peer >= 0 && peer < size_ && near_index_[static_cast<std::size_t>(peer)] >= 0; }

 private:
  class Translate;
  class NearOneSided;
  void watch_far();  // the watcher thread's loop
  int rank_, size_;
  std::vector<int> local_ranks_;  // near rank -> job rank
  std::vector<int> near_index_;   // job rank -> near rank, or -1
  std::unique_ptr<Channel> near_, far_;
  std::unique_ptr<Translate> translate_;
  std::unique_ptr<NearOneSided> onesided_;  // nullptr: the near channel has no one-sided part
  ChannelCaps caps_;
  std::string name_;
  unsigned tick_ = 0;
  bool far_busy_ = true;  // poll() only: the last network poll found work
  // The watcher: sleeps_ counts sleep entries (it waits for one before it
  // watches the network), far_ready_ says the network may have work.
  std::atomic<uint32_t> sleeps_{0};
  std::atomic<bool> far_ready_{false};
  std::atomic<bool> stop_{false};
  std::thread watcher_;  // not started when alone_
  // Alone on the host: sleepers on the network channel, and a packet to
  // itself not yet polled.
  bool alone_ = false;
  std::atomic<int> far_sleepers_{0};
  std::atomic<bool> self_pending_{false};
};

}  // namespace adi3
