// Datatype queries: size, extents, envelope/contents decoding and names.
#include <climits>
#include <cstring>
#include <vector>

#include "mpi/api.hpp"
#include "segment/type_query.hpp"

using namespace adi3;
using namespace adi3::mpi;

namespace {

int query_type(const char* fn, MPI_Datatype dt, const Datatype** t, const void* out1, const void* out2 = "") {
  Runtime* rt = g_runtime;
  if (!rt) return not_initialized(fn);
  if (int e = get_type(*rt, dt, t)) return e;
  if (!out1 || !out2) return raise(ErrorClass::Arg, "an output argument is null");
  return 0;
}

}  // namespace

ADI3_MPI_API(int, Type_size, (MPI_Datatype dt, int* size), (dt, size)) {
  const Datatype* t = nullptr;
  if (int e = query_type(__func__, dt, &t, size)) return world_error(e, __func__);
  *size = t->size() > INT_MAX ? MPI_UNDEFINED : static_cast<int>(t->size());
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Type_size_x, (MPI_Datatype dt, MPI_Count* size), (dt, size)) {
  const Datatype* t = nullptr;
  if (int e = query_type(__func__, dt, &t, size)) return world_error(e, __func__);
  *size = static_cast<MPI_Count>(t->size());
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Type_get_extent, (MPI_Datatype dt, MPI_Aint* lb, MPI_Aint* extent), (dt, lb, extent)) {
  const Datatype* t = nullptr;
  if (int e = query_type(__func__, dt, &t, lb, extent)) return world_error(e, __func__);
  *lb = t->lb();
  *extent = t->extent();
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Type_get_extent_x, (MPI_Datatype dt, MPI_Count* lb, MPI_Count* extent), (dt, lb, extent)) {
  const Datatype* t = nullptr;
  if (int e = query_type(__func__, dt, &t, lb, extent)) return world_error(e, __func__);
  *lb = t->lb();
  *extent = t->extent();
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Type_get_true_extent, (MPI_Datatype dt, MPI_Aint* true_lb, MPI_Aint* true_extent),
             (dt, true_lb, true_extent)) {
  const Datatype* t = nullptr;
  if (int e = query_type(__func__, dt, &t, true_lb, true_extent)) return world_error(e, __func__);
  *true_lb = t->true_lb();
  *true_extent = t->true_extent();
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Type_get_true_extent_x, (MPI_Datatype dt, MPI_Count* true_lb, MPI_Count* true_extent),
             (dt, true_lb, true_extent)) {
  const Datatype* t = nullptr;
  if (int e = query_type(__func__, dt, &t, true_lb, true_extent)) return world_error(e, __func__);
  *true_lb = t->true_lb();
  *true_extent = t->true_extent();
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Type_extent, (MPI_Datatype dt, MPI_Aint* extent), (dt, extent)) {
  const Datatype* t = nullptr;
  if (int e = query_type(__func__, dt, &t, extent)) return world_error(e, __func__);
  *extent = t->extent();
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Type_lb, (MPI_Datatype dt, MPI_Aint* displacement), (dt, displacement)) {
  const Datatype* t = nullptr;
  if (int e = query_type(__func__, dt, &t, displacement)) return world_error(e, __func__);
  *displacement = t->lb();
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Type_ub, (MPI_Datatype dt, MPI_Aint* displacement), (dt, displacement)) {
  const Datatype* t = nullptr;
  if (int e = query_type(__func__, dt, &t, displacement)) return world_error(e, __func__);
  *displacement = t->ub();
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Type_get_envelope,
             (MPI_Datatype dt, int* num_integers, int* num_addresses, int* num_datatypes, int* combiner),
             (dt, num_integers, num_addresses, num_datatypes, combiner)) {
  const Datatype* t = nullptr;
  if (int e = query_type(__func__, dt, &t, num_integers, num_addresses)) return world_error(e, __func__);
  if (!num_datatypes || !combiner) return world_error(raise(ErrorClass::Arg, "an output argument is null"), __func__);
  if (std::array<int, 3> f90; f90_params(*g_runtime, dt, &f90)) {
    *combiner = f90[0];
    *num_integers = f90[0] == MPI_COMBINER_F90_INTEGER ? 1 : 2;
    *num_addresses = *num_datatypes = 0;
    return MPI_SUCCESS;
  }
  Envelope env;
  if (ErrorClass c = type_get_envelope(t, &env); c != ErrorClass::Success) {
    return world_error(raise(c, "cannot decode the datatype"), __func__);
  }
  *num_integers = env.num_integers;
  *num_addresses = env.num_addresses;
  *num_datatypes = env.num_datatypes;
  *combiner = static_cast<int>(env.combiner);
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Type_get_contents,
             (MPI_Datatype dt, int max_integers, int max_addresses, int max_datatypes, int integers[],
              MPI_Aint addresses[], MPI_Datatype datatypes[]),
             (dt, max_integers, max_addresses, max_datatypes, integers, addresses, datatypes)) {
  ADI3_MPI_ENTER();
  const Datatype* t = nullptr;
  if (int e = get_type(*rt, dt, &t)) return world_error(e, __func__);
  if (t->is_predefined()) {
    return world_error(raise(ErrorClass::Arg, "MPI_Type_get_contents of a predefined datatype"), __func__);
  }
  if (max_integers < 0 || max_addresses < 0 || max_datatypes < 0) {
    return world_error(raise(ErrorClass::Arg, "negative array sizes"), __func__);
  }
  if ((max_integers > 0 && !integers) || (max_addresses > 0 && !addresses) || (max_datatypes > 0 && !datatypes)) {
    return world_error(raise(ErrorClass::Arg, "an output array is null"), __func__);
  }
  if (std::array<int, 3> f90; f90_params(*rt, dt, &f90)) {
    const bool integer = f90[0] == MPI_COMBINER_F90_INTEGER;
    if (max_integers < (integer ? 1 : 2)) {
      return world_error(raise(ErrorClass::Arg, "the arrays are smaller than MPI_Type_get_envelope's counts"),
                         __func__);
    }
    integers[0] = integer ? f90[2] : f90[1];
    if (!integer) integers[1] = f90[2];
    return MPI_SUCCESS;
  }
  std::vector<const Datatype*> types(static_cast<std::size_t>(max_datatypes));
  if (ErrorClass c =
          type_get_contents(t, max_integers, max_addresses, max_datatypes, integers, addresses, types.data());
      c != ErrorClass::Success) {
    return world_error(raise(c, "the arrays are smaller than MPI_Type_get_envelope's counts"), __func__);
  }
  Envelope env;
  (void)type_get_envelope(t, &env);
  for (int i = 0; i < env.num_datatypes; ++i) {
    const Datatype* d = types[static_cast<std::size_t>(i)];
    if (d->is_predefined()) {
      datatypes[i] = type_handle(*rt, d);
    } else if (MPI_Datatype f = f90_handle(*rt, d); f != MPI_DATATYPE_NULL) {
      d->release();  // (taken for a new handle) an f90 type is predefined: its own handle
      datatypes[i] = f;
    } else if (int e = add_type(*rt, const_cast<Datatype*>(d), &datatypes[i])) {
      return world_error(e, __func__);
    }
  }
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Type_set_name, (MPI_Datatype dt, const char* type_name), (dt, type_name)) {
  ADI3_MPI_ENTER();
  const Datatype* t = nullptr;
  if (int e = get_type(*rt, dt, &t)) return world_error(e, __func__);
  if (!type_name) return world_error(raise(ErrorClass::Arg, "type_name is null"), __func__);
  std::string name(type_name, strnlen(type_name, MPI_MAX_OBJECT_NAME - 1));
  if (t->is_predefined()) {
    std::lock_guard<std::mutex> g(rt->type_lock);
    rt->builtin_type_names[dt] = name;
    return MPI_SUCCESS;
  }
  (void)type_set_name(*rt->types.get(handle_index(dt)), name.c_str());
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Type_get_name, (MPI_Datatype dt, char* type_name, int* resultlen), (dt, type_name, resultlen)) {
  ADI3_MPI_ENTER();
  const Datatype* t = nullptr;
  if (int e = get_type(*rt, dt, &t)) return world_error(e, __func__);
  if (!type_name || !resultlen) return world_error(raise(ErrorClass::Arg, "type_name or resultlen is null"), __func__);
  std::string name = t->name();
  if (t->is_predefined()) {
    std::lock_guard<std::mutex> g(rt->type_lock);
    auto it = rt->builtin_type_names.find(dt);
    if (it != rt->builtin_type_names.end()) name = it->second;
  }
  std::memcpy(type_name, name.c_str(), name.size() + 1);
  *resultlen = static_cast<int>(name.size());
  return MPI_SUCCESS;
}
