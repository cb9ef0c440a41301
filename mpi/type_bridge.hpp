// segment/type_query.hpp and adi3/device.hpp both define adi3::kUndefined
// (with different types), so no file can include both: the queries the
// binding needs are reached through these wrappers instead.
#pragma once
#include <cstddef>

#include "adi3/error.hpp"

namespace adi3 {
class Datatype;
}

namespace adi3::mpi {

struct TypeEnvelope {
  int num_integers = 0, num_addresses = 0, num_datatypes = 0, combiner = 0;
};

ErrorClass query_envelope(const Datatype* t, TypeEnvelope* env);
ErrorClass query_contents(const Datatype* t, int max_integers, int max_addresses, int max_datatypes, int* integers,
                          std::ptrdiff_t* addresses, const Datatype** types);
// Counts, or -32766 (MPI_UNDEFINED) when bytes end inside an element.
ErrorClass query_elements(const Datatype* t, std::size_t bytes, long long* count);
ErrorClass query_count(const Datatype* t, std::size_t bytes, long long* count);
ErrorClass rename_type(Datatype* t, const char* name);

}  // namespace adi3::mpi
