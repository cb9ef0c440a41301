// MPI_Pack / MPI_Unpack and their external32 forms.
#include <climits>
#include <limits>

#include "mpi/api.hpp"
#include "segment/pack.hpp"

using namespace adi3;
using namespace adi3::mpi;

namespace {

int pack_error(ErrorClass c, const char* what) {
  if (c == ErrorClass::Truncate) return raise(c, "%s: the packed buffer is too small", what);
  if (c == ErrorClass::Count) return raise(c, "%s: the packed size overflows", what);
  return raise(c, "%s failed", what);
}

}  // namespace

namespace {
// One body for the int and large-count (_c) forms (P: the position or size type).
template <class P>
int pack_impl(const char* fn, const void* inbuf, MPI_Count incount, MPI_Datatype dt, void* outbuf, MPI_Count outsize,
              P* position, MPI_Comm comm) {
  Runtime* rt = g_runtime;
  if (!rt) return not_initialized(fn);
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, fn);
  const Datatype* t = nullptr;
  int e = check_count(incount);
  if (!e) e = check_count(outsize, "outsize");
  if (!e) e = get_comm_type(*rt, dt, &t);
  if (!e) e = check_buffer(inbuf, incount, t);
  if (!e && !position) e = raise(ErrorClass::Arg, "position is null");
  if (!e && *position < 0) e = raise(ErrorClass::Arg, "invalid position %lld", static_cast<long long>(*position));
  if (!e && !outbuf && outsize > 0) e = raise(ErrorClass::Buffer, "outbuf is null");
  if (!e) {
    auto pos = static_cast<std::size_t>(*position);
    ErrorClass r = pack(inbuf, static_cast<std::size_t>(incount), t, outbuf, static_cast<std::size_t>(outsize), &pos);
    if (r != ErrorClass::Success) {
      e = pack_error(r, "MPI_Pack");
    } else {
      *position = static_cast<P>(pos);
    }
  }
  return comm_error(c, e, fn);
}
}  // namespace

ADI3_MPI_API(int, Pack,
             (const void* inbuf, int incount, MPI_Datatype dt, void* outbuf, int outsize, int* position, MPI_Comm comm),
             (inbuf, incount, dt, outbuf, outsize, position, comm)) {
  return pack_impl(__func__, inbuf, incount, dt, outbuf, outsize, position, comm);
}

ADI3_MPI_API(int, Pack_c,
             (const void* inbuf, MPI_Count incount, MPI_Datatype dt, void* outbuf, MPI_Count outsize,
              MPI_Count* position, MPI_Comm comm),
             (inbuf, incount, dt, outbuf, outsize, position, comm)) {
  return pack_impl(__func__, inbuf, incount, dt, outbuf, outsize, position, comm);
}

namespace {
// One body for the int and large-count (_c) forms (P: the position or size type).
template <class P>
int unpack_impl(const char* fn, const void* inbuf, MPI_Count insize, P* position, void* outbuf, MPI_Count outcount,
                MPI_Datatype dt, MPI_Comm comm) {
  Runtime* rt = g_runtime;
  if (!rt) return not_initialized(fn);
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, fn);
  const Datatype* t = nullptr;
  int e = check_count(outcount);
  if (!e) e = check_count(insize, "insize");
  if (!e) e = get_comm_type(*rt, dt, &t);
  if (!e) e = check_buffer(outbuf, outcount, t);
  if (!e && !position) e = raise(ErrorClass::Arg, "position is null");
  if (!e && *position < 0) e = raise(ErrorClass::Arg, "invalid position %lld", static_cast<long long>(*position));
  if (!e && !inbuf && insize > 0) e = raise(ErrorClass::Buffer, "inbuf is null");
  if (!e) {
    auto pos = static_cast<std::size_t>(*position);
    ErrorClass r = unpack(inbuf, static_cast<std::size_t>(insize), &pos, outbuf, static_cast<std::size_t>(outcount), t);
    if (r != ErrorClass::Success) {
      e = pack_error(r, "MPI_Unpack");
    } else {
      *position = static_cast<P>(pos);
    }
  }
  return comm_error(c, e, fn);
}
}  // namespace

ADI3_MPI_API(int, Unpack,
             (const void* inbuf, int insize, int* position, void* outbuf, int outcount, MPI_Datatype dt, MPI_Comm comm),
             (inbuf, insize, position, outbuf, outcount, dt, comm)) {
  return unpack_impl(__func__, inbuf, insize, position, outbuf, outcount, dt, comm);
}

ADI3_MPI_API(int, Unpack_c,
             (const void* inbuf, MPI_Count insize, MPI_Count* position, void* outbuf, MPI_Count outcount,
              MPI_Datatype dt, MPI_Comm comm),
             (inbuf, insize, position, outbuf, outcount, dt, comm)) {
  return unpack_impl(__func__, inbuf, insize, position, outbuf, outcount, dt, comm);
}

namespace {
// One body for the int and large-count (_c) forms (P: the position or size type).
template <class P>
int pack_size_impl(const char* fn, MPI_Count incount, MPI_Datatype dt, MPI_Comm comm, P* size) {
  Runtime* rt = g_runtime;
  if (!rt) return not_initialized(fn);
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, fn);
  const Datatype* t = nullptr;
  int e = check_count(incount);
  if (!e) e = get_comm_type(*rt, dt, &t);
  if (!e && !size) e = raise(ErrorClass::Arg, "size is null");
  if (!e) e = check_extent(incount, t);
  if (!e) {
    std::size_t n = 0;
    ErrorClass r = pack_size(static_cast<std::size_t>(incount), t, &n);
    if (r != ErrorClass::Success) {
      e = pack_error(r, "MPI_Pack_size");
    } else if (n > static_cast<std::size_t>(std::numeric_limits<P>::max())) {
      e = raise(ErrorClass::Count, "the packed size %zu does not fit in the size argument", n);
    } else {
      *size = static_cast<P>(n);
    }
  }
  return comm_error(c, e, fn);
}
}  // namespace

ADI3_MPI_API(int, Pack_size, (int incount, MPI_Datatype dt, MPI_Comm comm, int* size), (incount, dt, comm, size)) {
  return pack_size_impl(__func__, incount, dt, comm, size);
}

ADI3_MPI_API(int, Pack_size_c, (MPI_Count incount, MPI_Datatype dt, MPI_Comm comm, MPI_Count* size),
             (incount, dt, comm, size)) {
  return pack_size_impl(__func__, incount, dt, comm, size);
}

ADI3_MPI_API(int, Pack_external,
             (const char datarep[], const void* inbuf, int incount, MPI_Datatype dt, void* outbuf, MPI_Aint outsize,
              MPI_Aint* position),
             (datarep, inbuf, incount, dt, outbuf, outsize, position)) {
  ADI3_MPI_ENTER();
  const Datatype* t = nullptr;
  int e = check_count(incount);
  if (!e) e = get_comm_type(*rt, dt, &t);
  if (!e) e = check_buffer(inbuf, incount, t);
  if (!e && (!position || !datarep)) e = raise(ErrorClass::Arg, "position or datarep is null");
  if (!e && (*position < 0 || outsize < 0)) e = raise(ErrorClass::Arg, "negative position or outsize");
  if (!e) {
    auto pos = static_cast<std::size_t>(*position);
    ErrorClass r = pack_external(datarep, inbuf, static_cast<std::size_t>(incount), t, outbuf,
                                 static_cast<std::size_t>(outsize), &pos);
    if (r != ErrorClass::Success) {
      e = pack_error(r, "MPI_Pack_external");
    } else {
      *position = static_cast<MPI_Aint>(pos);
    }
  }
  return world_error(e, __func__);
}

ADI3_MPI_API(int, Unpack_external,
             (const char datarep[], const void* inbuf, MPI_Aint insize, MPI_Aint* position, void* outbuf, int outcount,
              MPI_Datatype dt),
             (datarep, inbuf, insize, position, outbuf, outcount, dt)) {
  ADI3_MPI_ENTER();
  const Datatype* t = nullptr;
  int e = check_count(outcount);
  if (!e) e = get_comm_type(*rt, dt, &t);
  if (!e) e = check_buffer(outbuf, outcount, t);
  if (!e && (!position || !datarep)) e = raise(ErrorClass::Arg, "position or datarep is null");
  if (!e && (*position < 0 || insize < 0)) e = raise(ErrorClass::Arg, "negative position or insize");
  if (!e) {
    auto pos = static_cast<std::size_t>(*position);
    ErrorClass r = unpack_external(datarep, inbuf, static_cast<std::size_t>(insize), &pos, outbuf,
                                   static_cast<std::size_t>(outcount), t);
    if (r != ErrorClass::Success) {
      e = pack_error(r, "MPI_Unpack_external");
    } else {
      *position = static_cast<MPI_Aint>(pos);
    }
  }
  return world_error(e, __func__);
}

ADI3_MPI_API(int, Pack_external_size, (const char datarep[], int incount, MPI_Datatype dt, MPI_Aint* size),
             (datarep, incount, dt, size)) {
  ADI3_MPI_ENTER();
  const Datatype* t = nullptr;
  int e = check_count(incount);
  if (!e) e = get_comm_type(*rt, dt, &t);
  if (!e && (!size || !datarep)) e = raise(ErrorClass::Arg, "size or datarep is null");
  if (!e) e = check_extent(incount, t);
  if (!e) {
    std::size_t n = 0;
    ErrorClass r = pack_external_size(datarep, static_cast<std::size_t>(incount), t, &n);
    if (r != ErrorClass::Success) {
      e = pack_error(r, "MPI_Pack_external_size");
    } else {
      *size = static_cast<MPI_Aint>(n);
    }
  }
  return world_error(e, __func__);
}
