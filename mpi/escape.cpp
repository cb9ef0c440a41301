// A C++ exception that escaped the body of an MPI entry point
// (ADI3_MPI_API's catch block). The layers return error codes; an
// exception reaching here comes from an allocation that has no error path
// of its own (std::vector growth, a std::string, new), so it is an
// out-of-memory error of the call, reported like any other error of it.
// Nothing here may throw: the caller is C code that cannot unwind.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>
#include <system_error>

#include "adi3/out_of_memory.hpp"
#include "mpi/api.hpp"
#include "mpi/win.hpp"

namespace adi3::mpi {

namespace {

const char* short_name(const char* fn) { return fn[0] == 'P' ? fn + 1 : fn; }

bool starts(const char* s, const char* prefix) { return std::strncmp(s, prefix, std::strlen(prefix)) == 0; }

// What an entry point was most likely allocating when a std::bad_alloc that
// names nothing (a container that could not grow) reached it.
const char* likely_item(const char* api) {
  static constexpr const char* kP2p[] = {"MPI_Isend", "MPI_Ibsend", "MPI_Issend",  "MPI_Irsend",
                                         "MPI_Irecv", "MPI_Iprobe", "MPI_Improbe", "MPI_Imrecv"};
  if (starts(api, "MPI_Win_")) return "the state of a window (its per-rank tables and queues)";
  static constexpr const char* kRma[] = {
      "MPI_Put",  "MPI_Get",         "MPI_Accumulate",      "MPI_Get_accumulate", "MPI_Rput",
      "MPI_Rget", "MPI_Raccumulate", "MPI_Rget_accumulate", "MPI_Fetch_and_op",   "MPI_Compare_and_swap"};
  for (const char* p : kRma) {
    if (std::strcmp(api, p) == 0) return "a one-sided operation (its queue entry or reply record)";
  }
  if (starts(api, "MPI_Comm_") || starts(api, "MPI_Intercomm_") || starts(api, "MPI_Cart_") ||
      starts(api, "MPI_Graph_") || starts(api, "MPI_Dist_graph")) {
    return "the tables of a communicator (group, context, attributes)";
  }
  if (starts(api, "MPI_Type_")) return "the description of a datatype";
  if (starts(api, "MPI_Grequest_")) return "the state of a generalized request";
  if (starts(api, "MPI_Group_")) return "the rank table of a group";
  if (starts(api, "MPI_Info_")) return "the entries of an info object";
  if (starts(api, "MPI_Session_")) return "the state of a session";
  if (starts(api, "MPI_T_")) return "a table of the tools interface";
  if (starts(api, "MPI_I")) {
    for (const char* p : kP2p) {
      if (starts(api, p)) return "a request or queue entry of a point-to-point operation";
    }
    return "the schedule of a nonblocking collective";
  }
  return "a buffer, queue or table of the library";
}

int rank_now() {
  Runtime* rt = g_runtime;
  return rt ? rt->dev().rank() : -1;
}

// The exception in flight as an error code naming the call.
int code_of_exception(const char* fn) noexcept {
  const char* api = short_name(fn);
  const int rank = rank_now();
  try {
    throw;
  } catch (const OutOfMemory& e) {
    return raise(ErrorClass::NoMem, "rank %d: out of memory allocating %s (%zu bytes) in %s", rank, e.item(), e.bytes(),
                 api);
  } catch (const std::bad_alloc&) {
    return raise(ErrorClass::NoMem, "rank %d: out of memory allocating %s (size not known) in %s", rank,
                 likely_item(api), api);
  } catch (const std::length_error& e) {
    return raise(ErrorClass::NoMem, "rank %d: out of memory allocating %s (more bytes than can be allocated: %s) in %s",
                 rank, likely_item(api), e.what(), api);
  } catch (const std::system_error& e) {
    // A thread that could not start (pthread_create: EAGAIN) lacked memory too.
    const int v = e.code().value();
    const bool memory = e.code().category() == std::generic_category() || e.code().category() == std::system_category();
    if (memory && (v == ENOMEM || v == EAGAIN)) {
      return raise(ErrorClass::NoMem, "rank %d: out of memory allocating a thread or a resource it needed (%s) in %s",
                   rank, e.what(), api);
    }
    return raise(ErrorClass::Intern, "internal error: %s failed with a system error: %s", api, e.what());
  } catch (const std::exception& e) {
    return raise(ErrorClass::Intern, "internal error: %s failed with an exception: %s", api, e.what());
  } catch (...) {
    return raise(ErrorClass::Intern, "internal error: %s failed with an exception of unknown type", api);
  }
}

}  // namespace

int escaped(const char* fn, int comm, int win) noexcept {
  const int code = code_of_exception(fn);
  try {
    Runtime* rt = g_runtime;
    if (rt && win) {
      WinObj* w = nullptr;
      if (get_win(*rt, win, &w) == 0) return win_error(w, code, fn);
    }
    return comm_error(static_cast<MPI_Comm>(comm ? comm : MPI_COMM_WORLD), code, fn);
  } catch (...) {
    return code;  // a user error handler threw: its own business, but C must not see it
  }
}

}  // namespace adi3::mpi

namespace adi3::mpi {

int name_no_mem(int code, const char* fn) noexcept {
  Runtime* rt = g_runtime;
  if (!rt || error_class_of(code) != ErrorClass::NoMem) return code;
  char text[256];
  if (!rt->dev().errors().text(code, text, sizeof text)) return code;
  const char* api = short_name(fn);
  if (std::strstr(text, " in MPI_")) return code;  // named already (code_of_exception)
  const int rank = rt->dev().rank();
  char who[24] = "";
  if (!starts(text, "rank ")) std::snprintf(who, sizeof who, "rank %d: ", rank);
  return rt->dev().errors().raise(ErrorClass::NoMem, "%s%s in %s", who, text, api);
}

}  // namespace adi3::mpi
