// Window creation and destruction, attach/detach, attributes. Creation is
// one allgather over the window's communicator: every rank learns each
// peer's window slot, packet id, base, size and displacement unit, so an
// origin checks every access against the target's window before sending.
#include <cstdlib>
#include <cstring>

#include "adi3/device.hpp"
#include "coll/coll.hpp"
#include "emul/emul.hpp"
#include "rma/hub.hpp"
#include "rma/route.hpp"
#include "rma/window_state.hpp"

namespace adi3 {
namespace rma {

WindowState::WindowState(Device& d, const Comm& c, WinFlavor f, const WinInfo& i)
    : dev(d), comm(c), flavor(f), info(i) {
  const auto n = static_cast<std::size_t>(c.size);
  peers.resize(n);
  // Built in place: their queues are not copyable.
  targets = std::vector<Target>(n);
  origins = std::vector<Origin>(n);
  lockq.reserve(c.size);
}

WindowState::~WindowState() {
  for (Target& t : targets) {
    if (t.last_desc) t.last_desc->release();
  }
  for (Origin& o : origins) {
    if (o.desc) o.desc->release();
  }
  std::free(owned);
}

int WindowState::take_error() {
  // No error is the common answer: a load then, not the seq_cst store of
  // zero (an xchg on x86, ~8 ns) that every synchronization paid, the
  // native fence on both ranks' critical path. An error set meanwhile
  // stays for the next call (the store could erase it).
  if (!deferred_error.load(std::memory_order_acquire)) return 0;
  return deferred_error.exchange(0, std::memory_order_acq_rel);
}

}  // namespace rma

namespace {

// Card::no_mem: why this rank cannot make the window.
constexpr uint8_t kNoMem = 1, kBadArgs = 2;

// What each rank tells the others at creation.
struct Card {
  uint8_t pkt;
  uint8_t no_mem;  // the heap could not give this rank its window memory (kNoMem), or its arguments were bad
  uint8_t pad[2];
  uint32_t win, gen;
  int32_t disp_unit;
  uint64_t base;
  int64_t size;
  rma::NativeCard native;
};

const char* creation_call(WinFlavor f) {
  switch (f) {
    case WinFlavor::Allocate:
      return "Win_allocate";
    case WinFlavor::Shared:
      return "Win_allocate_shared";
    case WinFlavor::Dynamic:
      return "Win_create_dynamic";
    default:
      return "Win_create";
  }
}

// alloc_base: an allocate window, whose memory is made here: in shared
// memory when the channel offers it (peers then reach it with loads and
// stores), else from the heap.
// failed: the caller's arguments were bad (any creation call): the rank
// takes part in the exchanges as an empty window and every rank fails after
// them.
int make_window(Device& dev, void* base, std::ptrdiff_t size, int disp_unit, const WinInfo& info, const Comm& comm,
                WinFlavor flavor, void* owned, std::shared_ptr<rma::WindowState>* out, void** alloc_base = nullptr,
                int failed = 0) {
  auto st = std::make_shared<rma::WindowState>(dev, comm, flavor, info);
  st->base = base;
  st->size = size;
  st->disp_unit = disp_unit;
  st->owned = owned;
  Card mine{};
  // allocate_shared: every rank's size first (rank 0 may lay them out).
  std::vector<int64_t> sizes;
  if (flavor == WinFlavor::Shared) {
    sizes.resize(static_cast<std::size_t>(comm.size));
    const int64_t s = size;
    if (int e = coll::allgather(dev, &s, sizeof s, Datatype::byte(), sizes.data(), sizeof s, Datatype::byte(), comm)) {
      return e;
    }
  }
  // Native memory first: an allocate window's memory may come from it.
  bool prepared = false;
  {
    void* nb = nullptr;
    prepared = rma::native::prepare(*st, alloc_base != nullptr, static_cast<std::size_t>(size), base, &nb, &mine.native,
                                    flavor == WinFlavor::Shared ? &sizes : nullptr);
    if (prepared && alloc_base) st->base = base = nb;
  }
  // One rank shares memory with itself whatever the channel: a shared
  // window of one rank (MPI_COMM_SELF; a shared communicator of one where
  // the channel maps no peer memory) is heap memory, its operations emulated.
  const bool lone_shared = flavor == WinFlavor::Shared && comm.size == 1 && !prepared;
  if (flavor == WinFlavor::Shared) {
    base = nullptr;  // known after the attach (contiguous: inside rank 0's region)
    if (!prepared) st->native.reset();
  }
  if (alloc_base && !base && (flavor != WinFlavor::Shared || lone_shared)) {
    const std::size_t bytes = (static_cast<std::size_t>(size) + 63) / 64 * 64;
    // (an impossible size overflows the rounding: no memory either)
    base = bytes >= static_cast<std::size_t>(size) ? std::aligned_alloc(64, bytes ? bytes : 64) : nullptr;
    if (base) {
      std::memset(base, 0, bytes ? bytes : 64);
      st->base = st->owned = base;
    } else {
      mine.no_mem = kNoMem;  // every rank fails after the exchange below, none waits in it
    }
  }
  rma::Hub& hub = rma::Hub::of(dev);
  hub.add(st);
  if (failed) mine.no_mem = kBadArgs;
  mine.pkt = hub.packet_id();
  mine.win = st->slot;
  mine.gen = st->gen;
  mine.disp_unit = disp_unit;
  mine.base = reinterpret_cast<uintptr_t>(base);
  mine.size = size;
  std::vector<Card> all(static_cast<std::size_t>(comm.size));
  if (int e =
          coll::allgather(dev, &mine, sizeof mine, Datatype::byte(), all.data(), sizeof mine, Datatype::byte(), comm)) {
    hub.remove(*st);
    return e;
  }
  for (int r = 0; r < comm.size; ++r) {
    if (all[static_cast<std::size_t>(r)].no_mem == kBadArgs) {
      hub.remove(*st);
      return failed ? failed
                    : dev.errors().raise(ErrorClass::Arg,
                                         "%s on rank %d: the call failed at rank %d (its arguments), so at every rank",
                                         creation_call(flavor), comm.rank, r);
    }
  }
  // A rank without its memory: every rank fails alike (a shared window's
  // memory is rank 0's one region, or each rank's own).
  for (int r = 0; r < comm.size; ++r) {
    const Card& c = all[static_cast<std::size_t>(r)];
    if (c.no_mem || (flavor == WinFlavor::Shared && (c.native.flags & rma::NativeCard::kNoMem))) {
      hub.remove(*st);
      return dev.errors().raise(ErrorClass::NoMem, "%s on rank %d: rank %d cannot allocate the window's memory (%s)",
                                creation_call(flavor), comm.rank, r,
                                flavor == WinFlavor::Shared && r == 0 && !c.no_mem && !info.alloc_shared_noncontig
                                    ? "every rank's part, in one region"
                                    : "its part");
    }
  }
  std::vector<rma::NativeCard> firsts(all.size()), seconds(all.size());
  {
    std::lock_guard g(st->mu);
    st->comm_of_peer.assign(static_cast<std::size_t>(dev.size()), -1);
    for (int r = 0; r < comm.size; ++r) {
      const Card& c = all[static_cast<std::size_t>(r)];
      rma::PeerWin& p = st->peers[static_cast<std::size_t>(r)];
      p.peer = comm.to_peer(r);
      p.pkt = c.pkt;
      p.win = c.win;
      p.gen = c.gen;
      p.base = c.base;
      p.size = c.size;
      p.disp_unit = c.disp_unit;
      if (p.peer >= 0 && p.peer < dev.size()) st->comm_of_peer[static_cast<std::size_t>(p.peer)] = r;
      firsts[static_cast<std::size_t>(r)] = c.native;
    }
  }
  // Every rank attaches every other's regions, then says whether that
  // worked: the second exchange is also the barrier after which anyone may
  // send to the window (until then an arrival could not be answered).
  rma::NativeCard second;
  rma::native::attach(*st, firsts, &second);
  if (int e = coll::allgather(dev, &second, sizeof second, Datatype::byte(), seconds.data(), sizeof second,
                              Datatype::byte(), comm)) {
    hub.remove(*st);
    return e;
  }
  {
    // Peers may send to the window from here on; the agent handles their
    // packets under st->mu and reads what agree() settles.
    std::lock_guard g(st->mu);
    rma::native::agree(*st, firsts, seconds);
  }
  if (flavor == WinFlavor::Shared && !st->native_usable && !lone_shared) {
    hub.remove(*st);
    return dev.errors().raise(ErrorClass::RmaShared,
                              "Win_allocate_shared on rank %d: the ranks of the communicator cannot share memory "
                              "(the channel has no shared-memory one-sided part, some ranks are on other hosts, "
                              "emulation is forced, or a rank could not map another's memory)",
                              comm.rank);
  }
  // Passive target needs someone to serve lock requests while the target
  // computes: the agent (type 2 over type 1), unless the path is native.
  if (!info.no_locks) {
    const bool agent =
        rma::passive_needs_agent(*st) ? dev.port().require_agent("rma: window allows passive target") : true;
    hub.watch_agent();
    std::lock_guard g(st->mu);  // the agent reads it (notify_waiters)
    st->agent = agent;
  }
  if (alloc_base) *alloc_base = st->base;
  *out = std::move(st);
  return 0;
}

int check_create(Device& dev, std::ptrdiff_t size, int disp_unit, const Comm& comm, const char* what) {
  if (size < 0) return dev.errors().raise(ErrorClass::Size, "%s: size %td is negative", what, size);
  if (disp_unit <= 0) {
    return dev.errors().raise(ErrorClass::Disp, "%s: disp_unit %d must be positive", what, disp_unit);
  }
  if (comm.size <= 0 || comm.rank < 0 || comm.rank >= comm.size) {
    return dev.errors().raise(ErrorClass::Comm, "%s: rank %d of a communicator of %d ranks", what, comm.rank,
                              comm.size);
  }
  return 0;
}

}  // namespace

Window::Window(std::shared_ptr<rma::WindowState> st) : st_(std::move(st)) {}
Window::~Window() = default;

int Window::create(Device& dev, void* base, std::ptrdiff_t size, int disp_unit, const WinInfo& info, const Comm& comm,
                   Window** out, int failed) {
  std::shared_ptr<rma::WindowState> st;
  if (failed) return make_window(dev, nullptr, 0, 1, info, comm, WinFlavor::Create, nullptr, &st, nullptr, failed);
  if (int e = check_create(dev, size, disp_unit, comm, "Win_create")) return e;
  if (!out) return dev.errors().raise(ErrorClass::Arg, "Win_create: the window argument is null");
  if (size > 0 && !base) return dev.errors().raise(ErrorClass::Base, "Win_create: base is null for %td bytes", size);
  if (int e = make_window(dev, base, size, disp_unit, info, comm, WinFlavor::Create, nullptr, &st)) return e;
  *out = new Window(std::move(st));
  return 0;
}

int Window::allocate(Device& dev, std::ptrdiff_t size, int disp_unit, const WinInfo& info, const Comm& comm,
                     void** base, Window** out, int failed) {
  std::shared_ptr<rma::WindowState> st;
  if (failed) return make_window(dev, nullptr, 0, 1, info, comm, WinFlavor::Allocate, nullptr, &st, nullptr, failed);
  if (int e = check_create(dev, size, disp_unit, comm, "Win_allocate")) return e;
  if (!out || !base) return dev.errors().raise(ErrorClass::Arg, "Win_allocate: a result argument is null");
  void* mem = nullptr;
  if (int e = make_window(dev, nullptr, size, disp_unit, info, comm, WinFlavor::Allocate, nullptr, &st, &mem)) return e;
  *base = mem;
  *out = new Window(std::move(st));
  return 0;
}

int Window::allocate_shared(Device& dev, std::ptrdiff_t size, int disp_unit, const WinInfo& info, const Comm& comm,
                            void** base, Window** out, int failed) {
  std::shared_ptr<rma::WindowState> st;
  // (a shared window's first exchange is every rank's size: 0 here)
  if (failed) return make_window(dev, nullptr, 0, 1, info, comm, WinFlavor::Shared, nullptr, &st, nullptr, failed);
  if (int e = check_create(dev, size, disp_unit, comm, "Win_allocate_shared")) return e;
  if (!out || !base) return dev.errors().raise(ErrorClass::Arg, "Win_allocate_shared: a result argument is null");
  void* mem = nullptr;
  if (int e = make_window(dev, nullptr, size, disp_unit, info, comm, WinFlavor::Shared, nullptr, &st, &mem)) return e;
  *base = mem;
  *out = new Window(std::move(st));
  return 0;
}

int Window::shared_query(int rank, std::ptrdiff_t* size, int* disp_unit, void** base) const {
  rma::WindowState& w = *st_;
  if (!size || !disp_unit || !base) {
    return w.dev.errors().raise(ErrorClass::Arg, "Win_shared_query: a result argument is null");
  }
  if (rank != kProcNull && (rank < 0 || rank >= w.comm.size)) {
    return w.dev.errors().raise(ErrorClass::Rank, "Win_shared_query on rank %d: rank %d is not a rank of the window",
                                w.comm.rank, rank);
  }
  std::lock_guard g(w.mu);
  if (rank == kProcNull) {
    rank = 0;
    for (int r = 0; r < w.comm.size; ++r) {
      if (w.peers[static_cast<std::size_t>(r)].size > 0) {
        rank = r;
        break;
      }
    }
  }
  const rma::PeerWin& p = w.peers[static_cast<std::size_t>(rank)];
  *disp_unit = p.disp_unit;
  char* mem = nullptr;
  if (rank == w.comm.rank) {
    mem = static_cast<char*>(w.base);
  } else if (w.native_usable) {
    mem = w.native->peers[static_cast<std::size_t>(rank)].mem;
  }
  *size = mem || rank == w.comm.rank ? static_cast<std::ptrdiff_t>(p.size) : 0;
  *base = mem;
  return 0;
}

int Window::create_dynamic(Device& dev, const WinInfo& info, const Comm& comm, Window** out, int failed) {
  std::shared_ptr<rma::WindowState> st;
  if (failed) return make_window(dev, nullptr, 0, 1, info, comm, WinFlavor::Dynamic, nullptr, &st, nullptr, failed);
  if (int e = check_create(dev, 0, 1, comm, "Win_create_dynamic")) return e;
  if (!out) return dev.errors().raise(ErrorClass::Arg, "Win_create_dynamic: the window argument is null");
  if (int e = make_window(dev, nullptr, 0, 1, info, comm, WinFlavor::Dynamic, nullptr, &st)) return e;
  *out = new Window(std::move(st));
  return 0;
}

int Window::free(Window** win) {
  if (!win || !*win) return error_code(ErrorClass::Win);
  rma::WindowState& w = *(*win)->st_;
  Device& dev = w.dev;
  {
    std::lock_guard g(w.mu);
    const bool fence_idle = w.access == rma::WindowState::Access::Fence && w.fence_ops == 0;
    if ((w.access != rma::WindowState::Access::None && !fence_idle) || w.exposed) {
      return dev.errors().raise(
          ErrorClass::RmaSync,
          "Win_free on rank %d: an %s epoch is still open (close it with its synchronization call "
          "first)",
          w.comm.rank, w.exposed ? "exposure" : "access");
    }
  }
  // Others may still need replies from us until they too reach free.
  auto drained = [&] {
    std::lock_guard g(w.mu);
    return w.queued.load(std::memory_order_relaxed) == 0 && w.pending.empty() && w.quick_free == rma::kQuickAllFree;
  };
  if (int e = dev.block_until(drained)) return e;
  if (int e = coll::barrier(dev, w.comm)) return e;
  if (int e = dev.block_until(drained)) return e;
  int err;
  {
    std::lock_guard g(w.mu);
    err = w.take_error();
    emul::rndv_end(w);  // receives draining refused puts that never came
  }
  w.hub->remove(w);
  delete *win;
  *win = nullptr;
  return err;
}

int Window::attach(void* base, std::ptrdiff_t size) {
  rma::WindowState& w = *st_;
  if (w.flavor != WinFlavor::Dynamic) {
    return w.dev.errors().raise(ErrorClass::RmaFlavor, "Win_attach on rank %d: the window is not dynamic", w.comm.rank);
  }
  if (size < 0) return w.dev.errors().raise(ErrorClass::Size, "Win_attach: size %td is negative", size);
  if (size > 0 && !base) return w.dev.errors().raise(ErrorClass::Base, "Win_attach: base is null for %td bytes", size);
  const auto a = reinterpret_cast<uintptr_t>(base);
  std::lock_guard g(w.mu);
  for (const auto& [b, n] : w.regions) {
    if (a < b + n && b < a + static_cast<uintptr_t>(size)) {
      return w.dev.errors().raise(ErrorClass::RmaAttach,
                                  "Win_attach on rank %d: [%p, +%td) overlaps the attached region [%p, +%zu)",
                                  w.comm.rank, base, size, reinterpret_cast<void*>(b), n);
    }
  }
  w.regions.emplace_back(a, static_cast<std::size_t>(size));
  // Native: listed in our table, so origins reach it without us.
  rma::native::dyn_attach(w, base, static_cast<std::size_t>(size));
  return 0;
}

int Window::detach(const void* base) {
  rma::WindowState& w = *st_;
  if (w.flavor != WinFlavor::Dynamic) {
    return w.dev.errors().raise(ErrorClass::RmaFlavor, "Win_detach on rank %d: the window is not dynamic", w.comm.rank);
  }
  const auto a = reinterpret_cast<uintptr_t>(base);
  bool found = false;
  {
    std::lock_guard g(w.mu);
    for (auto it = w.regions.begin(); it != w.regions.end(); ++it) {
      if (it->first == a) {
        w.regions.erase(it);
        found = true;
        break;
      }
    }
  }
  // Native: out of our table, and no origin is inside a copy into it when
  // this returns (the memory may be freed then).
  if (found) return rma::native::dyn_detach(w, a);
  return w.dev.errors().raise(ErrorClass::RmaAttach, "Win_detach on rank %d: %p is not the base of an attached region",
                              w.comm.rank, base);
}

void* Window::base() const { return st_->base; }
std::ptrdiff_t Window::size() const { return st_->size; }
int Window::disp_unit() const { return st_->disp_unit; }
WinFlavor Window::flavor() const { return st_->flavor; }
// One copy of the memory: operations are applied to it directly (unified).
WinModel Window::model() const { return WinModel::Unified; }
const Comm& Window::comm() const { return st_->comm; }
Device& Window::device() const { return st_->dev; }
WinInfo Window::info() const {
  std::lock_guard g(st_->mu);
  WinInfo i = st_->info;
  i.passive_progress = !i.no_locks && st_->agent ? 1 : 0;
  return i;
}
int Window::set_info(const WinInfo& info) {
  std::lock_guard g(st_->mu);
  // Hints that change how peers treat us are fixed at creation: no_locks
  // may only be relaxed in our own view.
  const bool no_locks = st_->info.no_locks;
  const bool noncontig = st_->info.alloc_shared_noncontig;
  st_->info = info;
  st_->info.no_locks = no_locks;
  st_->info.alloc_shared_noncontig = noncontig;
  st_->info.passive_progress = -1;
  return 0;
}
bool Window::passive_progress() const { return !st_->info.no_locks && st_->agent; }

}  // namespace adi3
