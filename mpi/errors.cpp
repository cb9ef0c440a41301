// Error classes, codes and strings (including user-added ones), and the
// dispatch of errors to a communicator's handler.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "adi3/process.hpp"
#include "mpi/api.hpp"

namespace adi3::mpi {

namespace {

// User-added codes keep their class in the low byte, like the device's
// codes, but use error-log slot numbers the log never hands out.
constexpr int kUserCodeBase = 257;
constexpr int kMaxUserCodes = 511 - kUserCodeBase;
constexpr int kMaxClass = 255;

bool is_user_code(int code) { return ((code >> kErrorClassBits) & 0x1ff) >= kUserCodeBase; }

const char* api_name(const char* fn) { return fn[0] == 'P' ? fn + 1 : fn; }

// The text of a code (without the class name for user strings).
std::string describe(int code) {
  Runtime* rt = g_runtime;
  if (rt) {
    std::lock_guard<std::mutex> g(rt->error_lock);
    auto it = rt->error_strings.find(code);
    if (it != rt->error_strings.end()) return it->second;
  }
  if (code == MPI_ERR_LASTCODE) return "MPI_ERR_LASTCODE: the last predefined error class";
  int cls = code & 0xff;
  if (cls >= MPI_ERR_LASTCODE) return "user-defined error class " + std::to_string(cls);
  if (rt && !is_user_code(code)) return rt->dev().errors().message(code);
  auto c = static_cast<ErrorClass>(cls);
  return std::string(error_class_name(c)) + ": " + error_class_text(c);
}

// A valid code: a predefined class (MPI_ERR_LASTCODE is one: MPI 3.1
// table 8.1), a code of one, or a user-added one.
bool valid_code(int code) {
  if (code < 0) return false;
  if (code == MPI_ERR_LASTCODE) return true;
  int cls = code & 0xff;
  Runtime* rt = g_runtime;
  if (cls < MPI_ERR_LASTCODE) return !is_user_code(code) || rt;
  if (!rt) return false;
  std::lock_guard<std::mutex> g(rt->error_lock);
  if (rt->removed_errors.count(code) || rt->removed_errors.count(cls)) return false;
  return cls > MPI_ERR_LASTCODE && cls <= rt->next_class && (code < 256 || is_user_code(code));
}

}  // namespace

int not_initialized(const char* fn) {
  std::fprintf(stderr, "%s called %s\n", api_name(fn), g_state.load() == 2 ? "after MPI_Finalize" : "before MPI_Init");
  std::fflush(stderr);
  std::_Exit(1);
}

void fatal(int code, const char* fn) {
  std::string msg = describe(code);
  Runtime* rt = g_runtime;
  char head[160];
  std::snprintf(head, sizeof head, "[rank %d] %s: ", rt ? rt->dev().rank() : 0, api_name(fn));
  std::string text = head + msg + " (error handler MPI_ERRORS_ARE_FATAL: aborting the job)";
  if (rt) abort_process(rt->dev(), (code & 0xff) ? (code & 0xff) : 1, text);
  std::fprintf(stderr, "%s\n", text.c_str());
  std::fflush(stderr);
  std::_Exit(code & 0xff ? code & 0xff : 1);
}

int comm_error_report(CommObj* c, int code, const char* fn) {
  if (code == 0) return 0;
  Runtime* rt = g_runtime;
  if (!rt) fatal(code, fn);
  if (!c) c = &rt->world;
  // A call on a communicator of this rank alone leaves no peer waiting in it.
  if (c->inter || c->pt2pt.size > 1) note_returned(code, fn);  // (a fatal handler never returns)
  code = name_no_mem(code, fn);
  if (c->errh) {
    MPI_Comm h = c->handle;
    c->errh->fn(&h, &code, api_name(fn));
    return code;
  }
  if (c->errh_builtin == MPI_ERRORS_RETURN) return code;
  fatal(code, fn);
}

int comm_error(MPI_Comm comm, int code, const char* fn) {
  if (code == 0) return 0;
  CommObj* c = nullptr;
  if (Runtime* rt = g_runtime) {
    if (comm == MPI_COMM_WORLD)
      c = &rt->world;
    else if (comm == MPI_COMM_SELF)
      c = &rt->self;
    else if (is_kind(comm, Kind::Comm, HandleClass::User)) {
      if (CommObj** p = rt->comms.get(handle_index(comm))) c = *p;
    }
  }
  return comm_error(c, code, fn);
}

}  // namespace adi3::mpi

using namespace adi3;
using namespace adi3::mpi;

ADI3_MPI_API(int, Error_class, (int errorcode, int* errorclass), (errorcode, errorclass)) {
  if (!valid_code(errorcode))
    return world_error(raise(ErrorClass::Arg, "%d is not an error code", errorcode), __func__);
  if (!errorclass) return world_error(raise(ErrorClass::Arg, "errorclass is null"), __func__);
  *errorclass = errorcode & 0xff;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Error_string, (int errorcode, char* string, int* resultlen), (errorcode, string, resultlen)) {
  if (!string || !resultlen) return world_error(raise(ErrorClass::Arg, "string or resultlen is null"), __func__);
  if (!valid_code(errorcode))
    return world_error(raise(ErrorClass::Arg, "%d is not an error code", errorcode), __func__);
  std::string s = errorcode == 0 ? "MPI_SUCCESS: no error" : describe(errorcode);
  // A class or code the user added but gave no string has the empty string
  // (MPI-4.1 9.5); describe()'s made-up text is only for fatal messages.
  if ((errorcode & 0xff) > MPI_ERR_LASTCODE || is_user_code(errorcode)) {
    Runtime* rt = g_runtime;
    std::lock_guard<std::mutex> g(rt->error_lock);
    if (!rt->error_strings.count(errorcode)) s.clear();
  }
  std::size_t n = std::min<std::size_t>(s.size(), MPI_MAX_ERROR_STRING - 1);
  std::memcpy(string, s.data(), n);
  string[n] = '\0';
  *resultlen = static_cast<int>(n);
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Add_error_class, (int* errorclass), (errorclass)) {
  ADI3_MPI_ENTER();
  if (!errorclass) return world_error(raise(ErrorClass::Arg, "errorclass is null"), __func__);
  std::lock_guard<std::mutex> g(rt->error_lock);
  if (rt->next_class >= kMaxClass) {
    return world_error(raise(ErrorClass::Other, "no more error classes can be added"), __func__);
  }
  *errorclass = ++rt->next_class;
  rt->attr_lastusedcode = std::max(rt->attr_lastusedcode, *errorclass);
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Add_error_code, (int errorclass, int* errorcode), (errorclass, errorcode)) {
  ADI3_MPI_ENTER();
  if (!errorcode) return world_error(raise(ErrorClass::Arg, "errorcode is null"), __func__);
  int next_class;
  {
    std::lock_guard<std::mutex> g(rt->error_lock);
    next_class = rt->next_class;
  }
  bool predefined = errorclass > 0 && errorclass < MPI_ERR_LASTCODE;
  if (!predefined && (errorclass <= MPI_ERR_LASTCODE || errorclass > next_class || !valid_code(errorclass))) {
    return world_error(raise(ErrorClass::Arg, "%d is not an error class", errorclass), __func__);
  }
  std::lock_guard<std::mutex> g(rt->error_lock);
  if (rt->user_codes >= kMaxUserCodes) {
    return world_error(raise(ErrorClass::Other, "no more error codes can be added"), __func__);
  }
  *errorcode = errorclass | ((kUserCodeBase + rt->user_codes++) << kErrorClassBits);
  ++rt->codes_of_class[errorclass];
  rt->attr_lastusedcode = std::max(rt->attr_lastusedcode, *errorcode);
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Add_error_string, (int errorcode, const char* string), (errorcode, string)) {
  ADI3_MPI_ENTER();
  if (!string) return world_error(raise(ErrorClass::Arg, "string is null"), __func__);
  if (std::strlen(string) >= MPI_MAX_ERROR_STRING) {
    return world_error(raise(ErrorClass::Arg, "the string is longer than MPI_MAX_ERROR_STRING"), __func__);
  }
  // Only codes and classes added by the user may be given a string.
  if (!valid_code(errorcode) || ((errorcode & 0xff) <= MPI_ERR_LASTCODE && !is_user_code(errorcode))) {
    return world_error(raise(ErrorClass::Arg, "%d is not a user-added error code or class", errorcode), __func__);
  }
  std::lock_guard<std::mutex> g(rt->error_lock);
  rt->error_strings[errorcode] = string;
  return MPI_SUCCESS;
}

// MPI-4.1 9.5: what MPI_Add_error_class/code/string added can be removed
// again; predefined classes and codes cannot. A removed class or code is no
// longer valid (its number is not handed out again).
ADI3_MPI_API(int, Remove_error_class, (int errorclass), (errorclass)) {
  ADI3_MPI_ENTER();
  if (errorclass <= MPI_ERR_LASTCODE || errorclass > 255 || !valid_code(errorclass)) {
    return world_error(raise(ErrorClass::Arg, "%d is not an error class added by MPI_Add_error_class", errorclass),
                       __func__);
  }
  std::lock_guard<std::mutex> g(rt->error_lock);
  if (int n = rt->codes_of_class[errorclass]; n > 0) {
    return world_error(
        raise(ErrorClass::Arg, "error class %d still has %d error code(s) (remove them first)", errorclass, n),
        __func__);
  }
  rt->codes_of_class.erase(errorclass);
  rt->error_strings.erase(errorclass);
  rt->removed_errors.insert(errorclass);
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Remove_error_code, (int errorcode), (errorcode)) {
  ADI3_MPI_ENTER();
  if (!is_user_code(errorcode) || !valid_code(errorcode)) {
    return world_error(raise(ErrorClass::Arg, "%d is not an error code added by MPI_Add_error_code", errorcode),
                       __func__);
  }
  std::lock_guard<std::mutex> g(rt->error_lock);
  --rt->codes_of_class[errorcode & 0xff];
  rt->error_strings.erase(errorcode);
  rt->removed_errors.insert(errorcode);
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Remove_error_string, (int errorcode), (errorcode)) {
  ADI3_MPI_ENTER();
  if (!valid_code(errorcode) || ((errorcode & 0xff) <= MPI_ERR_LASTCODE && !is_user_code(errorcode))) {
    return world_error(raise(ErrorClass::Arg, "%d is not a user-added error code or class", errorcode), __func__);
  }
  std::lock_guard<std::mutex> g(rt->error_lock);
  if (rt->error_strings.erase(errorcode) == 0) {
    return world_error(raise(ErrorClass::Arg, "error code %d has no string (MPI_Add_error_string)", errorcode),
                       __func__);
  }
  return MPI_SUCCESS;
}
