// Segment: pack or unpack any byte range [first, last) of (buf, count, type),
// resumable, or describe that range as an iovec.
//
// CONTRACT used by the core (adi3/): keep these signatures stable.
#pragma once
#include <cstddef>
#include <sys/uio.h>

#include "segment/datatype.hpp"

namespace adi3 {

class Segment {
 public:
  Segment() = default;
  Segment(void* buf, std::size_t count, const Datatype* type);  // retains type
  ~Segment();                                                   // releases it
  Segment(Segment&&) noexcept;
  Segment& operator=(Segment&&) noexcept;
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  // Total bytes of packed data: count * type->size().
  std::size_t size() const;
  // Pack bytes [first, last) of the packed stream into dst; returns the
  // bytes written (last - first, clipped to size()). Cheap to resume when
  // first equals the previous call's last.
  std::size_t pack(std::size_t first, std::size_t last, void* dst);
  // Unpack src into bytes [first, last) of the packed stream.
  std::size_t unpack(std::size_t first, std::size_t last, const void* src);
  // Describe [first, last) as at most max_iov entries; sets *iov_count and
  // returns the bytes described (less than last - first when max_iov ran out).
  std::size_t to_iov(std::size_t first, std::size_t last, struct iovec* iov,
                     std::size_t max_iov, std::size_t* iov_count);

 private:
  char* buf_ = nullptr;
  std::size_t count_ = 0;
  const Datatype* type_ = nullptr;
};

}  // namespace adi3
