#include "channels/verbs/verbs_channel.hpp"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include <unistd.h>

#include "adi3/packet.hpp"
#include "channels/verbs/record.hpp"

namespace adi3::verbs {
namespace {

constexpr std::size_t kMaxHeader = 128;
constexpr std::size_t kEagerLimit = 16384;
constexpr std::size_t kMaxOffered = 1024;  // registrations held for peers' reads
constexpr std::size_t kReadChunk = std::size_t{1} << 30;
constexpr int kBatch = 32;
constexpr unsigned kPollsPerLivenessCheck = 256;

// wr_id: kind in the low 2 bits, a peer or token above.
enum WrKind : uint64_t { kData = 0, kCredit = 1, kRead = 2 };  // 3: VerbsOneSided::kWrKind
uint64_t wr(WrKind k, uint64_t v) { return v << 2 | k; }

std::string key_for(int rank) { return "adi3-verbs-" + std::to_string(rank); }

// This host as ranks compare it: its name and the kernel's boot id (nodes
// of a cluster may share a host name, containers in particular), in the
// characters those have.
std::string host_name() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  std::string raw = buf;
  if (FILE* f = std::fopen("/proc/sys/kernel/random/boot_id", "r")) {
    char id[64] = {};
    if (std::fgets(id, sizeof id, f)) raw += std::string("/") + id;
    std::fclose(f);
  }
  std::string h;
  for (const char* c = raw.c_str(); *c && h.size() < 104; ++c) {
    if (std::isalnum(static_cast<unsigned char>(*c)) || *c == '.' || *c == '-' || *c == '_' || *c == '/') h += *c;
  }
  return h.empty() ? "?" : h;
}

}  // namespace

VerbsChannel::VerbsChannel(ChannelBootstrap& boot, const VerbsSettings& settings, std::unique_ptr<VerbsDevice> dev)
    : rank_(boot.rank()),
      size_(boot.size()),
      settings_(settings),
      dev_(std::move(dev)),
      peers_(static_cast<std::size_t>(size_)),
      same_host_(static_cast<std::size_t>(size_), false),
      cache_(*dev_, kLocalWrite | kRemoteRead, settings.cache_bytes) {
  const std::size_t per_peer = settings_.slot_bytes * settings_.slots;
  rings_mem_.assign(per_peer * static_cast<std::size_t>(size_) + 64, 0);
  stage_mem_.assign(per_peer * static_cast<std::size_t>(size_) + 64, 0);
  rings_ = rings_mem_.data() + (64 - reinterpret_cast<uintptr_t>(rings_mem_.data()) % 64) % 64;
  stage_ = stage_mem_.data() + (64 - reinterpret_cast<uintptr_t>(stage_mem_.data()) % 64) % 64;
  rings_mr_ = dev_->reg(rings_, per_peer * static_cast<std::size_t>(size_), kLocalWrite | kRemoteWrite);
  stage_mr_ = dev_->reg(stage_, per_peer * static_cast<std::size_t>(size_), kLocalWrite);
  exchange(boot);

  // RDMA read serves the rendezvous; windows are registered memory that
  // RDMA reads, writes and atomics reach with no call by the target.
  caps_.native = kPointToPoint | kActiveRma | kPassiveRma;
  caps_.max_header = kMaxHeader;
  caps_.max_payload = settings_.slot_bytes - sizeof(RecordHeader) - kMaxHeader;
  caps_.eager_limit = std::min(kEagerLimit, caps_.max_payload);
  caps_.get_min = 0;
  launcher_ = getppid();
  shared_ = std::make_unique<SharedPart>(boot.job_id(), rank_, same_host_);
  os_ = std::make_unique<VerbsOneSided>(*this);
}

VerbsChannel::~VerbsChannel() {
  if (settings_.report) {
    std::string to;
    for (int p = 0; p < size_; ++p)
      if (cm_ && cm_->ready(p)) {
        if (!to.empty()) to += ',';
        to += std::to_string(p);
      }
    std::fprintf(stderr, "adi3 verbs: rank %d made %d queue pairs (connected to: %s)\n", rank_, dev_->qps_created(),
                 to.empty() ? "none" : to.c_str());
  }
  os_.reset();
  for (auto& [key, r] : offered_) cache_.release(r);
  dev_->dereg(rings_mr_);
  dev_->dereg(stage_mr_);
}

// One key per rank through the key-value space: its rings (base address
// and key; the ring for sender s is the s-th) and the device's datagram
// address. Queue pairs are connected later, on first use (cm_).
void VerbsChannel::exchange(ChannelBootstrap& boot) {
  const std::size_t per_peer = settings_.slot_bytes * settings_.slots;
  char ring[96];
  std::snprintf(ring, sizeof ring, "%" PRIx64 " %x %zx %x|", static_cast<uint64_t>(rings_mr_.addr), rings_mr_.rkey,
                settings_.slot_bytes, settings_.slots);
  std::string value = ring + host_name() + "|" + dev_->datagram_address();
  if (value.size() > boot.max_value_length())
    throw std::runtime_error("verbs address of " + std::to_string(value.size()) + " bytes exceeds the launcher's " +
                             std::to_string(boot.max_value_length()) + "-byte values");
  boot.put(key_for(rank_), value);
  boot.fence();
  for (int p = 0; p < size_; ++p) {
    std::optional<std::string> v = boot.get(key_for(p));
    if (!v) throw std::runtime_error("rank " + std::to_string(p) + " published no verbs address");
    uint64_t ring_base = 0;
    unsigned rkey = 0, slots = 0;
    std::size_t slot_bytes = 0;
    auto bar = v->find('|');
    const auto bar2 = bar == std::string::npos ? bar : v->find('|', bar + 1);
    if (bar2 == std::string::npos ||
        std::sscanf(v->c_str(), "%" SCNx64 " %x %zx %x|", &ring_base, &rkey, &slot_bytes, &slots) != 4)
      throw std::runtime_error("rank " + std::to_string(p) + " published a malformed verbs address: '" + *v + "'");
    if (slot_bytes != settings_.slot_bytes || slots != settings_.slots)
      throw std::runtime_error("rank " + std::to_string(p) + " uses eager rings of " + std::to_string(slots) + " x " +
                               std::to_string(slot_bytes) + " bytes, this rank " + std::to_string(settings_.slots) +
                               " x " + std::to_string(settings_.slot_bytes) +
                               " (set ADI3_VERBS_SLOTS and ADI3_VERBS_SLOT_BYTES alike for every rank)");
    // The host it names is only compared with ours (shared_part()).
    same_host_[static_cast<std::size_t>(p)] = v->compare(bar + 1, bar2 - bar - 1, host_name()) == 0;
    bar = bar2;
    dev_->datagram_peer(p, v->substr(bar + 1));
    Peer& peer = peers_[static_cast<std::size_t>(p)];
    peer.ring = ring_base + per_peer * static_cast<std::size_t>(rank_);
    peer.rkey = rkey;
  }
  boot.barrier();
  dev_->started();
  cm_ = std::make_unique<ConnManager>(*dev_, rank_, size_, std::chrono::milliseconds(settings_.connect_timeout_ms),
                                      static_cast<ConnManager::Hooks&>(*this));
}

// The queue pair to peer exists: receives for its records and up to 8
// credit messages (see consumed()), all its ring's credits.
void VerbsChannel::qp_created(int p) {
  Peer& peer = peers_[static_cast<std::size_t>(p)];
  qps_.store(static_cast<uint64_t>(dev_->qps_created()), std::memory_order_relaxed);
  if (settings_.report) std::fprintf(stderr, "adi3 verbs: rank %d: queue pair to rank %d\n", rank_, p);
  peer.credits = settings_.slots;
  for (unsigned i = 0; i < settings_.slots + 8; ++i) {
    if (!dev_->post_recv(p, 0)) throw std::runtime_error("cannot post receives");
  }
}

void VerbsChannel::connect_failed(int peer, std::string why) {
  fail_peer(peer, "rank " + std::to_string(peer) + " is unreachable over verbs (device " + dev_->name() + ", rank " +
                      std::to_string(rank_) + "): " + why);
}

bool VerbsChannel::connected(std::unique_lock<std::mutex>& g, int peer) {
  while (!cm_->ready(peer)) {
    if (peers_[static_cast<std::size_t>(peer)].dead) return false;
    cm_->want(peer);
    if (cm_->ready(peer)) break;
    drive(g);
  }
  return true;
}

char* VerbsChannel::slot(char* base, int peer, uint64_t n) const {
  return base + (static_cast<std::size_t>(peer) * settings_.slots + n % settings_.slots) * settings_.slot_bytes;
}

SendResult VerbsChannel::send(int dest, const void* hdr, std::size_t hdr_bytes, const Payload& payload) {
  std::lock_guard g(mu_);
  Peer& p = peers_[static_cast<std::size_t>(dest)];
  if (p.dead) return SendResult::Failed;
  if (!cm_->ready(dest)) {  // the first packet to dest: connect, and the core retries
    cm_->want(dest);
    connecting_.store(cm_->pending(), std::memory_order_relaxed);
    if (!cm_->ready(dest)) return p.dead ? SendResult::Failed : SendResult::Busy;
  }
  if (hdr_bytes > kMaxHeader || payload.bytes > caps_.max_payload) return SendResult::Failed;
  if (p.credits == 0 || p.sent - p.written >= settings_.slots) return SendResult::Busy;
  char* rec = slot(stage_, dest, p.sent);
  RecordHeader h{static_cast<uint32_t>(hdr_bytes), static_cast<uint32_t>(payload.bytes), p.owed, 0, 0, 0, 0, 0};
  std::memcpy(rec + sizeof h, hdr, hdr_bytes);
  payload.copy_to(rec + sizeof h + hdr_bytes);
  offer_buffer(dest, hdr, hdr_bytes, h);
  std::memcpy(rec, &h, sizeof h);
  std::size_t len = sizeof h + hdr_bytes + payload.bytes;
  uint32_t imm = static_cast<uint32_t>(p.sent % settings_.slots);
  if (!dev_->write_imm(dest, wr(kData, static_cast<uint64_t>(dest)), rec, len, stage_mr_.lkey,
                       p.ring + (p.sent % settings_.slots) * settings_.slot_bytes, p.rkey, imm))
    return SendResult::Busy;  // send queue full: the offer stays until the answer
  p.owed = 0;
  ++p.sent;
  --p.credits;
  return SendResult::Sent;
}

// A request-to-send offering a contiguous buffer: register it and put the
// key beside the core's header (which carries the address).
void VerbsChannel::offer_buffer(int dest, const void* hdr, std::size_t hdr_bytes, RecordHeader& h) {
  if (hdr_bytes < sizeof(PacketHeader)) return;
  PacketHeader ph;
  std::memcpy(&ph, hdr, sizeof ph);
  if (ph.type != PacketType::Rts || ph.addr == 0 || ph.bytes == 0) return;
  auto key = std::make_pair(dest, ph.sreq);
  Region r;
  if (auto it = offered_.find(key); it != offered_.end()) {
    r = it->second;  // resent after Busy
  } else {
    try {
      r = cache_.acquire(reinterpret_cast<const void*>(static_cast<uintptr_t>(ph.addr)), ph.bytes);
    } catch (const std::exception&) {
      return;  // e.g. read-only memory: the receiver's get() declines and the core streams
    }
    offered_[key] = r;
    offered_order_.push_back(key);
  }
  while (offered_order_.size() > kMaxOffered) {  // answers that never came (cancelled sends)
    auto old = offered_.find(offered_order_.front());
    offered_order_.pop_front();
    if (old != offered_.end()) {
      cache_.release(old->second);
      offered_.erase(old);
    }
  }
  h.flags |= kOffer;
  h.offer_addr = ph.addr;
  h.offer_len = ph.bytes;
  h.offer_rkey = r.rkey;
}

// The receiver fetched the data (Fin) or asked for it to be streamed
// (Cts): our registration for that request can go.
void VerbsChannel::answer_seen(int src, const void* hdr, std::size_t hdr_bytes) {
  if (hdr_bytes < sizeof(PacketHeader)) return;
  PacketHeader ph;
  std::memcpy(&ph, hdr, sizeof ph);
  if (ph.type != PacketType::Fin && ph.type != PacketType::Cts) return;
  auto it = offered_.find({src, ph.sreq});
  if (it == offered_.end()) return;
  cache_.release(it->second);
  offered_.erase(it);
}

int VerbsChannel::poll(PacketSink& sink) {
  std::vector<Arrived> arrived;
  std::vector<Failure> failures;
  {
    std::lock_guard g(mu_);
    while (!stash_.empty()) {
      Completion c = stash_.front();
      stash_.pop_front();
      handle(c, arrived);
    }
    stash_nonempty_.store(false, std::memory_order_relaxed);
    Completion cs[kBatch];
    int n = dev_->poll(cs, kBatch);
    for (int i = 0; i < n; ++i) handle(cs[i], arrived);
    cm_->progress();
    connecting_.store(cm_->pending(), std::memory_order_relaxed);
    if (++polls_ % kPollsPerLivenessCheck == 0) check_liveness_locked();
    failures.swap(failures_);
  }
  // Slots stay ours until consumed() returns them: deliver without the lock
  // (the sink may send, or get()).
  for (const Arrived& a : arrived) {
    RecordHeader h;
    std::memcpy(&h, a.rec, sizeof h);
    const char* hdr = a.rec + sizeof h;
    sink.on_packet(a.peer, hdr, h.hdr_bytes, hdr + h.hdr_bytes, h.payload_bytes);
  }
  if (!arrived.empty()) {
    std::lock_guard g(mu_);
    for (const Arrived& a : arrived) consumed(a.peer);
    failures.insert(failures.end(), failures_.begin(), failures_.end());
    failures_.clear();
  }
  for (const Failure& f : failures) sink.on_peer_failed(f.peer, f.why.c_str());
  return static_cast<int>(arrived.size());
}

void VerbsChannel::handle(const Completion& c, std::vector<Arrived>& arrived) {
  if (c.peer < 0 || c.peer >= size_) return;
  Peer& p = peers_[static_cast<std::size_t>(c.peer)];
  if (c.op != Op::RecvImm && (c.wr_id & 3) == VerbsOneSided::kWrKind && os_) os_->completed(c.wr_id >> 2, c);
  if (c.op == Op::Read) {
    auto it = reads_.find(c.wr_id >> 2);
    if (it != reads_.end()) {
      --it->second.pending;
      if (c.status != Status::Success) it->second.failed = true;
    }
  }
  if (c.status != Status::Success) {
    if (!p.dead && c.status != Status::Flushed)
      fail_peer(c.peer, "rank " + std::to_string(c.peer) + " is unreachable over verbs (device " + dev_->name() +
                            ", rank " + std::to_string(rank_) + "): " + status_text(c.status));
    return;
  }
  switch (c.op) {
    case Op::WriteImm:
      if ((c.wr_id & 3) == kData) ++p.written;
      break;
    case Op::RecvImm:
      cm_->heard_from(c.peer);
      if (!p.dead && !accept(c.peer, c, arrived))
        fail_peer(c.peer, "rank " + std::to_string(c.peer) +
                              " is treated as failed: it wrote a malformed record "
                              "into the verbs eager ring of rank " +
                              std::to_string(rank_));
      break;
    default:
      break;
  }
}

// Checks a record (or credit return) against what this rank expects.
bool VerbsChannel::accept(int peer, const Completion& c, std::vector<Arrived>& arrived) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  if (!dev_->post_recv(peer, 0)) return false;  // replaces the receive just used
  auto take_credits = [&](uint64_t n) {
    if (n > settings_.slots - p.credits) return false;  // more than it can owe us
    p.credits += static_cast<uint32_t>(n);
    return true;
  };
  if (c.imm & kImmCredits) return c.bytes == 0 && take_credits(c.imm & ~kImmCredits);
  if (c.imm != p.received % settings_.slots || c.bytes < sizeof(RecordHeader) || c.bytes > settings_.slot_bytes)
    return false;
  const char* rec = slot(rings_, peer, p.received);
  RecordHeader h;
  std::memcpy(&h, rec, sizeof h);
  if (h.hdr_bytes > kMaxHeader || h.payload_bytes > caps_.max_payload ||
      sizeof h + h.hdr_bytes + h.payload_bytes != c.bytes || !take_credits(h.credits))
    return false;
  ++p.received;
  if (h.flags & kOffer) {
    p.offers[p.next_offer++ % std::size(p.offers)] = {h.offer_addr, h.offer_len, h.offer_rkey};
  }
  answer_seen(peer, rec + sizeof h, h.hdr_bytes);
  arrived.push_back({peer, rec});
  return true;
}

// A record was delivered: its slot is free again. Credits ride on our next
// record to the peer; once half its ring is owed they go in a zero-length
// write of their own. Such writes use receives the peer posts beyond its
// ring's: each returns at least slots/2, and the peer cannot have more than
// 2 x slots records consumed between two of its polls, so at most 4 are
// ever outstanding (8 are posted).
void VerbsChannel::consumed(int peer) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  ++p.owed;
  if (p.dead || p.owed < settings_.slots / 2) return;
  if (dev_->write_imm(peer, wr(kCredit, static_cast<uint64_t>(peer)), nullptr, 0, 0, p.ring, p.rkey,
                      kImmCredits | p.owed))
    p.owed = 0;
}

void VerbsChannel::fail_peer(int peer, std::string why) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  if (p.dead) return;
  p.dead = true;
  if (cm_) cm_->drop(peer);
  failures_.push_back({peer, std::move(why)});
}

void VerbsChannel::wait_until(std::chrono::microseconds timeout, const WaitCondition& done) {
  {
    std::unique_lock g(mu_, std::try_to_lock);
    if (g) {
      check_liveness_locked();
      if (!failures_.empty()) return;  // poll() reports them
    }
  }
  if (stash_nonempty_.load(std::memory_order_relaxed)) return;
  // Connections under way resend their datagrams from poll(): short naps.
  if (connecting_.load(std::memory_order_relaxed)) timeout = std::min(timeout, std::chrono::microseconds(5000));
  dev_->wait_until(timeout, done);
}

// With mu_ held. Peers the device found dead; and without our launcher
// (mpiexec, a proxy) the job can neither finish nor be stopped, so every
// peer is as good as gone and waits should fail rather than hang.
void VerbsChannel::check_liveness_locked() {
  std::string why;
  for (int dead = dev_->dead_peer(why); dead >= 0; dead = dev_->dead_peer(why)) fail_peer(dead, why);
  if (orphaned_ || size_ == 1 || getppid() == launcher_) return;
  orphaned_ = true;
  for (int p = 0; p < size_; ++p) {
    if (p != rank_)
      fail_peer(p, "rank " + std::to_string(p) + " is unreachable: the launcher (pid " + std::to_string(launcher_) +
                       ") of rank " + std::to_string(rank_) + " is gone");
  }
}

void VerbsChannel::drive(std::unique_lock<std::mutex>& g) {
  g.unlock();
  g.lock();
  Completion cs[kBatch];
  const int k = dev_->poll(cs, kBatch);
  for (int i = 0; i < k; ++i) {
    if (cs[i].op == Op::RecvImm && cs[i].status == Status::Success) {
      stash_.push_back(cs[i]);  // delivered by poll(), in order
    } else {
      std::vector<Arrived> none;
      handle(cs[i], none);  // no delivery: counts and errors
    }
  }
  if (!stash_.empty()) stash_nonempty_.store(true, std::memory_order_relaxed);
  cm_->progress();
  connecting_.store(cm_->pending(), std::memory_order_relaxed);
}

// Rendezvous: RDMA-read the buffer the peer offered straight into ours.
// Declines (-1) when the peer offered no such buffer: the core streams.
int VerbsChannel::get(int peer, void* local, uint64_t remote, std::size_t len) {
  std::unique_lock g(mu_);
  if (peer < 0 || peer >= size_) return -1;
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  Offer* o = nullptr;
  for (Offer& x : p.offers)
    if (x.addr == remote && x.rkey && len <= x.len) o = &x;
  if (!o || p.dead) return -1;
  const Offer offer = *o;
  *o = Offer{};
  // Connected already: the offer came over the queue pair.
  if (!connected(g, peer)) return -1;
  Region mine;
  try {
    mine = cache_.acquire(local, len);
  } catch (const std::exception&) {
    return -1;
  }
  const uint64_t token = ++read_token_;
  ReadState& st = reads_[token];
  // Another thread may poll meanwhile: handle() counts our completions too.
  auto progress = [&] { drive(g); };
  for (std::size_t at = 0; at < len && !st.failed; at += kReadChunk) {
    std::size_t n = std::min(kReadChunk, len - at);
    while (
        !dev_->read(peer, wr(kRead, token), static_cast<char*>(local) + at, n, mine.lkey, offer.addr + at, offer.rkey))
      progress();  // send queue full
    ++st.pending;
  }
  while (st.pending > 0) progress();
  const bool ok = !st.failed;
  reads_.erase(token);
  cache_.release(mine);
  return ok ? 0 : -1;
}

}  // namespace adi3::verbs
