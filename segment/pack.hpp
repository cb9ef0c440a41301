// MPI_Pack / MPI_Unpack / MPI_Pack_size and the external32 variants.
// `position` is the byte offset in the packed buffer, advanced by each
// call. Errors: Type (null or uncommitted type), Arg (null pointers,
// unknown datarep), Truncate (the packed buffer is too small), Count (count *
// size overflows), NoMem.
#pragma once
#include <cstddef>

#include "adi3/error.hpp"
#include "segment/datatype.hpp"

namespace adi3 {

[[nodiscard]] ErrorClass pack(const void* inbuf, std::size_t incount, const Datatype* type, void* outbuf,
                              std::size_t outsize, std::size_t* position);
[[nodiscard]] ErrorClass unpack(const void* inbuf, std::size_t insize, std::size_t* position, void* outbuf,
                                std::size_t outcount, const Datatype* type);
// An upper bound on the bytes pack() needs (here: exactly incount * size).
[[nodiscard]] ErrorClass pack_size(std::size_t incount, const Datatype* type, std::size_t* size);

// datarep must be "external32".
[[nodiscard]] ErrorClass pack_external(const char* datarep, const void* inbuf, std::size_t incount,
                                       const Datatype* type, void* outbuf, std::size_t outsize, std::size_t* position);
[[nodiscard]] ErrorClass unpack_external(const char* datarep, const void* inbuf, std::size_t insize,
                                         std::size_t* position, void* outbuf, std::size_t outcount,
                                         const Datatype* type);
[[nodiscard]] ErrorClass pack_external_size(const char* datarep, std::size_t incount, const Datatype* type,
                                            std::size_t* size);

}  // namespace adi3
