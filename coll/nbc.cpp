#include "coll/nbc.hpp"

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

const RequestClass kCollectiveClass{nullptr, nullptr, nullptr, &poll, nullptr};

}  // namespace

int Sequence::next_tag() {
  constexpr std::uint32_t kSpan = static_cast<std::uint32_t>(kTagUb - kFirstNbcTag) + 1;
  return kFirstNbcTag + static_cast<int>(n_++ % kSpan);
}

int launch(Device& dev, std::unique_ptr<Schedule> s, Request** out) {
  Request* r = dev.new_request(RequestKind::Collective);
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

}  // namespace adi3::coll
