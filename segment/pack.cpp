// MPI_Pack-style helpers on top of Segment.
#include "segment/pack.hpp"

#include <cstring>
#include <string_view>

#include "adi3/sizes.hpp"
#include "segment/copy_ops.hpp"
#include "segment/program.hpp"
#include "segment/representation.hpp"
#include "segment/segment.hpp"
#include "segment/type_build.hpp"
#include "segment/whole.hpp"

namespace adi3 {
namespace {

ErrorClass check_type(const Datatype* type) {
  if (!type || !type->is_committed()) return ErrorClass::Type;
  return ErrorClass::Success;
}

// count elements of `size` bytes each, or Count when that overflows.
ErrorClass checked_size(std::size_t count, std::size_t size, std::size_t* out) {
  return checked_bytes(count, size, out) ? ErrorClass::Success : ErrorClass::Count;
}

const Representation* external(const char* datarep) {
  if (!datarep || std::string_view(datarep) != "external32") return nullptr;
  return &Representation::external32();
}

// MPI_Pack / MPI_Unpack in the native representation: one pass over the
// committed program (no Segment: nothing to resume). Io is the packed
// side (char for pack, const char for unpack).
template <class Op, class Io>
ErrorClass native_whole(const void* userbuf, std::size_t count, const Datatype* type, Io* packed,
                        std::size_t packed_size, std::size_t* position) {
  if (ErrorClass e = check_type(type); e != ErrorClass::Success) return e;
  if (!position || (!packed && packed_size)) return ErrorClass::Arg;
  std::size_t bytes = 0;
  if (ErrorClass e = checked_size(count, type->size(), &bytes); e != ErrorClass::Success) return e;
  if (*position > packed_size || bytes > packed_size - *position) return ErrorClass::Truncate;
  if (bytes == 0) return ErrorClass::Success;
  const auto mem = reinterpret_cast<detail::Addr>(userbuf);
  Io* at = packed + *position;
  if (type->is_contiguous()) {
    char* data = detail::ptr(detail::add(mem, type->true_lb()));
    if constexpr (Op::kGather) {
      std::memcpy(at, data, bytes);
    } else {
      std::memcpy(data, at, bytes);
    }
  } else {
    // A predefined pair type compiles its program on first use.
    const detail::Program* prog = nullptr;
    if (ErrorClass e = detail::no_throw([&] {
          prog = &type->native_program();
          return ErrorClass::Success;
        });
        e != ErrorClass::Success) {
      return e;
    }
    Op op{at};
    detail::walk_whole(*prog, mem, count, op);
  }
  *position += bytes;
  return ErrorClass::Success;
}

ErrorClass do_pack(const Representation& rep, const void* inbuf, std::size_t incount, const Datatype* type,
                   void* outbuf, std::size_t outsize, std::size_t* position) {
  if (ErrorClass e = check_type(type); e != ErrorClass::Success) return e;
  if (!position || (!outbuf && outsize)) return ErrorClass::Arg;
  std::size_t bytes = 0;
  if (ErrorClass e = checked_size(incount, type->size(), &bytes); e != ErrorClass::Success) return e;
  return detail::no_throw([&] {
    Segment seg(const_cast<void*>(inbuf), incount, type, rep);
    if (*position > outsize || seg.size() > outsize - *position) return ErrorClass::Truncate;
    *position += seg.pack(0, seg.size(), static_cast<char*>(outbuf) + *position);
    return ErrorClass::Success;
  });
}

ErrorClass do_unpack(const Representation& rep, const void* inbuf, std::size_t insize, std::size_t* position,
                     void* outbuf, std::size_t outcount, const Datatype* type) {
  if (ErrorClass e = check_type(type); e != ErrorClass::Success) return e;
  if (!position || (!inbuf && insize)) return ErrorClass::Arg;
  std::size_t bytes = 0;
  if (ErrorClass e = checked_size(outcount, type->size(), &bytes); e != ErrorClass::Success) return e;
  return detail::no_throw([&] {
    Segment seg(outbuf, outcount, type, rep);
    if (*position > insize || seg.size() > insize - *position) return ErrorClass::Truncate;
    *position += seg.unpack(0, seg.size(), static_cast<const char*>(inbuf) + *position);
    return ErrorClass::Success;
  });
}

}  // namespace

ErrorClass pack(const void* inbuf, std::size_t incount, const Datatype* type, void* outbuf, std::size_t outsize,
                std::size_t* position) {
  return native_whole<detail::PackOp>(inbuf, incount, type, static_cast<char*>(outbuf), outsize, position);
}

ErrorClass unpack(const void* inbuf, std::size_t insize, std::size_t* position, void* outbuf, std::size_t outcount,
                  const Datatype* type) {
  return native_whole<detail::UnpackOp>(outbuf, outcount, type, static_cast<const char*>(inbuf), insize, position);
}

ErrorClass pack_size(std::size_t incount, const Datatype* type, std::size_t* size) {
  if (!type) return ErrorClass::Type;
  if (!size) return ErrorClass::Arg;
  return checked_size(incount, type->size(), size);
}

ErrorClass pack_external(const char* datarep, const void* inbuf, std::size_t incount, const Datatype* type,
                         void* outbuf, std::size_t outsize, std::size_t* position) {
  const Representation* rep = external(datarep);
  if (!rep) return ErrorClass::Arg;
  return do_pack(*rep, inbuf, incount, type, outbuf, outsize, position);
}

ErrorClass unpack_external(const char* datarep, const void* inbuf, std::size_t insize, std::size_t* position,
                           void* outbuf, std::size_t outcount, const Datatype* type) {
  const Representation* rep = external(datarep);
  if (!rep) return ErrorClass::Arg;
  return do_unpack(*rep, inbuf, insize, position, outbuf, outcount, type);
}

ErrorClass pack_external_size(const char* datarep, std::size_t incount, const Datatype* type, std::size_t* size) {
  const Representation* rep = external(datarep);
  if (!rep) return ErrorClass::Arg;
  if (!type) return ErrorClass::Type;
  if (!size) return ErrorClass::Arg;
  return detail::no_throw([&] { return checked_size(incount, type->program_for(*rep)->size, size); });
}

}  // namespace adi3
