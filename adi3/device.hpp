// Device: all the state of one rank (queues, pools, channel, settings), so
// several devices can live in one process. This is the ADI: usable from C++
// on its own, without any MPI binding.
#pragma once
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "adi3/bsend_buffer.hpp"
#include "adi3/config.hpp"
#include "adi3/error.hpp"
#include "adi3/flow.hpp"
#include "adi3/hot_inline.hpp"
#include "adi3/layer_port.hpp"
#include "adi3/layer_states.hpp"
#include "adi3/matcher.hpp"
#include "adi3/packet.hpp"
#include "adi3/request.hpp"
#include "adi3/request_pool.hpp"
#include "adi3/scratch.hpp"
#include "adi3/send_queue.hpp"
#include "adi3/spin_lock.hpp"
#include "adi3/types.hpp"
#include "channels/channel.hpp"
#include "segment/datatype.hpp"

namespace adi3 {

inline constexpr uint32_t kInternalContext = 0xfffffff0;  // the device's own traffic

class Device final : private PacketSink {
 public:
  using Handler = void (*)(Device&, int src, const PacketHeader&, const void* payload, std::size_t bytes);

  explicit Device(std::unique_ptr<Channel> channel, const Config& config = Config::from_env());
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  const Comm& world() const { return world_; }
  Channel& channel() { return *channel_; }
  // The channel that serves `peer` (a channel rank), addressed by job
  // rank. In a job across hosts the device's channel is a set (shm on the
  // host, the network channel between hosts: adi3/channel_set.hpp) that
  // routes each call by peer; code that needs "the channel of peer p"
  // (capabilities, one-sided access) calls this rather than channel().
  Channel& channel_of(int /*peer*/) { return *channel_; }
  const Channel& channel_of(int /*peer*/) const { return *channel_; }
  // The capabilities of the channel serving `peer`.
  const ChannelCaps& caps_of(int peer) const { return channel_->caps_for(peer); }
  // native(t) for the channel serving `peer`.
  bool native_to(int peer, CommType t) const { return !config_.forced(t) && (caps_of(peer).native & t); }
  // Whether point-to-point rendezvous with `peer` may use the channel's
  // single-copy get: type 1's own capability (ChannelCaps::get_min), not a
  // one-sided type, so ADI3_FORCE_EMULATION leaves it alone.
  bool rndv_get_to(int peer) const { return config_.rndv_get && caps_of(peer).get_min != SIZE_MAX; }
  const Config& config() const { return config_; }
  ErrorLog& errors() { return errors_; }
  std::size_t eager_limit() const { return eager_limit_; }
  bool native(CommType t) const { return !config_.forced(t) && (channel_->caps().native & t); }

  // ---- point-to-point (buffers of any datatype) ----
  int send(const void* buf, std::size_t count, const Datatype* type, int dest, int tag, const Comm& comm,
           SendMode mode = SendMode::Standard) {
    if (int e = check_buffer(buf, count, type)) return e;
    return send_checked(buf, count, type, dest, tag, comm, mode);
  }
  int isend(const void* buf, std::size_t count, const Datatype* type, int dest, int tag, const Comm& comm,
            SendMode mode, Request** out) {
    *out = nullptr;
    if (int e = check_buffer(buf, count, type)) return e;
    return isend_checked(buf, count, type, dest, tag, comm, mode, out);
  }
  int recv(void* buf, std::size_t count, const Datatype* type, int source, int tag, const Comm& comm, Status* status) {
    if (int e = check_buffer(buf, count, type)) return e;
    return recv_checked(buf, count, type, source, tag, comm, status);
  }
  int irecv(void* buf, std::size_t count, const Datatype* type, int source, int tag, const Comm& comm, Request** out) {
    *out = nullptr;
    if (int e = check_buffer(buf, count, type)) return e;
    return irecv_checked(buf, count, type, source, tag, comm, out);
  }
  // The same for a caller that has checked the buffer itself: count,
  // datatype (valid, committed) and that count elements neither overflow
  // nor span more than PTRDIFF_MAX bytes (the MPI binding does, before it
  // calls), so a message is validated once, not twice. Ranks and tags are
  // still checked here.
  int send_checked(const void* buf, std::size_t count, const Datatype* type, int dest, int tag, const Comm& comm,
                   SendMode mode);
  int isend_checked(const void* buf, std::size_t count, const Datatype* type, int dest, int tag, const Comm& comm,
                    SendMode mode, Request** out);
  int recv_checked(void* buf, std::size_t count, const Datatype* type, int source, int tag, const Comm& comm,
                   Status* status);
  int irecv_checked(void* buf, std::size_t count, const Datatype* type, int source, int tag, const Comm& comm,
                    Request** out);
  // The common cases of the four above and of wait/test, compiled into the
  // caller (definitions in adi3/device_inline.hpp, which the MPI binding's
  // point-to-point entry points include): a standard-mode send or receive of
  // a small contiguous message goes from MPI to the channel without a call
  // into the core. Same contracts; anything else takes the general call.
  inline int send_fast(const void* buf, std::size_t count, const Datatype* type, int dest, int tag, const Comm& comm);
  inline int isend_fast(const void* buf, std::size_t count, const Datatype* type, int dest, int tag, const Comm& comm,
                        Request** out);
  inline int irecv_fast(void* buf, std::size_t count, const Datatype* type, int source, int tag, const Comm& comm,
                        Request** out);
  inline int recv_fast(void* buf, std::size_t count, const Datatype* type, int source, int tag, const Comm& comm,
                       Status* status);
  inline int wait_fast(Request** r, Status* status);
  inline int test_fast(Request** r, bool* flag, Status* status);
  inline int waitall_fast(int n, Request** reqs, Status* statuses);
  int sendrecv(const void* sbuf, std::size_t scount, const Datatype* stype, int dest, int stag, void* rbuf,
               std::size_t rcount, const Datatype* rtype, int source, int rtag, const Comm& comm, Status* status);
  int sendrecv_replace(void* buf, std::size_t count, const Datatype* type, int dest, int stag, int source, int rtag,
                       const Comm& comm, Status* status);

  // ---- probes; a matched message (mprobe) is a Request* ----
  int iprobe(int source, int tag, const Comm& comm, bool* flag, Status* status);
  int probe(int source, int tag, const Comm& comm, Status* status);
  int improbe(int source, int tag, const Comm& comm, bool* flag, Request** message, Status* status);
  int mprobe(int source, int tag, const Comm& comm, Request** message, Status* status);
  // message == nullptr means the PROC_NULL message.
  int mrecv(void* buf, std::size_t count, const Datatype* type, Request** message, Status* status);
  int imrecv(void* buf, std::size_t count, const Datatype* type, Request** message, Request** out);

  // ---- persistent requests ----
  int send_init(const void* buf, std::size_t count, const Datatype* type, int dest, int tag, const Comm& comm,
                SendMode mode, Request** out);
  int recv_init(void* buf, std::size_t count, const Datatype* type, int source, int tag, const Comm& comm,
                Request** out);
  int start(Request* r);
  int startall(int n, Request* const* reqs);

  // ---- buffered mode: the process buffer, or (MPI-4.1) one a
  // communicator or session owns (a Comm's `buffers` name those) ----
  int buffer_attach(void* buf, std::size_t bytes) { return buffer_attach(*bsend_, buf, bytes); }
  int buffer_detach(void** buf, std::size_t* bytes) { return buffer_detach(*bsend_, buf, bytes); }
  int buffer_attach(BsendBuffer& b, void* buf, std::size_t bytes);
  // MPI_BUFFER_AUTOMATIC: each message gets heap space; detach gives back tag.
  int buffer_attach_automatic(BsendBuffer& b, void* tag);
  int buffer_detach(BsendBuffer& b, void** buf, std::size_t* bytes);
  const std::shared_ptr<BsendBuffer>& process_buffer() const { return bsend_; }
  // Buffered messages not yet transmitted, over every buffer.
  int buffered_in_flight() const { return bsend_live_.load(std::memory_order_relaxed); }
  // Flush: every message in b when it is called has left b (the buffer
  // stays attached). mark/flushed are its nonblocking halves.
  int buffer_flush(BsendBuffer& b);
  uint64_t buffer_mark(BsendBuffer& b);
  bool buffer_flushed(BsendBuffer& b, uint64_t mark);

  // ---- completion: requests are set to nullptr when freed ----
  int wait(Request** r, Status* status);
  int test(Request** r, bool* flag, Status* status);
  int waitall(int n, Request** reqs, Status* statuses);
  int testall(int n, Request** reqs, bool* flag, Status* statuses);
  int waitany(int n, Request** reqs, int* index, Status* status);
  int testany(int n, Request** reqs, int* index, bool* flag, Status* status);
  int waitsome(int n, Request** reqs, int* outcount, int* indices, Status* statuses);
  int testsome(int n, Request** reqs, int* outcount, int* indices, Status* statuses);
  int request_get_status(Request* r, bool* flag, Status* status);
  int request_free(Request** r);
  int cancel(Request* r);

  // ---- progress ----
  // One pass over the channel, the send queues and pollable requests.
  // Returns true if anything happened.
  bool progress();
  // Wakes threads of this rank sleeping in a blocking wait.
  void notify() { channel_->wake(); }
  // Spins, then yields, then sleeps on the channel's wakeup until done().
  // Returns an ERR_PROC_FAILED code instead of hanging when a peer died and
  // nothing progressed for ~100 ms. done() is also checked inside the sleep
  // (Channel::wait_until), so it must be idempotent once true.
  template <class Done>
  int block_until(Done&& done);
  // For calls that move no packets (native one-sided synchronization),
  // which would otherwise never learn that a peer died: every
  // kLivenessEvery-th call lets the channel look for failed peers (its
  // clock is read only then) and a progress pass report them. Returns 0,
  // or ERR_PROC_FAILED naming `what` and the rank when rank of comm (-1:
  // any rank of comm) has failed. Call it without a lock that packet
  // handlers take.
  int check_alive(const Comm& comm, int rank, const char* what) {
    if (none_failed()) [[likely]]
      return 0;
    if (rank >= 0) return check_alive_slow(comm, std::span<const int>(&rank, 1), what);
    return check_alive_slow(comm, {}, what);
  }
  // The same for the ranks of comm in `ranks` (a PSCW group).
  int check_alive(const Comm& comm, std::span<const int> ranks, const char* what) {
    if (none_failed() || ranks.empty()) [[likely]]
      return 0;
    return check_alive_slow(comm, ranks, what);
  }
  // A barrier over all ranks of the device (used by finalize and tests).
  int barrier();
  // Completes pending traffic and synchronizes with every rank.
  int finalize();

  // ---- for the layers above (greq/, rma/, emul/, collectives) ----
  // A fresh request (refs = 1, cc = 1) in *out, or, when the pool is at its
  // cap (ADI3_MAX_REQUESTS) or the system refuses memory, *out = nullptr and
  // an ERR_NO_MEM code naming `what` ("a nonblocking collective on
  // communicator 5"). Never throws: the caller returns the code before it
  // changes any state. A request never handed out goes back with release().
  [[nodiscard]] int new_request(RequestKind kind, const char* what, Request** out) noexcept {
    if ((*out = pool_.get(this, kind))) [[likely]]
      return 0;
    return no_request(what, -1);
  }
  void complete(Request* r);  // one part of r done
  // Drops one reference; the last one gives r back to the pool, in line
  // for a plain request (nothing beside it to free).
  ADI3_HOT_INLINE void release(Request* r) {
    if (!threads_enabled()) [[likely]] {
      release_unshared(r);
      return;
    }
    if (r->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    if (has_parts(r)) [[unlikely]]
      release_parts(r);
    pool_.put(r);
  }
  // release() for a caller that found threads off (once for a set of
  // requests). One thread counts a request's references: no locked
  // instruction. A generalized request is the exception (its completing
  // thread may drop its own reference even then): holding the only
  // reference, nobody else can drop one, otherwise the exchange settles
  // who is last.
  ADI3_HOT_INLINE void release_unshared(Request* r) {
    if (r->kind != RequestKind::Generalized) [[likely]] {
      const int left = r->refs.load(std::memory_order_relaxed) - 1;
      r->refs.store(left, std::memory_order_relaxed);
      if (left != 0) return;
    } else if (r->refs.load(std::memory_order_acquire) != 1 && r->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) {
      return;
    }
    if (has_parts(r)) [[unlikely]]
      release_parts(r);
    pool_.put_unshared(r);
  }
  void add_pollable(Request* r);  // progress() calls r->cls->poll
  // The core's own packet kinds (ids below PacketType::FirstExtension).
  void set_handler(PacketType t, Handler h) { handlers_[static_cast<std::size_t>(t)] = h; }
  // A core packet (48-byte header) to a channel rank, in the peer's FIFO.
  int send_control(int peer, const PacketHeader& h, const void* payload = nullptr, std::size_t bytes = 0);
  std::size_t live_requests() const { return pool_.live(); }
  // What live_requests() can reach (ADI3_MAX_REQUESTS as the pool rounds it).
  std::size_t request_capacity() const { return pool_.capacity(); }
  // The live request of pool slot index whose generation agrees with gen in
  // mask's bits (RequestPool::lookup_slot): what an MPI_Request names.
  Request* request_in_slot(std::size_t index, uint32_t gen, uint32_t mask) const {
    return pool_.lookup_slot(index, gen, mask);
  }
  // request_in_slot for many names: RequestPool::Slots, read once.
  RequestPool::Slots request_slots() const { return pool_.slots(); }
  std::size_t posted_depth() const { return matcher_.posted_size(); }
  std::size_t unexpected_depth() const { return matcher_.unexpected_size(); }
  // The per-device state of a layer above the core (LayerStates), made by
  // make() on first use; destroyed with the device, before the channel.
  using Layer = LayerStates::Layer;
  template <class Make>
  void* layer_state(Layer which, Make&& make) {
    return layers_.get(which, std::forward<Make>(make));
  }

  // ---- the layers' port: packet kinds, ordered packets, progress hooks,
  // threads and the agent (adi3/layer_port.hpp) ----
  LayerPort& port() { return port_; }
  const LayerPort& port() const { return port_; }
  // Whether the locks are on (LayerPort::enable_threads, require_agent).
  bool threads_enabled() const { return threads_.load(std::memory_order_relaxed); }
  // Arrivals refused since the device started (unknown id, bad header size).
  std::size_t refused_packets() const { return refused_.load(std::memory_order_relaxed); }
  // Eager flow control (ADI3_UNEXPECTED_BYTES): this rank's credit toward
  // peer, and the share each sender gets (0: no limit).
  int64_t eager_credit(int peer) const { return credits_.credit(peer); }
  int64_t eager_share() const { return credits_.share(); }

 private:
  struct Peer {
    mutable SpinLock lock;
    SendQueue q;  // everything still to emit to this peer, in order
    // Our rendezvous sends to this peer that offered their buffer for a
    // native get and have no answer yet: while there are any, a large
    // message from the peer crosses ours (Channel::get_crossing).
    std::atomic<uint32_t> offers{0};
  };
  friend class LayerPort;  // reaches the per-peer queues, the poll lock and the failure state
  static constexpr std::size_t kCoreIds = PacketKinds::kCoreIds;
  // kCancelAsked: a send complete when MPI_Cancel came (an eager one the
  // channel took) was re-armed until the receiver answers the cancel.
  enum Phase : uint8_t { kIdle, kEagerOut, kRtsOut, kDataOut, kCancelAsked };

  // PacketSink
  void on_packet(int src, const void* hdr, std::size_t hdr_bytes, const void* payload, std::size_t bytes) override;
  void on_peer_failed(int peer, const char* why) override;
  // Rendezvous data read by the channel straight into the receive buffer
  // (recv.cpp): place() checks the header as on_data does, on_placed counts it.
  // An eager message matching a posted receive is placed too: place_eager
  // takes the receive off the posted queue (it is matched from then on) and
  // placing_[src] keeps it until on_placed delivers it.
  bool place(int src, const void* hdr, std::size_t hdr_bytes, std::size_t bytes, Placement* where) override;
  void on_placed(int src, const void* hdr, std::size_t hdr_bytes, std::size_t bytes) override;
  Request* data_target(int src, const PacketHeader& h, std::size_t bytes);
  bool placeable_header(int src, const void* hdr, std::size_t hdr_bytes, PacketHeader* h) const;
  bool place_eager(int src, const PacketHeader& h, std::size_t bytes, Placement* where);
  void placed_eager(int src, std::size_t bytes, bool refused);
  struct PlacingEager {
    Request* r = nullptr;
    void* tmp = nullptr;  // a message longer than the receive: staged, then truncated
  };

  // checks (error codes name the bad value)
  // Each check is inline for the common good case (every message makes
  // them); the rest, and the error message, are out of line.
  int check_peer(int rank, const Comm& comm, bool allow_any, const char* what) {
    if (static_cast<unsigned>(rank) < static_cast<unsigned>(comm.size)) [[likely]]
      return 0;
    return check_peer_slow(rank, comm, allow_any, what);
  }
  int check_tag(int tag, bool allow_any) {
    if (static_cast<unsigned>(tag) <= static_cast<unsigned>(kTagUb)) [[likely]]
      return 0;
    return check_tag_slow(tag, allow_any);
  }
  int check_buffer(const void* buf, std::size_t count, const Datatype* type) {
    // Small enough that neither count * size nor the span can overflow.
    constexpr std::size_t kSmall = std::size_t{1} << 31;
    if (buf && type && type->is_committed() && count < kSmall && type->size() < kSmall &&
        static_cast<std::size_t>(type->extent() + static_cast<std::ptrdiff_t>(kSmall)) < 2 * kSmall &&
        static_cast<std::size_t>(type->true_extent()) < kSmall) [[likely]]
      return 0;
    return check_buffer_slow(buf, count, type);
  }
  // ERR_PROC_FAILED once peer sent a bad packet
  int check_refused(int peer) {
    if (refused_peers_.load(std::memory_order_relaxed) == 0) [[likely]]
      return 0;
    return check_refused_slow(peer);
  }
  int check_peer_slow(int rank, const Comm& comm, bool allow_any, const char* what);
  int check_tag_slow(int tag, bool allow_any);
  int check_buffer_slow(const void* buf, std::size_t count, const Datatype* type);
  int check_refused_slow(int peer);
  // Out of memory on a call path: an ERR_NO_MEM code saying what could not
  // be allocated (and, for requests, how many are live of the cap).
  int no_memory(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
  int no_request(const char* what, int rank);
  // Out of memory in the progress engine: a message or control packet of
  // peer's could not be kept, so the conversation with peer is broken: peer
  // is treated as failed and waits on it end with ERR_NO_MEM (adi3/nomem.cpp).
  void lost_to_memory(int peer, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
  // A Segment for a noncontiguous buffer, or nullptr when memory ran out.
  static Segment* make_segment(const void* buf, std::size_t count, const Datatype* type) noexcept;

  // send side
  void init_send(Request* r, const void* buf, std::size_t count, const Datatype* type, int dest, int tag,
                 const Comm& comm, SendMode mode);
  void start_send(Request* r);
  SendResult try_send_now(const void* buf, std::size_t count, const Datatype* type, int peer, int tag, const Comm& comm,
                          SendMode mode);
  bool eager_now(Request* r);  // true: sent and complete (no reference held)
  void queue_or_emit(Request* r, uint8_t phase);
  bool emit(Request* r);  // false: channel busy
  int queue_packet(int peer, const void* hdr, std::size_t hdr_bytes, const Payload& payload);
  bool drain_peer(int peer);
  bool drain_sends();
  // out: a new (complete) request for the caller (Ibsend); link: a
  // persistent request to tie to this start's internal send (for cancel).
  int bsend(const void* buf, std::size_t count, const Datatype* type, int dest, int tag, const Comm& comm,
            Request** out, Request* link = nullptr);
  void reap_bsends();
  int cancel_send(Request* r, bool* asked = nullptr);  // asked: a CancelSend went out
  int cancel_buffered(Request* u);
  void resolve_buffered_cancel(Request* inner);

  // receive side
  void init_recv(Request* r, void* buf, std::size_t count, const Datatype* type, int source, int tag, const Comm& comm);
  void start_recv(Request* r);
  void matched(Request* r, Request* unexpected);
  void deliver_eager(Request* r, const void* data, std::size_t bytes);
  void start_rndv_recv(Request* r);
  // Whether r's request-to-send offers its buffer for the peer's native get
  // (then it counts in Peer::offers until answered).
  bool offers_get(const Request* r) const;
  void offer_answered(const Request* r);
  Request* hand_off(Request* stack_recv);  // blocking_recv.cpp
  int probe_once(int source, int tag, const Comm& comm, bool* flag, Request** message, Status* status);
  int probe_blocking(int source, int tag, const Comm& comm, Request** message, Status* status);
  std::size_t capacity(const Request* r) const;
  void unpack_at(Request* r, std::size_t offset, const void* data, std::size_t bytes);

  // packet handlers
  static void on_eager(Device&, int, const PacketHeader&, const void*, std::size_t);
  static void on_rts(Device&, int, const PacketHeader&, const void*, std::size_t);
  static void on_cts(Device&, int, const PacketHeader&, const void*, std::size_t);
  static void on_data(Device&, int, const PacketHeader&, const void*, std::size_t);
  static void on_fin(Device&, int, const PacketHeader&, const void*, std::size_t);
  static void on_sync_ack(Device&, int, const PacketHeader&, const void*, std::size_t);
  static void on_cancel_send(Device&, int, const PacketHeader&, const void*, std::size_t);
  static void on_cancel_ack(Device&, int, const PacketHeader&, const void*, std::size_t);
  static void on_credit(Device&, int, const PacketHeader&, const void*, std::size_t);
  static void on_refused(Device&, int, const PacketHeader&, const void*, std::size_t);
  // An eager message of src was delivered or withdrawn: its credit goes
  // back to src (flow.cpp).
  void eager_consumed(int src, std::size_t bytes);

  bool pass(bool user);
  Request* answered_send(int src, const PacketHeader& h, const char* what);

  // refused packets (device.cpp)
  // A packet from src broke the protocol: it is dropped, reported (stderr
  // and the error log, naming src) and src is treated as failed.
  void refuse(int src, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
  // A packet of an extension id this rank has not registered (yet): dropped
  // and counted, the peer kept (registration is collective but not
  // synchronizing, so a fast peer may be ahead).
  void drop(int src, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
  // What drop and refuse both do with the formatted reason: count, report.
  void count_dropped(int src, const char* why);

  // completion helpers
  void release_parts(Request* r);  // what a released request holds beside it
  static bool has_parts(const Request* r) {
    return r->tmp || r->seg || r->buffered || r->kind == RequestKind::PersistentSend ||
           (r->type && !r->type->is_predefined());
  }
  // Reports and frees a complete plain send or receive (no class, not
  // persistent): its error (device_inline.hpp).
  inline int finish_plain(Request** slot, Status* status);
  // A small contiguous standard-mode eager send straight to the channel
  // (device_inline.hpp): Sent, or Busy/Failed with nothing sent.
  inline SendResult eager_fast(const void* buf, std::size_t bytes, const Datatype* type, int peer, int tag,
                               const Comm& comm, uint64_t sreq);
  int finish(Request** slot, Status* status, int* callback_error);
  bool poll_pollables();
  void sleep_once();
  // One sleep that ends at once when `done` holds (checked under the
  // channel's doorbell: no lost wakeup).
  void sleep_until(const WaitCondition& done) {
    channel_->wait_until(std::chrono::microseconds(config_.sleep_us), done);
  }
  // How long a wait without progress sleeps on in a job with a failed peer
  // before it fails: wall time, since on a loaded host one sleep quantum
  // can take tens of ms and a live partner may not run for longer than
  // 100 ms (core.Wire failed that way at load 30); a second still fails a
  // wait on the dead peer well within the seconds the brief allows.
  static constexpr std::chrono::milliseconds kFailurePatience{1000};
  int peer_failure_error();
  static constexpr uint32_t kLivenessEvery = 64;
  bool none_failed() {
    const uint32_t n = liveness_calls_.load(std::memory_order_relaxed) + 1;
    liveness_calls_.store(n, std::memory_order_relaxed);  // a count lost between threads is harmless
    if (n % kLivenessEvery == 0) [[unlikely]]
      look_for_failures();
    return failed_peers_.load(std::memory_order_acquire) == 0;
  }
  void look_for_failures();
  // ranks empty: every rank of comm.
  int check_alive_slow(const Comm& comm, std::span<const int> ranks, const char* what);

  std::unique_ptr<Channel> channel_;
  Channel* io_;  // channel_->data_path(): send and poll
  // channel_->call_count(): block_until counts its waiting threads there
  // for peers to read (nullptr: nobody reads it).
  std::atomic<uint32_t>* calls_;
  Config config_;
  std::atomic<bool> threads_{false};  // take the locks (see enable_threads)
  int rank_, size_;
  Comm world_;
  std::size_t eager_limit_;
  std::size_t chunk_;
  ErrorLog errors_;
  RequestPool pool_;
  Matcher matcher_;
  EagerCredits credits_;  // ADI3_UNEXPECTED_BYTES (flow.hpp)
  std::vector<Peer> peers_;
  std::atomic<int> pending_peers_{0};
  SpinLock poll_lock_;
  Handler handlers_[kCoreIds] = {};
  LayerPort port_;  // outlives layers_ (rma's hub unregisters its packet kind and hook)
  std::atomic<std::size_t> refused_{0};
  SpinLock pollable_lock_;
  RequestList<ByTagTag> pollables_;
  std::atomic<int> pollable_count_{0};
  std::shared_ptr<BsendBuffer> bsend_ = std::make_shared<BsendBuffer>();  // the process buffer
  // Buffers with messages in flight: kept alive until those leave (a freed
  // communicator's buffer outlives it that long).
  std::vector<std::shared_ptr<BsendBuffer>> bsend_busy_;
  RequestList<ByCtxTag> bsends_;  // internal sends out of the attached buffers
  SpinLock bsend_lock_;
  std::atomic<int> bsend_live_{0};  // size of bsends_, read without the lock
  std::atomic<int> failed_peers_{0};
  std::atomic<uint32_t> liveness_calls_{0};  // check_alive calls (mod 2^32)
  std::vector<uint8_t> peer_failed_;
  std::vector<uint8_t> peer_refused_;  // sent a bad packet: nothing more is read from it
  std::vector<PlacingEager> placing_;  // by channel rank
  std::atomic<int> refused_peers_{0};  // how many peer_refused_ entries are set
  std::vector<char> failure_text_;
  ErrorClass failure_class_ = ErrorClass::ProcFailed;  // NoMem: lost_to_memory
  // Last, so destroyed first: greq's state unlinks itself from pollables_
  // and returns requests to pool_.
  LayerStates layers_;
};

}  // namespace adi3

#include "adi3/block_until.hpp"
