#include "mpi/type_bridge.hpp"

#include "segment/type_query.hpp"

namespace adi3::mpi {

ErrorClass query_envelope(const Datatype* t, TypeEnvelope* env) {
  Envelope e;
  ErrorClass c = type_get_envelope(t, &e);
  env->num_integers = e.num_integers;
  env->num_addresses = e.num_addresses;
  env->num_datatypes = e.num_datatypes;
  env->combiner = static_cast<int>(e.combiner);
  return c;
}

ErrorClass query_contents(const Datatype* t, int max_integers, int max_addresses, int max_datatypes, int* integers,
                          std::ptrdiff_t* addresses, const Datatype** types) {
  return type_get_contents(t, max_integers, max_addresses, max_datatypes, integers, addresses, types);
}

ErrorClass query_elements(const Datatype* t, std::size_t bytes, long long* count) {
  return type_get_elements(t, bytes, count);
}

ErrorClass query_count(const Datatype* t, std::size_t bytes, long long* count) {
  return type_get_count(t, bytes, count);
}

ErrorClass rename_type(Datatype* t, const char* name) { return type_set_name(t, name); }

}  // namespace adi3::mpi
