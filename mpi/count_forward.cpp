// Large-count (_c) forms whose int forms' paths take int counts all the way
// (one-sided operations and window creation, Isendrecv, external32 packing,
// Reduce_local, darray, the datatype envelope): they forward to the int
// form, and a count beyond INT_MAX is MPI_ERR_COUNT naming it, reported
// through the handler of the call's object.
#include <climits>

#include "mpi/api.hpp"

using namespace adi3;
using namespace adi3::mpi;

namespace {

bool fits(MPI_Count c) { return c >= INT_MIN && c <= INT_MAX; }

int too_large(const char* what, MPI_Count c) {
  return raise(ErrorClass::Count, "%s %lld does not fit the int this path takes", what, static_cast<long long>(c));
}

// 0 when every count fits, else the error for the first that does not.
int check_counts(std::initializer_list<std::pair<const char*, MPI_Count>> counts) {
  for (const auto& [what, c] : counts) {
    if (!fits(c)) return too_large(what, c);
  }
  return 0;
}

int on_win(MPI_Win win, int code) {
  PMPI_Win_call_errhandler(win, code);
  return code;
}
int on_comm(MPI_Comm comm, int code) {
  PMPI_Comm_call_errhandler(comm, code);
  return code;
}

}  // namespace

// ---- one-sided communication ----
ADI3_MPI_API(int, Put_c,
             (const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win),
             (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype,
              win)) {
  ADI3_MPI_ENTER();
  if (int e = check_counts({{"origin_count", origin_count}, {"target_count", target_count}})) return on_win(win, e);
  return PMPI_Put(origin_addr, static_cast<int>(origin_count), origin_datatype, target_rank, target_disp,
                  static_cast<int>(target_count), target_datatype, win);
}

ADI3_MPI_API(int, Get_c,
             (void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win),
             (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype,
              win)) {
  ADI3_MPI_ENTER();
  if (int e = check_counts({{"origin_count", origin_count}, {"target_count", target_count}})) return on_win(win, e);
  return PMPI_Get(origin_addr, static_cast<int>(origin_count), origin_datatype, target_rank, target_disp,
                  static_cast<int>(target_count), target_datatype, win);
}

ADI3_MPI_API(int, Accumulate_c,
             (const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win),
             (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, op,
              win)) {
  ADI3_MPI_ENTER();
  if (int e = check_counts({{"origin_count", origin_count}, {"target_count", target_count}})) return on_win(win, e);
  return PMPI_Accumulate(origin_addr, static_cast<int>(origin_count), origin_datatype, target_rank, target_disp,
                         static_cast<int>(target_count), target_datatype, op, win);
}

ADI3_MPI_API(int, Get_accumulate_c,
             (const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, void* result_addr,
              MPI_Count result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
              MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win),
             (origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, target_rank,
              target_disp, target_count, target_datatype, op, win)) {
  ADI3_MPI_ENTER();
  if (int e = check_counts(
          {{"origin_count", origin_count}, {"result_count", result_count}, {"target_count", target_count}})) {
    return on_win(win, e);
  }
  return PMPI_Get_accumulate(origin_addr, static_cast<int>(origin_count), origin_datatype, result_addr,
                             static_cast<int>(result_count), result_datatype, target_rank, target_disp,
                             static_cast<int>(target_count), target_datatype, op, win);
}

ADI3_MPI_API(int, Rput_c,
             (const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request* request),
             (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win,
              request)) {
  ADI3_MPI_ENTER();
  if (int e = check_counts({{"origin_count", origin_count}, {"target_count", target_count}})) return on_win(win, e);
  return PMPI_Rput(origin_addr, static_cast<int>(origin_count), origin_datatype, target_rank, target_disp,
                   static_cast<int>(target_count), target_datatype, win, request);
}

ADI3_MPI_API(int, Rget_c,
             (void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request* request),
             (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win,
              request)) {
  ADI3_MPI_ENTER();
  if (int e = check_counts({{"origin_count", origin_count}, {"target_count", target_count}})) return on_win(win, e);
  return PMPI_Rget(origin_addr, static_cast<int>(origin_count), origin_datatype, target_rank, target_disp,
                   static_cast<int>(target_count), target_datatype, win, request);
}

ADI3_MPI_API(int, Raccumulate_c,
             (const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
              MPI_Request* request),
             (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, op,
              win, request)) {
  ADI3_MPI_ENTER();
  if (int e = check_counts({{"origin_count", origin_count}, {"target_count", target_count}})) return on_win(win, e);
  return PMPI_Raccumulate(origin_addr, static_cast<int>(origin_count), origin_datatype, target_rank, target_disp,
                          static_cast<int>(target_count), target_datatype, op, win, request);
}

ADI3_MPI_API(int, Rget_accumulate_c,
             (const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, void* result_addr,
              MPI_Count result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
              MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request* request),
             (origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, target_rank,
              target_disp, target_count, target_datatype, op, win, request)) {
  ADI3_MPI_ENTER();
  if (int e = check_counts(
          {{"origin_count", origin_count}, {"result_count", result_count}, {"target_count", target_count}})) {
    return on_win(win, e);
  }
  return PMPI_Rget_accumulate(origin_addr, static_cast<int>(origin_count), origin_datatype, result_addr,
                              static_cast<int>(result_count), result_datatype, target_rank, target_disp,
                              static_cast<int>(target_count), target_datatype, op, win, request);
}

ADI3_MPI_API(int, Win_create_c,
             (void* base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win* win),
             (base, size, disp_unit, info, comm, win)) {
  ADI3_MPI_ENTER();
  if (int e = check_counts({{"disp_unit", disp_unit}})) return on_comm(comm, e);
  return PMPI_Win_create(base, size, static_cast<int>(disp_unit), info, comm, win);
}

ADI3_MPI_API(int, Win_allocate_c,
             (MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win),
             (size, disp_unit, info, comm, baseptr, win)) {
  ADI3_MPI_ENTER();
  if (int e = check_counts({{"disp_unit", disp_unit}})) return on_comm(comm, e);
  return PMPI_Win_allocate(size, static_cast<int>(disp_unit), info, comm, baseptr, win);
}

// ---- point-to-point, packing, reductions, datatypes ----
ADI3_MPI_API(int, Isendrecv_c,
             (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
              MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Request* request),
             (sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm,
              request)) {
  ADI3_MPI_ENTER();
  if (int e = check_counts({{"sendcount", sendcount}, {"recvcount", recvcount}})) return on_comm(comm, e);
  return PMPI_Isendrecv(sendbuf, static_cast<int>(sendcount), sendtype, dest, sendtag, recvbuf,
                        static_cast<int>(recvcount), recvtype, source, recvtag, comm, request);
}

ADI3_MPI_API(int, Isendrecv_replace_c,
             (void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag,
              MPI_Comm comm, MPI_Request* request),
             (buf, count, datatype, dest, sendtag, source, recvtag, comm, request)) {
  ADI3_MPI_ENTER();
  if (int e = check_counts({{"count", count}})) return on_comm(comm, e);
  return PMPI_Isendrecv_replace(buf, static_cast<int>(count), datatype, dest, sendtag, source, recvtag, comm, request);
}

ADI3_MPI_API(int, Pack_external_c,
             (const char datarep[], const void* inbuf, MPI_Count incount, MPI_Datatype datatype, void* outbuf,
              MPI_Count outsize, MPI_Count* position),
             (datarep, inbuf, incount, datatype, outbuf, outsize, position)) {
  ADI3_MPI_ENTER();
  if (int e = check_counts({{"incount", incount}})) return world_error(e, __func__);
  if (!position) return world_error(raise(ErrorClass::Arg, "position is null"), __func__);
  MPI_Aint pos = static_cast<MPI_Aint>(*position);
  int e = PMPI_Pack_external(datarep, inbuf, static_cast<int>(incount), datatype, outbuf,
                             static_cast<MPI_Aint>(outsize), &pos);
  if (e == MPI_SUCCESS) *position = pos;
  return e;
}

ADI3_MPI_API(int, Unpack_external_c,
             (const char datarep[], const void* inbuf, MPI_Count insize, MPI_Count* position, void* outbuf,
              MPI_Count outcount, MPI_Datatype datatype),
             (datarep, inbuf, insize, position, outbuf, outcount, datatype)) {
  ADI3_MPI_ENTER();
  if (int e = check_counts({{"outcount", outcount}})) return world_error(e, __func__);
  if (!position) return world_error(raise(ErrorClass::Arg, "position is null"), __func__);
  MPI_Aint pos = static_cast<MPI_Aint>(*position);
  int e = PMPI_Unpack_external(datarep, inbuf, static_cast<MPI_Aint>(insize), &pos, outbuf, static_cast<int>(outcount),
                               datatype);
  if (e == MPI_SUCCESS) *position = pos;
  return e;
}

ADI3_MPI_API(int, Pack_external_size_c,
             (const char datarep[], MPI_Count incount, MPI_Datatype datatype, MPI_Count* size),
             (datarep, incount, datatype, size)) {
  ADI3_MPI_ENTER();
  if (int e = check_counts({{"incount", incount}})) return world_error(e, __func__);
  if (!size) return world_error(raise(ErrorClass::Arg, "size is null"), __func__);
  MPI_Aint n = 0;
  int e = PMPI_Pack_external_size(datarep, static_cast<int>(incount), datatype, &n);
  if (e == MPI_SUCCESS) *size = n;
  return e;
}

ADI3_MPI_API(int, Reduce_local_c,
             (const void* inbuf, void* inoutbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op),
             (inbuf, inoutbuf, count, datatype, op)) {
  ADI3_MPI_ENTER();
  if (int e = check_counts({{"count", count}})) return world_error(e, __func__);
  return PMPI_Reduce_local(inbuf, inoutbuf, static_cast<int>(count), datatype, op);
}

ADI3_MPI_API(int, Type_create_darray_c,
             (int size, int rank, int ndims, const MPI_Count array_of_gsizes[], const int array_of_distribs[],
              const int array_of_dargs[], const int array_of_psizes[], int order, MPI_Datatype oldtype,
              MPI_Datatype* newtype),
             (size, rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs, array_of_psizes, order, oldtype,
              newtype)) {
  ADI3_MPI_ENTER();
  if (ndims > 0 && !array_of_gsizes) return world_error(raise(ErrorClass::Arg, "array_of_gsizes is null"), __func__);
  std::vector<int> g(static_cast<std::size_t>(ndims > 0 ? ndims : 0));
  for (int i = 0; i < ndims; ++i) {
    if (int e = check_counts({{"array_of_gsizes[i]", array_of_gsizes[i]}})) return world_error(e, __func__);
    g[static_cast<std::size_t>(i)] = static_cast<int>(array_of_gsizes[i]);
  }
  return PMPI_Type_create_darray(size, rank, ndims, g.data(), array_of_distribs, array_of_dargs, array_of_psizes, order,
                                 oldtype, newtype);
}

// Every datatype is described by its int-count constructor's envelope (a
// type made by a _c constructor records int counts too, which fit), so
// num_large_counts is 0 and no large counts are returned.
ADI3_MPI_API(int, Type_get_envelope_c,
             (MPI_Datatype datatype, MPI_Count* num_integers, MPI_Count* num_addresses, MPI_Count* num_large_counts,
              MPI_Count* num_datatypes, int* combiner),
             (datatype, num_integers, num_addresses, num_large_counts, num_datatypes, combiner)) {
  ADI3_MPI_ENTER();
  if (!num_integers || !num_addresses || !num_large_counts || !num_datatypes) {
    return world_error(raise(ErrorClass::Arg, "an output count is null"), __func__);
  }
  int ni = 0, na = 0, nd = 0;
  int e = PMPI_Type_get_envelope(datatype, &ni, &na, &nd, combiner);
  if (e != MPI_SUCCESS) return e;
  *num_integers = ni;
  *num_addresses = na;
  *num_large_counts = 0;
  *num_datatypes = nd;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Type_get_contents_c,
             (MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses, MPI_Count max_large_counts,
              MPI_Count max_datatypes, int array_of_integers[], MPI_Aint array_of_addresses[],
              MPI_Count array_of_large_counts[], MPI_Datatype array_of_datatypes[]),
             (datatype, max_integers, max_addresses, max_large_counts, max_datatypes, array_of_integers,
              array_of_addresses, array_of_large_counts, array_of_datatypes)) {
  ADI3_MPI_ENTER();
  (void)max_large_counts;
  (void)array_of_large_counts;
  auto clamp = [](MPI_Count c) { return static_cast<int>(c > INT_MAX ? INT_MAX : c); };
  return PMPI_Type_get_contents(datatype, clamp(max_integers), clamp(max_addresses), clamp(max_datatypes),
                                array_of_integers, array_of_addresses, array_of_datatypes);
}
