// The verbs channel's shared-memory part (OneSided::shared_part): what
// MPI_Win_allocate_shared needs, regions every member maps. Registered
// regions of the NIC are not mapped, so a shared window over verbs takes
// POSIX shared-memory segments instead, exactly as the shm channel does
// (its ShmOneSided, for segments only), for the ranks of this host: the
// channel learns each rank's host at start (its published address names
// it). A window whose members span hosts is refused (reaches() is false
// for the others, EHOSTUNREACH from attach()).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "channels/onesided.hpp"

namespace adi3::shm {
class ShmOneSided;
}

namespace adi3::verbs {

class SharedPart final : public OneSided {
 public:
  // same_host[p]: rank p runs on this rank's host.
  SharedPart(const std::string& job_id, int rank, std::vector<bool> same_host);
  ~SharedPart();

  const OneSidedCaps& caps() const override;
  adi3::Region* allocate(std::size_t bytes) override;
  adi3::Region* expose(void*, std::size_t) override;  // ENOTSUP: shared windows allocate
  void release(adi3::Region* r) override;
  void seal(adi3::Region* r) override;
  RemoteRegion* attach(int peer, const void* key, std::size_t key_bytes) override;
  void detach(RemoteRegion* r) override;
  int put(RemoteRegion& r, uint64_t offset, const void* src, std::size_t len) override;
  int get(RemoteRegion& r, uint64_t offset, void* dst, std::size_t len) override;
  int fetch_add(RemoteRegion& r, uint64_t offset, uint64_t operand, uint64_t* result, std::size_t width) override;
  int compare_swap(RemoteRegion& r, uint64_t offset, uint64_t compare, uint64_t swap, uint64_t* result,
                   std::size_t width) override;
  int flush(int peer) override;
  bool reaches(int peer) const override;
  OneSided* shared_part() override { return this; }

 private:
  std::unique_ptr<shm::ShmOneSided> shm_;
  std::vector<bool> same_host_;
};

}  // namespace adi3::verbs
