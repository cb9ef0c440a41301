// MPI windows at the ADI level: a C++ API over a Device, usable without the
// MPI binding (mpi/win*.cpp wraps it one call to one call).
//
// CONTRACT used by the MPI binding: changed only additively.
//
// Conventions
//  - Every call returns 0 or an error code of the device's ErrorLog
//    (dev.errors().message(code) names the bad value; error_class_of(code)
//    is the MPI error class).
//  - Ranks are ranks in the window's communicator (the Comm given at
//    creation); groups for post/start are lists of such ranks (the binding
//    translates MPI_Group with Group_translate_ranks).
//  - Counts and sizes are signed so that a negative value gives a clear
//    error (Count, Size, Disp) instead of a huge unsigned one.
//  - A target displacement is in units of the target's disp_unit; on a
//    dynamic window it is an absolute address at the target (MPI_Get_address
//    of attached memory) and disp_unit is 1.
//  - Request-based operations (rput ...) return a core Request of kind Rma:
//    complete it with Device::wait/test (MPI_Wait...). rput/raccumulate
//    complete when the origin buffer may be reused; rget/rget_accumulate
//    when the data has arrived.
//  - Thread safety: any thread may call any function of a window (as MPI
//    allows under MPI_THREAD_MULTIPLE); the synchronization calls of one
//    epoch must come from the program order MPI requires.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "adi3/types.hpp"
#include "coll/op.hpp"

namespace adi3 {

class Device;
class Datatype;
struct Request;

// MPI_WIN_FLAVOR_* and MPI_WIN_SEPARATE/UNIFIED (values as in MPICH's mpi.h).
enum class WinFlavor : int { Create = 1, Allocate = 2, Dynamic = 3, Shared = 4 };
enum class WinModel : int { Separate = 1, Unified = 2 };

// MPI_LOCK_EXCLUSIVE / MPI_LOCK_SHARED (MPICH's values).
enum class LockType : int { Exclusive = 234, Shared = 235 };

// MPI_MODE_* assertions (MPICH's values); or-ed together in `assert` args.
inline constexpr int kModeNoCheck = 1024;
inline constexpr int kModeNoStore = 2048;
inline constexpr int kModeNoPut = 4096;
inline constexpr int kModeNoPrecede = 8192;
inline constexpr int kModeNoSucceed = 16384;

// The window info keys the implementation understands (MPI-4.1 12.2.1).
struct WinInfo {
  // accumulate_ordering: a set of these bits; the default is all four,
  // "none" is 0.
  enum Ordering : uint8_t { kRar = 1, kRaw = 2, kWar = 4, kWaw = 8, kAllOrdering = 15 };
  enum class AccOps : uint8_t { SameOpNoOp, SameOp };

  bool no_locks = false;  // no passive target: no lock queue, no agent
  uint8_t accumulate_ordering = kAllOrdering;
  AccOps accumulate_ops = AccOps::SameOpNoOp;
  bool same_size = false;
  bool same_disp_unit = false;
  // adi3_emulate_ops (this rank only): operations forced to the emulation
  // even where the native path could take them, as a comma list of put,
  // get, accumulate, get_accumulate, fetch_and_op, compare_and_swap (or
  // "all", "none"); bit (1 << rma::Msg) of each. For tests and comparisons.
  uint32_t emulate_ops = 0;
  // alloc_shared_noncontig (MPI_Win_allocate_shared): each rank's part may
  // start on its own page instead of following the previous rank's.
  bool alloc_shared_noncontig = false;
  // adi3_passive_progress (read only, filled in by Window::info()): 1 when
  // passive-target operations progress while the target computes without
  // calling the library, 0 when they need its calls, -1 unknown.
  int8_t passive_progress = -1;

  // Applies one (key, value) pair from an MPI_Info. Unknown keys are
  // ignored and return true (MPI says implementations ignore them); a known
  // key with a bad value returns false and leaves the field unchanged.
  bool set(const std::string& key, const std::string& value);
  // The keys and values in effect, for MPI_Win_get_info.
  std::vector<std::pair<std::string, std::string>> pairs() const;
};

namespace rma {
class WindowState;  // the implementation (rma/window_state.hpp)
}

class Window {
 public:
  // ---- creation and destruction (collective over comm) ----
  //
  // comm: the ranks of the window and a context reserved for the window's
  // creation and free exchanges (the binding passes the communicator's
  // collective context, so user point-to-point never meets them). The
  // window keeps a copy. On error *out is untouched.
  //
  // MPI_Win_create: size bytes at base (size >= 0, disp_unit > 0).
  // failed (every creation call): this rank's arguments were bad (that
  // error): it still takes part in the creation's exchanges, so every rank
  // fails, none waits.
  static int create(Device& dev, void* base, std::ptrdiff_t size, int disp_unit, const WinInfo& info, const Comm& comm,
                    Window** out, int failed = 0);
  // MPI_Win_allocate: the window allocates size bytes (aligned to 64) and
  // returns them in *base; they are freed by free().
  static int allocate(Device& dev, std::ptrdiff_t size, int disp_unit, const WinInfo& info, const Comm& comm,
                      void** base, Window** out, int failed = 0);
  // MPI_Win_allocate_shared: like allocate, in memory every rank of comm
  // can load and store (RmaShared when the channel cannot share memory
  // among them). Contiguous across ranks unless info.alloc_shared_noncontig.
  static int allocate_shared(Device& dev, std::ptrdiff_t size, int disp_unit, const WinInfo& info, const Comm& comm,
                             void** base, Window** out, int failed = 0);
  // MPI_Win_shared_query: rank's part as mapped here (rank kProcNull: the
  // first rank with a nonzero size). On a window whose memory is not
  // shared (create, dynamic, an emulated allocate) *size is 0 and *base
  // nullptr for every rank but this one.
  int shared_query(int rank, std::ptrdiff_t* size, int* disp_unit, void** base) const;
  // MPI_Win_create_dynamic: no memory until attach().
  static int create_dynamic(Device& dev, const WinInfo& info, const Comm& comm, Window** out, int failed = 0);
  // MPI_Win_free: collective; refused (RmaSync) while an access or exposure
  // epoch is open, else waits until every rank stopped using the window,
  // destroys it and sets *win to nullptr.
  static int free(Window** win);

  // MPI_Win_attach / MPI_Win_detach (dynamic windows only: RmaFlavor
  // otherwise). Attached regions may not overlap (RmaAttach).
  int attach(void* base, std::ptrdiff_t size);
  int detach(const void* base);

  // ---- attributes ----
  void* base() const;           // MPI_WIN_BASE (nullptr for dynamic)
  std::ptrdiff_t size() const;  // MPI_WIN_SIZE (0 for dynamic)
  int disp_unit() const;        // MPI_WIN_DISP_UNIT
  WinFlavor flavor() const;     // MPI_WIN_CREATE_FLAVOR
  WinModel model() const;       // MPI_WIN_MODEL
  const Comm& comm() const;     // the window's ranks (Win_get_group)
  Device& device() const;
  WinInfo info() const;               // MPI_Win_get_info
  int set_info(const WinInfo& info);  // MPI_Win_set_info (hints only)
  // True when passive-target operations on this window progress while the
  // target computes without calling the library (the agent runs, or the
  // path is native). Issue 11 exposes it as an info key / attribute.
  bool passive_progress() const;

  // ---- synchronization ----
  int fence(int assert);
  // Post/start/complete/wait: groups are window-comm ranks, no duplicates.
  int post(std::span<const int> group, int assert);
  int start(std::span<const int> group, int assert);
  int complete();
  int wait();
  int test(bool* flag);
  int lock(LockType type, int rank, int assert);
  int unlock(int rank);
  int lock_all(int assert);
  int unlock_all();
  int flush(int rank);
  int flush_all();
  int flush_local(int rank);
  int flush_local_all();
  int sync();

  // ---- communication (target: window-comm rank or kProcNull) ----
  int put(const void* origin, std::int64_t origin_count, const Datatype* origin_type, int target,
          std::ptrdiff_t target_disp, std::int64_t target_count, const Datatype* target_type);
  int get(void* origin, std::int64_t origin_count, const Datatype* origin_type, int target, std::ptrdiff_t target_disp,
          std::int64_t target_count, const Datatype* target_type);
  // Predefined ops only (and REPLACE); origin and target types must be made
  // of one predefined element type the op accepts.
  int accumulate(const void* origin, std::int64_t origin_count, const Datatype* origin_type, int target,
                 std::ptrdiff_t target_disp, std::int64_t target_count, const Datatype* target_type,
                 const coll::Op& op);
  // Also NO_OP (then origin may be nullptr with count 0).
  int get_accumulate(const void* origin, std::int64_t origin_count, const Datatype* origin_type, void* result,
                     std::int64_t result_count, const Datatype* result_type, int target, std::ptrdiff_t target_disp,
                     std::int64_t target_count, const Datatype* target_type, const coll::Op& op);
  // One element of a predefined type.
  int fetch_and_op(const void* origin, void* result, const Datatype* type, int target, std::ptrdiff_t target_disp,
                   const coll::Op& op);
  int compare_and_swap(const void* origin, const void* compare, void* result, const Datatype* type, int target,
                       std::ptrdiff_t target_disp);

  // Request-based forms (passive-target epochs only, as MPI says).
  int rput(const void* origin, std::int64_t origin_count, const Datatype* origin_type, int target,
           std::ptrdiff_t target_disp, std::int64_t target_count, const Datatype* target_type, Request** req);
  int rget(void* origin, std::int64_t origin_count, const Datatype* origin_type, int target, std::ptrdiff_t target_disp,
           std::int64_t target_count, const Datatype* target_type, Request** req);
  int raccumulate(const void* origin, std::int64_t origin_count, const Datatype* origin_type, int target,
                  std::ptrdiff_t target_disp, std::int64_t target_count, const Datatype* target_type,
                  const coll::Op& op, Request** req);
  int rget_accumulate(const void* origin, std::int64_t origin_count, const Datatype* origin_type, void* result,
                      std::int64_t result_count, const Datatype* result_type, int target, std::ptrdiff_t target_disp,
                      std::int64_t target_count, const Datatype* target_type, const coll::Op& op, Request** req);

  ~Window();
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;

  rma::WindowState& state() { return *st_; }  // for rma/ and emul/ only

 private:
  friend class rma::WindowState;
  explicit Window(std::shared_ptr<rma::WindowState> st);
  std::shared_ptr<rma::WindowState> st_;  // shared with the device's window table
};

}  // namespace adi3
