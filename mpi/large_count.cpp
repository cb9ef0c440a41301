// Large-count (_c) forms of the status, datatype-query and datatype-
// constructor calls. The queries answer in MPI_Count directly. segment/'s
// constructors take int counts (a bigger type is built by nesting), so the
// _c constructors check that every count fits and then run the int form:
// one implementation, with ERR_COUNT naming a count that does not fit.
// (Send/receive, collective and pack _c forms share their int forms' bodies
// in p2p.cpp, coll_*.cpp, neighbor.cpp and pack.cpp.)
#include <climits>
#include <vector>

#include "mpi/api.hpp"
#include "segment/type_query.hpp"

using namespace adi3;
using namespace adi3::mpi;

namespace {

// value must fit in an int (what names the argument).
int fits(MPI_Count value, const char* what) {
  if (value >= INT_MIN && value <= INT_MAX) return 0;
  return raise(ErrorClass::Count, "%s %lld does not fit in an int, which this datatype constructor needs", what, value);
}

// An array of n counts as ints.
int ints(MPI_Count n, const MPI_Count* a, const char* what, std::vector<int>* out) {
  if (n > 0 && !a) return raise(ErrorClass::Arg, "%s is null", what);
  out->resize(static_cast<std::size_t>(n > 0 ? n : 0));
  for (MPI_Count i = 0; i < n; ++i) {
    if (int e = fits(a[i], what)) return e;
    (*out)[static_cast<std::size_t>(i)] = static_cast<int>(a[i]);
  }
  return 0;
}

// An array of n MPI_Count displacements as MPI_Aint (the same width here).
const MPI_Aint* aints(const MPI_Count* a) {
  static_assert(sizeof(MPI_Aint) == sizeof(MPI_Count), "MPI_Aint and MPI_Count differ in width");
  return reinterpret_cast<const MPI_Aint*>(a);
}

// The error of a _c constructor's argument check, through MPI_COMM_WORLD's handler.
#define ADI3_CHECK(call)                                        \
  do {                                                          \
    if (g_runtime == nullptr) return not_initialized(__func__); \
    if (int e_ = (call)) return world_error(e_, __func__);      \
  } while (0)

}  // namespace

ADI3_MPI_API(int, Get_count_c, (const MPI_Status* status, MPI_Datatype dt, MPI_Count* count), (status, dt, count)) {
  ADI3_MPI_ENTER();
  const Datatype* t = nullptr;
  if (ignored(status)) return world_error(raise(ErrorClass::Arg, "status is null or MPI_STATUS_IGNORE"), __func__);
  if (int e = get_type(*rt, dt, &t)) return world_error(e, __func__);
  if (!count) return world_error(raise(ErrorClass::Arg, "count is null"), __func__);
  long long n = 0;
  if (ErrorClass c = type_get_count(t, status_bytes(status), &n); c != ErrorClass::Success) {
    return world_error(raise(c, "cannot count the datatype in the status"), __func__);
  }
  *count = n;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Get_elements_c, (const MPI_Status* status, MPI_Datatype dt, MPI_Count* count), (status, dt, count)) {
  return PMPI_Get_elements_x(status, dt, count);
}

ADI3_MPI_API(int, Status_set_elements_c, (MPI_Status * status, MPI_Datatype dt, MPI_Count count), (status, dt, count)) {
  return PMPI_Status_set_elements_x(status, dt, count);
}

ADI3_MPI_API(int, Type_size_c, (MPI_Datatype dt, MPI_Count* size), (dt, size)) { return PMPI_Type_size_x(dt, size); }

ADI3_MPI_API(int, Type_get_extent_c, (MPI_Datatype dt, MPI_Count* lb, MPI_Count* extent), (dt, lb, extent)) {
  return PMPI_Type_get_extent_x(dt, lb, extent);
}

ADI3_MPI_API(int, Type_get_true_extent_c, (MPI_Datatype dt, MPI_Count* true_lb, MPI_Count* true_extent),
             (dt, true_lb, true_extent)) {
  return PMPI_Type_get_true_extent_x(dt, true_lb, true_extent);
}

ADI3_MPI_API(int, Type_contiguous_c, (MPI_Count count, MPI_Datatype oldtype, MPI_Datatype* newtype),
             (count, oldtype, newtype)) {
  ADI3_CHECK(fits(count, "count"));
  return PMPI_Type_contiguous(static_cast<int>(count), oldtype, newtype);
}

ADI3_MPI_API(int, Type_vector_c,
             (MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype, MPI_Datatype* newtype),
             (count, blocklength, stride, oldtype, newtype)) {
  ADI3_CHECK(fits(count, "count"));
  ADI3_CHECK(fits(blocklength, "blocklength"));
  ADI3_CHECK(fits(stride, "stride"));
  return PMPI_Type_vector(static_cast<int>(count), static_cast<int>(blocklength), static_cast<int>(stride), oldtype,
                          newtype);
}

ADI3_MPI_API(int, Type_create_hvector_c,
             (MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype, MPI_Datatype* newtype),
             (count, blocklength, stride, oldtype, newtype)) {
  ADI3_CHECK(fits(count, "count"));
  ADI3_CHECK(fits(blocklength, "blocklength"));
  return PMPI_Type_create_hvector(static_cast<int>(count), static_cast<int>(blocklength), static_cast<MPI_Aint>(stride),
                                  oldtype, newtype);
}

ADI3_MPI_API(int, Type_indexed_c,
             (MPI_Count count, const MPI_Count blocklengths[], const MPI_Count displacements[], MPI_Datatype oldtype,
              MPI_Datatype* newtype),
             (count, blocklengths, displacements, oldtype, newtype)) {
  std::vector<int> b, d;
  ADI3_CHECK(fits(count, "count"));
  ADI3_CHECK(ints(count, blocklengths, "array_of_blocklengths", &b));
  ADI3_CHECK(ints(count, displacements, "array_of_displacements", &d));
  return PMPI_Type_indexed(static_cast<int>(count), b.data(), d.data(), oldtype, newtype);
}

ADI3_MPI_API(int, Type_create_hindexed_c,
             (MPI_Count count, const MPI_Count blocklengths[], const MPI_Count displacements[], MPI_Datatype oldtype,
              MPI_Datatype* newtype),
             (count, blocklengths, displacements, oldtype, newtype)) {
  std::vector<int> b;
  ADI3_CHECK(fits(count, "count"));
  ADI3_CHECK(ints(count, blocklengths, "array_of_blocklengths", &b));
  return PMPI_Type_create_hindexed(static_cast<int>(count), b.data(), aints(displacements), oldtype, newtype);
}

ADI3_MPI_API(int, Type_create_indexed_block_c,
             (MPI_Count count, MPI_Count blocklength, const MPI_Count displacements[], MPI_Datatype oldtype,
              MPI_Datatype* newtype),
             (count, blocklength, displacements, oldtype, newtype)) {
  std::vector<int> d;
  ADI3_CHECK(fits(count, "count"));
  ADI3_CHECK(fits(blocklength, "blocklength"));
  ADI3_CHECK(ints(count, displacements, "array_of_displacements", &d));
  return PMPI_Type_create_indexed_block(static_cast<int>(count), static_cast<int>(blocklength), d.data(), oldtype,
                                        newtype);
}

ADI3_MPI_API(int, Type_create_hindexed_block_c,
             (MPI_Count count, MPI_Count blocklength, const MPI_Count displacements[], MPI_Datatype oldtype,
              MPI_Datatype* newtype),
             (count, blocklength, displacements, oldtype, newtype)) {
  ADI3_CHECK(fits(count, "count"));
  ADI3_CHECK(fits(blocklength, "blocklength"));
  return PMPI_Type_create_hindexed_block(static_cast<int>(count), static_cast<int>(blocklength), aints(displacements),
                                         oldtype, newtype);
}

ADI3_MPI_API(int, Type_create_struct_c,
             (MPI_Count count, const MPI_Count blocklengths[], const MPI_Count displacements[],
              const MPI_Datatype types[], MPI_Datatype* newtype),
             (count, blocklengths, displacements, types, newtype)) {
  std::vector<int> b;
  ADI3_CHECK(fits(count, "count"));
  ADI3_CHECK(ints(count, blocklengths, "array_of_blocklengths", &b));
  return PMPI_Type_create_struct(static_cast<int>(count), b.data(), aints(displacements), types, newtype);
}

ADI3_MPI_API(int, Type_create_subarray_c,
             (int ndims, const MPI_Count sizes[], const MPI_Count subsizes[], const MPI_Count starts[], int order,
              MPI_Datatype oldtype, MPI_Datatype* newtype),
             (ndims, sizes, subsizes, starts, order, oldtype, newtype)) {
  std::vector<int> n, sub, st;
  ADI3_CHECK(ints(ndims, sizes, "array_of_sizes", &n));
  ADI3_CHECK(ints(ndims, subsizes, "array_of_subsizes", &sub));
  ADI3_CHECK(ints(ndims, starts, "array_of_starts", &st));
  return PMPI_Type_create_subarray(ndims, n.data(), sub.data(), st.data(), order, oldtype, newtype);
}

ADI3_MPI_API(int, Type_create_resized_c, (MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent, MPI_Datatype* newtype),
             (oldtype, lb, extent, newtype)) {
  return PMPI_Type_create_resized(oldtype, static_cast<MPI_Aint>(lb), static_cast<MPI_Aint>(extent), newtype);
}
