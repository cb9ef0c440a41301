#include "channels/shm/shm_channel.hpp"

#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "adi3/spin_lock.hpp"
#include "adi3/steady_clock.hpp"
#include "channels/common/tsan_link.hpp"
#include "channels/shm/cma.hpp"
#include "channels/shm/process_fence.hpp"

namespace adi3::shm {
namespace {

// 32 KiB measures 0.25 us faster at 32 KiB messages (ADI3_EAGER_LIMIT=32768),
// but tests/core's bsend suite assumes an eager limit below 30001 bytes.
constexpr std::size_t kEagerLimit = 16384;
constexpr int kDrainBatch = 16;            // packets per sender per poll
constexpr unsigned kPollsPerClock = 4096;  // polls between liveness clock reads
constexpr unsigned kBusyPerCheck = 1024;   // refused sends between peer checks
// Whether a lone offer's sender computes (then CMA wins) is watched from
// this size only: the watch reads the peer's lines, and in a ping-pong at
// 32 KiB it cost ~5% (7.0-8.4 against 6.7-7.3 us).
constexpr std::size_t kWatchMin = 256 * 1024;

uint64_t random_cookie() {
  uint64_t v = 0;
  if (getrandom(&v, sizeof v, 0) != sizeof v) v = 0x9e3779b97f4a7c15ull ^ static_cast<uint64_t>(getpid());
  return v | 1;
}

std::string key_for(int rank) { return "adi3-shm-" + std::to_string(rank); }

}  // namespace

ShmChannel::ShmChannel(ChannelBootstrap& boot, const ShmSettings& settings)
    : rank_(boot.rank()),
      size_(boot.size()),
      settings_(settings),
      layout_(size_, settings.ring_bytes),
      cma_cookie_(random_cookie()),
      segments_(static_cast<std::size_t>(size_)),
      in_(static_cast<std::size_t>(size_)),
      out_(static_cast<std::size_t>(size_)),
      activity_(static_cast<std::size_t>(size_)),
      cma_copies_(static_cast<std::size_t>(size_)),
      waiting_(static_cast<std::size_t>(size_)),
      split_seq_(static_cast<std::size_t>(size_)),
      split_busy_(static_cast<std::size_t>(size_)),
      offers_(size_),
      dead_(static_cast<std::size_t>(size_)) {
  caps_.max_header = 128;  // before map_peers: the ring readers check it
  // Light doorbells: our sleeps pay a barrier on every CPU running a rank,
  // so where ranks outnumber the CPUs (and sleep often) senders keep their
  // fence unless told otherwise.
  if (settings_.light_wake != ShmSettings::LightWake::Off) fence_registered_ = process_fence_register();
  // The machine's CPUs, as the core counts them (adi3/process.cpp): a
  // launcher that binds gives each rank one of them.
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  fence_on_sleep_ =
      fence_registered_ && (settings_.light_wake == ShmSettings::LightWake::On || (cpus > 0 && size_ <= cpus));
  crowded_ = cpus > 0 && size_ > cpus;
  // 1. My inbox, built before anyone can see its name.
  ShmSegment& mine = segments_[static_cast<std::size_t>(rank_)];
  mine = ShmSegment::create(boot.job_id(), layout_.total());
  layout_.construct(mine.base(), rank_, getpid(), reinterpret_cast<uintptr_t>(&cma_cookie_), cma_cookie_,
                    fence_on_sleep_);
  my_bell_ = layout_.bell(mine.base());
  my_activity_ = &layout_.header(mine.base())->activity;
  my_cma_copies_ = &layout_.header(mine.base())->cma_copies;
  my_waiting_ = &layout_.header(mine.base())->waiting;
  my_calls_ = &layout_.header(mine.base())->calls;
  my_asks_ = &layout_.header(mine.base())->asks;

  // 2. Everyone's inbox, then the names go: once every rank has mapped
  // every segment nothing needs them, and a crash can leave nothing behind.
  boot.put(key_for(rank_), mine.name());
  boot.fence();
  map_peers(boot);
  probe_cma();
  boot.barrier();
  mine.unlink();

  {
    std::vector<pid_t> pids(static_cast<std::size_t>(size_));
    for (int p = 0; p < size_; ++p)
      pids[static_cast<std::size_t>(p)] = p == rank_ ? getpid() : out_[static_cast<std::size_t>(p)].pid;
    std::vector<Doorbell*> bells(static_cast<std::size_t>(size_));
    std::vector<ShmOneSided::Calls> calls(static_cast<std::size_t>(size_));
    for (int p = 0; p < size_; ++p) {
      bells[static_cast<std::size_t>(p)] = out_[static_cast<std::size_t>(p)].bell;
      InboxHeader* h = layout_.header(segments_[static_cast<std::size_t>(p)].base());
      calls[static_cast<std::size_t>(p)] = {&h->waiting, &h->calls, out_[static_cast<std::size_t>(p)].light};
    }
    onesided_ = std::make_unique<ShmOneSided>(boot.job_id(), rank_, std::move(pids), cma_ok_,
                                              std::vector<const std::atomic<uint64_t>*>(activity_), std::move(bells),
                                              std::move(calls));
    onesided_->set_splitter(this, crowded_ || !cma_ok_ ? SIZE_MAX : settings_.win_split_mapped_min);
  }
  // Windows in shared memory are reached with loads, stores and atomics,
  // whatever the target does: passive target is native.
  caps_.native = kPointToPoint | kPassiveRma | (cma_ok_ ? kActiveRma : 0u);
  caps_.max_payload = std::min(settings_.chunk_bytes, settings_.ring_bytes / 2 - caps_.max_header - 128);
  caps_.eager_limit = std::min(kEagerLimit, caps_.max_payload);
  caps_.get_min = cma_ok_ ? settings_.cma_min : SIZE_MAX;
  next_check_ns_.store(steady_ns() + int64_t{settings_.liveness_ms} * 1000000);
  launcher_ = getppid();
}

ShmChannel::~ShmChannel() = default;

void ShmChannel::map_peers(ChannelBootstrap& boot) {
  for (int p = 0; p < size_; ++p) {
    auto idx = static_cast<std::size_t>(p);
    if (p != rank_) {
      std::optional<std::string> name = boot.get(key_for(p));
      if (!name) throw std::runtime_error("rank " + std::to_string(p) + " published no shared-memory segment");
      segments_[idx] = ShmSegment::open(*name);
    }
    char* base = segments_[idx].base();
    InboxHeader* h = layout_.header(base);
    if (segments_[idx].size() < layout_.total() || h->magic != kInboxMagic || h->version != kInboxVersion ||
        h->ranks != size_ || h->owner != p || h->ring_bytes != settings_.ring_bytes) {
      throw std::runtime_error("shared-memory segment " + segments_[idx].name() + " of rank " + std::to_string(p) +
                               " does not match this rank's layout (different adi3 build or ADI3_SHM_RING_BYTES?)");
    }
    Out& o = out_[idx];
    o.ring = RingProducer(layout_.ring(base, rank_), layout_.data(base, rank_), settings_.ring_bytes,
                          settings_.stream_min, settings_.adapt_min, settings_.stream_slow_mbps);
    o.room = layout_.room(base, rank_);
    o.bell = layout_.bell(base);
    o.pid = h->pid;
    o.light = fence_registered_ && h->light_wake != 0;
    activity_[idx] = &layout_.header(base)->activity;
    cma_copies_[idx] = &layout_.header(base)->cma_copies;
    waiting_[idx] = &layout_.header(base)->waiting;
    char* mine = segments_[static_cast<std::size_t>(rank_)].base();
    in_[idx] = {RingConsumer(layout_.ring(mine, p), layout_.data(mine, p), settings_.ring_bytes, caps_.max_header),
                layout_.room(mine, p), layout_.bell(base)};
    if (p != rank_) watch_.watch(p, h->pid);
  }
}

// Reads the next rank's cookie through CMA: permission is a property of
// the host (Yama, seccomp, capabilities), so one peer speaks for all. A
// later refusal still only makes get() fail, and the core then streams.
void ShmChannel::probe_cma() {
  if (settings_.cma == ShmSettings::Cma::Off) return;
  if (size_ == 1) {
    cma_ok_ = true;  // get/put on oneself is a memcpy
    return;
  }
  int peer = (rank_ + 1) % size_;
  const InboxHeader* h = layout_.header(segments_[static_cast<std::size_t>(peer)].base());
  cma_ok_ = cma_probe(h->pid, h->cma_addr, h->cma_value);
}

// After a record went into o's ring: clears a refusal and rings the bell.
void ShmChannel::announce(Out& o) {
  if (o.blocked.load(std::memory_order_relaxed)) o.blocked.store(0, std::memory_order_relaxed);
  if (o.light) {
    o.bell->ring_light();
  } else {
    o.bell->ring();
  }
  bump_activity();
}

SendResult ShmChannel::send(int dest, const void* hdr, std::size_t hdr_bytes, const Payload& payload) {
  Out& o = out_[static_cast<std::size_t>(dest)];
  if (dead_[static_cast<std::size_t>(dest)].load(std::memory_order_relaxed)) [[unlikely]]
    return SendResult::Failed;
  link_sent(&o);  // TSan only (tsan_link.hpp): before the peer can see it
  const RingProducer::Push r = o.ring.push(hdr, hdr_bytes, payload);
  // A full or broken ring out of line: the common path then saves and
  // restores fewer registers (~20 instructions a packet with it in line).
  if (r != RingProducer::Push::Sent) [[unlikely]]
    return send_refused(dest, r, hdr, hdr_bytes, payload);
  announce(o);
  return SendResult::Sent;
}

SendResult ShmChannel::send_refused(int dest, RingProducer::Push r, const void* hdr, std::size_t hdr_bytes,
                                    const Payload& payload) {
  Out& o = out_[static_cast<std::size_t>(dest)];
  if (r == RingProducer::Push::Full) {
    // Ask to be woken when room appears, then look once more: the receiver
    // may have drained between the failed push and the request. While our
    // request stands, retries only read the flag (no line ping-pong).
    if (o.room->wanted.load(std::memory_order_relaxed) == 0) {
      o.room->wanted.exchange(1, std::memory_order_seq_cst);
      r = o.ring.push(hdr, hdr_bytes, payload);
    }
    if (r == RingProducer::Push::Full) {
      o.blocked.store(1, std::memory_order_relaxed);
      return busy_or_failed(dest);
    }
  }
  if (r == RingProducer::Push::Broken) {
    ring_broken(dest, "to", o.ring.fault());
    return SendResult::Failed;
  }
  announce(o);
  return SendResult::Sent;
}

// A full ring to a dead peer stays full: look now and then.
SendResult ShmChannel::busy_or_failed(int dest) {
  if (++out_[static_cast<std::size_t>(dest)].busy % kBusyPerCheck != 0 || dest == rank_) return SendResult::Busy;
  std::lock_guard g(watch_lock_);
  if (watch_.check_one(dest)) {
    check_peers();  // records the text and marks dead_
    return SendResult::Failed;
  }
  return SendResult::Busy;
}

int ShmChannel::poll(PacketSink& sink) {
  bump_activity();
  if (my_asks_->load(std::memory_order_relaxed) != asks_seen_.load(std::memory_order_relaxed)) [[unlikely]] {
    serve_asks();
  }
  int total = 0;
  for (int i = 0; i < size_; ++i) {
    int src = next_ + i < size_ ? next_ + i : next_ + i - size_;
    In& in = in_[static_cast<std::size_t>(src)];
    if (!in.ring.ready()) {
      in.waited = true;
      continue;
    }
    // A record we had to wait for (a ping-pong's message) is taken alone:
    // looking for a next one reads the slot after it, a line its sender
    // holds (it cleared that stamp), and the exchange below waits for that
    // load, so the fetch sat on the reply's path (bench/mpi latency 0-64 B
    // in the VM's slow state: ~0.15 us of a 0.58 us one-way trip). Records
    // found waiting (a stream) go in batches.
    const int batch = in.waited ? 1 : kDrainBatch;
    in.waited = false;
    int n = in.ring.drain(batch, [&](const void* h, std::size_t hb, const void* p, std::size_t pb) {
      link_received(&out_[static_cast<std::size_t>(src)]);  // TSan only: the link to src
      sink.on_packet(src, h, hb, p, pb);
    });
    if (n < 0) {
      ring_broken(src, "from", in.ring.fault());
      continue;
    }
    if (n) {
      total += n;
      // The read-modify-write orders our head update before the check.
      if (in.room->wanted.exchange(0, std::memory_order_seq_cst)) in.sender->ring();
    }
  }
  next_ = next_ + 1 < size_ ? next_ + 1 : 0;  // fairness among senders
  if (++polls_ % kPollsPerClock == 0) check_peers_if_due();
  if (failures_pending_.load(std::memory_order_acquire)) report_failures(sink);
  return total;
}

bool ShmChannel::inbox_idle() const {
  for (const In& in : in_) {
    if (!in.ring.empty()) return false;
  }
  return !failures_pending_.load(std::memory_order_acquire) && !room_appeared() &&
         my_asks_->load(std::memory_order_acquire) == asks_seen_.load(std::memory_order_relaxed);
}

// True when a ring we were refused by has room again (the receiver cleared
// our flag): the core should retry now rather than sleep.
bool ShmChannel::room_appeared() const {
  for (int d = 0; d < size_; ++d) {
    const Out& o = out_[static_cast<std::size_t>(d)];
    if (o.blocked.load(std::memory_order_relaxed) &&
        !dead_[static_cast<std::size_t>(d)].load(std::memory_order_relaxed) &&
        o.room->wanted.load(std::memory_order_seq_cst) == 0) {
      return true;
    }
  }
  return false;
}

void ShmChannel::wait(std::chrono::microseconds timeout) { wait_until(timeout, WaitCondition{}); }

void ShmChannel::wait_until(std::chrono::microseconds timeout, const WaitCondition& done) {
  check_peers_if_due();
  if (failures_pending_.load(std::memory_order_acquire)) return;  // poll() reports them
  // Never sleep past the next liveness check.
  auto until_check = std::chrono::microseconds((next_check_ns_.load(std::memory_order_relaxed) - steady_ns()) / 1000);
  if (until_check < timeout) timeout = std::max(until_check, std::chrono::microseconds(1));
  // done is checked after the announcement: a completer that rang before
  // it is seen here, one that rings after it wakes the futex. A sleep with
  // a condition is a blocking call's unless marked idle (the agent's idle
  // sleep): peers see it in our header (InboxHeader::waiting).
  const bool blocking = done.fn != nullptr && !done.idle;
  // With light senders, the barrier between our announcement and the look
  // at the rings is theirs too (process_fence.hpp). Should it fail, we do
  // not sleep: the caller polls again. The agent's idle sleeps (nativec,
  // s20: 116 of 120 barriers of an idle rank, each interrupting every CPU
  // running a rank) run none: they turn the doorbell heavy, so light
  // senders fence (Doorbell::ring_light), at the price of one barrier; a
  // blocking call turns it light again (senders of a busy exchange do not
  // fence) and pays its barrier as before. The look at heavy() comes after
  // the announcement: a sender that saw the doorbell light since then sees
  // us among the sleepers.
  if (fence_on_sleep_) {
    if (blocking) {
      if (my_bell_->heavy()) my_bell_->set_heavy(false);
    } else if (!my_bell_->heavy()) {
      my_bell_->set_heavy(true);
      if (!process_fence()) {
        my_bell_->set_heavy(false);
        return;
      }
    }
  }
  if (blocking) my_waiting_->fetch_add(1, std::memory_order_relaxed);
  my_bell_->sleep_if(
      [&] { return (!fence_on_sleep_ || my_bell_->heavy() || process_fence()) && inbox_idle() && !done(); }, timeout);
  if (blocking) my_waiting_->fetch_sub(1, std::memory_order_relaxed);
}

void ShmChannel::check_peers_if_due() {
  int64_t now = steady_ns();
  if (now < next_check_ns_.load(std::memory_order_relaxed)) return;
  std::unique_lock g(watch_lock_, std::try_to_lock);
  if (!g) return;  // another thread of this rank is checking
  next_check_ns_.store(now + int64_t{settings_.liveness_ms} * 1000000, std::memory_order_relaxed);
  check_peers();
}

// Called with watch_lock_ held.
void ShmChannel::check_peers() {
  // Without its launcher the job cannot finish (nor be stopped): every
  // peer is as good as gone, and waits should fail rather than hang.
  if (!orphaned_ && size_ > 1 && getppid() != launcher_) {
    orphaned_ = true;
    for (int p = 0; p < size_; ++p) {
      if (p == rank_ || dead_[static_cast<std::size_t>(p)].load(std::memory_order_relaxed)) continue;
      dead_[static_cast<std::size_t>(p)].store(1, std::memory_order_relaxed);
      failures_.push_back({p, "rank " + std::to_string(p) + " is unreachable: the launcher (pid " +
                                  std::to_string(launcher_) + ") of rank " + std::to_string(rank_) + " is gone"});
    }
  }
  watch_.check([&](int peer, pid_t pid) {
    dead_[static_cast<std::size_t>(peer)].store(1, std::memory_order_relaxed);
    failures_.push_back({peer, "rank " + std::to_string(peer) + " (pid " + std::to_string(pid) +
                                   ") exited: its process is gone (noticed by the shm channel of rank " +
                                   std::to_string(rank_) + ")"});
  });
  if (!failures_.empty()) failures_pending_.store(true, std::memory_order_release);
}

// The peer wrote what no correct peer writes: refuse anything more from it
// (the ring stays broken) and report it as failed, once.
void ShmChannel::ring_broken(int peer, const char* side, const RingFault& f) {
  std::lock_guard g(watch_lock_);
  if (dead_[static_cast<std::size_t>(peer)].exchange(1, std::memory_order_relaxed)) return;
  failures_.push_back({peer, "rank " + std::to_string(peer) + " is treated as failed: the shared-memory ring " + side +
                                 " it (seen by rank " + std::to_string(rank_) + ") is corrupt: " + f.what +
                                 " (position " + std::to_string(f.position) + ", value " + std::to_string(f.value) +
                                 ")"});
  failures_pending_.store(true, std::memory_order_release);
}

void ShmChannel::report_failures(PacketSink& sink) {
  std::vector<Failure> now;
  {
    std::lock_guard g(watch_lock_);
    now.swap(failures_);
    failures_pending_.store(false, std::memory_order_relaxed);
  }
  for (const Failure& f : now) sink.on_peer_failed(f.peer, f.why.c_str());
}

int ShmChannel::get(int peer, void* local, uint64_t remote, std::size_t len) {
  if (peer == rank_) {
    std::memcpy(local, reinterpret_cast<const void*>(static_cast<uintptr_t>(remote)), len);
    return 0;
  }
  if (!cma_ok_) return -1;
  if (settings_.cma == ShmSettings::Cma::Adaptive) {
    // A stream's large message: both cores copy one half each
    // (cma_split.cpp), while the sender goes on publishing. Not a lone
    // offer (s29, quiet: ping-pong 64 KiB 8.9 us split, 5.0 in the
    // pipeline; 1 MiB 62 against 52), nor with more ranks than CPUs, where
    // the sender rarely runs while we copy.
    if (len >= settings_.split_min && !crowded_ && in_[static_cast<std::size_t>(peer)].ring.more_published())
      return split_copy(peer, false, local, remote, len) ? 0 : -1;
    // Declining makes the core stream the message through the rings.
    if (!fetch_now(peer, len)) return -1;
  }
  return alone(peer, false, local, remote, len) ? 0 : -1;
}

// One CMA copy with peer, by us alone (put: local into its remote, else
// its remote into local). While we copy, a peer deciding the same for a
// message of its own sees us busy in the library (polling_now).
bool ShmChannel::alone(int peer, bool put, void* local, uint64_t remote, std::size_t len) {
  my_cma_copies_->fetch_add(1, std::memory_order_relaxed);
  const pid_t pid = out_[static_cast<std::size_t>(peer)].pid;
  const bool ok = put ? cma_write(pid, remote, local, len) : cma_read(pid, local, remote, len);
  my_cma_copies_->fetch_sub(1, std::memory_order_relaxed);
  bump_activity();
  return ok;
}

// Whether to fetch a message (below ADI3_SHM_CMA_SPLIT_MIN: from it get()
// splits the copy, cma_split.cpp) from peer with CMA rather than leave it
// to the pipeline, by the traffic's shape, never by rates timed earlier (s21: a
// choice timed per size in the ping-pong phase carried the pipeline into
// the stream that followed, bw 128 KiB-1 MiB 0.66-0.82x of the best peer).
// - A stream: the sender published more behind this offer (it went on
//   after it). CMA lets it go on: the receiver copies once, alone, from a
//   buffer the sender only reads (s18: the peers' CMA ran bw 256 KiB-1 MiB
//   at 8.8-22 GB/s, the pipeline 6.3-11.8).
// - A lone offer (a ping-pong: the sender waits for this message alone):
//   the two-copy pipeline, in which both cores copy at once, ran 1 MiB in
//   98-136 us where Open MPI (CMA) took 134-357 (s18), unless the sender
//   computes (not polling), which leaves the pipeline's half undone.
// - More ranks than CPUs: always CMA. The pipeline needs both ranks running
//   at once; 4 ranks on 2 cores ran tests/shm's tiny-ring modes_sizes in
//   171 s with the pipeline for lone offers, 13 s with CMA (load 19-21).
bool ShmChannel::fetch_now(int peer, std::size_t len) {
  if (crowded_) return true;
  if (len >= settings_.cma_stream_min && in_[static_cast<std::size_t>(peer)].ring.more_published()) return true;
  return len >= kWatchMin && !polling_now(peer);
}

// Whether the peer is inside the library (polling) right now: then the
// two-copy pipeline, in which it copies half, beats CMA at every size we
// measured; when it computes, CMA finishes without it. A polling peer bumps
// its counter every ~0.1 us, one streaming chunks at each send (~1.3 us per
// 64 KiB), one inside a CMA copy shows it by cma_copies, one asleep in a
// blocking call (MPI_Wait*, MPI_Recv) by `waiting`: our answer rings its
// doorbell and it streams at once. Taking that sleeper for a computing rank
// made bw at 4 MiB bimodal: CMA copies (10-11.5 GB/s) kept the sender
// asleep, so the next message chose CMA too, against 20-22 GB/s for the
// pipeline. The full watch is only paid when the stream test declined.
bool ShmChannel::polling_now(int peer) {
  constexpr int64_t kWatchNs = 3000;
  const std::atomic<uint64_t>& a = *activity_[static_cast<std::size_t>(peer)];
  const std::atomic<uint32_t>& copying = *cma_copies_[static_cast<std::size_t>(peer)];
  const std::atomic<uint32_t>& asleep = *waiting_[static_cast<std::size_t>(peer)];
  if (copying.load(std::memory_order_relaxed) != 0 || asleep.load(std::memory_order_relaxed) != 0) return true;
  const uint64_t first = a.load(std::memory_order_relaxed);
  const int64_t until = steady_ns() + kWatchNs;
  do {
    // We are in the library too: a peer watching us at the same moment
    // (both receiving) must see it.
    bump_activity();
    for (int i = 0; i < 16; ++i) {
      if (a.load(std::memory_order_relaxed) != first || copying.load(std::memory_order_relaxed) != 0 ||
          asleep.load(std::memory_order_relaxed) != 0) {
        return true;
      }
      cpu_relax();
    }
  } while (steady_ns() < until);
  return false;
}

// Both ranks send large messages to each other (bibw). Each core then has
// two copies to make per message pair in the pipeline (its send in, the
// peer's out) but one with CMA (it fetches the peer's message; the peer
// fetches ours). Below ADI3_SHM_CMA_CROSSING_MIN the pipeline's copies stay
// in the caches and win (s21, bibw 64 KiB), from it CMA does (s18's quiet
// table: the pipeline held bibw 256 KiB-4 MiB at 6.8-7.3 GB/s, the peers'
// CMA 10.3-13.7). Both ranks see the same sizes, so they choose alike (a
// mix makes one core copy three times), and no figure timed in one phase
// steers the next.
int ShmChannel::get_crossing(int peer, void* local, uint64_t remote, std::size_t len) {
  if (peer == rank_ || !cma_ok_ || settings_.cma != ShmSettings::Cma::Adaptive) return get(peer, local, remote, len);
  if (len < settings_.crossing_min && !crowded_) return -1;
  return alone(peer, false, local, remote, len) ? 0 : -1;
}

int ShmChannel::put(int peer, uint64_t remote, const void* local, std::size_t len) {
  if (peer == rank_) {
    std::memcpy(reinterpret_cast<void*>(static_cast<uintptr_t>(remote)), local, len);
    return 0;
  }
  if (!cma_ok_) return -1;
  return cma_write(out_[static_cast<std::size_t>(peer)].pid, remote, local, len) ? 0 : -1;
}

}  // namespace adi3::shm
