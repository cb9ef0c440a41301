#include "channels/shm/shm_segment.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace adi3::shm {
namespace {

std::runtime_error sys_error(const std::string& what, int err) {
  return std::runtime_error(what + ": " + std::strerror(err));
}

uint32_t random_word() {
  uint32_t v = 0;
  if (getrandom(&v, sizeof v, 0) != sizeof v) v = static_cast<uint32_t>(getpid()) * 2654435761u;
  return v;
}

char* map_fd(int fd, std::size_t bytes, const std::string& name) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) throw sys_error("mmap of shared memory " + name, errno);
  return static_cast<char*>(p);
}

}  // namespace

ShmSegment::~ShmSegment() { release(); }

ShmSegment::ShmSegment(ShmSegment&& o) noexcept
    : base_(std::exchange(o.base_, nullptr)),
      size_(std::exchange(o.size_, 0)),
      name_(std::move(o.name_)),
      owner_linked_(std::exchange(o.owner_linked_, false)) {}

ShmSegment& ShmSegment::operator=(ShmSegment&& o) noexcept {
  if (this != &o) {
    release();
    base_ = std::exchange(o.base_, nullptr);
    size_ = std::exchange(o.size_, 0);
    name_ = std::move(o.name_);
    owner_linked_ = std::exchange(o.owner_linked_, false);
  }
  return *this;
}

void ShmSegment::release() {
  unlink();
  if (base_) munmap(base_, size_);
  base_ = nullptr;
  size_ = 0;
}

void ShmSegment::unlink() {
  if (owner_linked_) shm_unlink(name_.c_str());
  owner_linked_ = false;
}

ShmSegment ShmSegment::create(const std::string& job_id, std::size_t bytes) {
  ShmSegment s;
  int fd = -1;
  // The launcher removes /dev/shm/adi3-<job_id>-* after the job, so the
  // prefix must be exactly this; the random part only avoids collisions.
  for (int attempt = 0; fd < 0; ++attempt) {
    char suffix[16];
    std::snprintf(suffix, sizeof suffix, "%08x", random_word());
    s.name_ = "/adi3-" + job_id + "-" + suffix;
    fd = shm_open(s.name_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 && (errno != EEXIST || attempt > 16)) throw sys_error("shm_open(" + s.name_ + ")", errno);
  }
  s.owner_linked_ = true;
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    int e = errno;
    close(fd);
    throw sys_error("ftruncate of " + s.name_ + " to " + std::to_string(bytes) + " bytes", e);
  }
  try {
    s.base_ = map_fd(fd, bytes, s.name_);
  } catch (...) {
    close(fd);
    throw;
  }
  close(fd);
  s.size_ = bytes;
  return s;
}

ShmSegment ShmSegment::open(const std::string& name) {
  ShmSegment s;
  s.name_ = name;
  int fd = shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0);
  if (fd < 0) throw sys_error("shm_open(" + name + ") of a peer's segment", errno);
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    throw sys_error("fstat of " + name, e);
  }
  try {
    s.base_ = map_fd(fd, static_cast<std::size_t>(st.st_size), name);
  } catch (...) {
    close(fd);
    throw;
  }
  close(fd);
  s.size_ = static_cast<std::size_t>(st.st_size);
  return s;
}

}  // namespace adi3::shm
