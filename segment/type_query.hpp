// Queries on datatypes: envelope/contents (decoding), element counts,
// names, and extents in MPI's calling style.
#pragma once
#include <cstddef>
#include <string>

#include "adi3/error.hpp"
#include "adi3/types.hpp"  // kUndefined
#include "segment/datatype.hpp"

namespace adi3 {

struct Envelope {
  int num_integers = 0;
  int num_addresses = 0;
  int num_datatypes = 0;
  Combiner combiner = Combiner::kNamed;
};

// MPI_Type_get_envelope.
[[nodiscard]] ErrorClass type_get_envelope(const Datatype* t, Envelope* env);

// MPI_Type_get_contents: the arguments t was created with. Fails with Arg
// for a predefined type or arrays smaller than the envelope's counts.
// Derived types in `types` come with a new reference the caller must
// release (type_free), as MPI specifies; predefined ones need no freeing.
[[nodiscard]] ErrorClass type_get_contents(const Datatype* t, int max_integers, int max_addresses, int max_datatypes,
                                           int* integers, std::ptrdiff_t* addresses, const Datatype** types);

// MPI_Get_elements for a received byte count: the basic elements in
// `bytes` of a stream of t, or kUndefined when `bytes` ends inside a basic
// element.
[[nodiscard]] ErrorClass type_get_elements(const Datatype* t, std::size_t bytes, long long* count);
// MPI_Status_set_elements: the stream bytes of the first `elements` basic
// elements of a stream of t (so get_elements gives `elements` back).
[[nodiscard]] ErrorClass type_elements_bytes(const Datatype* t, long long elements, std::size_t* bytes);
// MPI_Get_count: whole elements of t in `bytes`, or kUndefined.
[[nodiscard]] ErrorClass type_get_count(const Datatype* t, std::size_t bytes, long long* count);

// MPI_Type_set_name / MPI_Type_get_name (MPI_MAX_OBJECT_NAME is 128:
// longer names are truncated to 127 characters). Renaming a predefined
// type fails with Type: they are immutable constants here.
[[nodiscard]] ErrorClass type_set_name(Datatype* t, const char* name);
[[nodiscard]] ErrorClass type_get_name(const Datatype* t, std::string* name);

}  // namespace adi3
