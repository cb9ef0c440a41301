// Local data movement between (buf, count, type) buffers and packed bytes:
// what a collective does with its own contribution and its temporaries.
#pragma once
#include <cstddef>

#include "segment/datatype.hpp"

namespace adi3::coll {

// MPI_IN_PLACE.
inline void* const kInPlace = reinterpret_cast<void*>(-1);
inline bool in_place(const void* p) { return p == kInPlace; }

// Byte address of element i of a buffer of `type` (i * extent from buf).
inline const std::byte* elem_at(const void* buf, std::size_t i, const Datatype* type) {
  return static_cast<const std::byte*>(buf) + static_cast<std::ptrdiff_t>(i) * type->extent();
}
inline std::byte* elem_at(void* buf, std::size_t i, const Datatype* type) {
  return static_cast<std::byte*>(buf) + static_cast<std::ptrdiff_t>(i) * type->extent();
}

// Packs count elements of type at buf into out (count * size() bytes).
void pack(const void* buf, std::size_t count, const Datatype* type, void* out);
// Unpacks count * size() bytes from in into count elements of type at buf.
void unpack(const void* in, void* buf, std::size_t count, const Datatype* type);
// Copies min(scount*ssize, rcount*rsize) bytes of data between typed
// buffers, as a matched send and receive would.
void copy(const void* sbuf, std::size_t scount, const Datatype* stype, void* rbuf, std::size_t rcount,
          const Datatype* rtype);

}  // namespace adi3::coll
