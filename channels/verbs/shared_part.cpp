#include "channels/verbs/shared_part.hpp"

#include <sys/types.h>

#include <cerrno>

#include "channels/shm/shm_onesided.hpp"

namespace adi3::verbs {

// Segments only: no process ids (expose() is refused, so no key of ours
// names user memory), no poll counters and no doorbells (a waiter on a
// word of a shared window naps for at most ADI3_SLEEP_US).
SharedPart::SharedPart(const std::string& job_id, int rank, std::vector<bool> same_host)
    : shm_(std::make_unique<shm::ShmOneSided>(job_id + "-vsh", rank, std::vector<pid_t>(same_host.size(), 0), false,
                                              std::vector<const std::atomic<uint64_t>*>(same_host.size(), nullptr),
                                              std::vector<Doorbell*>(same_host.size(), nullptr))),
      same_host_(std::move(same_host)) {}

SharedPart::~SharedPart() = default;

const OneSidedCaps& SharedPart::caps() const { return shm_->caps(); }
adi3::Region* SharedPart::allocate(std::size_t bytes) { return shm_->allocate(bytes); }
adi3::Region* SharedPart::expose(void*, std::size_t) {
  errno = ENOTSUP;
  return nullptr;
}
void SharedPart::release(adi3::Region* r) { shm_->release(r); }
void SharedPart::seal(adi3::Region* r) { shm_->seal(r); }

RemoteRegion* SharedPart::attach(int peer, const void* key, std::size_t key_bytes) {
  if (!reaches(peer)) {
    errno = EHOSTUNREACH;
    return nullptr;
  }
  return shm_->attach(peer, key, key_bytes);
}

void SharedPart::detach(RemoteRegion* r) { shm_->detach(r); }
int SharedPart::put(RemoteRegion& r, uint64_t offset, const void* src, std::size_t len) {
  return shm_->put(r, offset, src, len);
}
int SharedPart::get(RemoteRegion& r, uint64_t offset, void* dst, std::size_t len) {
  return shm_->get(r, offset, dst, len);
}
int SharedPart::fetch_add(RemoteRegion& r, uint64_t offset, uint64_t operand, uint64_t* result, std::size_t width) {
  return shm_->fetch_add(r, offset, operand, result, width);
}
int SharedPart::compare_swap(RemoteRegion& r, uint64_t offset, uint64_t compare, uint64_t swap, uint64_t* result,
                             std::size_t width) {
  return shm_->compare_swap(r, offset, compare, swap, result, width);
}
int SharedPart::flush(int peer) { return shm_->flush(peer); }

bool SharedPart::reaches(int peer) const {
  return peer >= 0 && static_cast<std::size_t>(peer) < same_host_.size() && same_host_[static_cast<std::size_t>(peer)];
}

}  // namespace adi3::verbs
