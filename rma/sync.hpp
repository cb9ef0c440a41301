// What the synchronization calls share (rma/fence.cpp, rma/pscw.cpp,
// rma/passive.cpp): argument checks, the wait without the window's mutex,
// and the origin's view of a target being locally done.
#pragma once
#include <mutex>

#include "adi3/device.hpp"
#include "emul/emul.hpp"
#include "rma/route.hpp"
#include "rma/window_state.hpp"

namespace adi3::rma::sync {

using A = WindowState::Access;

inline int bad_assert(WindowState& w, const char* call, int assert, int allowed) {
  if (assert & ~allowed) {
    return w.dev.errors().raise(ErrorClass::Assert, "%s on rank %d: assertion %#x is not valid here (allowed: %#x)",
                                call, w.comm.rank, assert, allowed);
  }
  return 0;
}

inline int sync_error(WindowState& w, const char* call, const char* why) {
  return w.dev.errors().raise(ErrorClass::RmaSync, "%s on rank %d: %s", call, w.comm.rank, why);
}

inline int check_rank(WindowState& w, const char* call, int rank) {
  if (rank < 0 || rank >= w.comm.size) {
    return w.dev.errors().raise(ErrorClass::Rank, "%s on rank %d: rank %d is not a rank of the window (0..%d)", call,
                                w.comm.rank, rank, w.comm.size - 1);
  }
  return 0;
}

// Waits (without the mutex) until done() holds (checked with it).
template <class Done>
int wait_for(WindowState& w, Done&& done) {
  return w.dev.block_until([&] {
    std::lock_guard g(w.mu);
    return done();
  });
}

// wait_for a flush or unlock of target; one_op: one operation came before
// it, so its answer times how promptly the target serves packets
// (rma::answered, under the mutex). The clock is read only by a wait
// that outlasts rma::kLatePolls polls.
template <class Done>
int wait_answer(WindowState& w, int target, bool one_op, Done&& done) {
  uint32_t polls = 0;
  int64_t from = 0;
  return wait_for(w, [&] {
    if (!done()) {
      if (one_op && ++polls == kLatePolls) from = steady_ns();
      return false;
    }
    if (one_op) answered(w.targets[static_cast<std::size_t>(target)], from ? steady_ns() - from : 0);
    return true;
  });
}

// Operations to t have left (the origin buffers are free: the messages of
// large puts too) and the gets have their data.
inline bool locally_done(const Target& t) {
  for (const Item& it : t.q) {
    if (it.is_op()) return false;
  }
  return t.replies == 0 && t.rndv_out == 0;
}

inline void push_sync(WindowState& w, int to, Msg kind, Gate gate, uint64_t token = 0, uint8_t flags = 0) {
  Item it;
  it.kind = kind;
  it.gate = gate;
  it.token = token;
  it.flags = flags;
  emul::push(w, to, std::move(it));
}

// A fence epoch that issued nothing ends quietly when another kind starts.
inline bool access_free(const WindowState& w) {
  return w.access == A::None || (w.access == A::Fence && w.fence_ops == 0);
}

inline int finish(WindowState& w) {
  std::lock_guard g(w.mu);
  return w.take_error();
}

}  // namespace adi3::rma::sync
