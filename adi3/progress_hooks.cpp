#include "adi3/progress_hooks.hpp"

#include <cstddef>

namespace adi3 {

int ProgressHooks::add(Fn fn, void* ctx, bool threads, bool on_demand) {
  // Inside a hook this thread already holds the hooks (see run).
  MaybeLock g(lock_, threads && !inside());
  const int id = next_id_++;
  hooks_.push_back(Hook{id, fn, ctx, on_demand});
  if (on_demand) on_demand_.fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_release);
  return id;
}

void ProgressHooks::remove(int id, bool threads) {
  // Taking the lock from outside waits for a pass running elsewhere, so fn
  // runs no more once this returns.
  MaybeLock g(lock_, threads && !inside());
  for (std::size_t i = 0; i < hooks_.size(); ++i) {
    if (hooks_[i].id != id || !hooks_[i].fn) continue;
    count_.fetch_sub(1, std::memory_order_relaxed);
    if (hooks_[i].on_demand) on_demand_.fetch_sub(1, std::memory_order_relaxed);
    if (running_) {
      hooks_[i].fn = nullptr;  // run() compacts after its pass
    } else {
      hooks_.erase(hooks_.begin() + static_cast<std::ptrdiff_t>(i));
    }
    return;
  }
}

bool ProgressHooks::run(bool threads) {
  if (threads ? !lock_.try_lock() : running_) return false;
  running_ = true;
  // Runs on every progress pass, mostly with nothing to do: add and remove
  // ask inside() only with threads on, and the list is compacted only when
  // a hook was removed during the pass (it then holds more than count_).
  if (threads) runner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
  // Taken before the hooks look for their work (a read-modify-write: the
  // hooks' loads cannot pass it), so a wake() after their look stays set.
  if (woken_.load(std::memory_order_relaxed)) woken_.exchange(false, std::memory_order_acq_rel);
  bool any = false;
  for (std::size_t i = 0; i < hooks_.size(); ++i) {
    const Hook h = hooks_[i];  // a copy: the hook may add hooks (the vector grows)
    if (h.fn) any |= h.fn(h.ctx);
  }
  if (hooks_.size() != static_cast<std::size_t>(count_.load(std::memory_order_relaxed))) {
    std::erase_if(hooks_, [](const Hook& h) { return h.fn == nullptr; });
  }
  if (threads) runner_.store(std::thread::id{}, std::memory_order_relaxed);
  running_ = false;
  if (threads) lock_.unlock();
  return any;
}

}  // namespace adi3
