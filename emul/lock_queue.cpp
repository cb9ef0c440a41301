// The fair reader-writer queue of a window's lock at the target.
#include "emul/lock_queue.hpp"

#include <algorithm>

#include "rma/protocol.hpp"

namespace adi3::emul {

void LockQueue::reserve(int ranks) {
  const auto n = 2 * static_cast<std::size_t>(ranks > 0 ? ranks : 1);
  shared_owners_.reserve(n);
  waiting_.reserve(n);
}

bool LockQueue::has_room_for(int origin) const {
  int times = exclusive_ && exclusive_owner_ == origin ? 1 : 0;
  times += static_cast<int>(std::count(shared_owners_.begin(), shared_owners_.end(), origin));
  times += static_cast<int>(
      std::count_if(waiting_.begin(), waiting_.end(), [&](const Waiter& x) { return x.origin == origin; }));
  return times < 2 && shared_owners_.size() < shared_owners_.capacity() && waiting_.size() < waiting_.capacity();
}

bool LockQueue::request(int origin, rma::LockKind kind) {
  const bool excl = kind == rma::LockKind::Exclusive;
  // Granted at once only when nobody waits (FIFO) and the holders allow it.
  if (waiting_.empty() && !exclusive_ && (!excl || shared_ == 0)) {
    if (excl) {
      exclusive_ = true;
      exclusive_owner_ = origin;
    } else {
      ++shared_;
      shared_owners_.push_back(origin);
    }
    return true;
  }
  waiting_.push_back({origin, excl});
  return false;
}

bool LockQueue::release(int origin, std::vector<int>* granted) {
  if (exclusive_ && exclusive_owner_ == origin) {
    exclusive_ = false;
    exclusive_owner_ = -1;
  } else if (auto it = std::find(shared_owners_.begin(), shared_owners_.end(), origin); it != shared_owners_.end()) {
    shared_owners_.erase(it);
    --shared_;
  } else {
    // Not a holder: a request still waiting is withdrawn (an unlock that
    // overtook nothing because the origin never got its grant).
    auto w = std::find_if(waiting_.begin(), waiting_.end(), [&](const Waiter& x) { return x.origin == origin; });
    if (w == waiting_.end()) return false;
    waiting_.erase(w);
  }
  grant_from_head(granted);
  return true;
}

void LockQueue::grant_from_head(std::vector<int>* granted) {
  while (!waiting_.empty() && !exclusive_) {
    Waiter w = waiting_.front();
    if (w.exclusive) {
      if (shared_ != 0) return;
      exclusive_ = true;
      exclusive_owner_ = w.origin;
    } else {
      ++shared_;
      shared_owners_.push_back(w.origin);
    }
    waiting_.erase(waiting_.begin());
    granted->push_back(w.origin);
  }
}

}  // namespace adi3::emul
