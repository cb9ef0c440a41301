// Functions the layers above the core ask the progress engine to run on
// every pass (rma/'s streams, greq/'s polls, the emulations' timers). The
// caller says whether the device's threads are on; without them no lock
// is taken.
#pragma once
#include <atomic>
#include <thread>
#include <vector>

#include "adi3/spin_lock.hpp"

namespace adi3 {

class ProgressHooks {
 public:
  using Fn = bool (*)(void* ctx);  // true if it did anything

  // Adds fn(ctx) and returns its id. Allowed from inside a hook. An
  // on_demand hook has work only after wake(): a pass runs the hooks only
  // when some hook runs always or a wake() came since the last run.
  int add(Fn fn, void* ctx, bool threads, bool on_demand = false);
  // After it returns, fn runs no more (from outside a hook it waits for a
  // pass running on another thread). Allowed from inside a hook.
  void remove(int id, bool threads);
  // One pass over the hooks: one thread at a time (others skip it), never
  // recursively (a hook that calls progress() does not re-enter).
  bool run(bool threads);
  // Whether any hook is registered (one load: a device without hooks pays
  // nothing more per pass).
  bool any() const { return count_.load(std::memory_order_acquire) > 0; }
  // Whether the next pass has a hook to run (two loads: an idle pass with
  // only on-demand hooks skips run(), its lock and its thread id).
  bool due() const {
    return count_.load(std::memory_order_acquire) > on_demand_.load(std::memory_order_relaxed) ||
           woken_.load(std::memory_order_acquire);
  }
  // An on-demand hook has work (call after publishing it): the next pass
  // runs the hooks. Always a store: a waker that saw it set and skipped
  // could lose its wake to a run() clearing it before seeing the work.
  void wake() { woken_.store(true, std::memory_order_release); }

 private:
  struct Hook {
    int id;
    Fn fn;
    void* ctx;
    bool on_demand;
  };
  bool inside() const { return runner_.load(std::memory_order_relaxed) == std::this_thread::get_id(); }

  std::vector<Hook> hooks_;
  SpinLock lock_;
  std::atomic<int> count_{0};
  std::atomic<int> on_demand_{0};  // of count_
  std::atomic<bool> woken_{false};
  std::atomic<std::thread::id> runner_{};  // the thread in run(), if any
  bool running_ = false;
  int next_id_ = 1;
};

}  // namespace adi3
