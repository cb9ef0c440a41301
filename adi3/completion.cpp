// The wait/test families, request_get_status and request_free, for every
// kind of request alike (generalized requests add their callbacks through
// RequestClass).
#include <string>
#include <vector>

#include "adi3/device_inline.hpp"

namespace adi3 {

namespace {

bool is_persistent(const Request* r) { return r->has(Request::kPersistent); }
// MPI: a null handle or an inactive persistent request.
bool inactive(const Request* r) { return !r || (is_persistent(r) && !r->has(Request::kActive)); }
bool done(const Request* r) { return !inactive(r) && r->complete(); }
// The user's reference goes: a live MPI_Request stops naming r (a
// generalized request freed while open keeps its mark for
// MPI_Grequest_complete).
void drop_handle(Request* r) {
  if (r->handle.load(std::memory_order_relaxed) == Request::kHandleLive) {
    r->handle.store(Request::kNoHandle, std::memory_order_relaxed);
  }
}
void set_empty(Status* s) {
  if (s) *s = Status{};
}

// When every request still to complete belongs to one class with a wait
// function, that function gets them all at once; mixed sets are left to the
// progress engine. Returns the wait function's error.
int class_wait(int n, Request* const* reqs) {
  std::vector<Request*> set;
  const RequestClass* k = nullptr;
  for (int i = 0; i < n; ++i) {
    Request* r = reqs[i];
    if (inactive(r) || r->complete()) continue;
    if (!r->cls || !r->cls->wait || (k && r->cls != k)) return 0;
    k = r->cls;
    set.push_back(r);
  }
  if (set.empty()) return 0;
  Status scratch;
  return k->wait(static_cast<int>(set.size()), set.data(), scratch);
}

bool is_plain(const Request* r) { return !r->cls && !is_persistent(r); }

// finish() for the complete requests of a plain set with threads off, up to
// the first null or failed one (returns its index, n if none): the tests
// for threads (the device's and the pool's) are made once for the set.
// Out of line, so that its loop keeps its values in registers.
template <bool kStatus>
[[gnu::noinline]] int finish_plain_run(Device& dev, int n, Request** reqs, Status* statuses) {
  int i = 0;
  for (; i < n; ++i) {
    Request* r = reqs[i];
    if (!r || r->status.error) [[unlikely]]
      break;
    if constexpr (kStatus) statuses[i] = r->status;
    drop_handle(r);
    dev.release_unshared(r);
    reqs[i] = nullptr;
  }
  return i;
}

}  // namespace

// Reports a completed request: status (via query for generalized requests),
// then frees it, or makes a persistent one inactive. Returns the error of the
// operation or of its callbacks.
// With both query and free, free's error wins (MPI: "the last callback"),
// but a failed query is not lost when free succeeds.
int Device::finish(Request** slot, Status* status, int* callback_error) {
  Request* r = *slot;
  if (is_plain(r)) [[likely]] {
    // A plain send or receive: no callbacks, freed now.
    if (callback_error) *callback_error = 0;
    return finish_plain(slot, status);
  }
  Status s = r->status;
  int cb = 0;
  if (r->cls && r->cls->query) {
    // query always gets a valid status (the caller's may be STATUS_IGNORE)
    // and may not set its error field.
    cb = r->cls->query(*r, s);
    s.error = r->status.error;
  }
  if (status) *status = s;
  if (is_persistent(r)) {
    r->clear(Request::kActive);
  } else {
    if (r->cls && r->cls->free) {
      int f = r->cls->free(*r);
      if (f) cb = f;
    }
    drop_handle(r);
    release(r);
    *slot = nullptr;
  }
  if (callback_error) *callback_error = cb;
  return cb ? cb : s.error;
}

int Device::wait(Request** slot, Status* status) {
  Request* r = *slot;
  if (inactive(r)) {
    set_empty(status);
    return 0;
  }
  if (r->cls) {
    if (int e = class_wait(1, slot)) return e;
  }
  if (int e = block_until([&] { return r->complete(); })) return e;
  // The common case (a plain send or receive) without finish()'s call.
  if (is_plain(r)) [[likely]]
    return finish_plain(slot, status);
  return finish(slot, status, nullptr);
}

int Device::test(Request** slot, bool* flag, Status* status) {
  Request* r = *slot;
  if (inactive(r)) {
    *flag = true;
    set_empty(status);
    return 0;
  }
  if (!r->complete()) progress();
  *flag = r->complete();
  if (!*flag) return 0;
  if (is_plain(r)) [[likely]]
    return finish_plain(slot, status);
  return finish(slot, status, nullptr);
}

namespace {
// MPI_ERR_IN_STATUS, also when the statuses are ignored (MPI: the
// individual codes are then lost); the message keeps the first of them.
int in_status_error(ErrorLog& log, int n, int failed, int first, bool ignored) {
  std::string why = log.message(first);
  return log.raise(ErrorClass::InStatus, "%d of %d requests failed; %s; the first: %s", failed, n,
                   ignored ? "the statuses were ignored" : "see the error field of each status", why.c_str());
}
}  // namespace

int Device::waitall(int n, Request** reqs, Status* statuses) {
  // Plain sends and receives (no class, not persistent: a message-rate
  // window) need no class wait and finish in one pass below. The look that
  // finds them plain also skips those complete already (a window of sends).
  bool plain = true;
  int next = 0;
  for (int i = 0; i < n; ++i) {
    const Request* r = reqs[i];
    if (r && !is_plain(r)) {
      plain = false;
      break;
    }
    if (next == i && (!r || r->complete())) ++next;
  }
  if (!plain) {
    next = 0;
    if (int e = class_wait(n, reqs)) return e;
  }
  // Requests complete and stay complete: each pass looks from the first
  // one not seen complete yet, so a window of n costs O(n) over the wait.
  // Progress passes run here while they move things (next stays in a
  // register); block_until takes over only when a pass finds nothing. In a
  // plain set no request is persistent, so only null ones are inactive.
  for (;;) {
    if (plain) {
      while (next < n && (!reqs[next] || reqs[next]->complete())) ++next;
    } else {
      while (next < n && (inactive(reqs[next]) || reqs[next]->complete())) ++next;
    }
    if (next == n || !progress()) break;
  }
  if (next < n) {
    int at = next;
    if (int e = block_until([&] {
          while (at < n && (inactive(reqs[at]) || reqs[at]->complete())) ++at;
          return at == n;
        })) {
      return e;
    }
  }
  // A plain set without threads finishes in bulk (see finish_plain_run);
  // the loop below takes the rest from a null or failed request on.
  int i = 0;
  if (plain && !threads_enabled()) [[likely]]
    i = statuses ? finish_plain_run<true>(*this, n, reqs, statuses) : finish_plain_run<false>(*this, n, reqs, nullptr);
  int failed = 0, first = 0;
  for (; i < n; ++i) {
    Status* s = statuses ? &statuses[i] : nullptr;
    Request* r = reqs[i];
    if (plain && r && !r->status.error) [[likely]] {
      // finish() for a plain request, without its call chain.
      finish_plain(&reqs[i], s);
      continue;
    }
    if (inactive(r)) {
      set_empty(s);
      continue;
    }
    int e = finish(&reqs[i], s, nullptr);
    if (s) s->error = e;
    if (e && !failed++) first = e;
  }
  return failed ? in_status_error(errors_, n, failed, first, !statuses) : 0;
}

int Device::testall(int n, Request** reqs, bool* flag, Status* statuses) {
  auto all_done = [&] {
    for (int i = 0; i < n; ++i) {
      if (!inactive(reqs[i]) && !reqs[i]->complete()) return false;
    }
    return true;
  };
  if (!all_done()) progress();
  *flag = all_done();
  if (!*flag) return 0;
  return waitall(n, reqs, statuses);
}

int Device::waitany(int n, Request** reqs, int* index, Status* status) {
  *index = kUndefined;
  bool any_active = false;
  for (int i = 0; i < n; ++i) any_active |= !inactive(reqs[i]);
  if (!any_active) {
    set_empty(status);
    return 0;
  }
  int found = kUndefined;
  if (int e = block_until([&] {
        for (int i = 0; i < n; ++i) {
          if (done(reqs[i])) {
            found = i;
            return true;
          }
        }
        return false;
      })) {
    return e;
  }
  *index = found;
  return finish(&reqs[found], status, nullptr);
}

int Device::testany(int n, Request** reqs, int* index, bool* flag, Status* status) {
  *index = kUndefined;
  bool any_active = false;
  for (int pass = 0; pass < 2; ++pass) {
    for (int i = 0; i < n; ++i) {
      any_active |= !inactive(reqs[i]);
      if (done(reqs[i])) {
        *index = i;
        *flag = true;
        return finish(&reqs[i], status, nullptr);
      }
    }
    if (pass == 0) progress();
  }
  *flag = !any_active;  // all inactive: flag true, index UNDEFINED
  if (*flag) set_empty(status);
  return 0;
}

int Device::testsome(int n, Request** reqs, int* outcount, int* indices, Status* statuses) {
  bool any_active = false;
  for (int i = 0; i < n; ++i) any_active |= !inactive(reqs[i]);
  if (!any_active) {
    *outcount = kUndefined;
    return 0;
  }
  progress();
  int k = 0, failed = 0, first = 0;
  for (int i = 0; i < n; ++i) {
    if (!done(reqs[i])) continue;
    Status* s = statuses ? &statuses[k] : nullptr;
    int e = finish(&reqs[i], s, nullptr);
    if (s) s->error = e;
    if (e && !failed++) first = e;
    indices[k++] = i;
  }
  *outcount = k;
  return failed ? in_status_error(errors_, k, failed, first, !statuses) : 0;
}

int Device::waitsome(int n, Request** reqs, int* outcount, int* indices, Status* statuses) {
  bool any_active = false;
  for (int i = 0; i < n; ++i) any_active |= !inactive(reqs[i]);
  if (!any_active) {
    *outcount = kUndefined;
    return 0;
  }
  if (int e = block_until([&] {
        for (int i = 0; i < n; ++i) {
          if (done(reqs[i])) return true;
        }
        return false;
      })) {
    return e;
  }
  return testsome(n, reqs, outcount, indices, statuses);
}

int Device::request_get_status(Request* r, bool* flag, Status* status) {
  if (inactive(r)) {
    *flag = true;
    set_empty(status);
    return 0;
  }
  if (!r->complete()) progress();
  *flag = r->complete();
  if (!*flag) return 0;
  // query may run several times; the request stays as it is.
  Status s = r->status;
  int cb = r->cls && r->cls->query ? r->cls->query(*r, s) : 0;
  s.error = r->status.error;
  if (status) *status = s;
  return cb;
}

int Device::request_free(Request** slot) {
  Request* r = *slot;
  if (!r) return errors_.raise(ErrorClass::Request, "MPI_Request_free on a null request");
  // An active request keeps its operation's reference: it completes, then
  // is reclaimed. A class learns that the handle is gone even while the
  // request is active (a generalized request runs free_fn once both this
  // and its completion have happened, in whichever comes last).
  r->set(Request::kUserFreed);
  drop_handle(r);
  int e = r->cls && r->cls->free ? r->cls->free(*r) : 0;
  release(r);
  *slot = nullptr;
  return e;
}

}  // namespace adi3
