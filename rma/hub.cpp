// The RMA layer's per-device state and its entry points in the progress
// engine.
#include "rma/hub.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

#include "adi3/device.hpp"
#include "emul/agent.hpp"
#include "emul/emul.hpp"
#include "rma/window_state.hpp"

namespace adi3::rma {

Hub::Hub(Device& dev) : dev_(dev) {
  id_ = dev.port().register_packet("rma", &Hub::on_packet, this);
  hook_ = dev.port().add_progress_hook(&Hub::on_progress, this, true);
}

Hub::~Hub() {
  dev_.port().remove_progress_hook(hook_);
  dev_.port().unregister_packet(id_);
  for (auto& c : chunks_) delete c.load(std::memory_order_relaxed);
}

Hub& Hub::of(Device& dev) {
  void* p =
      dev.layer_state(Device::Layer::Rma, [&] { return std::static_pointer_cast<void>(std::make_shared<Hub>(dev)); });
  return *static_cast<Hub*>(p);
}

void Hub::add(const std::shared_ptr<WindowState>& w) {
  std::lock_guard<std::mutex> g(mu_);
  std::size_t i = 0;
  while (i < slots_.size() && slots_[i].win) ++i;
  if (i >= kMaxWindows) {
    throw std::length_error("rank " + std::to_string(dev_.rank()) + " has " + std::to_string(kMaxWindows) +
                            " windows: no slot for another");
  }
  std::atomic<Chunk*>& c = chunks_[i / kChunk];
  if (!c.load(std::memory_order_relaxed)) c.store(new Chunk{}, std::memory_order_release);
  if (i == slots_.size()) slots_.emplace_back();
  Slot& s = slots_[i];
  s.win = w;
  ++s.gen;
  w->slot = static_cast<uint32_t>(i);
  w->gen = s.gen;
  w->hub = this;
  w->unfenced = &unfenced;
  // Published last: a handler that finds it sees its slot and generation.
  c.load(std::memory_order_relaxed)->win[i % kChunk].store(w.get(), std::memory_order_release);
  if (slots_.size() > high_.load(std::memory_order_relaxed)) high_.store(slots_.size(), std::memory_order_release);
  live_.fetch_add(1, std::memory_order_relaxed);
}

void Hub::remove(const WindowState& w) {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (w.slot >= slots_.size() || slots_[w.slot].win.get() != &w) return;
    chunks_[w.slot / kChunk]
        .load(std::memory_order_relaxed)
        ->win[w.slot % kChunk]
        .store(nullptr, std::memory_order_release);
    slots_[w.slot].win.reset();
    live_.fetch_sub(1, std::memory_order_relaxed);
  }
  // A handler on another thread may have found it just before: wait for it.
  dev_.port().quiesce_handlers();
  // So may a progress pass (on_progress reads the table without a lock):
  // taking the hook out waits for a pass running elsewhere; it goes back in
  // at once (a window is freed seldom; the hook's flag keeps any work).
  std::lock_guard<std::mutex> g(mu_);
  dev_.port().remove_progress_hook(hook_);
  hook_ = dev_.port().add_progress_hook(&Hub::on_progress, this, true);
}

void Hub::add_memory(Region* r, OneSided* os) {
  std::lock_guard<std::mutex> g(mem_mu_);
  memory_.push_back({r, os});
}

bool Hub::release_memory(void* base) {
  Memory m{};
  {
    std::lock_guard<std::mutex> g(mem_mu_);
    auto it = memory_.begin();
    while (it != memory_.end() && it->region->base != base) ++it;
    if (it == memory_.end()) return false;
    m = *it;
    memory_.erase(it);
  }
  m.os->release(m.region);
  return true;
}

void Hub::poke() {
  // Work announced after none: an agent may be asleep for long (it looked
  // at work_ before this), so it is woken (a load when it is awake).
  if (!work_.exchange(true, std::memory_order_acq_rel) && dev_.port().agent_running()) dev_.channel().wake();
  dev_.port().wake_hooks();
}

void Hub::watch_agent() {
  if (Agent* a = dev_.port().agent()) a->watch_hooks(&work_);
}

WindowState* Hub::find(uint32_t slot, uint32_t gen) const {
  if (slot >= kMaxWindows) return nullptr;
  const Chunk* c = chunks_[slot / kChunk].load(std::memory_order_acquire);
  if (!c) return nullptr;
  WindowState* w = c->win[slot % kChunk].load(std::memory_order_acquire);
  return w && w->gen == gen ? w : nullptr;
}

namespace {

// The bytes of count elements of the predefined type elem, for the
// shortened headers; a bad type id or a count too large gives a stream no
// element count matches (0 or the largest value), which the target's
// checks refuse with their message, as for a full header.
uint64_t stream_bytes(uint8_t elem, uint64_t count) {
  if (elem >= kNumBuiltins) return 0;
  uint64_t n;
  return __builtin_mul_overflow(count, builtin_info(static_cast<Builtin>(elem)).size, &n) ? ~uint64_t{0} : n;
}

}  // namespace

void Hub::on_packet(void* ctx, int src, const void* hdr, std::size_t hdr_bytes, const void* payload,
                    std::size_t payload_bytes) {
  auto* hub = static_cast<Hub*>(ctx);
  Device& dev = hub->dev_;
  Header h;
  if (hdr_bytes == kShortHeader) {
    // The short form: the packet is its whole stream, or count elements
    // (rma/protocol.hpp).
    std::memcpy(&h, hdr, kShortHeader);
    h.first = 0;
    h.total = payload_bytes;
    if (h.flags & kCounted) h.total = stream_bytes(h.elem, h.count);
    h.len = h.total;
  } else if (hdr_bytes == kOneHeader) {
    // One element of elem.
    std::memcpy(&h, hdr, kOneHeader);
    h.count = 1;
    h.first = 0;
    h.total = stream_bytes(h.elem, 1);
    h.len = h.total;
  } else if (hdr_bytes == sizeof(Header)) {
    std::memcpy(&h, hdr, sizeof h);
  } else {
    dev.errors().raise(ErrorClass::Intern,
                       "rank %d refused an rma packet of %zu header bytes from rank %d (want %zu, %zu or %zu)",
                       dev.rank(), hdr_bytes, src, kOneHeader, kShortHeader, sizeof(Header));
    return;
  }
  WindowState* w = hub->find(h.win, h.gen);
  if (!w || h.kind >= Msg::Last) {
    dev.errors().raise(ErrorClass::Win,
                       "rank %d refused an rma packet (kind %u) from rank %d: window slot %u generation %u is not "
                       "a window here",
                       dev.rank(), static_cast<unsigned>(h.kind), src, h.win, h.gen);
    return;
  }
  emul::on_packet(*w, src, h, payload, payload_bytes);
}

bool Hub::on_progress(void* ctx) {
  auto* hub = static_cast<Hub*>(ctx);
  if (!hub->work_.load(std::memory_order_acquire)) return false;
  hub->work_.store(false, std::memory_order_relaxed);
  bool any = false;
  // Lock-free, as find(): remove() waits for a running pass (it takes the
  // hook out and back in), so a window seen here lives until the pass ends.
  const std::size_t high = hub->high_.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < high; ++i) {
    const Chunk* c = hub->chunks_[i / kChunk].load(std::memory_order_acquire);
    WindowState* w = c ? c->win[i % kChunk].load(std::memory_order_acquire) : nullptr;
    if (!w || w->queued.load(std::memory_order_relaxed) == 0) continue;
    any |= emul::pump_all(*w);
    if (w->queued.load(std::memory_order_relaxed) != 0) hub->poke();
  }
  return any;
}

}  // namespace adi3::rma
