// libFuzzer target: a Device (rank 0 of 3) whose channel delivers packets
// the fuzzer writes, interleaved with the rank's own calls (sends and
// receives of eager and rendezvous sizes, tests, cancels). Packet headers
// are built from fuzzer bytes, with request ids either raw or taken from
// the ids the device itself put on the wire (so forged answers reach the
// deep states: clear-to-send, data at offsets, fin, acknowledgements,
// cancel answers for live requests). Checked: no read or write outside the
// user's buffers or the device's memory (ASan, UBSan; buffers are exact
// heap allocations), no hang, and a receive buffer's bytes past what it
// asked for stay untouched.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "adi3/device.hpp"

namespace {

using namespace adi3;

struct Input {
  const uint8_t* p;
  std::size_t n;
  bool empty() const { return n == 0; }
  uint8_t byte() {
    if (!n) return 0;
    --n;
    return *p++;
  }
  uint64_t bytes(int k) {
    uint64_t v = 0;
    for (int i = 0; i < k; ++i) v |= uint64_t{byte()} << (8 * i);
    return v;
  }
};

// The fuzzer's channel: packets to deliver are pushed by the driver; what
// the device sends is swallowed, its request ids remembered.
class FuzzChannel final : public Channel {
 public:
  FuzzChannel() {
    caps_.native = kPointToPoint;
    caps_.max_header = 128;
    caps_.max_payload = 8192;
    caps_.eager_limit = 1024;
  }
  const char* name() const override { return "fuzz"; }
  const ChannelCaps& caps() const override { return caps_; }
  int rank() const override { return 0; }
  int size() const override { return 3; }
  SendResult send(int dest, const void* hdr, std::size_t hdr_bytes, const Payload& payload) override {
    if (hdr_bytes >= adi3::kEagerHeaderBytes) {  // eager packets carry the first 32 bytes
      PacketHeader h{};
      std::memcpy(&h, hdr, std::min(hdr_bytes, sizeof h));
      remember(h.sreq);
      remember(h.rreq);
    }
    if (payload.bytes) {
      scratch_.resize(payload.bytes);
      payload.copy_to(scratch_.data());  // reads every byte the device sends
    }
    if (dest == 0) {  // to itself: delivered like any packet
      Pending p;
      p.src = 0;
      p.hdr.assign(static_cast<const uint8_t*>(hdr), static_cast<const uint8_t*>(hdr) + hdr_bytes);
      p.payload = scratch_;
      if (!payload.bytes) p.payload.clear();
      pending_.push_back(std::move(p));
    }
    return busy_ ? (busy_--, SendResult::Busy) : SendResult::Sent;
  }
  int poll(PacketSink& sink) override {
    int n = 0;
    while (!pending_.empty() && n < 8) {
      Pending p = std::move(pending_.front());
      pending_.erase(pending_.begin());
      // Exact-size copies: a read past a packet is an ASan report.
      auto* hdr = static_cast<uint8_t*>(std::malloc(p.hdr.size()));
      auto* pay = static_cast<uint8_t*>(std::malloc(p.payload.size() + 1));
      std::memcpy(hdr, p.hdr.data(), p.hdr.size());
      if (!p.payload.empty()) std::memcpy(pay, p.payload.data(), p.payload.size());
      sink.on_packet(p.src, hdr, p.hdr.size(), p.payload.empty() ? nullptr : pay, p.payload.size());
      std::free(hdr);
      std::free(pay);
      ++n;
    }
    return n;
  }
  void wait(std::chrono::microseconds) override {}
  void wake() override {}

  struct Pending {
    int src = 1;
    std::vector<uint8_t> hdr, payload;
  };
  std::vector<Pending> pending_;
  std::vector<uint64_t> ids_;
  int busy_ = 0;  // the next sends report Busy

 private:
  void remember(uint64_t id) {
    if (id && ids_.size() < 64) ids_.push_back(id);
  }
  ChannelCaps caps_;
  std::vector<uint8_t> scratch_;
};

struct UserRecv {
  Request* r = nullptr;
  unsigned char* buf = nullptr;
  std::size_t cap = 0, guard = 0;
};

uint64_t pick_id(Input& in, const FuzzChannel& ch) {
  const uint8_t how = in.byte();
  if ((how & 3) != 0 && !ch.ids_.empty()) return ch.ids_[in.byte() % ch.ids_.size()];
  return in.bytes(8);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  Input in{data, size};
  auto owned = std::make_unique<FuzzChannel>();
  FuzzChannel* ch = owned.get();
  Config config;
  config.spin_count = 1;
  config.yield_count = 0;
  config.sleep_us = 1;
  config.unexpected_bytes = 48 * 1024;  // small shares: eager beyond credit, credit returns and refusals
  auto dev = std::make_unique<Device>(std::move(owned), config);
  const Datatype* byte = Datatype::byte();
  std::vector<UserRecv> recvs;
  std::vector<Request*> sends;
  std::vector<std::unique_ptr<unsigned char[]>> send_bufs;
  int steps = 0;
  while (!in.empty() && ++steps < 200) {
    switch (in.byte() % 8) {
      case 0:
      case 1:
      case 2: {  // a packet from rank 1 or 2
        FuzzChannel::Pending p;
        p.src = 1 + in.byte() % 2;
        const uint8_t t = in.byte();
        if (t & 0x80) {  // raw header bytes
          p.hdr.resize(1 + in.byte() % 128);
          for (auto& b : p.hdr) b = in.byte();
        } else {
          PacketHeader h{};
          h.type = static_cast<PacketType>(t % 10);  // 8: Credit, 9: unknown
          h.flags = in.byte() & 3;
          h.context = in.byte() & 1;
          h.source = static_cast<int32_t>(in.byte() % 4) - 1;
          h.tag = in.byte() % 4;
          const uint8_t sz = in.byte();
          h.bytes = sz < 200 ? sz % 32 : sz < 240 ? 1000 + sz * 37 : in.bytes(8);
          h.sreq = pick_id(in, *ch);
          h.rreq = pick_id(in, *ch);
          const uint8_t off = in.byte();
          h.addr = off < 250 ? off * 61 : in.bytes(8);
          p.hdr.resize(sizeof h);
          std::memcpy(p.hdr.data(), &h, sizeof h);
        }
        p.payload.resize(in.byte() % 2 ? in.bytes(2) % 9000 : 0);
        for (auto& b : p.payload) b = static_cast<uint8_t>(in.n ? in.byte() : 0x5a);
        ch->pending_.push_back(std::move(p));
        break;
      }
      case 3: {  // a receive (exact-size buffer plus a guarded tail)
        if (recvs.size() >= 8) break;
        UserRecv u;
        u.cap = in.byte() % 2 ? in.byte() % 64 : 1000 + in.bytes(2) % 20000;
        u.guard = 16;
        u.buf = static_cast<unsigned char*>(std::malloc(u.cap + u.guard));
        std::memset(u.buf, 0xEE, u.cap + u.guard);
        const int src = static_cast<int>(in.byte() % 4) - 1;  // -1: any source
        Comm c = dev->world();
        c.context = in.byte() & 1;
        if (dev->irecv(u.buf, u.cap, byte, src < 0 ? kAnySource : src, in.byte() % 4, c, &u.r) == 0) {
          recvs.push_back(u);
        } else {
          std::free(u.buf);
        }
        break;
      }
      case 4: {  // a send (eager or rendezvous, any mode)
        if (sends.size() >= 8) break;
        const std::size_t n = in.byte() % 2 ? in.byte() : 1025 + in.bytes(2) % 30000;
        send_bufs.emplace_back(new unsigned char[n ? n : 1]);
        std::memset(send_bufs.back().get(), 0x33, n);
        Request* r = nullptr;
        const auto mode = static_cast<SendMode>(in.byte() % 4);
        if (mode == SendMode::Buffered) break;  // no buffer attached
        Comm c = dev->world();
        c.context = in.byte() & 1;
        if (dev->isend(send_bufs.back().get(), n, byte, 1 + in.byte() % 2, in.byte() % 4, c, mode, &r) == 0) {
          sends.push_back(r);
        }
        break;
      }
      case 5: {  // progress, with the channel busy for a while sometimes
        ch->busy_ = in.byte() % 3;
        for (int i = 0; i < 4; ++i) dev->progress();
        break;
      }
      case 6: {  // test or cancel one of ours
        const uint8_t k = in.byte();
        bool flag = false;
        Status st;
        if (k & 1 && !recvs.empty()) {
          UserRecv& u = recvs[k / 2 % recvs.size()];
          if (k & 2) dev->cancel(u.r);
          if (u.r) dev->test(&u.r, &flag, &st);
        } else if (!sends.empty()) {
          Request*& r = sends[k / 2 % sends.size()];
          if (k & 2) dev->cancel(r);
          if (r) dev->test(&r, &flag, &st);
        }
        break;
      }
      default: {  // a probe
        bool flag = false;
        Status st;
        dev->iprobe(kAnySource, kAnyTag, dev->world(), &flag, &st);
        break;
      }
    }
  }
  for (int i = 0; i < 8; ++i) dev->progress();
  // Nothing written past what a receive asked for.
  for (UserRecv& u : recvs) {
    for (std::size_t i = u.cap; i < u.cap + u.guard; ++i) {
      if (u.buf[i] != 0xEE) __builtin_trap();
    }
  }
  // Requests still in flight keep pointers into the buffers: the device
  // goes first, then the buffers.
  dev.reset();
  for (UserRecv& u : recvs) std::free(u.buf);
  return 0;
}
