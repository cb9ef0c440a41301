// The shared-memory channel: ranks are processes on one host.
//
// Every rank owns an inbox segment (inbox.hpp) with one lock-free SPSC
// ring per sender and a doorbell. send() writes the packet into the ring
// in place and rings the doorbell, which costs a system call only when the
// receiver sleeps. Large messages use cross-memory attach (cma.hpp) for a
// single copy when the kernel permits it, else the core streams them
// through the rings in chunks (a two-copy pipeline).
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "channels/channel.hpp"
#include "channels/plugin.hpp"
#include "channels/shm/inbox.hpp"
#include "channels/shm/offers.hpp"
#include "channels/shm/peer_watch.hpp"
#include "channels/shm/settings.hpp"
#include "channels/shm/shm_onesided.hpp"
#include "channels/shm/shm_segment.hpp"

namespace adi3::shm {

class ShmChannel final : public Channel, public CmaSplitter {
 public:
  // Collective over all ranks of the bootstrap. Throws std::runtime_error.
  ShmChannel(ChannelBootstrap& boot, const ShmSettings& settings);
  ~ShmChannel() override;

  const char* name() const override { return "shm"; }
  const ChannelCaps& caps() const override { return caps_; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  SendResult send(int dest, const void* hdr, std::size_t hdr_bytes, const Payload& payload) override;
  int poll(PacketSink& sink) override;
  void wait(std::chrono::microseconds timeout) override;
  void wait_until(std::chrono::microseconds timeout, const WaitCondition& done) override;
  void check_liveness() override { check_peers_if_due(); }
  // A system call only when a thread of this rank sleeps (the core calls
  // wake() at every completion in MPI_THREAD_MULTIPLE mode); no fence when
  // our sleeps run process_fence() (see send()).
  void wake() override {
    if (fence_on_sleep_) {
      my_bell_->ring_light();
    } else {
      my_bell_->ring();
    }
  }
  int get(int peer, void* local, uint64_t remote, std::size_t len) override;
  int put(int peer, uint64_t remote, const void* local, std::size_t len) override;
  int get_crossing(int peer, void* local, uint64_t remote, std::size_t len) override;

  // Rendezvous buffers offered to peers: a peer's split ask may copy out
  // of these (cma_split.cpp).
  void offer_began(int peer, const void* buf, std::size_t len) override {
    offers_.began(peer, reinterpret_cast<uintptr_t>(buf), len);
  }
  void offer_ended(int peer, const void* buf, std::size_t len) override {
    offers_.ended(peer, reinterpret_cast<uintptr_t>(buf), len);
  }
  bool split_window(int peer, bool put, void* local, uint64_t remote, std::size_t len, char* mapped, bool* ok) override;

  OneSided* onesided() override { return onesided_.get(); }
  std::atomic<uint32_t>* call_count() override { return my_calls_; }

  // Whether the start-up probe found CMA usable (tests, adi3_info).
  bool cma_permitted() const { return cma_ok_; }

 private:
  struct In {
    RingConsumer ring;
    RoomFlag* room;       // the sender waits for room in ring
    Doorbell* sender;     // its doorbell
    bool waited = false;  // poll() last found ring empty (see poll)
  };
  struct Out {
    RingProducer ring;
    RoomFlag* room;
    Doorbell* bell;
    pid_t pid;
    bool light = false;               // ring its doorbell without a fence (InboxHeader::light_wake)
    unsigned busy = 0;                // refused sends (sends to one dest are serialized)
    std::atomic<uint8_t> blocked{0};  // last send was refused for lack of room
  };

  void map_peers(ChannelBootstrap& boot);
  bool polling_now(int peer);
  bool fetch_now(int peer, std::size_t len);
  bool alone(int peer, bool put, void* local, uint64_t remote, std::size_t len);
  // One copy split between both ranks (cma_split.cpp).
  bool split_copy(int peer, bool put, void* local, uint64_t remote, std::size_t len, char* mapped = nullptr);
  uint64_t wait_for_half(int peer, const SplitAsk& ask, uint64_t tag);
  bool ask_allowed(int peer, uint64_t dir, uint64_t src, uint64_t dst, uint64_t len) const;
  [[gnu::noinline]] void serve_asks();
  void probe_cma();
  bool inbox_idle() const;
  // Liveness: check when due, report through the next poll().
  void check_peers_if_due();
  void check_peers();
  void report_failures(PacketSink& sink);
  SendResult busy_or_failed(int dest);
  // send() when the ring refused the record (full: retried once; broken).
  [[gnu::noinline]] SendResult send_refused(int dest, RingProducer::Push r, const void* hdr, std::size_t hdr_bytes,
                                            const Payload& payload);
  inline void announce(Out& o);
  // A ring with a peer broke (it wrote what no correct peer writes).
  void ring_broken(int peer, const char* side, const RingFault& f);

  int rank_, size_;
  ShmSettings settings_;
  InboxLayout layout_;
  ChannelCaps caps_;
  // Read by peers through CMA to prove it works; never changes.
  const uint64_t cma_cookie_;
  bool cma_ok_ = false;
  // This process takes process_fence() barriers (its sends may ring light
  // doorbells), and our sleeps run one (our senders ring light).
  bool fence_registered_ = false;
  bool fence_on_sleep_ = false;
  // More ranks than CPUs: a rendezvous never waits on the pipeline, whose
  // two copies need both ranks running at once (fetch_now).
  bool crowded_ = false;
  std::unique_ptr<ShmOneSided> onesided_;

  std::vector<ShmSegment> segments_;  // [rank]: that rank's inbox
  std::vector<In> in_;                // [sender]: rings of my inbox
  std::vector<Out> out_;              // [dest]: my ring in dest's inbox
  bool room_appeared() const;
  Doorbell* my_bell_ = nullptr;
  std::atomic<uint64_t>* my_activity_ = nullptr;
  // Shows peers we are inside the library. Plain load and store: a bump
  // lost to a concurrent one (MPI_THREAD_MULTIPLE) still changes the value.
  void bump_activity() {
    my_activity_->store(my_activity_->load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  std::vector<const std::atomic<uint64_t>*> activity_;  // [peer]
  std::atomic<uint32_t>* my_cma_copies_ = nullptr;
  std::atomic<uint32_t>* my_waiting_ = nullptr;           // InboxHeader::waiting
  std::atomic<uint32_t>* my_calls_ = nullptr;             // InboxHeader::calls
  std::vector<const std::atomic<uint32_t>*> cma_copies_;  // [peer]
  std::vector<const std::atomic<uint32_t>*> waiting_;     // [peer]: InboxHeader::waiting
  // Split copies (cma_split.cpp): peers' asks of us counted in our inbox,
  // the count we served (any thread reads it: inbox_idle), and per peer
  // our asks' sequence and whether one of our threads holds our ask.
  std::atomic<uint32_t>* my_asks_ = nullptr;
  std::atomic<uint32_t> asks_seen_{0};
  std::vector<uint64_t> split_seq_;
  std::vector<std::atomic<uint8_t>> split_busy_;
  OfferTable offers_;  // what asks may copy out of (cma_split.cpp)
  int next_ = 0;       // first sender of the next poll

  // Peer failure state; wait() may run in any thread, so it is locked.
  std::mutex watch_lock_;
  PeerWatch watch_;
  std::vector<std::atomic<uint8_t>> dead_;  // dest -> send() fails
  struct Failure {
    int peer;
    std::string why;
  };
  std::vector<Failure> failures_;  // not yet reported
  std::atomic<bool> failures_pending_{false};
  std::atomic<int64_t> next_check_ns_{0};  // steady_clock
  pid_t launcher_ = 0;                     // our parent at start (mpiexec, a Hydra proxy)
  bool orphaned_ = false;
  unsigned polls_ = 0;
};

}  // namespace adi3::shm
