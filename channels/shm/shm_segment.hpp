// One POSIX shared-memory segment, mapped: created (mode 0600, exclusive)
// by its owner or opened by a peer. The creator's object unlinks the name
// when told to, or at destruction if that never happened, so a failed
// start leaves nothing in /dev/shm.
#pragma once
#include <cstddef>
#include <string>

namespace adi3::shm {

class ShmSegment {
 public:
  ShmSegment() = default;
  ~ShmSegment();
  ShmSegment(ShmSegment&& o) noexcept;
  ShmSegment& operator=(ShmSegment&& o) noexcept;

  // Creates "/adi3-<job_id>-<random>" of `bytes` and maps it. Throws
  // std::runtime_error naming the call that failed.
  static ShmSegment create(const std::string& job_id, std::size_t bytes);
  // Maps an existing segment whole.
  static ShmSegment open(const std::string& name);

  char* base() const { return base_; }
  std::size_t size() const { return size_; }
  const std::string& name() const { return name_; }
  // Removes the name (the mapping stays). Idempotent.
  void unlink();
  // We created it and its name still exists (peers can still open it).
  bool linked() const { return owner_linked_; }

 private:
  void release();

  char* base_ = nullptr;
  std::size_t size_ = 0;
  std::string name_;
  bool owner_linked_ = false;  // we created it and the name still exists
};

}  // namespace adi3::shm
