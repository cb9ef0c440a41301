// Environment management: Init/Finalize, thread levels, versions, clocks,
// memory allocation.
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

#include "adi3/process.hpp"
#include "rma/memory.hpp"
#include "mpi/agree.hpp"
#include "mpi/api.hpp"
#include "mpi/attributes.hpp"

using namespace adi3;
using namespace adi3::mpi;

namespace {

const char* level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    default:
      return "MPI_THREAD_MULTIPLE";
  }
}

// MPI_INFO_ENV: how the program was started, as far as this process knows.
void fill_env_info(Runtime& rt, int* argc, char*** argv) {
  auto& e = rt.env_info.entries;
  e.clear();  // MPI_Init after MPI_Session_init fills it again, with argv
  if (argc && argv && *argv && *argc > 0) {
    e.emplace_back("command", (*argv)[0]);
    std::string args;
    for (int i = 1; i < *argc; ++i) {
      if (i > 1) args += ' ';
      args += (*argv)[i];
    }
    e.emplace_back("argv", args);
  }
  e.emplace_back("maxprocs", std::to_string(rt.dev().size()));
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd)) e.emplace_back("wdir", cwd);
  e.emplace_back("thread_level", level_name(rt.thread_level));
}

int init(int* argc, char*** argv, int required, int* provided, const char* fn) {
  if (g_world.load() != 0) {
    return world_error(raise(ErrorClass::Other, g_world.load() == 1 ? "MPI is already initialized"
                                                                    : "MPI cannot be initialized after MPI_Finalize"),
                       fn);
  }
  if (g_state.load() == 2) {
    return world_error(raise(ErrorClass::Other, "MPI cannot be initialized after the last MPI_Session_finalize"), fn);
  }
  int level = std::clamp(required, MPI_THREAD_SINGLE, MPI_THREAD_MULTIPLE);
  if (g_state.load() == 1) {
    // MPI_Session_init started the runtime: the World Model joins it, at
    // the thread level it has.
    if (provided) *provided = g_runtime->thread_level;
  } else {
    start_runtime(level, provided);
  }
  fill_env_info(*g_runtime, argc, argv);
  g_world.store(1);
  return MPI_SUCCESS;
}

// ADI3_FINALIZE_TIMEOUT: seconds (0: no limit).
double finalize_timeout() {
  const char* v = std::getenv("ADI3_FINALIZE_TIMEOUT");
  char* end = nullptr;
  double s = v ? std::strtod(v, &end) : -1;
  return v && end != v && *end == '\0' && s >= 0 ? s : 10.0;
}

[[noreturn]] void give_up(Runtime& rt, double limit) {
  const int code = rt.returned_code.load();
  char what[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  PMPI_Error_string(code, what, &len);
  char msg[MPI_MAX_ERROR_STRING + 512];
  std::snprintf(msg, sizeof msg,
                "[rank %d] MPI_Finalize: the other ranks did not reach MPI_Finalize within %g s; this rank's %s "
                "returned an error (%s), so they may be waiting for this rank in that call: aborting the job "
                "(ADI3_FINALIZE_TIMEOUT sets the wait)",
                rt.dev().rank(), limit, rt.returned_fn.load(), what);
  abort_process(rt.dev(), (code & 0xff) ? (code & 0xff) : 1, msg);
}

// The ranks meet before MPI_Finalize takes the device down (a dissemination
// barrier on MPI_COMM_WORLD's internal context). A rank that handed an error
// back to its program may have left its peers waiting for it in the failed
// call (a collective it did not join, a message it did not send): it waits
// ADI3_FINALIZE_TIMEOUT seconds for them, then ends the job with a message
// naming that call, instead of everyone waiting forever.
int finalize_meeting(Runtime& rt) {
  Device& dev = rt.dev();
  const Comm& c = rt.world.internal;
  const double limit = rt.returned_fn.load() ? finalize_timeout() : 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit);
  for (int dist = 1; dist < c.size; dist <<= 1) {
    Request* r = nullptr;
    if (int e = dev.irecv(nullptr, 0, Datatype::byte(), (c.rank - dist + c.size) % c.size, kTagFinalize, c, &r)) {
      return e;
    }
    if (int e = dev.send(nullptr, 0, Datatype::byte(), (c.rank + dist) % c.size, kTagFinalize, c)) return e;
    if (limit <= 0) {
      if (int e = dev.wait(&r, nullptr)) return e;
      continue;
    }
    bool done = false;
    for (int polls = 0;; ++polls) {
      if (int e = dev.test(&r, &done, nullptr)) return e;
      if (done) break;
      if (std::chrono::steady_clock::now() > deadline) give_up(rt, limit);
      if (polls > 1000) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  return 0;
}

}  // namespace

int adi3::mpi::start_runtime(int required, int* provided) {
  int level = std::clamp(required, MPI_THREAD_SINGLE, MPI_THREAD_MULTIPLE);
  std::unique_ptr<Device> dev;
  try {
    Config config = Config::from_env();  // throws on a bad setting
    if (level == MPI_THREAD_MULTIPLE) config.thread_multiple = true;
    dev = init_process(config);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "MPI_Init: cannot start this process: %s\n", e.what());
    std::fflush(stderr);
    std::_Exit(1);
  }
  g_runtime = new Runtime(std::move(dev), level);
  fill_env_info(*g_runtime, nullptr, nullptr);
  g_state.store(1);
  if (provided) *provided = level;
  return MPI_SUCCESS;
}

int adi3::mpi::stop_runtime(const char* fn) {
  Runtime* rt = g_runtime;
  if (int e = rt->dev().finalize()) return world_error(e, fn);
  g_runtime = nullptr;
  g_state.store(2);
  delete rt;  // frees every object still in the tables, then the device
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Init, (int* argc, char*** argv), (argc, argv)) {
  return init(argc, argv, MPI_THREAD_SINGLE, nullptr, __func__);
}

ADI3_MPI_API(int, Init_thread, (int* argc, char*** argv, int required, int* provided),
             (argc, argv, required, provided)) {
  if (!provided) return world_error(raise(ErrorClass::Arg, "provided is null"), __func__);
  if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE) {
    // MPI-3.1: any value is allowed; the closest level is given.
    required = required < MPI_THREAD_SINGLE ? MPI_THREAD_SINGLE : MPI_THREAD_MULTIPLE;
  }
  return init(argc, argv, required, provided, __func__);
}

ADI3_MPI_API(int, Initialized, (int* flag), (flag)) {
  if (!flag) return world_error(raise(ErrorClass::Arg, "flag is null"), __func__);
  *flag = g_world.load() >= 1;  // the World Model only (MPI-4.1 11.2.3)
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Finalized, (int* flag), (flag)) {
  if (!flag) return world_error(raise(ErrorClass::Arg, "flag is null"), __func__);
  *flag = g_world.load() == 2;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Finalize, (void), ()) {
  ADI3_MPI_ENTER();
  if (g_world.load() != 1) return world_error(raise(ErrorClass::Other, "MPI_Finalize without MPI_Init"), __func__);
  // MPI_COMM_SELF's attributes are deleted first (as if it were freed), so
  // libraries can clean up; then MPI_COMM_WORLD's, as MPICH does.
  if (int e = delete_all_attrs(*rt, rt->self.attrs, MPI_COMM_SELF)) return comm_error(&rt->self, e, __func__);
  if (int e = delete_all_attrs(*rt, rt->world.attrs, MPI_COMM_WORLD)) return comm_error(&rt->world, e, __func__);
  if (int e = finalize_meeting(*rt)) return comm_error(&rt->world, e, __func__);
  g_world.store(2);
  if (sessions_keep_runtime()) return MPI_SUCCESS;  // the last session ends it
  return stop_runtime(__func__);
}

ADI3_MPI_API(int, Abort, (MPI_Comm comm, int errorcode), (comm, errorcode)) {
  ADI3_MPI_ENTER();
  (void)comm;  // the whole job ends, whatever the communicator
  char msg[128];
  std::snprintf(msg, sizeof msg, "[rank %d] MPI_Abort called with error code %d", rt->dev().rank(), errorcode);
  abort_process(rt->dev(), errorcode, msg);
}

ADI3_MPI_API(int, Query_thread, (int* provided), (provided)) {
  ADI3_MPI_ENTER();
  if (!provided) return world_error(raise(ErrorClass::Arg, "provided is null"), __func__);
  *provided = rt->thread_level;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Is_thread_main, (int* flag), (flag)) {
  ADI3_MPI_ENTER();
  if (!flag) return world_error(raise(ErrorClass::Arg, "flag is null"), __func__);
  *flag = std::this_thread::get_id() == rt->main_thread;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Get_version, (int* version, int* subversion), (version, subversion)) {
  if (!version || !subversion) return world_error(raise(ErrorClass::Arg, "version or subversion is null"), __func__);
  *version = MPI_VERSION;
  *subversion = MPI_SUBVERSION;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Get_library_version, (char* version, int* resultlen), (version, resultlen)) {
  if (!version || !resultlen) return world_error(raise(ErrorClass::Arg, "version or resultlen is null"), __func__);
  int n = std::snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING, "adi3 MPI %s (MPI %d.%d, ADI-3 device)",
                        ADI3_MPI_LIBRARY_VERSION, MPI_VERSION, MPI_SUBVERSION);
  *resultlen = n;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Get_processor_name, (char* name, int* resultlen), (name, resultlen)) {
  if (!name || !resultlen) return world_error(raise(ErrorClass::Arg, "name or resultlen is null"), __func__);
  char host[MPI_MAX_PROCESSOR_NAME];
  if (gethostname(host, sizeof host) != 0) std::strcpy(host, "localhost");
  host[MPI_MAX_PROCESSOR_NAME - 1] = '\0';
  std::size_t n = std::strlen(host);
  std::memcpy(name, host, n + 1);
  *resultlen = static_cast<int>(n);
  return MPI_SUCCESS;
}

ADI3_MPI_API(double, Wtime, (void), ()) {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

ADI3_MPI_API(double, Wtick, (void), ()) {
  timespec ts;
  if (clock_getres(CLOCK_MONOTONIC, &ts) != 0 || (ts.tv_sec == 0 && ts.tv_nsec == 0)) return 1e-9;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

ADI3_MPI_API(int, Alloc_mem, (MPI_Aint size, MPI_Info info, void* baseptr), (size, info, baseptr)) {
  ADI3_MPI_ENTER();
  if (size < 0) return world_error(raise(ErrorClass::Arg, "invalid size %td: must be non-negative", size), __func__);
  if (info != MPI_INFO_NULL) {
    InfoObj* i = nullptr;
    if (int e = get_info(*rt, info, &i)) return world_error(e, __func__);
  }
  if (!baseptr) return world_error(raise(ErrorClass::Arg, "baseptr is null"), __func__);
  // Shared memory where the channel has a one-sided part (a window later
  // created over it is served like one from Win_allocate), else the heap.
  void* p = nullptr;
  if (int e = adi3::alloc_mem(rt->dev(), static_cast<std::size_t>(size), &p)) return world_error(e, __func__);
  *static_cast<void**>(baseptr) = p;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Free_mem, (void* base), (base)) {
  ADI3_MPI_ENTER();
  return world_error(adi3::free_mem(rt->dev(), base), __func__);
}

ADI3_MPI_API_NOTHROW(int, Pcontrol, (const int level, ...)) {
  (void)level;  // no profiling layer of our own
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Get_address, (const void* location, MPI_Aint* address), (location, address)) {
  if (!address) return world_error(raise(ErrorClass::Arg, "address is null"), __func__);
  *address = reinterpret_cast<MPI_Aint>(location);
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Address, (void* location, MPI_Aint* address), (location, address)) {
  return PMPI_Get_address(location, address);
}

ADI3_MPI_API(MPI_Aint, Aint_add, (MPI_Aint base, MPI_Aint disp), (base, disp)) {
  return static_cast<MPI_Aint>(static_cast<uintptr_t>(base) + static_cast<uintptr_t>(disp));
}

ADI3_MPI_API(MPI_Aint, Aint_diff, (MPI_Aint addr1, MPI_Aint addr2), (addr1, addr2)) {
  return static_cast<MPI_Aint>(static_cast<uintptr_t>(addr1) - static_cast<uintptr_t>(addr2));
}
