// Starting and completing generalized requests, and the trampolines through
// which the core's wait/test/cancel calls reach the user's callbacks.
#include <limits>
#include <vector>

#include "adi3/device.hpp"
#include "greq/hub.hpp"
#include "greq/state.hpp"

namespace adi3 {

namespace {

// RequestClass::query: runs in the wait/test that reports the request and in
// request_get_status, always with a valid status.
int query_tramp(Request& r, Status& s) {
  GreqState* st = greq_state(r);
  int e = st->fns().query ? st->fns().query(st->extra, &s) : 0;
  return e ? e : st->poll_error.load(std::memory_order_relaxed);
}

// RequestClass::free: the user's handle is gone (wait/test or request_free).
int free_tramp(Request& r) {
  GreqState* st = greq_state(r);
  int e = greq_event(st);
  greq_drop_hold(st);
  return e;
}

int cancel_tramp(Request& r, bool) {
  GreqState* st = greq_state(r);
  // "complete" means grequest_complete was called, which the flag records
  // before the request's counter drops.
  int complete = st->completed.load(std::memory_order_acquire) ? 1 : 0;
  return st->fns().cancel ? st->fns().cancel(st->extra, complete) : 0;
}

int wait_tramp(int count, Request* const* reqs, Status& s) {
  std::vector<void*> states(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) states[static_cast<std::size_t>(i)] = greq_state(*reqs[i])->extra;
  GreqState* st = greq_state(*reqs[0]);
  return st->fns().wait(count, states.data(), std::numeric_limits<double>::infinity(), &s);
}

bool is_greq(const Request* r) {
  if (!r || r->kind != RequestKind::Generalized || !r->ext) return false;
  auto* st = static_cast<const GreqState*>(r->ext);
  return r->cls == &st->klass->core;
}

}  // namespace

GreqClass::GreqClass(const GreqCallbacks& f) : fns(f) {
  core.query = &query_tramp;
  core.free = &free_tramp;
  core.cancel = &cancel_tramp;
  core.wait = f.wait ? &wait_tramp : nullptr;  // poll: the hub drives it, not the core
}

int greq_event(GreqState* st) {
  if (st->pending.fetch_sub(1, std::memory_order_acq_rel) != 1) return 0;
  return st->fns().free ? st->fns().free(st->extra) : 0;
}

void greq_drop_hold(GreqState* st) {
  if (st->holds.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  if (st->klass != &st->own) st->klass->release();
  delete st;
}

int greq_start(Device& dev, GreqClass* shared, const GreqCallbacks& fns, void* extra_state, Request** out) {
  if (!out) return dev.errors().raise(ErrorClass::Arg, "generalized request start: the request argument is null");
  *out = nullptr;
  // Made now, on a thread that may call into the device, so that
  // grequest_complete from any thread finds it.
  GreqHub& hub = GreqHub::of(dev);
  // The request first: out of them, nothing is made and no callback runs.
  Request* r = nullptr;
  if (int e = dev.new_request(RequestKind::Generalized, "a generalized request", &r)) return e;
  auto* st = new (std::nothrow) GreqState(shared ? GreqCallbacks{} : fns);
  if (!st) {
    dev.release(r);
    return dev.errors().raise(ErrorClass::NoMem,
                              "out of memory allocating the state of a generalized request (%zu bytes)",
                              sizeof(GreqState));
  }
  st->klass = shared ? shared : &st->own;
  if (shared) shared->retain();
  st->extra = extra_state;
  st->hub = &hub;
  r->refs.store(2, std::memory_order_relaxed);  // the user's handle and the operation
  r->cls = &st->klass->core;
  r->ext = st;
  if (st->fns().poll) {
    r->refs.fetch_add(1, std::memory_order_relaxed);
    st->holds.fetch_add(1, std::memory_order_relaxed);
    hub.watch(r);
  }
  *out = r;
  return 0;
}

int grequest_start(Device& dev, GreqQueryFn* query, GreqFreeFn* free, GreqCancelFn* cancel, void* extra_state,
                   Request** out) {
  return greq_start(dev, nullptr, GreqCallbacks{query, free, cancel, nullptr, nullptr}, extra_state, out);
}

int grequest_start_polled(Device& dev, GreqQueryFn* query, GreqFreeFn* free, GreqCancelFn* cancel, GreqPollFn* poll,
                          GreqWaitFn* wait, void* extra_state, Request** out) {
  return greq_start(dev, nullptr, GreqCallbacks{query, free, cancel, poll, wait}, extra_state, out);
}

int grequest_complete(Request* r) {
  if (!r) return error_code(ErrorClass::Request);
  if (!is_greq(r)) {
    return r->dev->errors().raise(ErrorClass::Request,
                                  "grequest_complete on a request that is not a generalized "
                                  "request");
  }
  GreqState* st = greq_state(*r);
  Device& dev = *r->dev;
  if (st->completed.exchange(true, std::memory_order_acq_rel)) {
    return dev.errors().raise(ErrorClass::Request, "grequest_complete called twice on the same request");
  }
  GreqHub* hub = st->hub;
  // free_fn runs here if request_free came first. The state and the request
  // stay valid until this call drops the operation's hold and reference.
  int e = greq_event(st);
  r->cc.store(0, std::memory_order_release);
  // A waiter may sleep on the channel whether or not the device is in
  // thread_multiple mode: the completion comes from outside the device.
  dev.notify();
  greq_drop_hold(st);
  hub->drop_ref(r);
  return e;
}

int grequest_class_create(GreqQueryFn* query, GreqFreeFn* free, GreqCancelFn* cancel, GreqPollFn* poll,
                          GreqWaitFn* wait, GreqClass** out) {
  if (!out) return error_code(ErrorClass::Arg);
  *out = new GreqClass(GreqCallbacks{query, free, cancel, poll, wait});
  return 0;
}

int grequest_class_free(GreqClass** cls) {
  if (!cls || !*cls) return error_code(ErrorClass::Arg);
  (*cls)->release();
  *cls = nullptr;
  return 0;
}

int grequest_class_allocate(Device& dev, GreqClass* cls, void* extra_state, Request** out) {
  if (!cls) return dev.errors().raise(ErrorClass::Arg, "grequest_class_allocate: the class is null");
  return greq_start(dev, cls, GreqCallbacks{}, extra_state, out);
}

}  // namespace adi3
