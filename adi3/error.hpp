// Error classes (one-to-one with MPI-3.1's) and the per-device log that turns
// a class plus a message naming the bad value into an error code.
#pragma once
#include <array>
#include <atomic>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <string>

namespace adi3 {

// Values are the MPI error classes of mpi/mpi.h (same numbers, same order).
enum class ErrorClass : int {
  Success = 0,
  Buffer,
  Count,
  Type,
  Tag,
  Comm,
  Rank,
  Request,
  Root,
  Group,
  Op,
  Topology,
  Dims,
  Arg,
  Unknown,
  Truncate,
  Other,
  Intern,
  InStatus,
  Pending,
  Access,
  Amode,
  Assert,
  BadFile,
  Base,
  Conversion,
  Disp,
  DupDatarep,
  FileExists,
  FileInUse,
  File,
  InfoKey,
  InfoNokey,
  InfoValue,
  Info,
  Io,
  Keyval,
  Locktype,
  Name,
  NoMem,
  NotSame,
  NoSpace,
  NoSuchFile,
  Port,
  Quota,
  ReadOnly,
  RmaConflict,
  RmaSync,
  Service,
  Size,
  Spawn,
  UnsupportedDatarep,
  UnsupportedOperation,
  Win,
  RmaRange,
  RmaAttach,
  RmaShared,
  RmaFlavor,
  ProcFailed,     // a peer process died (MPI-4 / ULFM name)
  Session,        // MPI-4.1: invalid session
  ValueTooLarge,  // MPI-4.1: a value does not fit its output argument
  Errhandler,     // MPI-4.1: invalid error handler
  // The tools information interface (MPI_T_ERR_*, mpi/tools*.cpp).
  TCannotInit,
  TNotAccessible,
  TNotInitialized,
  TNotSupported,
  TMemory,
  TInvalid,
  TInvalidIndex,
  TInvalidItem,
  TInvalidSession,
  TInvalidHandle,
  TInvalidName,
  TOutOfHandles,
  TOutOfSessions,
  TCvarSetNotNow,
  TCvarSetNever,
  TPvarNoWrite,
  TPvarNoStartstop,
  TPvarNoAtomic,
  ProcAborted,  // MPI-4.0: a peer called MPI_Abort
  LastCode
};

// An error code carries its class in the low byte and, above it, the slot of
// a message in the device's ErrorLog (0 = no message: the class's text).
inline constexpr int kErrorClassBits = 8;
constexpr int error_code(ErrorClass c) { return static_cast<int>(c); }
constexpr ErrorClass error_class_of(int code) { return static_cast<ErrorClass>(code & ((1 << kErrorClassBits) - 1)); }
const char* error_class_name(ErrorClass c);  // "MPI_ERR_RANK"
const char* error_class_text(ErrorClass c);  // "invalid rank"

// A ring of recent error messages. Codes stay valid until 256 newer errors
// have been raised on the same device, enough for any handler to read them.
class ErrorLog {
 public:
  // Records "what was wrong" and returns a code of class c.
  int raise(ErrorClass c, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
  int vraise(ErrorClass c, const char* fmt, va_list ap);
  // The message for a code: the recorded one, else the class's text.
  std::string message(int code) const;
  // The recorded message alone, copied into out (n bytes) without
  // allocating (out-of-memory paths); false when code has none.
  bool text(int code, char* out, std::size_t n) const noexcept;

 private:
  static constexpr int kSlots = 256;
  static constexpr int kMessageBytes = 256;
  struct Slot {
    std::atomic<uint32_t> stamp{0};
    char text[kMessageBytes];
  };
  std::array<Slot, kSlots> slots_{};
  std::atomic<uint32_t> next_{0};
};

}  // namespace adi3
