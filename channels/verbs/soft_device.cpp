// The software device: RDMA semantics between processes of one host.
// Data moves by cross-memory attach (process_vm_readv/writev) after the
// access is checked against the target's key table (soft_layout.hpp), so a
// bad key or range is a completion error and the kernel, not the process,
// catches an address that is not mapped. Every request executes when it
// is posted; its completion waits in a local queue for poll().
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <deque>
#include <new>
#include <stdexcept>
#include <vector>

#include "adi3/spin_lock.hpp"
#include "adi3/steady_clock.hpp"
#include "channels/shm/cma.hpp"
#include "channels/shm/peer_watch.hpp"
#include "channels/shm/shm_segment.hpp"
#include "channels/verbs/soft_layout.hpp"
#include "channels/verbs/verbs_device.hpp"

namespace adi3::verbs {
namespace {

using shm::ShmSegment;
using namespace soft;

constexpr int64_t kCheckEveryNs = 50'000'000;  // peer liveness

class SoftDevice final : public VerbsDevice {
 public:
  explicit SoftDevice(const DeviceParams& p)
      : rank_(p.rank), size_(p.size), layout_{p.size}, peers_(static_cast<std::size_t>(p.size)) {
    mine_ = ShmSegment::create(p.job_id + "-verbs", layout_.total());
    Header* h = new (mine_.base()) Header{};
    h->magic = kMagic;
    h->version = kVersion;
    h->ranks = size_;
    h->owner = rank_;
    h->pid = static_cast<int32_t>(getpid());
    keys_ = layout_.keys(mine_.base());
    for (uint32_t i = 0; i < kKeySlots; ++i) free_slots_.push_back(kKeySlots - 1 - i);
  }

  const char* name() const override { return "soft"; }

  // The fabric: every rank's segment is mapped at start (one host); queue
  // pairs and their connections are made later, as on hardware.
  std::string datagram_address() const override { return mine_.name(); }
  void datagram_peer(int peer, const std::string& addr) override {
    Peer& p = at(peer);
    if (peer == rank_) {
      p.base = mine_.base();
    } else {
      p.seg = ShmSegment::open(addr);
      p.base = p.seg.base();
    }
    Header* h = Layout::header(p.base);
    if ((peer != rank_ && p.seg.size() < layout_.total()) || h->magic != kMagic || h->version != kVersion ||
        h->ranks != size_ || h->owner != peer || h->pid <= 0) {
      throw std::runtime_error("software verbs device of rank " + std::to_string(peer) + " (" + addr +
                               ") does not match this rank's (different adi3 build or job size?)");
    }
    p.pid = h->pid;
    if (peer != rank_) watch_.watch(peer, p.pid);
  }
  void started() override { mine_.unlink(); }

  // UD rules: a full queue at the target (no receive posted) drops the
  // datagram without telling the sender.
  bool send_datagram(int peer, const void* data, std::size_t len) override {
    Peer& p = at(peer);
    if (!p.base || len > kDgramBytes) return false;
    DgramQueue* q = layout_.dgrams(p.base, rank_);
    if (p.dgram_sent - q->taken.load(std::memory_order_acquire) >= kDgramDepth) return true;  // dropped
    DgramEntry& e = q->entries[p.dgram_sent % kDgramDepth];
    e.len = static_cast<uint32_t>(len);
    std::memcpy(e.data, data, len);
    e.seq.store(++p.dgram_sent, std::memory_order_release);
    q->produced.store(p.dgram_sent, std::memory_order_release);
    Layout::header(p.base)->bell.ring();
    return true;
  }

  int recv_datagram(void* buf, std::size_t max, int* peer) override {
    for (int i = 0; i < size_; ++i) {
      int src = (next_dgram_ + i) % size_;
      Peer& p = peers_[static_cast<std::size_t>(src)];
      DgramQueue* q = layout_.dgrams(mine_.base(), src);
      DgramEntry& e = q->entries[p.dgram_taken % kDgramDepth];
      if (e.seq.load(std::memory_order_acquire) != p.dgram_taken + 1) continue;
      const std::size_t len = std::min<std::size_t>(e.len, kDgramBytes);
      const bool fits = len <= max;
      if (fits) std::memcpy(buf, e.data, len);
      q->taken.store(++p.dgram_taken, std::memory_order_release);
      p.dgram_seen.store(p.dgram_taken, std::memory_order_relaxed);
      next_dgram_ = (src + 1) % size_;
      if (!fits) continue;  // as a receive buffer too short: lost
      *peer = src;
      return static_cast<int>(len);
    }
    return -1;
  }

  // A queue pair number names this rank's queue pair for one peer; the
  // target's receive queue for us records which one it is connected to.
  std::string create_qp(int peer) override {
    Peer& p = at(peer);
    if (!p.base) throw std::runtime_error("software verbs device: rank " + std::to_string(peer) + " is not known");
    if (p.qpn == 0) {
      p.qpn = ++next_qpn_;
      ++qps_created_;
    }
    return "softqp " + std::to_string(p.qpn);
  }
  void connect(int peer, const std::string& addr) override {
    Peer& p = at(peer);
    unsigned qpn = 0;
    char extra = 0;
    if (std::sscanf(addr.c_str(), "softqp %u%c", &qpn, &extra) != 1 || qpn == 0)
      throw std::runtime_error("rank " + std::to_string(peer) + " sent a malformed queue pair address: '" + addr + "'");
    if (p.qpn == 0) throw std::runtime_error("verbs: connect to rank " + std::to_string(peer) + " before create_qp");
    p.remote_qpn = qpn;
    layout_.queue(mine_.base(), peer)->connected_to.store(qpn, std::memory_order_release);
  }
  int qps_created() const override { return qps_created_; }

  Region reg(void* addr, std::size_t len, uint32_t access) override {
    if (free_slots_.empty()) {
      throw std::runtime_error("software verbs device: all " + std::to_string(kKeySlots) +
                               " memory registrations are in use");
    }
    uint32_t slot = free_slots_.back();
    free_slots_.pop_back();
    uint32_t gen = ++generation_ & 0xfffffu;
    if (gen == 0) gen = ++generation_ & 0xfffffu;
    uint32_t key = gen << 12 | slot;
    KeySlot& k = keys_[slot];
    k.access = access;
    k.addr = reinterpret_cast<uintptr_t>(addr);
    k.len = len;
    k.key.store(key, std::memory_order_release);
    return {k.addr, len, key, key, reinterpret_cast<void*>(static_cast<uintptr_t>(slot) + 1)};
  }
  void dereg(Region& r) override {
    if (!r.handle) return;
    uint32_t slot = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(r.handle) - 1);
    keys_[slot].key.store(0, std::memory_order_release);
    free_slots_.push_back(slot);
    r = Region{};
  }
  bool registrations_follow_mappings() const override { return true; }  // address-based, like ODP

  bool post_recv(int peer, uint64_t) override {
    RecvQueue* q = layout_.queue(mine_.base(), peer);
    Peer& p = at(peer);
    if (p.qpn == 0) return false;  // no queue pair
    if (p.posted - p.consumed >= kQueueDepth) return false;
    q->posted.store(++p.posted, std::memory_order_release);
    return true;
  }

  bool write_imm(int peer, uint64_t wr_id, const void* local, std::size_t len, uint32_t, uint64_t remote, uint32_t rkey,
                 uint32_t imm) override {
    Peer& p = at(peer);
    if (!p.remote_qpn) return false;  // not connected: refused at posting, as by ibv_post_send
    Status s = check(p, remote, len, rkey, kRemoteWrite);
    RecvQueue* q = layout_.queue(p.base, rank_);
    if (s == Status::Success && p.produced >= q->posted.load(std::memory_order_acquire)) s = Status::ReceiverNotReady;
    if (s == Status::Success && len && !shm::cma_write(p.pid, remote, local, len)) s = Status::RemoteAccess;
    if (s == Status::Success) {
      RecvEntry& e = q->entries[p.produced % kQueueDepth];
      e.imm = imm;
      e.bytes = static_cast<uint32_t>(len);
      e.seq.store(++p.produced, std::memory_order_release);
      q->produced.store(p.produced, std::memory_order_release);
      Layout::header(p.base)->bell.ring();
    }
    return complete(p, peer, wr_id, Op::WriteImm, s);
  }

  bool write(int peer, uint64_t wr_id, const void* local, std::size_t len, uint32_t, uint64_t remote,
             uint32_t rkey) override {
    Peer& p = at(peer);
    if (!p.remote_qpn) return false;  // not connected: refused at posting, as by ibv_post_send
    Status s = check(p, remote, len, rkey, kRemoteWrite);
    if (s == Status::Success && len && !shm::cma_write(p.pid, remote, local, len)) s = Status::RemoteAccess;
    return complete(p, peer, wr_id, Op::Write, s);
  }

  bool read(int peer, uint64_t wr_id, void* local, std::size_t len, uint32_t, uint64_t remote, uint32_t rkey) override {
    Peer& p = at(peer);
    if (!p.remote_qpn) return false;  // not connected: refused at posting, as by ibv_post_send
    Status s = check(p, remote, len, rkey, kRemoteRead);
    if (s == Status::Success && len && !shm::cma_read(p.pid, local, remote, len)) s = Status::RemoteAccess;
    return complete(p, peer, wr_id, Op::Read, s);
  }

  // A chain: every entry checked as one request would be, then the data
  // moves in one process_vm_writev/readv per kCmaIov entries; one
  // completion (the chain's first failure, if any), as a chain whose last
  // request alone is signaled.
  std::size_t post_list(int peer, uint64_t wr_id, const ListEntry* list, std::size_t n, uint32_t, uint32_t rkey,
                        bool write, std::size_t* completions) override {
    *completions = 0;
    Peer& p = at(peer);
    if (!p.remote_qpn || n == 0) return 0;  // not connected: refused at posting, as by ibv_post_send
    Status s = Status::Success;
    for (std::size_t i = 0; i < n && s == Status::Success; ++i) {
      s = check(p, list[i].remote, list[i].len, rkey, write ? kRemoteWrite : kRemoteRead);
    }
    for (std::size_t i = 0; i < n && s == Status::Success; i += kCmaIov) {
      if (!cma_list(p.pid, list + i, std::min(kCmaIov, n - i), write)) s = Status::RemoteAccess;
    }
    *completions = 1;
    complete(p, peer, wr_id, write ? Op::Write : Op::Read, s);
    return n;
  }

  bool fetch_add(int peer, uint64_t wr_id, uint64_t* result, uint32_t, uint64_t remote, uint32_t rkey,
                 uint64_t add) override {
    return atomic(peer, wr_id, Op::FetchAdd, result, remote, rkey, [&](uint64_t old) { return old + add; });
  }
  bool compare_swap(int peer, uint64_t wr_id, uint64_t* result, uint32_t, uint64_t remote, uint32_t rkey,
                    uint64_t compare, uint64_t swap) override {
    return atomic(peer, wr_id, Op::CompareSwap, result, remote, rkey,
                  [&](uint64_t old) { return old == compare ? swap : old; });
  }

  int poll(Completion* out, int max) override {
    int n = 0;
    while (n < max && !cq_.empty()) {
      out[n++] = cq_.front();
      cq_.pop_front();
      cq_size_.fetch_sub(1, std::memory_order_relaxed);
    }
    for (int i = 0; i < size_ && n < max; ++i) {
      int src = (next_ + i) % size_;
      Peer& p = peers_[static_cast<std::size_t>(src)];
      RecvQueue* q = layout_.queue(mine_.base(), src);
      while (n < max && p.consumed < p.posted) {
        RecvEntry& e = q->entries[p.consumed % kQueueDepth];
        if (e.seq.load(std::memory_order_acquire) != p.consumed + 1) break;
        out[n++] = {0, src, Op::RecvImm, Status::Success, e.imm, e.bytes};
        ++p.consumed;
        p.seen.store(p.consumed, std::memory_order_relaxed);
      }
    }
    next_ = (next_ + 1) % size_;
    return n;
  }

  void wait(std::chrono::microseconds timeout) override { wait_until(timeout, WaitCondition{}); }
  // done is checked after the doorbell's announcement: a completer that
  // published and rang before it is seen here, one that rings after it
  // ends the sleep. (Checked before the announcement, a ring in between
  // advanced the bell before the sleeper read it: a whole timeout lost.)
  void wait_until(std::chrono::microseconds timeout, const WaitCondition& done) override {
    Layout::header(mine_.base())->bell.sleep_if([&] { return idle() && !done(); }, timeout);
  }
  void wake() override { Layout::header(mine_.base())->bell.ring_always(); }

  int dead_peer(std::string& why) override {
    int64_t now = steady_ns();
    if (dead_.empty() && now >= next_check_ns_.load(std::memory_order_relaxed)) {
      next_check_ns_.store(now + kCheckEveryNs, std::memory_order_relaxed);
      watch_.check([&](int r, pid_t pid) {
        dead_.push_back({r, "rank " + std::to_string(r) + " (pid " + std::to_string(pid) +
                                ") exited (noticed by the software verbs device of rank " + std::to_string(rank_) +
                                ")"});
      });
    }
    if (dead_.empty()) return -1;
    auto [r, text] = dead_.front();
    dead_.pop_front();
    why = text;
    return r;
  }

 private:
  struct Peer {
    ShmSegment seg;
    char* base = nullptr;
    pid_t pid = 0;
    bool error = false;             // the queue pair to it is in error
    uint64_t produced = 0;          // write_imm completions written into its queue
    uint64_t posted = 0;            // receives posted for it (our queue)
    uint64_t consumed = 0;          // of those, completed
    std::atomic<uint64_t> seen{0};  // consumed, for wait() in another thread
    uint32_t qpn = 0;               // our queue pair for it (0: none yet)
    uint32_t remote_qpn = 0;        // its queue pair ours is connected to (0: not connected)
    uint64_t dgram_sent = 0;        // datagrams written into its queue for us
    uint64_t dgram_taken = 0;       // datagrams from it taken off our queue
    std::atomic<uint64_t> dgram_seen{0};
  };

  Peer& at(int peer) {
    if (peer < 0 || peer >= size_) throw std::out_of_range("verbs: no rank " + std::to_string(peer));
    return peers_[static_cast<std::size_t>(peer)];
  }

  // Entries of a chain in one system call; a short transfer (a signal, a
  // range the kernel would not take at once) is redone entry by entry.
  static constexpr std::size_t kCmaIov = 512;
  static bool cma_list(pid_t pid, const ListEntry* list, std::size_t k, bool write) {
    iovec l[kCmaIov], r[kCmaIov];
    std::size_t total = 0;
    for (std::size_t i = 0; i < k; ++i) {
      l[i] = {list[i].local, list[i].len};
      r[i] = {reinterpret_cast<void*>(static_cast<uintptr_t>(list[i].remote)), list[i].len};
      total += list[i].len;
    }
    const ssize_t got = write ? process_vm_writev(pid, l, k, r, k, 0) : process_vm_readv(pid, l, k, r, k, 0);
    if (got >= 0 && static_cast<std::size_t>(got) == total) return true;
    for (std::size_t i = 0; i < k; ++i) {
      const ListEntry& e = list[i];
      if (e.len &&
          !(write ? shm::cma_write(pid, e.remote, e.local, e.len) : shm::cma_read(pid, e.local, e.remote, e.len)))
        return false;
    }
    return true;
  }

  // The target's protection check, on its key table.
  Status check(Peer& p, uint64_t remote, std::size_t len, uint32_t rkey, uint32_t need) const {
    if (p.error) return Status::Flushed;
    if (!p.base) return Status::PeerUnreachable;
    // The target's queue pair must be connected to ours (RTR) before a
    // request reaches it; on a NIC the request would be retried until the
    // retries ran out.
    if (layout_.queue(p.base, rank_)->connected_to.load(std::memory_order_acquire) != p.qpn)
      return Status::PeerUnreachable;
    if (len == 0 && need == kRemoteWrite) return Status::Success;  // as on InfiniBand: no key is checked
    KeySlot& k = layout_.keys(p.base)[rkey & (kKeySlots - 1)];
    if (rkey == 0 || k.key.load(std::memory_order_acquire) != rkey) return Status::RemoteAccess;
    uint32_t access = k.access;
    uint64_t addr = k.addr, rlen = k.len;
    if (k.key.load(std::memory_order_acquire) != rkey) return Status::RemoteAccess;  // changed meanwhile
    if (!(access & need) || remote < addr || remote - addr > rlen || len > rlen - (remote - addr))
      return Status::RemoteAccess;
    return Status::Success;
  }

  template <class F>
  bool atomic(int peer, uint64_t wr_id, Op op, uint64_t* result, uint64_t remote, uint32_t rkey, F&& next) {
    Peer& p = at(peer);
    if (!p.remote_qpn) return false;
    Status s = check(p, remote, 8, rkey, kRemoteAtomic);
    if (s == Status::Success && remote % 8 != 0) s = Status::RemoteAccess;
    if (s == Status::Success) {
      // Atomic against every other atomic on that target: a lock stripe in
      // its segment, as the NIC serializes its own atomics.
      LockStripe& l = layout_.locks(p.base)[(remote >> 3) % kLockStripes];
      while (l.held.exchange(1, std::memory_order_acquire)) cpu_relax();
      uint64_t old = 0;
      if (!shm::cma_read(p.pid, &old, remote, 8)) {
        s = Status::RemoteAccess;
      } else {
        uint64_t now = next(old);
        if (now != old && !shm::cma_write(p.pid, remote, &now, 8)) s = Status::RemoteAccess;
        *result = old;
      }
      l.held.store(0, std::memory_order_release);
    }
    return complete(p, peer, wr_id, op, s);
  }

  // Queues the completion; an error puts the queue pair in error.
  bool complete(Peer& p, int peer, uint64_t wr_id, Op op, Status s) {
    if (s != Status::Success && s != Status::Flushed) {
      // A dead process looks like an unmapped range: say what it is.
      if (s == Status::RemoteAccess && peer != rank_ && watch_.check_one(peer)) s = Status::PeerUnreachable;
      p.error = true;
    }
    cq_.push_back({wr_id, peer, op, s, 0, 0});
    cq_size_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }

  // May run in another thread than poll(): atomics only. A garbage
  // counter from a faulty peer only keeps us awake.
  bool idle() {
    if (cq_size_.load(std::memory_order_relaxed)) return false;
    for (int src = 0; src < size_; ++src) {
      if (layout_.queue(mine_.base(), src)->produced.load(std::memory_order_acquire) !=
          peers_[static_cast<std::size_t>(src)].seen.load(std::memory_order_relaxed))
        return false;
      if (layout_.dgrams(mine_.base(), src)->produced.load(std::memory_order_acquire) !=
          peers_[static_cast<std::size_t>(src)].dgram_seen.load(std::memory_order_relaxed))
        return false;
    }
    return steady_ns() < next_check_ns_.load(std::memory_order_relaxed);
  }

  int rank_, size_;
  Layout layout_;
  ShmSegment mine_;
  KeySlot* keys_ = nullptr;
  std::vector<uint32_t> free_slots_;
  uint32_t generation_ = 0;
  std::vector<Peer> peers_;
  std::deque<Completion> cq_;
  std::atomic<std::size_t> cq_size_{0};
  int next_ = 0;
  int next_dgram_ = 0;
  uint32_t next_qpn_ = 0;
  int qps_created_ = 0;
  shm::PeerWatch watch_;
  std::deque<std::pair<int, std::string>> dead_;  // found, not yet reported
  std::atomic<int64_t> next_check_ns_{0};
};

}  // namespace

std::unique_ptr<VerbsDevice> open_soft_device(const DeviceParams& p) { return std::make_unique<SoftDevice>(p); }

const char* status_text(Status s) {
  switch (s) {
    case Status::Success:
      return "success";
    case Status::RemoteAccess:
      return "remote access error (bad key, range or permission)";
    case Status::LocalProtection:
      return "local protection error";
    case Status::ReceiverNotReady:
      return "receiver not ready (no receive posted)";
    case Status::Flushed:
      return "flushed (the queue pair was in error)";
    case Status::PeerUnreachable:
      return "peer unreachable";
    case Status::Other:
      return "device error";
  }
  return "?";
}

}  // namespace adi3::verbs
