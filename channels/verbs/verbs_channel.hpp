// The verbs channel: point-to-point over RDMA (verbs_device.hpp).
//
// Eager: every rank owns, for each peer, a ring of `slots` fixed-size
// slots registered for remote write. A packet is one record (record.hpp)
// the sender builds in a staging slot and RDMA-writes with immediate into
// the next slot of its ring at the receiver; the immediate names the slot,
// and its receive completion says the bytes are there. A sender holds one
// credit per free slot; the receiver returns them in the header of its own
// records, or in a zero-length write with immediate once half the ring is
// owed, so neither side ever writes into a slot still being read.
//
// Rendezvous: the core's request-to-send offers the sender's buffer; the
// channel registers it (mr_cache.hpp) and adds its key to the record. The
// receiver's get() RDMA-reads straight into the user's buffer; the
// registration is released when the receiver's answer (Fin, or Cts when it
// streams instead) arrives.
//
// Queue pairs are made on first use (conn_manager.hpp): a send to a peer
// not yet connected starts the connection and returns Busy; one-sided
// requests and get() wait for it.
#pragma once
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "channels/channel.hpp"
#include "channels/plugin.hpp"
#include "channels/verbs/conn_manager.hpp"
#include "channels/verbs/mr_cache.hpp"
#include "channels/verbs/record.hpp"
#include "channels/verbs/settings.hpp"
#include "channels/verbs/shared_part.hpp"
#include "channels/verbs/verbs_device.hpp"
#include "channels/verbs/verbs_onesided.hpp"

namespace adi3::verbs {

class VerbsChannel final : public Channel, private ConnManager::Hooks {
 public:
  // Collective over the bootstrap's ranks. Throws std::runtime_error.
  VerbsChannel(ChannelBootstrap& boot, const VerbsSettings& settings, std::unique_ptr<VerbsDevice> dev);
  ~VerbsChannel() override;

  const char* name() const override { return "verbs"; }
  const ChannelCaps& caps() const override { return caps_; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  SendResult send(int dest, const void* hdr, std::size_t hdr_bytes, const Payload& payload) override;
  int poll(PacketSink& sink) override;
  void wait(std::chrono::microseconds timeout) override { wait_until(timeout, WaitCondition{}); }
  void wait_until(std::chrono::microseconds timeout, const WaitCondition& done) override;
  void wake() override { dev_->wake(); }
  int get(int peer, void* local, uint64_t remote, std::size_t len) override;
  OneSided* onesided() override { return os_.get(); }
  // Channel::check_liveness: when the lock is free (else its holder polls).
  void check_liveness() override {
    std::unique_lock g(mu_, std::try_to_lock);
    if (g) check_liveness_locked();
  }

  const VerbsDevice& device() const { return *dev_; }
  // Reliable-connected queue pairs made so far (MPI_T pvar
  // channel_connections, ADI3_VERBS_REPORT).
  uint64_t connections() const override { return qps_.load(std::memory_order_relaxed); }

 private:
  friend class VerbsOneSided;  // posts on dev_ under mu_; drive() completes its requests

  struct Offer {  // a rendezvous buffer a peer offered
    uint64_t addr = 0, len = 0;
    uint32_t rkey = 0;
  };
  struct Peer {
    uint64_t ring = 0;  // its ring for us: address and key
    uint32_t rkey = 0;
    uint64_t sent = 0;      // records written to it
    uint64_t written = 0;   // of those, completed (staging slots free)
    uint32_t credits = 0;   // its slots we may fill
    uint64_t received = 0;  // records from it consumed
    uint32_t owed = 0;      // slots consumed and not yet returned
    bool dead = false;
    Offer offers[64];
    unsigned next_offer = 0;
  };
  struct Arrived {
    int peer;
    const char* rec;
  };
  struct Failure {
    int peer;
    std::string why;
  };

  void exchange(ChannelBootstrap& boot);
  // ConnManager::Hooks, with mu_ held.
  void qp_created(int peer) override;
  void connect_failed(int peer, std::string why) override;
  // With mu_ held in g: connects to peer if needed, driving progress until
  // it is connected (true) or failed (false).
  bool connected(std::unique_lock<std::mutex>& g, int peer);
  // With mu_ held.
  void handle(const Completion& c, std::vector<Arrived>& arrived);
  bool accept(int peer, const Completion& c, std::vector<Arrived>& arrived);
  void consumed(int peer);
  void fail_peer(int peer, std::string why);
  void check_liveness_locked();
  void offer_buffer(int dest, const void* hdr, std::size_t hdr_bytes, RecordHeader& h);
  void answer_seen(int src, const void* hdr, std::size_t hdr_bytes);
  char* slot(char* base, int peer, uint64_t n) const;
  // With mu_ held in g: lets other threads in, then takes one batch of
  // completions off the device. Those of reads, one-sided requests and
  // errors are handled here; arrived records wait in stash_ for poll().
  void drive(std::unique_lock<std::mutex>& g);

  int rank_, size_;
  VerbsSettings settings_;
  ChannelCaps caps_;
  std::unique_ptr<VerbsDevice> dev_;
  std::mutex mu_;  // device, peers, cache; never held while calling the sink
  std::vector<Peer> peers_;
  std::vector<bool> same_host_;  // per rank: on this host (its published address says)
  std::vector<char> rings_mem_, stage_mem_;
  char* rings_ = nullptr;  // [peer][slot]: records from peer
  char* stage_ = nullptr;  // [peer][slot]: records to peer being written
  Region rings_mr_, stage_mr_;
  MrCache cache_;
  std::map<std::pair<int, uint64_t>, Region> offered_;  // (peer, send request) -> our registration
  std::deque<std::pair<int, uint64_t>> offered_order_;
  std::deque<Completion> stash_;  // taken off the device by get()
  std::atomic<bool> stash_nonempty_{false};
  std::vector<Failure> failures_;
  struct ReadState {
    int pending = 0;
    bool failed = false;
  };
  uint64_t read_token_ = 0;
  std::map<uint64_t, ReadState> reads_;  // get() calls in progress
  unsigned polls_ = 0;
  std::unique_ptr<ConnManager> cm_;
  std::atomic<bool> connecting_{false};  // cm_->pending(), for wait_until
  std::atomic<uint64_t> qps_{0};         // dev_->qps_created(), for any thread
  pid_t launcher_ = 0;                   // our parent at start
  bool orphaned_ = false;
  std::unique_ptr<SharedPart> shared_;  // MPI_Win_allocate_shared: segments this host's ranks map
  std::unique_ptr<VerbsOneSided> os_;   // last: its requests refer to the members above
};

}  // namespace adi3::verbs
