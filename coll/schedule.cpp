#include "coll/schedule.hpp"

#include <algorithm>
#include <cstdint>
#include <new>

#include "adi3/device.hpp"

namespace adi3::coll {

Schedule::Schedule(Device& dev, const Comm& comm, int tag) : dev_(dev), comms_{comm}, tag_(tag) {}

Schedule::~Schedule() {
  // Only a run abandoned on a failed peer leaves requests behind.
  for (Request*& r : inflight_) {
    if (r) dev_.request_free(&r);
  }
  for (const Datatype* t : kept_) t->release();
  for (const Scratch& b : scratch_) {
    if (b.pooled) {
      scratch_free(b.p);
    } else {
      delete[] static_cast<std::byte*>(b.p);
    }
  }
}

void Schedule::send(const void* buf, std::size_t count, const Datatype* type, int peer, int tag) {
  if (peer == kProcNull) return;
  keep(type);  // a later round or a persistent restart posts it
  steps_.push_back(Step{Kind::Send, peer, const_cast<void*>(buf), count, type, 0, tag < 0 ? tag_ : tag, cur_});
}

void Schedule::recv(void* buf, std::size_t count, const Datatype* type, int peer, int tag) {
  if (peer == kProcNull) return;
  keep(type);
  steps_.push_back(Step{Kind::Recv, peer, buf, count, type, 0, tag < 0 ? tag_ : tag, cur_});
}

void Schedule::local(std::function<void()> fn) {
  fns_.push_back(std::move(fn));
  steps_.push_back(Step{Kind::Local, 0, nullptr, 0, nullptr, fns_.size() - 1, 0, 0});
}

void Schedule::use(const Comm& comm) {
  fence();
  for (std::size_t i = 0; i < comms_.size(); ++i) {
    if (comms_[i].context == comm.context && comms_[i].rank == comm.rank && comms_[i].size == comm.size) {
      cur_ = static_cast<std::uint8_t>(i);
      return;
    }
  }
  comms_.push_back(comm);
  cur_ = static_cast<std::uint8_t>(comms_.size() - 1);
}

void Schedule::fence() {
  if (!steps_.empty() && steps_.back().kind != Kind::Fence) {
    steps_.push_back(Step{Kind::Fence, 0, nullptr, 0, nullptr, 0, 0, 0});
  }
}

std::byte* Schedule::scratch(std::size_t bytes) {
  // Large blocks come from the core's allocator (TBB's outside sanitized
  // builds), which keeps freed ones for reuse: with malloc, a long
  // reduction's temporaries were fresh pages on every call (glibc trims
  // them), and page faults plus zeroing cost 6x the reduction itself.
  // TBB aligns large blocks to cache lines; small ones stay with new[]
  // (16-byte aligned). Not value-initialised: temporaries are overwritten.
  // Out of memory throws, recording the size: builders return void, and
  // detail::build (coll/calls.hpp) turns it into ERR_NO_MEM naming it.
  constexpr std::size_t kPooled = 64 * 1024;
  wanted_ = bytes;
  scratch_.reserve(scratch_.size() + 1);
  if (bytes < kPooled) {
    auto* p = new (std::nothrow) std::byte[std::max<std::size_t>(bytes, 1)];
    if (!p) throw std::bad_alloc();
    scratch_.push_back(Scratch{p, false});
  } else {
    void* p = scratch_alloc(bytes);
    if (!p) throw std::bad_alloc();
    scratch_.push_back(Scratch{p, reinterpret_cast<std::uintptr_t>(p) % 16 == 0});
    if (!scratch_.back().pooled) {  // never seen; keep the promise anyway
      scratch_free(p);
      scratch_.back().p = new (std::nothrow) std::byte[bytes];
      if (!scratch_.back().p) throw std::bad_alloc();
    }
  }
  wanted_ = 0;
  return static_cast<std::byte*>(scratch_.back().p);
}

int Schedule::out_of_memory() const {
  if (wanted_) {
    return dev_.errors().raise(ErrorClass::NoMem,
                               "out of memory allocating scratch memory for a collective (%zu bytes; tag %d, "
                               "%zu blocks held)",
                               wanted_, tag_, scratch_.size());
  }
  return dev_.errors().raise(
      ErrorClass::NoMem,
      "out of memory allocating a step of the schedule of a collective (%zu bytes; tag %d, %zu steps "
      "so far)",
      sizeof(steps_[0]), tag_, steps_.size());
}

void Schedule::keep(const Datatype* type) {
  if (!type || type->is_predefined()) return;
  type->retain();
  kept_.push_back(type);
}

void Schedule::start_round() {
  std::size_t end = next_;
  while (end < steps_.size() && steps_[end].kind != Kind::Fence) ++end;
  for (std::size_t i = next_; i < end; ++i) {
    if (steps_[i].kind == Kind::Local) fns_[steps_[i].fn]();
  }
  for (std::size_t i = next_; i < end; ++i) {
    const Step& s = steps_[i];
    Request* r = nullptr;
    int e = 0;
    if (s.kind == Kind::Send) {
      e = dev_.isend(s.buf, s.count, s.type, s.peer, s.tag, comms_[s.ci], SendMode::Standard, &r);
    } else if (s.kind == Kind::Recv) {
      e = dev_.irecv(s.buf, s.count, s.type, s.peer, s.tag, comms_[s.ci], &r);
    }
    if (e && !error_) error_ = e;
    if (r) inflight_.push_back(r);
  }
  next_ = end < steps_.size() ? end + 1 : end;
}

bool Schedule::reap() {
  for (Request* r : inflight_) {
    if (!r->complete()) return false;
  }
  for (Request*& r : inflight_) {
    // Already complete: wait() only reports and frees.
    int e = dev_.wait(&r, nullptr);
    if (e && !error_) error_ = e;
  }
  inflight_.clear();
  return true;
}

bool Schedule::advance() {
  for (;;) {
    if (!inflight_.empty() && !reap()) return false;
    if (next_ >= steps_.size()) return true;
    start_round();
  }
}

void Schedule::restart() {
  next_ = 0;
  error_ = 0;
}

bool Schedule::landed() const {
  for (Request* r : inflight_) {
    if (!r->complete()) return false;
  }
  return true;
}

int Schedule::run() {
  // One wait per round, so each round gets the device's full spin budget
  // before it sleeps (a single wait would sleep through later rounds).
  while (!advance()) {
    if (int e = dev_.block_until([this] { return landed(); })) return e;
  }
  return error_;
}

}  // namespace adi3::coll
