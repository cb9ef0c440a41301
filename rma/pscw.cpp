// General active target: MPI_Win_post / start / complete / wait / test.
//  - Emulated: Post packets open the origins' gates, Complete packets carry
//    the counts of operations; NOCHECK skips the Post.
//  - Native (every rank agreed at creation): the same through the control
//    blocks' counters (rma/native_active.cpp): post adds to posts[me] at
//    each origin, complete announces its emulated count and adds to
//    completes[me] at each target.
// start never blocks: operations wait at the origin (queued to the
// emulation) until the target's post is seen.
#include <vector>

#include "rma/sync.hpp"

namespace adi3 {

using namespace rma::sync;
using rma::Gate;
using rma::Target;
using rma::WindowState;

namespace {

int check_group(WindowState& w, const char* call, std::span<const int> group) {
  std::vector<char> seen(static_cast<std::size_t>(w.comm.size), 0);
  for (int r : group) {
    if (r < 0 || r >= w.comm.size) {
      return w.dev.errors().raise(ErrorClass::Group,
                                  "%s on rank %d: group member %d is not a rank of the window (0..%d)", call,
                                  w.comm.rank, r, w.comm.size - 1);
    }
    if (seen[static_cast<std::size_t>(r)]++) {
      return w.dev.errors().raise(ErrorClass::Group, "%s on rank %d: rank %d appears twice in the group", call,
                                  w.comm.rank, r);
    }
  }
  return 0;
}

bool exposure_done(WindowState& w) {
  const bool native = w.native_active();
  for (int r : w.post_group) {
    if (native) rma::native::refresh(w, r);
    const rma::Origin& o = w.origins[static_cast<std::size_t>(r)];
    if (o.completes < o.expected || o.applied < o.announced || !o.out.empty()) return false;
  }
  return true;
}

}  // namespace

int Window::post(std::span<const int> group, int assert) {
  WindowState& w = *st_;
  if (int e = bad_assert(w, "Win_post", assert, kModeNoCheck | kModeNoStore | kModeNoPut)) return e;
  if (int e = check_group(w, "Win_post", group)) return e;
  std::lock_guard g(w.mu);
  if (w.exposed) return sync_error(w, "Win_post", "an exposure epoch is already open (call Win_wait first)");
  if (w.access == A::Fence && w.fence_ops) return sync_error(w, "Win_post", "a fence epoch with operations is open");
  if (w.access == A::Fence) w.access = A::None;
  const bool native = w.native_active();
  if (!(assert& kModeNoStore) || native) w.memory_fence();
  w.exposed = true;
  w.post_group.assign(group.begin(), group.end());
  for (int r : group) {
    ++w.origins[static_cast<std::size_t>(r)].expected;
    // With NOCHECK the origins' start does not wait for us: nothing to say.
    if (assert & kModeNoCheck) continue;
    if (native) {
      rma::native::post_to(w, r);
    } else {
      rma::Header h{};
      h.kind = rma::Msg::Post;
      emul::send(w, r, h);
    }
  }
  return 0;
}

int Window::start(std::span<const int> group, int assert) {
  WindowState& w = *st_;
  if (int e = bad_assert(w, "Win_start", assert, kModeNoCheck)) return e;
  if (int e = check_group(w, "Win_start", group)) return e;
  std::lock_guard g(w.mu);
  if (!access_free(w)) return sync_error(w, "Win_start", "another access epoch is open");
  w.access = A::Pscw;
  w.fence_ops = 0;
  w.start_group.assign(group.begin(), group.end());
  for (int r : group) {
    Target& t = w.targets[static_cast<std::size_t>(r)];
    // Start does not block: the operations wait for the target's post.
    t.epoch_gate = (assert& kModeNoCheck) ? Gate{} : Gate{Gate::Post, ++t.posts_claimed};
  }
  return 0;
}

int Window::complete() {
  WindowState& w = *st_;
  std::vector<int> group;
  bool native;
  {
    std::lock_guard g(w.mu);
    if (w.access != A::Pscw) return sync_error(w, "Win_complete", "no Win_start epoch is open");
    group = std::move(w.start_group);
    w.start_group.clear();
    w.access = A::None;
    native = w.native_active();
    if (w.native_usable) w.memory_fence();  // native stores before the completion
    if (!native) {
      for (int r : group) {
        Target& t = w.targets[static_cast<std::size_t>(r)];
        push_sync(w, r, rma::Msg::Complete, t.epoch_gate);
        // The target's next Post comes after it applied everything: the
        // next epoch's operations cannot overtake these.
        t.settle();
      }
    }
  }
  if (int e = wait_for(w, [&] {
        for (int r : group) {
          if (!locally_done(w.targets[static_cast<std::size_t>(r)])) return false;
        }
        return true;
      })) {
    return e;
  }
  // The targets' counters stay mapped after their process died.
  if (int e = w.dev.check_alive(w.comm, group, "Win_complete")) return e;
  if (native) {
    // Our emulated operations have left: announce their count, then count
    // the completion (the target waits until it applied them).
    std::lock_guard g(w.mu);
    for (int r : group) {
      rma::native::complete_at(w, r);
      w.targets[static_cast<std::size_t>(r)].settle();
    }
  }
  return finish(w);
}

int Window::wait() {
  WindowState& w = *st_;
  {
    std::lock_guard g(w.mu);
    if (!w.exposed) return sync_error(w, "Win_wait", "no Win_post epoch is open");
  }
  // post_group changes only in this rank's post, wait and test (this thread).
  if (int e = w.dev.check_alive(w.comm, w.post_group, "Win_wait")) return e;
  if (int e = wait_for(w, [&] { return exposure_done(w); })) {
    if (int f = w.dev.check_alive(w.comm, w.post_group, "Win_wait")) return f;  // name the rank
    return e;
  }
  std::lock_guard g(w.mu);
  w.exposed = false;
  w.post_group.clear();
  return w.take_error();
}

int Window::test(bool* flag) {
  WindowState& w = *st_;
  if (!flag) return w.dev.errors().raise(ErrorClass::Arg, "Win_test: the flag argument is null");
  {
    std::lock_guard g(w.mu);
    if (!w.exposed) return sync_error(w, "Win_test", "no Win_post epoch is open");
  }
  w.dev.progress();
  std::lock_guard g(w.mu);
  *flag = exposure_done(w);
  if (!*flag) return 0;
  w.exposed = false;
  w.post_group.clear();
  return w.take_error();
}

}  // namespace adi3
