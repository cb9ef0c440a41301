#include "coll/nbc.hpp"

#include <cstdio>

#include "adi3/device.hpp"

namespace adi3::coll {
namespace {

void finish(Request& r, Schedule* s) {
  r.status = Status{};
  r.status.error = s->error();
  delete s;
  r.ext = nullptr;
  r.dev->complete(&r);  // drops the schedule's reference
}

int poll(Request& r, Status&) {
  auto* s = static_cast<Schedule*>(r.ext);
  if (s && s->advance()) finish(r, s);
  return 0;
}

const RequestClass kCollectiveClass{nullptr, nullptr, nullptr, &poll, nullptr, nullptr};

// ---- persistent collectives: the request owns its schedule for life ----

// One run has ended: the request completes (wait/test then make it
// inactive); a handle freed meanwhile takes the schedule with it.
void finish_run(Request& r, Schedule* s) {
  r.status = Status{};
  r.status.error = s->error();
  if (r.has(Request::kUserFreed)) {
    delete s;
    r.ext = nullptr;
  }
  r.dev->complete(&r);  // drops the run's reference
}

int poll_persistent(Request& r, Status&) {
  auto* s = static_cast<Schedule*>(r.ext);
  if (s && s->advance()) finish_run(r, s);
  return 0;
}

int start_persistent(Request& r) {
  auto* s = static_cast<Schedule*>(r.ext);
  s->restart();
  r.refs.fetch_add(1, std::memory_order_relaxed);  // the run's reference
  r.cc.store(1, std::memory_order_release);
  if (s->advance()) {
    finish_run(r, s);
  } else {
    r.dev->add_pollable(&r);
  }
  return 0;
}

// The handle goes: an inactive request's schedule goes now, an active
// one's when its run ends.
int free_persistent(Request& r) {
  if (r.complete()) {
    delete static_cast<Schedule*>(r.ext);
    r.ext = nullptr;
  }
  return 0;
}

const RequestClass kPersistentClass{nullptr, &free_persistent, nullptr, &poll_persistent, nullptr, &start_persistent};

// Out of requests: an ERR_NO_MEM code naming the collective; the schedule,
// built but not started (nothing was sent), is dropped by the caller.
int collective_request(Device& dev, const Schedule& s, const char* form, Request** r) {
  char what[96];
  std::snprintf(what, sizeof what, "a %s collective on context %u (rank %d of %d)", form, s.comm().context, s.rank(),
                s.size());
  return dev.new_request(RequestKind::Collective, what, r);
}

}  // namespace

Sequence Sequence::persistent(int tag) {
  Sequence s;
  s.tag_ = tag;
  s.persistent_ = true;
  return s;
}

int Sequence::next_tag() {
  if (persistent_) return tag_;
  constexpr std::uint32_t kSpan = static_cast<std::uint32_t>(kTagUb - kFirstNbcTag) + 1;
  return kFirstNbcTag + static_cast<int>(n_++ % kSpan);
}

int launch(Device& dev, std::unique_ptr<Schedule> s, Request** out) {
  *out = nullptr;
  Request* r = nullptr;
  if (int e = collective_request(dev, *s, "nonblocking", &r)) return e;
  r->refs.fetch_add(1, std::memory_order_relaxed);  // the user's handle + the schedule
  r->cls = &kCollectiveClass;
  Schedule* raw = s.release();
  r->ext = raw;
  *out = r;
  if (raw->advance()) {
    finish(*r, raw);
  } else {
    dev.add_pollable(r);
  }
  return 0;
}

int launch_persistent(Device& dev, std::unique_ptr<Schedule> s, Request** out) {
  *out = nullptr;
  Request* r = nullptr;  // one reference: the user's handle
  if (int e = collective_request(dev, *s, "persistent", &r)) return e;
  r->cls = &kPersistentClass;
  r->set(Request::kPersistent);
  r->cc.store(0, std::memory_order_release);
  r->ext = s.release();
  *out = r;
  return 0;
}

}  // namespace adi3::coll
