// Segment: pack or unpack any byte range [first, last) of (buf, count, type),
// resumable, or describe that range as an iovec.
//
// CONTRACT used by the core (adi3/): keep these signatures stable.
//
// Any boundaries are allowed (mid-element, mid-block). A Segment keeps a
// cursor: a call whose `first` is the previous call's `last` continues in
// O(bytes); any other `first` seeks in O(depth * log blocks). One Segment
// is used by one thread at a time.
#pragma once
#include <cstddef>
#include <memory>
#include <sys/uio.h>

#include "segment/cursor.hpp"
#include "segment/datatype.hpp"
#include "segment/representation.hpp"

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
  std::size_t to_iov(std::size_t first, std::size_t last, struct iovec* iov, std::size_t max_iov,
                     std::size_t* iov_count);

  // ---- additions ----

  // A segment whose stream is in representation `rep` (e.g. external32):
  // size() is then count * the type's size in that representation.
  // to_iov() describes nothing (returns 0) unless rep is native.
  Segment(void* buf, std::size_t count, const Datatype* type, const Representation& rep);
  const Representation& representation() const { return *rep_; }

 private:
  void init(void* buf, std::size_t count, const Datatype* type, const Representation& rep);
  void clear();
  bool place(std::size_t first);
  const detail::Node* top() const { return own_top_ ? &top_ : prog_ ? prog_->root : nullptr; }

  detail::Addr buf_ = 0;
  std::size_t count_ = 0;
  const Datatype* type_ = nullptr;
  const Representation* rep_ = &Representation::native();
  const detail::Program* prog_ = nullptr;            // the type's own for native (type_ keeps it)
  std::shared_ptr<const detail::Program> own_prog_;  // other representations
  std::size_t size_ = 0;
  bool contig_ = false;   // native contiguous: plain memcpy at buf_ + true_lb
  bool own_top_ = false;  // top_ (count copies of the root) is in use
  detail::Node top_;
  detail::Cursor cur_;
};

}  // namespace adi3
