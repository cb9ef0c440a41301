#include "segment/segment.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace adi3 {

Segment::Segment(void* buf, std::size_t count, const Datatype* type)
    : buf_(static_cast<char*>(buf)), count_(count), type_(type) {
  if (type_) type_->retain();
}

Segment::~Segment() {
  if (type_) type_->release();
}

Segment::Segment(Segment&& o) noexcept
    : buf_(std::exchange(o.buf_, nullptr)),
      count_(std::exchange(o.count_, 0)),
      type_(std::exchange(o.type_, nullptr)) {}

Segment& Segment::operator=(Segment&& o) noexcept {
  if (this != &o) {
    if (type_) type_->release();
    buf_ = std::exchange(o.buf_, nullptr);
    count_ = std::exchange(o.count_, 0);
    type_ = std::exchange(o.type_, nullptr);
  }
  return *this;
}

std::size_t Segment::size() const { return type_ ? count_ * type_->size() : 0; }

std::size_t Segment::pack(std::size_t first, std::size_t last, void* dst) {
  last = std::min(last, size());
  if (first >= last) return 0;
  std::memcpy(dst, buf_ + first, last - first);
  return last - first;
}

std::size_t Segment::unpack(std::size_t first, std::size_t last, const void* src) {
  last = std::min(last, size());
  if (first >= last) return 0;
  std::memcpy(buf_ + first, src, last - first);
  return last - first;
}

std::size_t Segment::to_iov(std::size_t first, std::size_t last, struct iovec* iov,
                            std::size_t max_iov, std::size_t* iov_count) {
  last = std::min(last, size());
  *iov_count = 0;
  if (first >= last || max_iov == 0) return 0;
  iov[0].iov_base = buf_ + first;
  iov[0].iov_len = last - first;
  *iov_count = 1;
  return last - first;
}

}  // namespace adi3
