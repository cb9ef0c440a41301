// The MPI type constructors. Each returns ErrorClass::Success and a new
// type with one reference in *out, or an error class and leaves *out alone:
//   Count - a negative count;  Type - a null or invalid old type;
//   Arg   - a negative blocklength, bad sizes/starts, null arrays, or sizes
//           that overflow 63 bits;  Dims - bad ndims or process grid;
//   NoMem - out of memory. Nothing throws.
// The new type holds references to the old types, so the caller may
// release them at once. Commit it (Datatype::commit) before communication.
#pragma once
#include <cstddef>

#include "adi3/error.hpp"
#include "segment/datatype.hpp"

namespace adi3 {

// Values as in MPICH's mpi.h (they appear in get_contents integers).
inline constexpr int kOrderC = 56;
inline constexpr int kOrderFortran = 57;
inline constexpr int kDistributeBlock = 121;
inline constexpr int kDistributeCyclic = 122;
inline constexpr int kDistributeNone = 123;
inline constexpr int kDistributeDfltDarg = -49767;

[[nodiscard]] ErrorClass type_contiguous(int count, const Datatype* old, Datatype** out);
// stride in elements of old's extent.
[[nodiscard]] ErrorClass type_vector(int count, int blocklength, int stride, const Datatype* old, Datatype** out);
// stride in bytes.
[[nodiscard]] ErrorClass type_hvector(int count, int blocklength, std::ptrdiff_t stride, const Datatype* old,
                                      Datatype** out);
// displacements in elements of old's extent.
[[nodiscard]] ErrorClass type_indexed(int count, const int* blocklengths, const int* displacements, const Datatype* old,
                                      Datatype** out);
// displacements in bytes.
[[nodiscard]] ErrorClass type_hindexed(int count, const int* blocklengths, const std::ptrdiff_t* displacements,
                                       const Datatype* old, Datatype** out);
[[nodiscard]] ErrorClass type_indexed_block(int count, int blocklength, const int* displacements, const Datatype* old,
                                            Datatype** out);
[[nodiscard]] ErrorClass type_hindexed_block(int count, int blocklength, const std::ptrdiff_t* displacements,
                                             const Datatype* old, Datatype** out);
[[nodiscard]] ErrorClass type_struct(int count, const int* blocklengths, const std::ptrdiff_t* displacements,
                                     const Datatype* const* types, Datatype** out);
// order: kOrderC or kOrderFortran.
[[nodiscard]] ErrorClass type_subarray(int ndims, const int* sizes, const int* subsizes, const int* starts, int order,
                                       const Datatype* old, Datatype** out);
// distribs: kDistribute{Block,Cyclic,None}; dargs may be kDistributeDfltDarg.
[[nodiscard]] ErrorClass type_darray(int size, int rank, int ndims, const int* gsizes, const int* distribs,
                                     const int* dargs, const int* psizes, int order, const Datatype* old,
                                     Datatype** out);
[[nodiscard]] ErrorClass type_resized(const Datatype* old, std::ptrdiff_t lb, std::ptrdiff_t extent, Datatype** out);
[[nodiscard]] ErrorClass type_dup(const Datatype* old, Datatype** out);

// MPI_Type_commit / MPI_Type_free (free releases the caller's reference
// and nulls the handle; predefined types are refused with Type).
[[nodiscard]] ErrorClass type_commit(Datatype* t);
[[nodiscard]] ErrorClass type_free(Datatype** t);
[[nodiscard]] ErrorClass type_free(const Datatype** t);

}  // namespace adi3
