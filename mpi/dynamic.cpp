// Dynamic processes (MPI 3.1 chapter 10) are not supported: mpiexec starts
// every process. The calls exist so programs link, check their arguments
// like any call (bad handles, roots and pointers get their own classes) and
// then fail with the class the standard gives the failure - MPI_ERR_SPAWN,
// _PORT (no port is ever open), _NAME (no name is ever published),
// _SERVICE, or _UNSUPPORTED_OPERATION - through the usual handler. They
// never communicate, so a collective one cannot hang: every rank fails.
#include "mpi/api.hpp"

using namespace adi3;
using namespace adi3::mpi;

namespace {

constexpr const char* kWhy = "dynamic processes are not supported (mpiexec starts every process)";

int check_info(Runtime& rt, MPI_Info h) {
  if (h == MPI_INFO_NULL) return 0;
  InfoObj* i = nullptr;
  return get_info(rt, h, &i);
}

// What MPI_Comm_spawn(_multiple), accept and connect share: an
// intracommunicator (*c), a root in it, the output pointer (set to
// MPI_COMM_NULL). 0, or the error already reported through the handler.
int collective_args(Runtime& rt, MPI_Comm comm, int root, MPI_Comm* out, const char* fn, CommObj** c) {
  if (int e = get_comm(rt, comm, c)) return world_error(e, fn);
  int e = need_intra(**c, fn + 1);
  if (!e) e = check_root(**c, root);
  if (!e && !out) e = raise(ErrorClass::Arg, "the output communicator is null");
  if (e) return comm_error(*c, e, fn);
  *out = MPI_COMM_NULL;
  return 0;
}

// Spawning fails: each of n error codes (when asked for) says so.
int spawn_failed(CommObj* c, int n, int* errcodes, const char* fn) {
  int code = raise(ErrorClass::Spawn, "no process started: %s", kWhy);
  if (errcodes != MPI_ERRCODES_IGNORE)
    for (int i = 0; i < n; ++i) errcodes[i] = code;
  return comm_error(c, code, fn);
}

// MPI_Publish/Unpublish/Lookup_name: 0, or the error already reported.
int name_args(Runtime& rt, const char* service_name, MPI_Info info, const char* port_name, const char* fn) {
  if (!service_name || !port_name) return world_error(raise(ErrorClass::Arg, "service_name or port_name is null"), fn);
  return world_error(check_info(rt, info), fn);
}

// MPI_Comm_accept/connect: the port is significant at the root only.
int port_call(Runtime& rt, const char* port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm* newcomm,
              const char* fn) {
  CommObj* c = nullptr;
  if (int e = collective_args(rt, comm, root, newcomm, fn, &c)) return e;
  if (c->rank() == root) {
    if (!port_name) return comm_error(c, raise(ErrorClass::Arg, "port_name is null"), fn);
    if (int e = check_info(rt, info)) return comm_error(c, e, fn);
  }
  return comm_error(c, raise(ErrorClass::Port, "no port is open: %s", kWhy), fn);
}

}  // namespace

ADI3_MPI_API(int, Comm_spawn,
             (const char* command, char* argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm,
              MPI_Comm* intercomm, int array_of_errcodes[]),
             (command, argv, maxprocs, info, root, comm, intercomm, array_of_errcodes)) {
  ADI3_MPI_ENTER();
  (void)argv;
  CommObj* c = nullptr;
  if (int e = collective_args(*rt, comm, root, intercomm, __func__, &c)) return e;
  // The root's arguments are its alone to check (they mean nothing elsewhere).
  if (c->rank() != root) return spawn_failed(c, 0, array_of_errcodes, __func__);
  if (!command) return comm_error(c, raise(ErrorClass::Arg, "command is null"), __func__);
  if (maxprocs <= 0) return comm_error(c, raise(ErrorClass::Arg, "maxprocs %d is not positive", maxprocs), __func__);
  if (int e = check_info(*rt, info)) return comm_error(c, e, __func__);
  return spawn_failed(c, maxprocs, array_of_errcodes, __func__);
}

ADI3_MPI_API(int, Comm_spawn_multiple,
             (int count, char* array_of_commands[], char** array_of_argv[], const int array_of_maxprocs[],
              const MPI_Info array_of_info[], int root, MPI_Comm comm, MPI_Comm* intercomm, int array_of_errcodes[]),
             (count, array_of_commands, array_of_argv, array_of_maxprocs, array_of_info, root, comm, intercomm,
              array_of_errcodes)) {
  ADI3_MPI_ENTER();
  (void)array_of_argv;
  CommObj* c = nullptr;
  if (int e = collective_args(*rt, comm, root, intercomm, __func__, &c)) return e;
  if (c->rank() != root) return spawn_failed(c, 0, array_of_errcodes, __func__);
  if (count <= 0) return comm_error(c, raise(ErrorClass::Arg, "count %d is not positive", count), __func__);
  if (!array_of_commands || !array_of_maxprocs || !array_of_info) {
    return comm_error(c, raise(ErrorClass::Arg, "array_of_commands, _maxprocs or _info is null"), __func__);
  }
  long long total = 0;
  for (int i = 0; i < count; ++i) {
    if (!array_of_commands[i]) return comm_error(c, raise(ErrorClass::Arg, "command %d is null", i), __func__);
    if (array_of_maxprocs[i] < 0) {
      return comm_error(c, raise(ErrorClass::Arg, "maxprocs[%d] = %d is negative", i, array_of_maxprocs[i]), __func__);
    }
    if (int e = check_info(*rt, array_of_info[i])) return comm_error(c, e, __func__);
    total += array_of_maxprocs[i];
  }
  if (int e = check_total(total, "the sum of array_of_maxprocs")) return comm_error(c, e, __func__);
  return spawn_failed(c, static_cast<int>(total), array_of_errcodes, __func__);
}

ADI3_MPI_API(int, Open_port, (MPI_Info info, char* port_name), (info, port_name)) {
  ADI3_MPI_ENTER();
  if (!port_name) return world_error(raise(ErrorClass::Arg, "port_name is null"), __func__);
  if (int e = check_info(*rt, info)) return world_error(e, __func__);
  port_name[0] = '\0';
  return world_error(raise(ErrorClass::UnsupportedOperation, "no port opened: %s", kWhy), __func__);
}

ADI3_MPI_API(int, Close_port, (const char* port_name), (port_name)) {
  ADI3_MPI_ENTER();
  if (!port_name) return world_error(raise(ErrorClass::Arg, "port_name is null"), __func__);
  return world_error(raise(ErrorClass::Port, "\"%.64s\" is not an open port: %s", port_name, kWhy), __func__);
}

ADI3_MPI_API(int, Comm_accept, (const char* port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm* newcomm),
             (port_name, info, root, comm, newcomm)) {
  ADI3_MPI_ENTER();
  return port_call(*rt, port_name, info, root, comm, newcomm, __func__);
}

ADI3_MPI_API(int, Comm_connect, (const char* port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm* newcomm),
             (port_name, info, root, comm, newcomm)) {
  ADI3_MPI_ENTER();
  return port_call(*rt, port_name, info, root, comm, newcomm, __func__);
}

ADI3_MPI_API(int, Publish_name, (const char* service_name, MPI_Info info, const char* port_name),
             (service_name, info, port_name)) {
  ADI3_MPI_ENTER();
  if (int e = name_args(*rt, service_name, info, port_name, __func__)) return e;
  return world_error(raise(ErrorClass::Port, "\"%.64s\" is not an open port: %s", port_name, kWhy), __func__);
}

ADI3_MPI_API(int, Unpublish_name, (const char* service_name, MPI_Info info, const char* port_name),
             (service_name, info, port_name)) {
  ADI3_MPI_ENTER();
  if (int e = name_args(*rt, service_name, info, port_name, __func__)) return e;
  return world_error(raise(ErrorClass::Service, "service \"%.64s\" was not published: %s", service_name, kWhy),
                     __func__);
}

ADI3_MPI_API(int, Lookup_name, (const char* service_name, MPI_Info info, char* port_name),
             (service_name, info, port_name)) {
  ADI3_MPI_ENTER();
  if (int e = name_args(*rt, service_name, info, port_name, __func__)) return e;
  return world_error(raise(ErrorClass::Name, "service \"%.64s\" was not published: %s", service_name, kWhy), __func__);
}

ADI3_MPI_API(int, Comm_join, (int fd, MPI_Comm* intercomm), (fd, intercomm)) {
  ADI3_MPI_ENTER();
  if (!intercomm) return world_error(raise(ErrorClass::Arg, "intercomm is null"), __func__);
  *intercomm = MPI_COMM_NULL;
  if (fd < 0) return world_error(raise(ErrorClass::Arg, "fd %d is not a socket", fd), __func__);
  return world_error(raise(ErrorClass::UnsupportedOperation, "cannot join over fd %d: %s", fd, kWhy), __func__);
}
