// Datatype constructors, commit, free and dup (segment/ builds the types;
// this file checks handles and hands out new ones).
#include <vector>

#include "mpi/api.hpp"
#include "mpi/attributes.hpp"
#include "segment/type_create.hpp"

using namespace adi3;
using namespace adi3::mpi;

namespace {

// The result of a segment constructor: a new handle, or an error naming the
// constructor's complaint.
// (t is read only after the constructor ran: argument order is unspecified.)
int publish(Runtime& rt, ErrorClass c, Datatype* const* t, MPI_Datatype* out, const char* what) {
  if (c == ErrorClass::NoMem) return raise(c, "out of memory allocating the description of a new datatype");
  if (c != ErrorClass::Success) return raise(c, "%s", what);
  return add_type(rt, *t, out);
}

// Shared prologue: the old type and the output pointer.
int old_and_out(Runtime& rt, MPI_Datatype oldtype, const Datatype** old, MPI_Datatype* newtype) {
  if (!newtype) return raise(ErrorClass::Arg, "newtype is null");
  return get_type(rt, oldtype, old);
}

int check_array(int count, const void* a, const char* name) {
  if (count > 0 && !a) return raise(ErrorClass::Arg, "%s is null", name);
  return 0;
}

int check_blocklength(int blocklength) {
  return blocklength < 0 ? raise(ErrorClass::Arg, "invalid blocklength %d", blocklength) : 0;
}

// The shape every one-old-type constructor shares once its own arguments
// passed (e == 0): look up the old type, build, publish the new handle.
template <class Build>
int construct(Runtime& rt, int e, MPI_Datatype oldtype, MPI_Datatype* newtype, const char* what, Build build) {
  const Datatype* old = nullptr;
  if (!e) e = old_and_out(rt, oldtype, &old, newtype);
  Datatype* t = nullptr;
  if (!e) e = publish(rt, build(old, &t), &t, newtype, what);
  return e;
}

}  // namespace

ADI3_MPI_API(int, Type_contiguous, (int count, MPI_Datatype oldtype, MPI_Datatype* newtype),
             (count, oldtype, newtype)) {
  ADI3_MPI_ENTER();
  int e = check_count(count);
  e = construct(*rt, e, oldtype, newtype, "invalid arguments to MPI_Type_contiguous",
                [&](const Datatype* old, Datatype** t) { return type_contiguous(count, old, t); });
  return world_error(e, __func__);
}

ADI3_MPI_API(int, Type_vector, (int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype* newtype),
             (count, blocklength, stride, oldtype, newtype)) {
  ADI3_MPI_ENTER();
  int e = check_count(count);
  if (!e) e = check_blocklength(blocklength);
  e = construct(*rt, e, oldtype, newtype, "invalid arguments to MPI_Type_vector",
                [&](const Datatype* old, Datatype** t) { return type_vector(count, blocklength, stride, old, t); });
  return world_error(e, __func__);
}

ADI3_MPI_API(int, Type_create_hvector,
             (int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype* newtype),
             (count, blocklength, stride, oldtype, newtype)) {
  ADI3_MPI_ENTER();
  int e = check_count(count);
  if (!e) e = check_blocklength(blocklength);
  e = construct(*rt, e, oldtype, newtype, "invalid arguments to MPI_Type_create_hvector",
                [&](const Datatype* old, Datatype** t) { return type_hvector(count, blocklength, stride, old, t); });
  return world_error(e, __func__);
}

ADI3_MPI_API(int, Type_hvector,
             (int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype* newtype),
             (count, blocklength, stride, oldtype, newtype)) {
  return PMPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype);
}

ADI3_MPI_API(int, Type_indexed,
             (int count, const int blocklengths[], const int displacements[], MPI_Datatype oldtype,
              MPI_Datatype* newtype),
             (count, blocklengths, displacements, oldtype, newtype)) {
  ADI3_MPI_ENTER();
  int e = check_count(count);
  if (!e) e = check_array(count, blocklengths, "array_of_blocklengths");
  if (!e) e = check_array(count, displacements, "array_of_displacements");
  e = construct(
      *rt, e, oldtype, newtype, "invalid arguments to MPI_Type_indexed (a negative blocklength?)",
      [&](const Datatype* old, Datatype** t) { return type_indexed(count, blocklengths, displacements, old, t); });
  return world_error(e, __func__);
}

ADI3_MPI_API(int, Type_create_hindexed,
             (int count, const int blocklengths[], const MPI_Aint displacements[], MPI_Datatype oldtype,
              MPI_Datatype* newtype),
             (count, blocklengths, displacements, oldtype, newtype)) {
  ADI3_MPI_ENTER();
  int e = check_count(count);
  if (!e) e = check_array(count, blocklengths, "array_of_blocklengths");
  if (!e) e = check_array(count, displacements, "array_of_displacements");
  e = construct(
      *rt, e, oldtype, newtype, "invalid arguments to MPI_Type_create_hindexed (a negative blocklength?)",
      [&](const Datatype* old, Datatype** t) { return type_hindexed(count, blocklengths, displacements, old, t); });
  return world_error(e, __func__);
}

ADI3_MPI_API(int, Type_hindexed,
             (int count, int blocklengths[], MPI_Aint displacements[], MPI_Datatype oldtype, MPI_Datatype* newtype),
             (count, blocklengths, displacements, oldtype, newtype)) {
  return PMPI_Type_create_hindexed(count, blocklengths, displacements, oldtype, newtype);
}

ADI3_MPI_API(int, Type_create_indexed_block,
             (int count, int blocklength, const int displacements[], MPI_Datatype oldtype, MPI_Datatype* newtype),
             (count, blocklength, displacements, oldtype, newtype)) {
  ADI3_MPI_ENTER();
  int e = check_count(count);
  if (!e) e = check_blocklength(blocklength);
  if (!e) e = check_array(count, displacements, "array_of_displacements");
  e = construct(
      *rt, e, oldtype, newtype, "invalid arguments to MPI_Type_create_indexed_block",
      [&](const Datatype* old, Datatype** t) { return type_indexed_block(count, blocklength, displacements, old, t); });
  return world_error(e, __func__);
}

ADI3_MPI_API(int, Type_create_hindexed_block,
             (int count, int blocklength, const MPI_Aint displacements[], MPI_Datatype oldtype, MPI_Datatype* newtype),
             (count, blocklength, displacements, oldtype, newtype)) {
  ADI3_MPI_ENTER();
  int e = check_count(count);
  if (!e) e = check_blocklength(blocklength);
  if (!e) e = check_array(count, displacements, "array_of_displacements");
  e = construct(*rt, e, oldtype, newtype, "invalid arguments to MPI_Type_create_hindexed_block",
                [&](const Datatype* old, Datatype** t) {
                  return type_hindexed_block(count, blocklength, displacements, old, t);
                });
  return world_error(e, __func__);
}

ADI3_MPI_API(int, Type_create_struct,
             (int count, const int blocklengths[], const MPI_Aint displacements[], const MPI_Datatype types[],
              MPI_Datatype* newtype),
             (count, blocklengths, displacements, types, newtype)) {
  ADI3_MPI_ENTER();
  int e = check_count(count);
  if (!e) e = check_array(count, blocklengths, "array_of_blocklengths");
  if (!e) e = check_array(count, displacements, "array_of_displacements");
  if (!e) e = check_array(count, types, "array_of_types");
  if (!e && !newtype) e = raise(ErrorClass::Arg, "newtype is null");
  std::vector<const Datatype*> olds(static_cast<std::size_t>(count > 0 ? count : 0));
  for (int i = 0; !e && i < count; ++i) e = get_type(*rt, types[i], &olds[static_cast<std::size_t>(i)]);
  Datatype* t = nullptr;
  if (!e) {
    e = publish(*rt, type_struct(count, blocklengths, displacements, olds.data(), &t), &t, newtype,
                "invalid arguments to MPI_Type_create_struct (a negative blocklength?)");
  }
  return world_error(e, __func__);
}

ADI3_MPI_API(int, Type_struct,
             (int count, int blocklengths[], MPI_Aint displacements[], MPI_Datatype types[], MPI_Datatype* newtype),
             (count, blocklengths, displacements, types, newtype)) {
  return PMPI_Type_create_struct(count, blocklengths, displacements, types, newtype);
}

ADI3_MPI_API(int, Type_create_subarray,
             (int ndims, const int sizes[], const int subsizes[], const int starts[], int order, MPI_Datatype oldtype,
              MPI_Datatype* newtype),
             (ndims, sizes, subsizes, starts, order, oldtype, newtype)) {
  ADI3_MPI_ENTER();
  int e = 0;
  if (ndims <= 0) e = raise(ErrorClass::Arg, "invalid ndims %d: must be positive", ndims);
  if (!e) e = check_array(ndims, sizes, "array_of_sizes");
  if (!e) e = check_array(ndims, subsizes, "array_of_subsizes");
  if (!e) e = check_array(ndims, starts, "array_of_starts");
  if (!e && order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN) e = raise(ErrorClass::Arg, "invalid order %d", order);
  e = construct(
      *rt, e, oldtype, newtype, "invalid arguments to MPI_Type_create_subarray (sizes, subsizes and starts must fit)",
      [&](const Datatype* old, Datatype** t) { return type_subarray(ndims, sizes, subsizes, starts, order, old, t); });
  return world_error(e, __func__);
}

ADI3_MPI_API(int, Type_create_darray,
             (int size, int rank, int ndims, const int gsizes[], const int distribs[], const int dargs[],
              const int psizes[], int order, MPI_Datatype oldtype, MPI_Datatype* newtype),
             (size, rank, ndims, gsizes, distribs, dargs, psizes, order, oldtype, newtype)) {
  ADI3_MPI_ENTER();
  int e = 0;
  if (size <= 0 || rank < 0 || rank >= size) e = raise(ErrorClass::Arg, "invalid size %d or rank %d", size, rank);
  if (!e && ndims <= 0) e = raise(ErrorClass::Arg, "invalid ndims %d: must be positive", ndims);
  if (!e) e = check_array(ndims, gsizes, "array_of_gsizes");
  if (!e) e = check_array(ndims, distribs, "array_of_distribs");
  if (!e) e = check_array(ndims, dargs, "array_of_dargs");
  if (!e) e = check_array(ndims, psizes, "array_of_psizes");
  if (!e && order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN) e = raise(ErrorClass::Arg, "invalid order %d", order);
  e = construct(*rt, e, oldtype, newtype,
                "invalid arguments to MPI_Type_create_darray (distributions, dargs and psizes must agree)",
                [&](const Datatype* old, Datatype** t) {
                  return type_darray(size, rank, ndims, gsizes, distribs, dargs, psizes, order, old, t);
                });
  return world_error(e, __func__);
}

ADI3_MPI_API(int, Type_create_resized, (MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype* newtype),
             (oldtype, lb, extent, newtype)) {
  ADI3_MPI_ENTER();
  // The type's upper bound is lb + extent (MPI-3.1 4.1.7): it must be an MPI_Aint.
  MPI_Aint ub = 0;
  int e = __builtin_add_overflow(lb, extent, &ub)
              ? raise(ErrorClass::Arg, "lb %td + extent %td overflows MPI_Aint", lb, extent)
              : 0;
  e = construct(*rt, e, oldtype, newtype, "invalid arguments to MPI_Type_create_resized",
                [&](const Datatype* old, Datatype** t) { return type_resized(old, lb, extent, t); });
  return world_error(e, __func__);
}

ADI3_MPI_API(int, Type_dup, (MPI_Datatype oldtype, MPI_Datatype* newtype), (oldtype, newtype)) {
  ADI3_MPI_ENTER();
  const Datatype* old = nullptr;
  int e = old_and_out(*rt, oldtype, &old, newtype);
  Datatype* t = nullptr;
  if (!e) e = publish(*rt, type_dup(old, &t), &t, newtype, "cannot duplicate the datatype");
  if (e) return world_error(e, __func__);
  // Attributes follow their copy callbacks. A copy callback that fails (or
  // memory running out) fails the call: the new type is freed, the
  // attributes copied so far get their delete callbacks, no handle is left.
  try {
    AttrList from;
    {
      std::lock_guard<std::mutex> g(rt->attr_lock);
      auto it = rt->type_attrs.find(old);
      if (it != rt->type_attrs.end()) from = it->second;
    }
    if (!from.empty()) {
      AttrList to;
      e = copy_attrs(*rt, from, oldtype, &to);
      std::lock_guard<std::mutex> g(rt->attr_lock);
      rt->type_attrs[t] = std::move(to);
    }
  } catch (...) {
    (void)PMPI_Type_free(newtype);
    throw;
  }
  if (e) (void)PMPI_Type_free(newtype);
  return world_error(e, __func__);
}

ADI3_MPI_API(int, Type_commit, (MPI_Datatype * datatype), (datatype)) {
  ADI3_MPI_ENTER();
  if (!datatype) return world_error(raise(ErrorClass::Arg, "datatype is null"), __func__);
  const Datatype* t = nullptr;
  if (int e = get_type(*rt, *datatype, &t)) return world_error(e, __func__);
  if (t->is_predefined()) return MPI_SUCCESS;  // always committed
  Datatype* mut = *rt->types.get(handle_index(*datatype));
  if (ErrorClass c = type_commit(mut); c != ErrorClass::Success) {
    return world_error(raise(c, "cannot commit the datatype"), __func__);
  }
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Type_free, (MPI_Datatype * datatype), (datatype)) {
  ADI3_MPI_ENTER();
  if (!datatype) return world_error(raise(ErrorClass::Arg, "datatype is null"), __func__);
  const Datatype* t = nullptr;
  if (int e = get_type(*rt, *datatype, &t)) return world_error(e, __func__);
  if (t->is_predefined()) return world_error(raise(ErrorClass::Type, "predefined datatypes cannot be freed"), __func__);
  if (std::array<int, 3> f90; f90_params(*rt, *datatype, &f90)) {
    return world_error(
        raise(ErrorClass::Type, "the types of MPI_Type_create_f90_* are predefined: they cannot be freed"), __func__);
  }
  // Delete callbacks run while the type still exists.
  AttrList* list = nullptr;
  {
    std::lock_guard<std::mutex> g(rt->attr_lock);
    auto it = rt->type_attrs.find(t);
    if (it != rt->type_attrs.end()) list = &it->second;
  }
  if (list) {
    if (int e = delete_all_attrs(*rt, *list, *datatype)) return world_error(e, __func__);
    std::lock_guard<std::mutex> g(rt->attr_lock);
    rt->type_attrs.erase(t);
  }
  {
    std::lock_guard<std::mutex> g(rt->type_lock);
    auto it = rt->type_handles.find(t);
    if (it != rt->type_handles.end() && it->second == *datatype) rt->type_handles.erase(it);
  }
  Datatype* d = rt->types.remove(handle_index(*datatype));
  (void)type_free(&d);
  *datatype = MPI_DATATYPE_NULL;
  return MPI_SUCCESS;
}
