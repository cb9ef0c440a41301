#include "channels/verbs/verbs_onesided.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "channels/verbs/verbs_channel.hpp"

namespace adi3::verbs {
namespace {

constexpr uint32_t kKeyMagic = 0x564f4b31;  // "VOK1"
constexpr uint32_t kWindowAccess = kLocalWrite | kRemoteRead | kRemoteWrite | kRemoteAtomic;
constexpr std::size_t kChunk = std::size_t{1} << 30;  // below the 2 GiB message limit
constexpr int kResultSlots = 256;
// A get whose runs lie close together reads the span covering them into a
// bounce buffer and scatters it: reading a gap changes nothing at the
// target, and a request costs what reading a few KiB more does (a work
// request on hardware; a page pinned per run on the software device). A
// put never does this: writing back a gap would undo a concurrent put to it.
constexpr std::size_t kSpanMax = std::size_t{4} << 20;  // bounce bytes of one get at most
constexpr std::size_t kGapPerRun = 4096;                // gap bytes read to save one request

// The key peers exchange; attach() checks every field it can (the rest, the
// rkey and the range, the target's device checks at every access).
struct Key {
  uint32_t magic;
  int32_t owner;  // the rank whose memory it is
  uint32_t rkey;
  uint32_t pad;
  uint64_t addr;
  uint64_t bytes;
};
static_assert(sizeof(Key) <= kMaxKeyBytes);

struct Local final : adi3::Region {
  verbs::Region mr{};
  bool owned = false;  // allocate(): the memory is ours to free
};

struct Remote final : RemoteRegion {
  uint64_t addr = 0;
  uint32_t rkey = 0;
};

std::size_t round_page(std::size_t n) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return (n + page - 1) / page * page;
}

bool in_range(const RemoteRegion& r, uint64_t offset, std::size_t len) {
  if (offset > r.bytes || len > r.bytes - offset) {
    errno = ERANGE;
    return false;
  }
  return true;
}

bool atomic_ok(const RemoteRegion& r, uint64_t offset, std::size_t width) {
  if (width != 8) {
    errno = ENOTSUP;  // the NIC's atomics are 8 bytes wide
    return false;
  }
  if (!in_range(r, offset, width)) return false;
  if ((static_cast<const Remote&>(r).addr + offset) % 8) {
    errno = EINVAL;
    return false;
  }
  return true;
}

void fill_key(adi3::Region& r, int owner, uint32_t rkey) {
  Key k{};
  k.magic = kKeyMagic;
  k.owner = owner;
  k.rkey = rkey;
  k.addr = reinterpret_cast<uintptr_t>(r.base);
  k.bytes = r.bytes;
  std::memcpy(r.key, &k, sizeof k);
  r.key_bytes = sizeof k;
}

uint64_t wr(uint64_t token) { return token << 2 | VerbsOneSided::kWrKind; }

}  // namespace

struct VerbsOneSided::SpanGet {
  std::vector<char> buf;  // the span's bytes, read from offset lo
  uint64_t lo = 0;
  std::vector<Run> runs;
  char* local = nullptr;  // the packed bytes the runs go to, in order
};

VerbsOneSided::VerbsOneSided(VerbsChannel& ch)
    : ch_(ch),
      windows_(*ch.dev_, kWindowAccess, ch.settings_.cache_bytes),
      slots_mem_(kResultSlots),
      outstanding_(static_cast<std::size_t>(ch.size_), 0),
      errors_(static_cast<std::size_t>(ch.size_), Status::Success) {
  caps_.native_ops = kOsPut | kOsGet | kOsFetchAdd | kOsCompareSwap;
  caps_.atomic_widths = 1u << 3;
  caps_.progress_without_target = true;
  caps_.put_min_run = ch.settings_.put_min_run;
  slots_mr_ = ch_.dev_->reg(slots_mem_.data(), slots_mem_.size() * sizeof(uint64_t), kLocalWrite);
  for (int i = kResultSlots - 1; i >= 0; --i) free_slots_.push_back(i);
}

VerbsOneSided::~VerbsOneSided() {
  for (auto& [token, p] : pending_) {
    if (p.local.handle) ch_.cache_.release(p.local);
  }
  ch_.dev_->dereg(slots_mr_);
}

adi3::Region* VerbsOneSided::allocate(std::size_t bytes) {
  const std::size_t n = round_page(bytes ? bytes : 1);
  void* mem = std::aligned_alloc(static_cast<std::size_t>(sysconf(_SC_PAGESIZE)), n);
  if (!mem) {
    errno = ENOMEM;
    return nullptr;
  }
  std::memset(mem, 0, n);
  auto* r = new Local;
  r->base = mem;
  r->bytes = bytes;
  r->owned = true;
  try {
    std::lock_guard g(ch_.mu_);
    r->mr = ch_.dev_->reg(mem, n, kWindowAccess);
  } catch (const std::exception&) {
    std::free(mem);
    delete r;
    errno = ENOMEM;
    return nullptr;
  }
  fill_key(*r, ch_.rank_, r->mr.rkey);
  return r;
}

adi3::Region* VerbsOneSided::expose(void* base, std::size_t bytes) {
  auto* r = new Local;
  r->base = base;
  r->bytes = bytes;
  if (bytes) {
    try {
      std::lock_guard g(ch_.mu_);
      r->mr = windows_.acquire(base, bytes);
    } catch (const std::exception&) {
      delete r;
      errno = EFAULT;  // e.g. read-only or unmapped memory
      return nullptr;
    }
  }
  fill_key(*r, ch_.rank_, r->mr.rkey);
  return r;
}

void VerbsOneSided::release(adi3::Region* region) {
  auto* r = static_cast<Local*>(region);
  if (!r) return;
  {
    std::lock_guard g(ch_.mu_);
    if (r->owned) {
      ch_.dev_->dereg(r->mr);
    } else if (r->mr.handle) {
      windows_.release(r->mr);
      // The window goes: its memory may be freed and mapped again.
      windows_.invalidate(r->base, r->bytes);
    }
  }
  if (r->owned) std::free(r->base);
  delete r;
}

RemoteRegion* VerbsOneSided::attach(int peer, const void* key, std::size_t key_bytes) {
  if (peer < 0 || peer >= ch_.size_ || key_bytes != sizeof(Key)) {
    errno = EINVAL;
    return nullptr;
  }
  Key k;
  std::memcpy(&k, key, sizeof k);
  // The key must be ours and name the peer's own memory; the target's
  // device checks the rkey and the range at every access.
  if (k.magic != kKeyMagic || k.owner != peer || k.addr + k.bytes < k.addr || (k.bytes && k.rkey == 0)) {
    errno = EINVAL;
    return nullptr;
  }
  auto* r = new Remote;
  r->peer = peer;
  r->bytes = k.bytes;
  r->ops = kOsPut | kOsGet | kOsFetchAdd | kOsCompareSwap;
  r->addr = k.addr;
  r->rkey = k.rkey;
  return r;
}

void VerbsOneSided::detach(RemoteRegion* r) { delete static_cast<Remote*>(r); }

template <class Post>
bool VerbsOneSided::submit(std::unique_lock<std::mutex>& g, const Pending& p, Post&& post) {
  if (!ch_.connected(g, p.peer)) {  // the first request to this peer connects its queue pair
    if (p.local.handle) ch_.cache_.release(const_cast<Pending&>(p).local);
    if (p.slot >= 0) free_slots_.push_back(p.slot);
    errno = EIO;
    return false;
  }
  const uint64_t token = ++next_token_;
  while (!post(wr(token))) ch_.drive(g);  // send queue full: completions make room
  pending_[token] = p;
  ++outstanding_[static_cast<std::size_t>(p.peer)];
  return true;
}

// put and get: one request per chunk, each holding the registration of its
// part of the local buffer until it completes.
int VerbsOneSided::transfer(RemoteRegion& r, uint64_t offset, void* local, std::size_t len, bool write) {
  if (!in_range(r, offset, len)) return -1;
  auto& x = static_cast<Remote&>(r);
  std::unique_lock g(ch_.mu_);
  for (std::size_t at = 0; at < len; at += kChunk) {
    const std::size_t n = std::min(kChunk, len - at);
    char* l = static_cast<char*>(local) + at;
    Pending p;
    p.peer = x.peer;
    try {
      p.local = ch_.cache_.acquire(l, n);
    } catch (const std::exception&) {
      errno = EFAULT;  // the device cannot register the local buffer
      return -1;
    }
    const uint64_t remote = x.addr + offset + at;
    if (!submit(g, p, [&](uint64_t id) {
          return write ? ch_.dev_->write(x.peer, id, l, n, p.local.lkey, remote, x.rkey)
                       : ch_.dev_->read(x.peer, id, l, n, p.local.lkey, remote, x.rkey);
        }))
      return -1;
  }
  return 0;
}

int VerbsOneSided::put(RemoteRegion& r, uint64_t offset, const void* src, std::size_t len) {
  return transfer(r, offset, const_cast<void*>(src), len, true);
}

int VerbsOneSided::get(RemoteRegion& r, uint64_t offset, void* dst, std::size_t len) {
  return transfer(r, offset, dst, len, false);
}

template <class Post>
int VerbsOneSided::atomic(RemoteRegion& r, uint64_t offset, uint64_t* result, Post&& post) {
  auto& x = static_cast<Remote&>(r);
  std::unique_lock g(ch_.mu_);
  while (free_slots_.empty()) ch_.drive(g);  // every result slot waits for its completion
  Pending p;
  p.peer = x.peer;
  p.slot = free_slots_.back();
  free_slots_.pop_back();
  p.result = result;
  uint64_t* slot = &slots_mem_[static_cast<std::size_t>(p.slot)];
  return submit(g, p, [&](uint64_t id) { return post(id, slot, x.addr + offset, x.rkey); }) ? 0 : -1;
}

int VerbsOneSided::fetch_add(RemoteRegion& r, uint64_t offset, uint64_t operand, uint64_t* result, std::size_t width) {
  if (!atomic_ok(r, offset, width)) return -1;
  return atomic(r, offset, result, [&](uint64_t id, uint64_t* slot, uint64_t remote, uint32_t rkey) {
    return ch_.dev_->fetch_add(r.peer, id, slot, slots_mr_.lkey, remote, rkey, operand);
  });
}

int VerbsOneSided::compare_swap(RemoteRegion& r, uint64_t offset, uint64_t compare, uint64_t swap, uint64_t* result,
                                std::size_t width) {
  if (!atomic_ok(r, offset, width)) return -1;
  return atomic(r, offset, result, [&](uint64_t id, uint64_t* slot, uint64_t remote, uint32_t rkey) {
    return ch_.dev_->compare_swap(r.peer, id, slot, slots_mr_.lkey, remote, rkey, compare, swap);
  });
}

void VerbsOneSided::completed(uint64_t token, const Completion& c) {
  auto it = pending_.find(token);
  if (it == pending_.end()) return;
  Pending& p = it->second;
  const auto i = static_cast<std::size_t>(p.peer);
  if (c.status != Status::Success && errors_[i] == Status::Success) errors_[i] = c.status;
  if (p.slot >= 0 && c.status == Status::Success && p.result) *p.result = slots_mem_[static_cast<std::size_t>(p.slot)];
  if (p.span && c.status == Status::Success) {
    const SpanGet& sg = *p.span;
    char* to = sg.local;
    for (const Run& r : sg.runs) {
      std::memcpy(to, sg.buf.data() + (r.offset - sg.lo), r.len);
      to += r.len;
    }
  }
  if (p.left > 0) --p.left;
  if (p.left == 0 && !p.posting) finish(it);
}

void VerbsOneSided::finish(std::map<uint64_t, Pending>::iterator it) {
  Pending& p = it->second;
  if (p.slot >= 0) free_slots_.push_back(p.slot);
  if (p.local.handle) ch_.cache_.release(p.local);
  --outstanding_[static_cast<std::size_t>(p.peer)];
  pending_.erase(it);
}

// A noncontiguous target: the runs as one chain (or as few as the send
// queue takes at once), under one registration of the packed local bytes
// and one pending entry that completes when every completion came.
int VerbsOneSided::transfer_runs(RemoteRegion& r, const Run* runs, std::size_t n, char* local, bool write) {
  std::size_t total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!in_range(r, runs[i].offset, runs[i].len)) return -1;
    total += runs[i].len;
  }
  if (n == 0 || total == 0) return 0;
  if (!write && n > 1) {
    uint64_t lo = runs[0].offset, hi = 0;
    for (std::size_t i = 0; i < n; ++i) {
      lo = std::min(lo, runs[i].offset);
      hi = std::max(hi, runs[i].offset + runs[i].len);
    }
    const std::size_t span = hi - lo;
    if (span <= kSpanMax && (span <= total || span - total <= (n - 1) * kGapPerRun))
      return span_get(r, runs, n, lo, span, local);
  }
  if (total > kChunk) return write ? OneSided::put_runs(r, runs, n, local) : OneSided::get_runs(r, runs, n, local);
  auto& x = static_cast<Remote&>(r);
  std::vector<VerbsDevice::ListEntry> list(n);
  std::size_t at = 0;
  for (std::size_t i = 0; i < n; at += runs[i].len, ++i) list[i] = {local + at, runs[i].len, x.addr + runs[i].offset};
  std::unique_lock g(ch_.mu_);
  Pending p;
  p.peer = x.peer;
  try {
    p.local = ch_.cache_.acquire(local, total);
  } catch (const std::exception&) {
    errno = EFAULT;  // the device cannot register the local buffer
    return -1;
  }
  if (!ch_.connected(g, p.peer)) {
    ch_.cache_.release(p.local);
    errno = EIO;
    return -1;
  }
  const uint64_t token = ++next_token_;
  p.left = 0;
  p.posting = true;
  auto it = pending_.emplace(token, p).first;
  ++outstanding_[static_cast<std::size_t>(p.peer)];
  for (std::size_t i = 0; i < n;) {
    std::size_t completions = 0;
    const std::size_t k =
        ch_.dev_->post_list(x.peer, wr(token), list.data() + i, n - i, p.local.lkey, x.rkey, write, &completions);
    it->second.left += completions;
    i += k;
    if (k == 0) ch_.drive(g);  // send queue full: completions make room
  }
  it->second.posting = false;
  if (it->second.left == 0) finish(it);
  return 0;
}

// One RDMA read of [lo, lo + span) into a bounce buffer; completed()
// scatters it into the runs' packed bytes.
int VerbsOneSided::span_get(RemoteRegion& r, const Run* runs, std::size_t n, uint64_t lo, std::size_t span,
                            char* local) {
  auto& x = static_cast<Remote&>(r);
  Pending p;
  p.peer = x.peer;
  try {
    p.span = std::make_shared<SpanGet>();
    p.span->buf.resize(span);
    p.span->runs.assign(runs, runs + n);
  } catch (const std::bad_alloc&) {
    errno = ENOMEM;
    return -1;
  }
  p.span->lo = lo;
  p.span->local = local;
  char* buf = p.span->buf.data();
  std::unique_lock g(ch_.mu_);
  try {
    p.local = ch_.cache_.acquire(buf, span);
  } catch (const std::exception&) {
    errno = EFAULT;
    return -1;
  }
  return submit(g, p,
                [&](uint64_t id) { return ch_.dev_->read(x.peer, id, buf, span, p.local.lkey, x.addr + lo, x.rkey); })
             ? 0
             : -1;
}

int VerbsOneSided::put_runs(RemoteRegion& r, const Run* runs, std::size_t n, const void* local) {
  return transfer_runs(r, runs, n, const_cast<char*>(static_cast<const char*>(local)), true);
}

int VerbsOneSided::get_runs(RemoteRegion& r, const Run* runs, std::size_t n, void* local) {
  return transfer_runs(r, runs, n, static_cast<char*>(local), false);
}

int VerbsOneSided::flush(int peer) {
  if (peer < 0 || peer >= ch_.size_) {
    errno = EINVAL;
    return -1;
  }
  const auto i = static_cast<std::size_t>(peer);
  std::unique_lock g(ch_.mu_);
  while (outstanding_[i] > 0) ch_.drive(g);
  const Status s = errors_[i];
  errors_[i] = Status::Success;
  if (s == Status::Success) return 0;
  // A bad key or range at the target (RemoteAccess) or a broken queue pair.
  errno = s == Status::RemoteAccess ? EACCES : EIO;
  return -1;
}

OneSided* VerbsOneSided::shared_part() { return ch_.shared_.get(); }

bool VerbsOneSided::peer_alive(int peer) {
  if (peer < 0 || peer >= ch_.size_) return false;
  std::lock_guard g(ch_.mu_);
  ch_.check_liveness_locked();
  return !ch_.peers_[static_cast<std::size_t>(peer)].dead;
}

}  // namespace adi3::verbs
