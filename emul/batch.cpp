// Small puts coalesced per target (type 3 over type 1). In a passive epoch
// the short path (quick.cpp) copies a contiguous put of up to kBatchOp
// bytes into the target's batch instead of sending a packet of its own; the
// batch leaves as one PutBatch packet before any other packet to that
// target (emul::send), carrying the flush or unlock that ends it
// (origin.cpp push), when the next put would not fit, or at the next
// progress pass. One header, one channel send and one dispatch at the
// target per batch instead of per put (bench/rma put_bw at 1 KiB, 16 puts
// per flush: about half the target's instructions per put).
// The target checks every record against the window before it writes.
#include <algorithm>
#include <cstring>
#include <new>

#include "adi3/device.hpp"
#include "emul/emul.hpp"
#include "rma/hub.hpp"

namespace adi3::emul {

using rma::BatchRec;
using rma::Header;
using rma::Msg;
using rma::Target;
using rma::WindowState;

namespace {

// Largest put a batch takes, and a batch's payload at most (the channel's
// largest packet, if smaller). Below the shm channel's always-streaming
// size (8 KiB), so that the target applies one batch while the origin
// fills the next, and each copy stays cache to cache in the VM's fast
// state: put_bw at 1 KiB, 16 puts per flush, ran (MB/s, create / allocate,
// medians of 4, one run) 1.15e4 / 1.15e4 with 4 KiB batches, 1.28e4 /
// 1.28e4 with 6.4 KiB, 1.32e4 / 1.33e4 with 7.1 KiB, 6.1e3 / 6.3e3 with
// 16 KiB (streamed), against 5.0e3 / 1.1e4 one packet per put.
constexpr std::size_t kBatchOp = 2048;
constexpr std::size_t kBatchBytes = 8192 - 64;

std::size_t batch_limit(const WindowState& w) { return std::min(kBatchBytes, w.dev.max_packet_payload()); }

}  // namespace

bool batch_put(WindowState& w, int to, Builtin b, uint64_t off, const void* data, std::size_t bytes) {
  const std::size_t limit = batch_limit(w);
  const std::size_t rec = sizeof(BatchRec) + bytes;
  if (bytes > kBatchOp || rec > limit) return false;
  Target& t = w.targets[static_cast<std::size_t>(to)];
  if (!t.batch) {
    t.batch.reset(new (std::nothrow) char[kBatchBytes]);
    if (!t.batch) return false;
  }
  if (t.batch_len + rec > limit) send_batch(w, to);
  if (t.batch_len == 0) {
    // Counted as queued: the next progress pass sends it if no flush does.
    w.add_queued(1);
    w.hub->poke();
  }
  BatchRec r{};
  r.disp = off;
  r.len = static_cast<uint32_t>(bytes);
  r.elem = static_cast<uint8_t>(b);
  char* at = t.batch.get() + t.batch_len;
  std::memcpy(at, &r, sizeof r);
  std::memcpy(at + sizeof r, data, bytes);
  t.batch_len += rec;
  ++t.batch_ops;
  return true;
}

void send_batch(WindowState& w, int to, uint8_t flags, uint64_t token) {
  Target& t = w.targets[static_cast<std::size_t>(to)];
  if (t.batch_len == 0) return;
  const rma::PeerWin& pw = w.peers[static_cast<std::size_t>(to)];
  Header h{};
  h.id = pw.pkt;
  h.win = pw.win;
  h.gen = pw.gen;
  h.kind = Msg::PutBatch;
  h.flags = flags;
  h.count = t.batch_ops;
  h.total = t.batch_len;
  h.len = t.batch_len;
  h.token = token;
  // The device copies what the channel cannot take now: the buffer is free.
  const int e = w.dev.send_packet(pw.peer, &h, sizeof h, Payload{t.batch.get(), t.batch_len, nullptr, 0});
  if (e && !w.deferred_error) w.deferred_error = e;
  t.batch_len = 0;
  t.batch_ops = 0;
  w.add_queued(-1);
}

void apply_batch(WindowState& w, int o, const Header& h, const void* payload, std::size_t bytes) {
  rma::Origin& O = w.origins[static_cast<std::size_t>(o)];
  const auto* p = static_cast<const char*>(payload);
  // A record is at least a header and one byte: a count beyond that is a lie.
  constexpr std::size_t kMinRec = sizeof(BatchRec) + 1;
  Header e{};  // what a refusal names
  e.kind = Msg::Put;
  if (bytes != h.len || h.count == 0 || h.count > bytes / kMinRec || w.flavor == WinFlavor::Dynamic) {
    ++O.applied;
    refuse(w, o, e, ErrorClass::Count, "a batch of %llu puts in %zu bytes (header says %llu) on a %s window",
           static_cast<unsigned long long>(h.count), bytes, static_cast<unsigned long long>(h.len),
           w.flavor == WinFlavor::Dynamic ? "dynamic" : "fixed");
    return;
  }
  const auto size = static_cast<uint64_t>(w.size);
  std::size_t at = 0;
  uint64_t done = 0;
  for (; done < h.count; ++done) {
    BatchRec r;
    if (bytes - at < sizeof r) break;
    std::memcpy(&r, p + at, sizeof r);
    at += sizeof r;
    if (r.len == 0 || r.len > bytes - at) break;
    const Datatype* t = r.elem < kNumBuiltins ? Datatype::builtin(static_cast<Builtin>(r.elem)) : nullptr;
    const uint64_t ts = t ? t->size() : 0;
    e.disp = r.disp;
    e.count = ts ? r.len / ts : 0;
    if (!t || ts == 0 || !t->is_contiguous() || t->true_lb() != 0 || r.len % ts) {
      refuse(w, o, e, ErrorClass::Type, "batched put of %u bytes of predefined type %u", r.len, r.elem);
    } else if (r.disp > size || r.len > size - r.disp) {
      refuse(w, o, e, ErrorClass::RmaRange, "batched put of %u bytes does not fit the window of %llu bytes", r.len,
             static_cast<unsigned long long>(size));
    } else {
      put_bytes(static_cast<char*>(w.base) + r.disp, p + at, r.len);
    }
    at += r.len;
  }
  if (done < h.count || at != bytes) {
    refuse(w, o, e, ErrorClass::Count, "a batch of %llu puts in %zu bytes is malformed after %llu of them",
           static_cast<unsigned long long>(h.count), bytes, static_cast<unsigned long long>(done));
  }
  // Every record counts, refused ones too: the origin's synchronization ends.
  O.applied += h.count;
}

}  // namespace adi3::emul
