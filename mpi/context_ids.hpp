// Context ids: which communicator contexts this process has in use. New
// communicators agree on an index free at every member (an AND over the
// members' masks), so an index is never used twice at any process.
#pragma once
#include <cstdint>
#include <mutex>

namespace adi3::mpi {

// Each index gives four core contexts: 4 * index + 0..3.
constexpr uint32_t kContextsPerComm = 4;
constexpr uint32_t context_of(uint32_t index) { return index * kContextsPerComm; }

class ContextIds {
 public:
  static constexpr int kWords = 64;  // 2048 communicators at once
  using Mask = uint32_t[kWords];

  ContextIds();
  // This process's free indices (bit set = free).
  void snapshot(Mask out);
  // Takes the lowest index that is set in agreed and still free here;
  // -1 if there is none.
  int claim_lowest(const Mask agreed);
  void release(int index);
  int in_use();

  // For agreements pending side by side (mpi/agree.hpp): out = the free
  // indices among `wanted` that no other pending agreement offered, now
  // reserved for the caller; true if other reservations existed.
  bool reserve(const Mask wanted, Mask out);
  void unreserve(const Mask m);

 private:
  std::mutex lock_;
  Mask free_;
  Mask reserved_;
};

}  // namespace adi3::mpi
