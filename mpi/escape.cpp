// A C++ exception that escaped the body of an MPI entry point
// (ADI3_MPI_API's catch block). The layers return error codes; an
// exception reaching here comes from an allocation that has no error path
// of its own (std::vector growth, a std::string, new), so it is an
// out-of-memory error of the call, reported like any other error of it.
// Nothing here may throw: the caller is C code that cannot unwind.
#include <cerrno>
#include <exception>
#include <new>
#include <stdexcept>
#include <system_error>

#include "mpi/api.hpp"
#include "mpi/win.hpp"

namespace adi3::mpi {

namespace {

const char* short_name(const char* fn) { return fn[0] == 'P' ? fn + 1 : fn; }

// The exception in flight as an error code naming the call.
int code_of_exception(const char* fn) noexcept {
  try {
    throw;
  } catch (const std::bad_alloc& e) {
    return raise(ErrorClass::NoMem,
                 "out of memory: %s could not allocate memory it needed (%s: a buffer, queue or table of the "
                 "library could not grow)",
                 short_name(fn), e.what());
  } catch (const std::length_error& e) {
    return raise(ErrorClass::NoMem, "out of memory: %s needed a buffer larger than can be allocated (%s)",
                 short_name(fn), e.what());
  } catch (const std::system_error& e) {
    // A thread that could not start (pthread_create: EAGAIN) lacked memory too.
    const int v = e.code().value();
    const bool memory = e.code().category() == std::generic_category() || e.code().category() == std::system_category();
    if (memory && (v == ENOMEM || v == EAGAIN)) {
      return raise(ErrorClass::NoMem, "out of memory: %s could not start a thread or get a resource it needed (%s)",
                   short_name(fn), e.what());
    }
    return raise(ErrorClass::Intern, "internal error: %s failed with a system error: %s", short_name(fn), e.what());
  } catch (const std::exception& e) {
    return raise(ErrorClass::Intern, "internal error: %s failed with an exception: %s", short_name(fn), e.what());
  } catch (...) {
    return raise(ErrorClass::Intern, "internal error: %s failed with an exception of unknown type", short_name(fn));
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
