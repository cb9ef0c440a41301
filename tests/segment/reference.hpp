// A deliberately naive reference for datatype tests: flattens a type,
// through get_envelope/get_contents only, into its full typemap (every
// basic entry with its offset), and derives bounds and packed streams
// from that list. It shares no code with the engine.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "segment/datatype.hpp"

namespace adi3::ref {

struct Entry {
  std::ptrdiff_t off;
  Builtin type;  // a basic (non-pair) type
  std::size_t size;
};

struct TypeMap {
  std::vector<Entry> entries;  // in typemap (stream) order
  std::ptrdiff_t lb = 0, ub = 0;
  bool sticky_lb = false, sticky_ub = false;
  bool contributes = false;  // has data or explicit bounds
  std::size_t align = 1;

  std::ptrdiff_t extent() const { return ub - lb; }
  std::size_t size() const;
  std::ptrdiff_t true_lb() const;
  std::ptrdiff_t true_ub() const;
};

TypeMap flatten(const Datatype* t);

// Entries of `count` elements of `m` (element k shifted by k * extent).
std::vector<Entry> replicate(const TypeMap& m, std::size_t count);

// The native packed stream of entries read from `base`.
std::vector<unsigned char> pack(const std::vector<Entry>& es, const unsigned char* base);
// The external32 stream (big-endian; long double as IEEE binary128).
std::vector<unsigned char> pack_external32(const std::vector<Entry>& es, const unsigned char* base);
// Writes a stream back to the entries at `base`.
void unpack(const std::vector<Entry>& es, const unsigned char* stream, unsigned char* base);

// get_elements of the reference: basic entries wholly inside `bytes`, or
// -1 if `bytes` ends inside an entry.
long long elements(const std::vector<Entry>& es, std::size_t bytes);

// True if no two entries share a byte.
bool disjoint(std::vector<Entry> es);

// The C layout the tests expect for each predefined type.
std::size_t c_size(Builtin b);

}  // namespace adi3::ref
