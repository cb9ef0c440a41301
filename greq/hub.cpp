#include "greq/hub.hpp"

#include <mutex>

#include "greq/state.hpp"

namespace adi3 {

GreqHub::GreqHub(Device& dev) : dev_(dev) {
  static constexpr RequestClass kDriver = [] {
    RequestClass c;
    c.poll = &GreqHub::drive;
    return c;
  }();
  driver_.kind = RequestKind::Generalized;
  driver_.cc.store(1, std::memory_order_relaxed);  // never completes
  driver_.refs.store(1, std::memory_order_relaxed);
  driver_.cls = &kDriver;
  driver_.ext = this;
  driver_.dev = &dev;
  dev.add_pollable(&driver_);
}

GreqHub::~GreqHub() {
  // The device is going away, single-threaded: what the hub still holds
  // goes back (requests the user never completed stay with the pool).
  while (!reap_.empty()) {
    Request& r = reap_.front();
    reap_.pop_front();
    dev_.release(&r);
  }
  while (!polled_.empty()) {
    Request& r = polled_.front();
    polled_.pop_front();
    if (!r.complete()) continue;
    greq_drop_hold(greq_state(r));
    dev_.release(&r);
  }
}

GreqHub& GreqHub::of(Device& dev) {
  void* p = dev.layer_state(Device::Layer::Greq,
                            [&] { return std::static_pointer_cast<void>(std::make_shared<GreqHub>(dev)); });
  return *static_cast<GreqHub*>(p);
}

void GreqHub::watch(Request* r) {
  std::lock_guard<SpinLock> g(lock_);
  polled_.push_back(*r);
  queued_.store(true, std::memory_order_relaxed);
}

void GreqHub::drop_ref(Request* r) {
  // Locks are on with MPI_THREAD_MULTIPLE and once an agent has started
  // (either may turn them on after the hub was made).
  if (dev_.threads_enabled()) {
    dev_.release(r);
    return;
  }
  if (r->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  r->refs.store(1, std::memory_order_relaxed);  // the reap list's, dropped by poll_all
  std::lock_guard<SpinLock> g(lock_);
  reap_.push_back(*r);
  queued_.store(true, std::memory_order_relaxed);
}

int GreqHub::drive(Request& self, Status&) {
  static_cast<GreqHub*>(self.ext)->poll_all();
  return 0;
}

// Runs inside Device::progress (under its pollable lock with thread_multiple).
// Poll functions run without the hub's lock, so they may start or complete
// generalized requests themselves.
void GreqHub::poll_all() {
  // A request queued after this check is seen by the next pass.
  if (running_ || !queued_.load(std::memory_order_relaxed)) return;
  running_ = true;
  RequestList<QueueTag> dead, mine, keep;
  {
    std::lock_guard<SpinLock> g(lock_);
    dead.swap(reap_);
    mine.swap(polled_);
    queued_.store(false, std::memory_order_relaxed);
  }
  while (!dead.empty()) {
    Request& r = dead.front();
    dead.pop_front();
    dev_.release(&r);
  }
  while (!mine.empty()) {
    Request& r = mine.front();
    mine.pop_front();
    GreqState* st = greq_state(r);
    if (!r.complete()) {
      Status scratch;
      if (int e = st->fns().poll(st->extra, &scratch)) st->poll_error.store(e, std::memory_order_relaxed);
    }
    if (r.complete()) {
      greq_drop_hold(st);
      dev_.release(&r);
    } else {
      keep.push_back(r);
    }
  }
  if (!keep.empty()) {
    std::lock_guard<SpinLock> g(lock_);
    polled_.splice(polled_.end(), keep);
    queued_.store(true, std::memory_order_relaxed);
  }
  running_ = false;
}

}  // namespace adi3
