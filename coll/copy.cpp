#include "coll/copy.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

#include "segment/segment.hpp"

namespace adi3::coll {
namespace {

// Start of the data of a contiguous buffer.
const std::byte* data_of(const void* buf, const Datatype* type) {
  return static_cast<const std::byte*>(buf) + type->true_lb();
}
std::byte* data_of(void* buf, const Datatype* type) { return static_cast<std::byte*>(buf) + type->true_lb(); }

// Bounce buffer for copies between two noncontiguous layouts.
constexpr std::size_t kBounce = 64 * 1024;

}  // namespace

void pack(const void* buf, std::size_t count, const Datatype* type, void* out) {
  std::size_t bytes = count * type->size();
  if (bytes == 0) return;
  if (type->is_contiguous()) {
    std::memcpy(out, data_of(buf, type), bytes);
    return;
  }
  Segment seg(const_cast<void*>(buf), count, type);
  seg.pack(0, bytes, out);
}

void unpack(const void* in, void* buf, std::size_t count, const Datatype* type) {
  std::size_t bytes = count * type->size();
  if (bytes == 0) return;
  if (type->is_contiguous()) {
    std::memcpy(data_of(buf, type), in, bytes);
    return;
  }
  Segment seg(buf, count, type);
  seg.unpack(0, bytes, in);
}

void copy(const void* sbuf, std::size_t scount, const Datatype* stype, void* rbuf, std::size_t rcount,
          const Datatype* rtype) {
  std::size_t bytes = std::min(scount * stype->size(), rcount * rtype->size());
  if (bytes == 0) return;
  bool sc = stype->is_contiguous(), rc = rtype->is_contiguous();
  if (sc && rc) {
    std::memmove(data_of(rbuf, rtype), data_of(sbuf, stype), bytes);
  } else if (sc) {
    Segment(rbuf, rcount, rtype).unpack(0, bytes, data_of(sbuf, stype));
  } else if (rc) {
    Segment(const_cast<void*>(sbuf), scount, stype).pack(0, bytes, data_of(rbuf, rtype));
  } else {
    Segment from(const_cast<void*>(sbuf), scount, stype), to(rbuf, rcount, rtype);
    std::unique_ptr<std::byte[]> tmp(new std::byte[std::min(bytes, kBounce)]);
    for (std::size_t at = 0; at < bytes; at += kBounce) {
      std::size_t end = std::min(bytes, at + kBounce);
      from.pack(at, end, tmp.get());
      to.unpack(at, end, tmp.get());
    }
  }
}

}  // namespace adi3::coll
