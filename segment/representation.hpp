// Message representations (the ADI's data-representation hooks): how the
// basic elements of a typemap look in a packed stream. "native" is the
// memory image (packing is a copy); "external32" is MPI's portable format
// (big-endian, fixed sizes). A heterogeneous peer is served by packing in a
// representation both sides know.
#pragma once
#include <cstddef>
#include <string_view>

#include "segment/builtin.hpp"

namespace adi3 {

class Representation {
 public:
  virtual ~Representation() = default;
  virtual const char* name() const = 0;
  // True when b's stream form is its native bytes: such runs are copied
  // as they are and may merge with neighbouring runs.
  virtual bool is_identity(Builtin b) const = 0;
  // Stream bytes of one element of basic type b.
  virtual std::size_t stream_size(Builtin b) const = 0;
  // Converts n elements of basic type b between memory and the stream.
  // Neither buffer needs to be aligned.
  virtual void encode(Builtin b, const void* mem, void* stream, std::size_t n) const = 0;
  virtual void decode(Builtin b, const void* stream, void* mem, std::size_t n) const = 0;

  static const Representation& native();
  static const Representation& external32();
  // "native" or "external32" (MPI datarep names); nullptr otherwise.
  static const Representation* find(std::string_view datarep);
};

namespace detail {
// Native sizes, but every basic type is its own (identity) format: used to
// count basic elements (get_elements).
const Representation& native_typed();
}  // namespace detail

}  // namespace adi3
