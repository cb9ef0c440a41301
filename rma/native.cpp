// Native windows: creation (regions, keys, attach, agreement) and teardown.
#include "rma/native.hpp"

#include <cstring>

#include "adi3/device.hpp"
#include "rma/window_state.hpp"

namespace adi3::rma {

NativeWin::~NativeWin() {
  for (NativePeer& p : peers) {
    if (p.data && p.data != p.ctl) os.detach(p.data);
    if (p.ctl) os.detach(p.ctl);
  }
  if (user) os.release(user);
  if (mine) os.release(mine);
}

namespace native {
namespace {

void put_key(const Region* r, uint8_t* key, uint32_t* len) {
  std::memcpy(key, r->key, r->key_bytes);
  *len = static_cast<uint32_t>(r->key_bytes);
}

}  // namespace

bool prepare(WindowState& w, bool alloc, std::size_t bytes, void* user_base, void** base, NativeCard* card) {
  *card = NativeCard{};
  if (w.dev.config().force_emulation) return false;
  // One channel serves every rank today; with a channel per peer, a window
  // is native only where every member's channel is the same one-sided one.
  OneSided* os = w.dev.channel_of(w.comm.to_peer(w.comm.rank)).onesided();
  if (!os) return false;
  for (int r = 0; r < w.comm.size; ++r) {
    if (w.dev.channel_of(w.comm.to_peer(r)).onesided() != os) return false;
  }
  auto nw = std::make_unique<NativeWin>(*os);
  // Control block first, then (allocate) the memory, page aligned.
  const std::size_t head = kControlBytes;
  if (bytes > SIZE_MAX / 2) return false;
  nw->mine = os->allocate(alloc ? head + bytes : head);
  if (!nw->mine) return false;
  nw->ctl = static_cast<Control*>(nw->mine->base);
  nw->ctl->magic = kControlMagic;
  if (alloc) {
    *base = static_cast<char*>(nw->mine->base) + head;
  } else if (user_base || bytes == 0) {
    nw->user = os->expose(user_base, bytes);
    if (!nw->user) return false;
  }
  card->flags = NativeCard::kOffered;
  if (w.info.emulate_ops) card->flags |= NativeCard::kEmulatesOps;
  if (w.dev.config().forced(kPassiveRma) || !w.dev.native(kPassiveRma)) card->flags |= NativeCard::kPassiveForced;
  put_key(nw->mine, card->ctl_key, &card->ctl_len);
  if (nw->user) {
    put_key(nw->user, card->data_key, &card->data_len);
  } else {
    card->data_len = 0;  // the memory follows the control block in the same region
  }
  nw->peers.resize(static_cast<std::size_t>(w.comm.size));
  nw->held.assign(static_cast<std::size_t>(w.comm.size), 0);
  w.native = std::move(nw);
  return true;
}

void attach(WindowState& w, const std::vector<NativeCard>& cards, NativeCard* second) {
  *second = NativeCard{};
  if (!w.native) return;
  NativeWin& nw = *w.native;
  bool all = true;
  for (int r = 0; r < w.comm.size && all; ++r) {
    const NativeCard& c = cards[static_cast<std::size_t>(r)];
    const PeerWin& pw = w.peers[static_cast<std::size_t>(r)];
    NativePeer& p = nw.peers[static_cast<std::size_t>(r)];
    if (!(c.flags & NativeCard::kOffered) || c.ctl_len > kMaxKeyBytes || c.data_len > kMaxKeyBytes) {
      all = false;
      break;
    }
    const int peer = w.comm.to_peer(r);
    p.ctl = nw.os.attach(peer, c.ctl_key, c.ctl_len);
    // The control block must be there, whole and ours (a key pointing at
    // anything else is refused).
    if (!p.ctl || !p.ctl->direct || p.ctl->bytes < kControlBytes ||
        std::atomic_ref<uint32_t>(p.control()->magic).load(std::memory_order_acquire) != kControlMagic) {
      all = false;
      break;
    }
    const auto size = static_cast<std::size_t>(pw.size);
    if (c.data_len) {
      p.data = nw.os.attach(peer, c.data_key, c.data_len);
      if (!p.data || p.data->bytes < size) all = false;
    } else {
      // Memory after the control block: the key's size must cover it.
      if (p.ctl->bytes - kControlBytes < size) {
        all = false;
      } else {
        p.data = p.ctl;
      }
    }
  }
  if (all) second->flags = NativeCard::kAttached;
}

void agree(WindowState& w, const std::vector<NativeCard>& firsts, const std::vector<NativeCard>& seconds) {
  if (!w.native) return;
  NativeWin& nw = *w.native;
  bool all = true, passive = true;
  for (int r = 0; r < w.comm.size; ++r) {
    const NativeCard& f = firsts[static_cast<std::size_t>(r)];
    if (!(seconds[static_cast<std::size_t>(r)].flags & NativeCard::kAttached)) all = false;
    if (f.flags & NativeCard::kPassiveForced) passive = false;
    if (f.flags & NativeCard::kEmulatesOps) nw.others_emulate = true;
  }
  nw.os.seal(nw.mine);
  if (nw.user) nw.os.seal(nw.user);
  if (!all) {
    // Someone could not reach everyone: the window is emulated throughout
    // (the memory of an allocate window stays where it is).
    for (NativePeer& p : nw.peers) {
      if (p.data && p.data != p.ctl) nw.os.detach(p.data);
      if (p.ctl) nw.os.detach(p.ctl);
      p = NativePeer{};
    }
    nw.passive = false;
    w.native_usable = false;
    return;
  }
  w.native_usable = true;
  nw.passive = passive && !w.info.no_locks;
}

}  // namespace native
}  // namespace adi3::rma
