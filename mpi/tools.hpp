// The MPI tools information interface (MPI_T): what its two files share.
// MPI_T may be used before MPI_Init and after MPI_Finalize, so its state
// belongs to the process (made on first use), like info objects.
#pragma once
#include <algorithm>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <mpi.h>

// MPI_T_name as a weak alias of PMPI_T_name (as ADI3_MPI_API does). args
// names params in order: the body runs inside a try, and an exception that
// escapes it is the call's error (MPI_T_ERR_MEMORY for out of memory),
// never an unwinding through the C caller.
#define ADI3_T_API(name, params, args)                                              \
  namespace {                                                                       \
  struct PMPI_T_##name##_body {                                                     \
    [[gnu::always_inline]] static inline int call params;                           \
  };                                                                                \
  }                                                                                 \
  extern "C" int MPI_T_##name params __attribute__((weak, alias("PMPI_T_" #name))); \
  extern "C" __attribute__((visibility("default"))) int PMPI_T_##name params {      \
    try {                                                                           \
      return PMPI_T_##name##_body::call args;                                       \
    } catch (...) {                                                                 \
      return ::adi3::mpi::tools::escaped();                                         \
    }                                                                               \
  }                                                                                 \
  int PMPI_T_##name##_body::call params
// The same without the try, for calls whose (unnamed) arguments are unused
// and that allocate nothing: they answer with a constant.
#define ADI3_T_API_NOTHROW(name, params)                                            \
  extern "C" int MPI_T_##name params __attribute__((weak, alias("PMPI_T_" #name))); \
  extern "C" __attribute__((visibility("default"))) int PMPI_T_##name params
// The start of a call that needs MPI_T initialized: the error, or the lock.
#define ADI3_T_ENTER()                                      \
  if (int e_ = ::adi3::mpi::tools::check_init()) return e_; \
  std::lock_guard g_(::adi3::mpi::tools::state().lock)

// The calls that report one number (how many variables, categories ...).
#define ADI3_T_NUMBER(name, value)      \
  ADI3_T_API(name, (int* out), (out)) { \
    ADI3_T_ENTER();                     \
    if (!out) return MPI_ERR_ARG;       \
    *out = static_cast<int>(value);     \
    return MPI_SUCCESS;                 \
  }

namespace adi3::mpi::tools {

// A performance variable: its value now (0 while MPI is not running).
struct Pvar {
  const char* name;
  const char* desc;
  int var_class;  // MPI_T_PVAR_CLASS_*
  unsigned long long (*read)();
};

struct Handle;  // tools_pvar.cpp

struct State {
  std::mutex lock;
  int inits = 0;  // MPI_T_init_thread calls not yet finalized
  // Live handles and sessions (their addresses are the MPI_T handles).
  std::set<const void*> cvar_handles, pvar_sessions, pvar_handles;
};
State& state();

// The exception in flight out of an MPI_T call as its error: MPI_T_ERR_MEMORY
// for out of memory (std::bad_alloc, std::length_error, a resource a thread
// or lock needed), MPI_ERR_INTERN for anything else. MPI_T reports to no
// error handler; nothing here throws.
int escaped() noexcept;

// The pvar table (tools_pvar.cpp).
const std::vector<Pvar>& pvars();
// The last MPI_T_finalize: sessions and their handles go (lock held).
void drop_pvar_sessions();

// MPI_T_ERR_NOT_INITIALIZED unless between init and finalize (takes the lock).
int check_init();

// Copies s into out (at most *len bytes with the terminator) as the
// standard's (name, name_len) pairs want; *len becomes strlen(s) + 1.
inline void put_string(const char* s, char* out, int* len) {
  if (!len) return;
  const int need = static_cast<int>(std::strlen(s)) + 1;
  if (out && *len > 0) {
    const int n = std::min(*len, need) - 1;
    std::memcpy(out, s, static_cast<std::size_t>(n));
    out[n] = '\0';
  }
  *len = need;
}

// The *_get_index calls: the index of the entry whose name_of is name
// (name_of may give null to skip an entry).
template <class Table, class NameOf>
int find_index(const Table& t, const char* name, int* index, NameOf&& name_of) {
  if (!name || !index) return MPI_ERR_ARG;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const char* n = name_of(t[i]);
    if (n && std::strcmp(n, name) == 0) {
      *index = static_cast<int>(i);
      return MPI_SUCCESS;
    }
  }
  return MPI_T_ERR_INVALID_NAME;
}

}  // namespace adi3::mpi::tools
