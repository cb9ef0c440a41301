// Internal: what a generalized request keeps beside its Request (r->ext),
// and the class object its callbacks come from.
//
// Three counts, because three parties finish with a request at different
// times and possibly on different threads:
//  - pending: the user's handle and the operation; free_fn runs when both
//    are gone (wait/test or request_free, and grequest_complete), once;
//  - holds: who may still read this state (handle, operation, and the hub
//    while it polls the request); the last one deletes it;
//  - Request::refs: the same parties, for the Request's own memory.
#pragma once
#include <atomic>

#include "adi3/request.hpp"
#include "greq/greq.hpp"

namespace adi3 {

class GreqHub;

struct GreqCallbacks {
  GreqQueryFn* query = nullptr;
  GreqFreeFn* free = nullptr;
  GreqCancelFn* cancel = nullptr;
  GreqPollFn* poll = nullptr;
  GreqWaitFn* wait = nullptr;
};

class GreqClass {
 public:
  explicit GreqClass(const GreqCallbacks& fns);
  GreqClass(const GreqClass&) = delete;
  GreqClass& operator=(const GreqClass&) = delete;

  const GreqCallbacks fns;
  // The core's view: trampolines into fns. Its address names the class, so
  // waitall batches requests for one wait function only within a class.
  RequestClass core;
  std::atomic<int> refs{1};  // the creator's handle + one per live request

  void retain() { refs.fetch_add(1, std::memory_order_relaxed); }
  void release() {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
};

struct GreqState {
  explicit GreqState(const GreqCallbacks& own_fns) : own(own_fns) {}

  GreqClass own;               // requests started without a class use this one
  GreqClass* klass = nullptr;  // &own, or a shared class (one reference held)
  void* extra = nullptr;
  GreqHub* hub = nullptr;
  std::atomic<int> pending{2};
  std::atomic<int> holds{2};
  std::atomic<bool> completed{false};
  std::atomic<int> poll_error{0};  // last failing poll_fn code, reported by query

  const GreqCallbacks& fns() const { return klass->fns; }
};

inline GreqState* greq_state(Request& r) { return static_cast<GreqState*>(r.ext); }

// One of the two events that free_fn waits for; runs it after the second.
// Returns free_fn's code when it ran.
int greq_event(GreqState* st);
// Drops one hold; the last deletes the state (and its class reference).
void greq_drop_hold(GreqState* st);

// Starts a generalized request of `shared` (a class) or, if null, of a class
// of its own made from fns.
int greq_start(Device& dev, GreqClass* shared, const GreqCallbacks& fns, void* extra_state, Request** out);

}  // namespace adi3
