// Small puts and gets coalesced per target (type 3 over type 1). In a
// passive epoch the short path (quick.cpp) adds a contiguous put of up to
// kBatchOp bytes (its data copied) or a get of as many (its reply token) to
// the target's batch instead of sending a packet of its own; the batch
// leaves as one Batch packet before any other packet to that target
// (emul::send), carrying the flush or unlock that ends it (origin.cpp
// push), when the next operation or the reply its gets ask for would not
// fit, or at the next progress pass. The target applies the records in
// order and answers the gets with one BatchResp. One header, one channel
// send and one dispatch per batch instead of per operation (bench/rma
// put_bw and get_bw at 1 KiB, 16 per flush). Both sides check every record
// (the target against the window, the origin against its pending gets)
// before they write.
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
// largest packet, if smaller). Small enough that the target applies one
// batch while the origin fills the next and each copy stays cache to
// cache. put_bw at 1 KiB, 16 puts per flush (MB/s, create / allocate,
// medians of 4, one run, while the shm channel still streamed every
// payload from 8 KiB on): 1.15e4 / 1.15e4 with 4 KiB batches, 1.28e4 /
// 1.28e4 with 6.4 KiB, 1.32e4 / 1.33e4 with 7.1 KiB, 6.1e3 / 6.3e3 with
// 16 KiB, against 5.0e3 / 1.1e4 one packet per put; 8 KiB stayed best
// after the channel stopped streaming at that size (598f7f8).
constexpr std::size_t kBatchOp = 2048;
constexpr std::size_t kBatchBytes = 8192 - 64;

std::size_t batch_limit(const WindowState& w) { return std::min(kBatchBytes, w.dev.port().max_packet_payload()); }

// Room for a record of rec bytes (and reply bytes of its get's data) in
// to's batch, which is sent first when they would not fit. Null when the
// batch takes no operation this large or has no buffer.
char* batch_room(WindowState& w, int to, std::size_t bytes, std::size_t rec, std::size_t reply) {
  const std::size_t limit = batch_limit(w);
  if (bytes > kBatchOp || rec > limit || reply > limit) return nullptr;
  Target& t = w.targets[static_cast<std::size_t>(to)];
  if (!t.batch) {
    t.batch.reset(new (std::nothrow) char[kBatchBytes]);
    if (!t.batch) return nullptr;
  }
  if (t.batch_len + rec > limit || t.batch_reply + reply > limit) send_batch(w, to);
  if (t.batch_len == 0) {
    // Counted as queued: the next progress pass sends it if no flush does.
    w.add_queued(1);
    w.hub->poke();
  }
  char* at = t.batch.get() + t.batch_len;
  t.batch_len += rec;
  t.batch_reply += reply;
  ++t.batch_ops;
  return at;
}

void put_rec(char* at, rma::BatchKind kind, Builtin b, uint64_t off, std::size_t bytes, uint8_t op = 0) {
  BatchRec r{};
  r.disp = off;
  r.len = static_cast<uint32_t>(bytes);
  r.elem = static_cast<uint8_t>(b);
  r.kind = kind;
  r.op = op;
  std::memcpy(at, &r, sizeof r);
}

}  // namespace

bool batch_put(WindowState& w, int to, Builtin b, uint64_t off, const void* data, std::size_t bytes) {
  char* at = batch_room(w, to, bytes, sizeof(BatchRec) + bytes, 0);
  if (!at) return false;
  put_rec(at, rma::kBatchPut, b, off, bytes);
  std::memcpy(at + sizeof(BatchRec), data, bytes);
  return true;
}

bool batch_acc(WindowState& w, int to, Builtin b, coll::OpKind op, uint64_t off, const void* data, std::size_t bytes) {
  char* at = batch_room(w, to, bytes, sizeof(BatchRec) + bytes, 0);
  if (!at) return false;
  put_rec(at, rma::kBatchAcc, b, off, bytes, static_cast<uint8_t>(op));
  std::memcpy(at + sizeof(BatchRec), data, bytes);
  return true;
}

bool batch_get(WindowState& w, int to, Builtin b, uint64_t off, std::size_t bytes, uint64_t token) {
  char* at = batch_room(w, to, bytes, sizeof(BatchRec) + sizeof token, sizeof(rma::RespRec) + bytes);
  if (!at) return false;
  put_rec(at, rma::kBatchGet, b, off, bytes);
  std::memcpy(at + sizeof(BatchRec), &token, sizeof token);
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
  h.kind = Msg::Batch;
  h.flags = flags;
  h.count = t.batch_ops;
  h.total = t.batch_len;
  h.len = t.batch_len;
  h.token = token;
  // The device copies what the channel cannot take now: the buffer is free.
  const int e = w.dev.port().send_packet(pw.peer, &h, rma::header_bytes(h, t.batch_len),
                                         Payload{t.batch.get(), t.batch_len, nullptr, 0});
  if (e && !w.deferred_error) w.deferred_error = e;
  t.batch_len = 0;
  t.batch_reply = 0;
  t.batch_ops = 0;
  w.add_queued(-1);
}

namespace {

// The BatchResp being filled for origin o (w.batch_out) leaves.
void send_resp(WindowState& w, int o, uint64_t n, std::size_t len) {
  if (n == 0) return;
  Header r{};
  r.kind = Msg::BatchResp;
  r.count = n;
  r.len = len;
  r.total = len;
  send(w, o, r, Payload{w.batch_out.data(), len, nullptr, 0});
}

// Room for the BatchResp (false: the gets go one by one, through apply).
bool resp_room(WindowState& w) {
  const std::size_t need = w.dev.port().max_packet_payload();
  if (w.batch_out.size() >= need) return true;
  try {
    w.batch_out.resize(need);
  } catch (const std::bad_alloc&) {
    return false;
  }
  return true;
}

}  // namespace

void apply_batch(WindowState& w, int o, const Header& h, const void* payload, std::size_t bytes) {
  rma::Origin& O = w.origins[static_cast<std::size_t>(o)];
  const auto* p = static_cast<const char*>(payload);
  // A record is at least a header and 1 byte (a put) or 8 (a get): a count
  // beyond what the bytes hold is a lie.
  constexpr std::size_t kMinRec = sizeof(BatchRec) + 1;
  Header e{};  // what a refusal names
  e.kind = Msg::Put;
  if (bytes != h.len || h.count == 0 || h.count > bytes / kMinRec || w.flavor == WinFlavor::Dynamic) {
    ++O.applied;
    refuse(w, o, e, ErrorClass::Count, "a batch of %llu operations in %zu bytes (header says %llu) on a %s window",
           static_cast<unsigned long long>(h.count), bytes, static_cast<unsigned long long>(h.len),
           w.flavor == WinFlavor::Dynamic ? "dynamic" : "fixed");
    return;
  }
  // Gets are answered in one BatchResp unless replies to o wait in its
  // queue (this one must not overtake them): then each goes through apply.
  const bool resp = O.out.empty() && resp_room(w);
  const std::size_t resp_max = w.dev.port().max_packet_payload();
  std::size_t resp_len = 0;
  uint64_t resp_n = 0, via_apply = 0;
  const auto size = static_cast<uint64_t>(w.size);
  std::size_t at = 0;
  uint64_t done = 0;
  for (; done < h.count; ++done) {
    BatchRec r;
    if (bytes - at < sizeof r) break;
    std::memcpy(&r, p + at, sizeof r);
    at += sizeof r;
    const bool get = r.kind == rma::kBatchGet;
    const std::size_t follows = get ? sizeof(uint64_t) : r.len;
    if (r.kind > rma::kBatchAcc || r.len == 0 || follows > bytes - at) break;
    const char* data = p + at;
    at += follows;
    e.kind = get ? Msg::Get : r.kind == rma::kBatchAcc ? Msg::Acc : Msg::Put;
    e.token = 0;
    if (get) std::memcpy(&e.token, data, sizeof e.token);
    const Datatype* t = r.elem < kNumBuiltins ? Datatype::builtin(static_cast<Builtin>(r.elem)) : nullptr;
    const uint64_t ts = t ? t->size() : 0;
    e.disp = r.disp;
    e.count = ts ? r.len / ts : 0;
    if (!t || ts == 0 || !t->is_contiguous() || t->true_lb() != 0 || r.len % ts) {
      refuse(w, o, e, ErrorClass::Type, "batched operation of %u bytes of predefined type %u", r.len, r.elem);
      continue;
    }
    if (r.disp > size || r.len > size - r.disp) {
      refuse(w, o, e, ErrorClass::RmaRange, "batched operation of %u bytes does not fit the window of %llu bytes",
             r.len, static_cast<unsigned long long>(size));
      continue;
    }
    const char* mem = static_cast<char*>(w.base) + r.disp;
    if (r.kind == rma::kBatchAcc) {
      // apply checks the op against the elements and combines under the
      // window's mutex (or the stripes a native window's origins take),
      // in order with the records around it; it counts the record.
      ++via_apply;
      e.op = r.op;
      e.elem = r.elem;
      e.first = 0;
      e.len = r.len;
      e.total = r.len;
      apply(w, o, e, data, r.len);
    } else if (!get) {
      put_bytes(static_cast<char*>(w.base) + r.disp, data, r.len);
    } else if (resp && sizeof(rma::RespRec) + r.len <= resp_max) {
      if (resp_len + sizeof(rma::RespRec) + r.len > resp_max) {
        send_resp(w, o, resp_n, resp_len);
        resp_len = 0;
        resp_n = 0;
      }
      rma::RespRec rr{};
      rr.token = e.token;
      rr.len = r.len;
      std::memcpy(w.batch_out.data() + resp_len, &rr, sizeof rr);
      std::memcpy(w.batch_out.data() + resp_len + sizeof rr, mem, r.len);
      resp_len += sizeof rr + r.len;
      ++resp_n;
    } else {
      // apply counts it when its data leaves (queued behind the others).
      ++via_apply;
      e.elem = r.elem;
      e.total = r.len;
      apply(w, o, e, nullptr, 0);
    }
  }
  send_resp(w, o, resp_n, resp_len);
  if (done < h.count || at != bytes) {
    e.kind = Msg::Put;
    e.token = 0;
    refuse(w, o, e, ErrorClass::Count, "a batch of %llu operations in %zu bytes is malformed after %llu of them",
           static_cast<unsigned long long>(h.count), bytes, static_cast<unsigned long long>(done));
  }
  // Every record counts, refused ones too (the origin's synchronization
  // ends); a get once its data left.
  O.applied += h.count - via_apply;
}

}  // namespace adi3::emul
