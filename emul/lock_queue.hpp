// Type 4 over type 2: the lock of one window at the target. Requests are
// served in arrival order: the head is granted as soon as it is compatible
// with the holders, and nothing behind a waiting exclusive request is
// granted before it, so a stream of shared locks never starves a writer
// and writers never starve readers. The agent serves it (the requests
// arrive as packets), so the target need not call the library.
#pragma once
#include <cstdint>
#include <vector>

namespace adi3::rma {
enum class LockKind : uint8_t;
}

namespace adi3::emul {

class LockQueue {
 public:
  // Room for a group of `ranks`, taken when the window is made (where
  // running out of memory is an MPI_ERR_NO_MEM), so that request(), which
  // runs in a packet handler, never allocates. An origin holds or waits at
  // most twice: its next epoch's request may arrive before its previous
  // epoch's release, which waits for that epoch's replies to leave.
  void reserve(int ranks);
  // False when origin already holds or waits twice: no legal sequence of
  // epochs sends that (a peer's packet is not trusted), so it is refused.
  bool has_room_for(int origin) const;
  // A request from origin (comm rank). Returns true when granted at once;
  // otherwise it waits and a later release() returns it. Needs
  // has_room_for(origin).
  bool request(int origin, rma::LockKind kind);
  // Releases origin's lock (or withdraws its waiting request). Appends the
  // origins granted as a result to *granted (may be null when !waiting()).
  // False when origin held none.
  bool release(int origin, std::vector<int>* granted);
  bool waiting() const { return !waiting_.empty(); }
  bool idle() const { return !exclusive_ && shared_ == 0 && waiting_.empty(); }
  int shared_holders() const { return shared_; }
  bool exclusive_held() const { return exclusive_; }

 private:
  struct Waiter {
    int origin;
    bool exclusive;
  };
  void grant_from_head(std::vector<int>* granted);

  bool exclusive_ = false;
  int exclusive_owner_ = -1;
  int shared_ = 0;
  std::vector<int> shared_owners_;  // multiset: an origin may hold it once per epoch
  std::vector<Waiter> waiting_;     // FIFO, head first (short: at most two per origin)
};

}  // namespace adi3::emul
