// MPI-4 odds and ends on top of existing calls: MPI_Comm_disconnect,
// MPI_Info_create_env, and the MPI-3.1 type
// matching calls (MPI_Type_match_size, MPI_Type_create_f90_*).
#include <cfloat>
#include <climits>
#include <cstring>
#include <string>

#include "greq/greq.hpp"
#include "mpi/api.hpp"

using namespace adi3;
using namespace adi3::mpi;

// Without dynamic processes every communicator is local to the job: wait
// until all members are here (all their communication is complete and
// matched, as the standard requires of the caller), then free.
ADI3_MPI_API(int, Comm_disconnect, (MPI_Comm * comm), (comm)) {
  ADI3_MPI_ENTER();
  if (!comm) return world_error(raise(ErrorClass::Arg, "comm is null"), __func__);
  if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF) {
    return comm_error(*comm, raise(ErrorClass::Comm, "MPI_COMM_WORLD and MPI_COMM_SELF cannot be disconnected"),
                      __func__);
  }
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, *comm, &c)) return world_error(e, __func__);
  if (int e = PMPI_Barrier(*comm)) return e;
  return PMPI_Comm_free(comm);
}

// A new info object with MPI_INFO_ENV's keys, usable before MPI_Init: then
// it describes the program from argc/argv and the environment alone.
ADI3_MPI_API(int, Info_create_env, (int argc, char* argv[], MPI_Info* info), (argc, argv, info)) {
  if (!info) return world_error(raise(ErrorClass::Arg, "info is null"), __func__);
  if (g_runtime) return PMPI_Info_dup(MPI_INFO_ENV, info);
  std::vector<std::pair<std::string, std::string>> e;
  if (argc > 0 && argv && argv[0]) {
    e.emplace_back("command", argv[0]);
    std::string args;
    for (int i = 1; i < argc && argv[i]; ++i) {
      if (i > 1) args += ' ';
      args += argv[i];
    }
    e.emplace_back("argv", args);
  }
  if (const char* n = std::getenv("ADI3_SIZE")) e.emplace_back("maxprocs", n);
  e.emplace_back("thread_level", "MPI_THREAD_MULTIPLE");
  if (int err = PMPI_Info_create(info)) return err;
  for (auto& [k, v] : e) {
    if (int err = PMPI_Info_set(*info, k.c_str(), v.c_str())) return err;
  }
  return MPI_SUCCESS;
}

// ---- matching language types by size (MPI-3.1 17.2.5, C types here) ----

ADI3_MPI_API(int, Type_match_size, (int typeclass, int size, MPI_Datatype* datatype), (typeclass, size, datatype)) {
  ADI3_MPI_ENTER();
  (void)rt;
  if (!datatype) return world_error(raise(ErrorClass::Arg, "datatype is null"), __func__);
  struct Candidate {
    int cls;
    MPI_Datatype type;
    int size;
  };
  static const Candidate kTypes[] = {
      {MPI_TYPECLASS_INTEGER, MPI_SIGNED_CHAR, 1},
      {MPI_TYPECLASS_INTEGER, MPI_SHORT, sizeof(short)},
      {MPI_TYPECLASS_INTEGER, MPI_INT, sizeof(int)},
      {MPI_TYPECLASS_INTEGER, MPI_LONG_LONG, sizeof(long long)},
      {MPI_TYPECLASS_REAL, MPI_FLOAT, sizeof(float)},
      {MPI_TYPECLASS_REAL, MPI_DOUBLE, sizeof(double)},
      {MPI_TYPECLASS_REAL, MPI_LONG_DOUBLE, sizeof(long double)},
      {MPI_TYPECLASS_COMPLEX, MPI_C_FLOAT_COMPLEX, 2 * sizeof(float)},
      {MPI_TYPECLASS_COMPLEX, MPI_C_DOUBLE_COMPLEX, 2 * sizeof(double)},
      {MPI_TYPECLASS_COMPLEX, MPI_C_LONG_DOUBLE_COMPLEX, 2 * sizeof(long double)},
  };
  if (typeclass != MPI_TYPECLASS_INTEGER && typeclass != MPI_TYPECLASS_REAL && typeclass != MPI_TYPECLASS_COMPLEX) {
    return world_error(
        raise(ErrorClass::Arg, "invalid typeclass %d (MPI_TYPECLASS_INTEGER, _REAL or _COMPLEX)", typeclass), __func__);
  }
  for (const Candidate& c : kTypes) {
    if (c.cls == typeclass && c.size == size) {
      *datatype = c.type;
      return MPI_SUCCESS;
    }
  }
  return world_error(raise(ErrorClass::Arg, "no type of typeclass %d has %d bytes", typeclass, size), __func__);
}

namespace {

// The smallest C integer type holding every value of r decimal digits.
MPI_Datatype f90_integer(int r) {
  if (r <= 2) return MPI_INT8_T;
  if (r <= 4) return MPI_INT16_T;
  if (r <= 9) return MPI_INT32_T;
  if (r <= 18) return MPI_INT64_T;
  return MPI_DATATYPE_NULL;
}

// The smallest C floating type with p decimal digits and exponent range r
// (MPI_UNDEFINED: no constraint).
int f90_real_index(int p, int r) {
  if (p == MPI_UNDEFINED) p = 0;
  if (r == MPI_UNDEFINED) r = 0;
  if (p <= FLT_DIG && r <= FLT_MAX_10_EXP) return 0;
  if (p <= DBL_DIG && r <= DBL_MAX_10_EXP) return 1;
  if (p <= LDBL_DIG && r <= LDBL_MAX_10_EXP) return 2;
  return -1;
}

int f90_args(int p, int r) {
  if ((p < 0 && p != MPI_UNDEFINED) || (r < 0 && r != MPI_UNDEFINED)) {
    return raise(ErrorClass::Arg, "invalid precision %d or range %d", p, r);
  }
  if (p == MPI_UNDEFINED && r == MPI_UNDEFINED) {
    return raise(ErrorClass::Arg, "precision and range are both MPI_UNDEFINED");
  }
  return 0;
}

// The handle for (combiner, p, r): made once, a duplicate of base, so that
// MPI_Type_get_envelope can name its combiner (MPI_Type_free refuses it).
int f90_type(Runtime& rt, int combiner, int p, int r, MPI_Datatype base, MPI_Datatype* out) {
  const std::array<int, 3> key{combiner, p, r};
  {
    std::lock_guard<std::mutex> g(rt.type_lock);
    if (auto it = rt.f90_types.find(key); it != rt.f90_types.end()) {
      *out = it->second;
      return 0;
    }
  }
  MPI_Datatype t = MPI_DATATYPE_NULL;
  if (int e = PMPI_Type_dup(base, &t)) return e;
  std::lock_guard<std::mutex> g(rt.type_lock);
  auto [it, made] = rt.f90_types.emplace(key, t);
  if (made) {
    rt.f90_params.emplace(t, key);
  } else {
    PMPI_Type_free(&t);  // another thread made it first
  }
  *out = it->second;
  return 0;
}

}  // namespace

bool adi3::mpi::f90_params(Runtime& rt, MPI_Datatype dt, std::array<int, 3>* out) {
  std::lock_guard<std::mutex> g(rt.type_lock);
  auto it = rt.f90_params.find(dt);
  if (it == rt.f90_params.end()) return false;
  *out = it->second;
  return true;
}

MPI_Datatype adi3::mpi::f90_handle(Runtime& rt, const Datatype* t) {
  std::lock_guard<std::mutex> g(rt.type_lock);
  auto it = rt.type_handles.find(t);
  return it != rt.type_handles.end() && rt.f90_params.count(it->second) ? it->second : MPI_DATATYPE_NULL;
}

// Predefined C types stand for the Fortran 90 parameterized types (this
// binding has no Fortran): the smallest one meeting the request, under a
// handle of its own per (p, r) whose envelope names the f90 combiner.
ADI3_MPI_API(int, Type_create_f90_integer, (int r, MPI_Datatype* newtype), (r, newtype)) {
  ADI3_MPI_ENTER();
  if (!newtype) return world_error(raise(ErrorClass::Arg, "newtype is null"), __func__);
  MPI_Datatype t = r < 0 ? MPI_DATATYPE_NULL : f90_integer(r);
  if (t == MPI_DATATYPE_NULL) {
    return world_error(raise(ErrorClass::Arg, "no integer type has %d decimal digits of range", r), __func__);
  }
  return world_error(f90_type(*rt, MPI_COMBINER_F90_INTEGER, 0, r, t, newtype), __func__);
}

ADI3_MPI_API(int, Type_create_f90_real, (int p, int r, MPI_Datatype* newtype), (p, r, newtype)) {
  ADI3_MPI_ENTER();
  if (!newtype) return world_error(raise(ErrorClass::Arg, "newtype is null"), __func__);
  if (int e = f90_args(p, r)) return world_error(e, __func__);
  static const MPI_Datatype kReal[] = {MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE};
  int i = f90_real_index(p, r);
  if (i < 0) return world_error(raise(ErrorClass::Arg, "no real type has precision %d and range %d", p, r), __func__);
  return world_error(f90_type(*rt, MPI_COMBINER_F90_REAL, p, r, kReal[i], newtype), __func__);
}

ADI3_MPI_API(int, Type_create_f90_complex, (int p, int r, MPI_Datatype* newtype), (p, r, newtype)) {
  ADI3_MPI_ENTER();
  if (!newtype) return world_error(raise(ErrorClass::Arg, "newtype is null"), __func__);
  if (int e = f90_args(p, r)) return world_error(e, __func__);
  static const MPI_Datatype kComplex[] = {MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX, MPI_C_LONG_DOUBLE_COMPLEX};
  int i = f90_real_index(p, r);
  if (i < 0) {
    return world_error(raise(ErrorClass::Arg, "no complex type has precision %d and range %d", p, r), __func__);
  }
  return world_error(f90_type(*rt, MPI_COMBINER_F90_COMPLEX, p, r, kComplex[i], newtype), __func__);
}
