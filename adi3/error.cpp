#include "adi3/error.hpp"

#include <cstdio>

namespace adi3 {
namespace {

struct ClassInfo {
  const char* name;
  const char* text;
};

constexpr ClassInfo kClasses[] = {
    {"MPI_SUCCESS", "no error"},
    {"MPI_ERR_BUFFER", "invalid buffer pointer"},
    {"MPI_ERR_COUNT", "invalid count argument"},
    {"MPI_ERR_TYPE", "invalid datatype"},
    {"MPI_ERR_TAG", "invalid tag"},
    {"MPI_ERR_COMM", "invalid communicator"},
    {"MPI_ERR_RANK", "invalid rank"},
    {"MPI_ERR_REQUEST", "invalid request"},
    {"MPI_ERR_ROOT", "invalid root"},
    {"MPI_ERR_GROUP", "invalid group"},
    {"MPI_ERR_OP", "invalid operation"},
    {"MPI_ERR_TOPOLOGY", "invalid topology"},
    {"MPI_ERR_DIMS", "invalid dimension argument"},
    {"MPI_ERR_ARG", "invalid argument of some other kind"},
    {"MPI_ERR_UNKNOWN", "unknown error"},
    {"MPI_ERR_TRUNCATE", "message truncated on receive"},
    {"MPI_ERR_OTHER", "known error not in this list"},
    {"MPI_ERR_INTERN", "internal error"},
    {"MPI_ERR_IN_STATUS", "error code is in status"},
    {"MPI_ERR_PENDING", "pending request"},
    {"MPI_ERR_ACCESS", "permission denied"},
    {"MPI_ERR_AMODE", "error related to the amode passed to MPI_FILE_OPEN"},
    {"MPI_ERR_ASSERT", "invalid assert argument"},
    {"MPI_ERR_BAD_FILE", "invalid file name"},
    {"MPI_ERR_BASE", "invalid base passed to MPI_FREE_MEM"},
    {"MPI_ERR_CONVERSION", "error in user data conversion function"},
    {"MPI_ERR_DISP", "invalid disp argument"},
    {"MPI_ERR_DUP_DATAREP", "data representation identifier already registered"},
    {"MPI_ERR_FILE_EXISTS", "file exists"},
    {"MPI_ERR_FILE_IN_USE", "file operation could not be completed, file in use"},
    {"MPI_ERR_FILE", "invalid file handle"},
    {"MPI_ERR_INFO_KEY", "key longer than MPI_MAX_INFO_KEY"},
    {"MPI_ERR_INFO_NOKEY", "invalid key passed to MPI_INFO_DELETE"},
    {"MPI_ERR_INFO_VALUE", "value longer than MPI_MAX_INFO_VAL"},
    {"MPI_ERR_INFO", "invalid info argument"},
    {"MPI_ERR_IO", "other I/O error"},
    {"MPI_ERR_KEYVAL", "invalid keyval"},
    {"MPI_ERR_LOCKTYPE", "invalid locktype argument"},
    {"MPI_ERR_NAME", "invalid service name passed to MPI_LOOKUP_NAME"},
    {"MPI_ERR_NO_MEM", "MPI_ALLOC_MEM failed because memory is exhausted"},
    {"MPI_ERR_NOT_SAME", "collective argument not identical on all processes"},
    {"MPI_ERR_NO_SPACE", "not enough space"},
    {"MPI_ERR_NO_SUCH_FILE", "file does not exist"},
    {"MPI_ERR_PORT", "invalid port name"},
    {"MPI_ERR_QUOTA", "quota exceeded"},
    {"MPI_ERR_READ_ONLY", "read-only file or file system"},
    {"MPI_ERR_RMA_CONFLICT", "conflicting accesses to window"},
    {"MPI_ERR_RMA_SYNC", "wrong synchronization of RMA calls"},
    {"MPI_ERR_SERVICE", "invalid service name passed to MPI_UNPUBLISH_NAME"},
    {"MPI_ERR_SIZE", "invalid size argument"},
    {"MPI_ERR_SPAWN", "error in spawning processes"},
    {"MPI_ERR_UNSUPPORTED_DATAREP", "unsupported datarep passed to MPI_FILE_SET_VIEW"},
    {"MPI_ERR_UNSUPPORTED_OPERATION", "unsupported operation"},
    {"MPI_ERR_WIN", "invalid win argument"},
    {"MPI_ERR_RMA_RANGE", "target memory is not part of the window"},
    {"MPI_ERR_RMA_ATTACH", "memory cannot be attached"},
    {"MPI_ERR_RMA_SHARED", "memory cannot be shared"},
    {"MPI_ERR_RMA_FLAVOR", "passed window has the wrong flavor for the called function"},
    {"MPI_ERR_PROC_FAILED", "a process in the operation has failed"},
    {"MPI_ERR_SESSION", "invalid session argument"},
    {"MPI_ERR_VALUE_TOO_LARGE", "value is too large to store"},
    {"MPI_ERR_ERRHANDLER", "invalid errhandler argument"},
    {"MPI_T_ERR_CANNOT_INIT", "the tools interface cannot be initialized"},
    {"MPI_T_ERR_NOT_ACCESSIBLE", "the requested information is not accessible"},
    {"MPI_T_ERR_NOT_INITIALIZED", "the tools interface is not initialized"},
    {"MPI_T_ERR_NOT_SUPPORTED", "the requested operation is not supported"},
    {"MPI_T_ERR_MEMORY", "out of memory in the tools interface"},
    {"MPI_T_ERR_INVALID", "invalid use of the tools interface"},
    {"MPI_T_ERR_INVALID_INDEX", "invalid index"},
    {"MPI_T_ERR_INVALID_ITEM", "invalid item"},
    {"MPI_T_ERR_INVALID_SESSION", "invalid performance variable session"},
    {"MPI_T_ERR_INVALID_HANDLE", "invalid handle"},
    {"MPI_T_ERR_INVALID_NAME", "invalid variable or category name"},
    {"MPI_T_ERR_OUT_OF_HANDLES", "no more handles"},
    {"MPI_T_ERR_OUT_OF_SESSIONS", "no more performance variable sessions"},
    {"MPI_T_ERR_CVAR_SET_NOT_NOW", "the control variable cannot be set now"},
    {"MPI_T_ERR_CVAR_SET_NEVER", "the control variable can never be set"},
    {"MPI_T_ERR_PVAR_NO_WRITE", "the performance variable cannot be written or reset"},
    {"MPI_T_ERR_PVAR_NO_STARTSTOP", "the performance variable cannot be started or stopped"},
    {"MPI_T_ERR_PVAR_NO_ATOMIC", "the performance variable cannot be read and written atomically"},
    {"MPI_ERR_PROC_ABORTED", "a process in the operation has aborted"},
};
static_assert(sizeof(kClasses) / sizeof(kClasses[0]) == static_cast<size_t>(ErrorClass::LastCode));

const ClassInfo& info(ErrorClass c) {
  auto i = static_cast<size_t>(c);
  return i < static_cast<size_t>(ErrorClass::LastCode) ? kClasses[i]
                                                       : kClasses[static_cast<size_t>(ErrorClass::Unknown)];
}

}  // namespace

const char* error_class_name(ErrorClass c) { return info(c).name; }
const char* error_class_text(ErrorClass c) { return info(c).text; }

int ErrorLog::raise(ErrorClass c, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int code = vraise(c, fmt, ap);
  va_end(ap);
  return code;
}

int ErrorLog::vraise(ErrorClass c, const char* fmt, va_list ap) {
  if (c == ErrorClass::Success) return 0;
  uint32_t n = next_.fetch_add(1, std::memory_order_relaxed);
  Slot& s = slots_[n % kSlots];
  // The stamp makes a code that outlived its slot fall back to the class text.
  s.stamp.store(0, std::memory_order_release);
  std::vsnprintf(s.text, kMessageBytes, fmt, ap);
  uint32_t stamp = n / kSlots + 1;
  s.stamp.store(stamp, std::memory_order_release);
  int slot = static_cast<int>(n % kSlots) + 1;
  // Codes stay positive ints: class | slot << 8 | generation << 17.
  return static_cast<int>(c) | (slot << kErrorClassBits) | static_cast<int>((stamp & 0x3fff) << 17);
}

bool ErrorLog::text(int code, char* out, std::size_t n) const noexcept {
  const int slot = (code >> kErrorClassBits) & 0x1ff;
  const uint32_t stamp = static_cast<uint32_t>(code) >> 17;
  if (n == 0 || slot <= 0 || slot > kSlots) return false;
  const Slot& s = slots_[slot - 1];
  if ((s.stamp.load(std::memory_order_acquire) & 0x3fff) != stamp) return false;
  std::snprintf(out, n, "%s", s.text);
  return true;
}

std::string ErrorLog::message(int code) const {
  ErrorClass c = error_class_of(code);
  int slot = (code >> kErrorClassBits) & 0x1ff;
  uint32_t stamp = static_cast<uint32_t>(code) >> 17;
  if (slot > 0 && slot <= kSlots) {
    const Slot& s = slots_[slot - 1];
    if ((s.stamp.load(std::memory_order_acquire) & 0x3fff) == stamp) {
      return std::string(error_class_name(c)) + ": " + s.text;
    }
  }
  return std::string(error_class_name(c)) + ": " + error_class_text(c);
}

}  // namespace adi3
