// A datatype as bytes: the target datatype of an RMA operation travels to
// the target as the tree of constructor calls that made it (MPI's envelope
// and contents), and the target rebuilds it with the same constructors, so
// every value is checked by them. The description grows with the type's
// tree, never with the data.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "segment/datatype.hpp"

namespace adi3::rma {

// The longest description either side takes (it may span several packets).
inline constexpr std::size_t kMaxDescBytes = std::size_t{16} << 20;

// Appends the description of t to out. False when the type is too deep or
// too large to describe (why says which).
bool encode_type(const Datatype* t, std::vector<uint8_t>& out, std::string* why);

// Rebuilds a committed type from a description that came from another
// process: every count, size and depth is checked. Returns nullptr and sets
// *why on a malformed description. The caller releases the result.
// why is kOutOfMemory when the description could not be built for want of
// memory (std::bad_alloc from the decoding is the same).
const Datatype* decode_type(const void* bytes, std::size_t n, std::string* why);
inline constexpr const char* kOutOfMemory = "out of memory";

}  // namespace adi3::rma
