// libadi3_failalloc.so's operator new: under AddressSanitizer operator new
// takes memory from the sanitizer's allocator, not from malloc, so the
// interposed malloc (failalloc.c) would never fail a C++ allocation. When
// the sanitizer is in the process, these count and fail like malloc does;
// otherwise they pass through (libstdc++'s operator new calls malloc, which
// counts already).
#include <dlfcn.h>

#include <cstddef>
#include <new>

extern "C" int failalloc_fail_now(void);

namespace {

bool under_asan() {
  static const bool on = dlsym(RTLD_DEFAULT, "__asan_init") != nullptr;
  return on;
}

template <class F>
F next(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

using New = void* (*)(std::size_t);
using NewAligned = void* (*)(std::size_t, std::align_val_t);

void* plain(std::size_t n, const char* name) {
  static New a = next<New>("_Znwm"), b = next<New>("_Znam");
  if (under_asan() && failalloc_fail_now()) return nullptr;
  return (name[3] == 'w' ? a : b)(n);
}

void* aligned(std::size_t n, std::align_val_t al, const char* name) {
  static NewAligned a = next<NewAligned>("_ZnwmSt11align_val_t"), b = next<NewAligned>("_ZnamSt11align_val_t");
  if (under_asan() && failalloc_fail_now()) return nullptr;
  return (name[3] == 'w' ? a : b)(n, al);
}

}  // namespace

void* operator new(std::size_t n) {
  if (void* p = plain(n, "_Znwm")) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  if (void* p = plain(n, "_Znam")) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return plain(n, "_Znwm");
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return plain(n, "_Znam");
  } catch (...) {
    return nullptr;
  }
}
void* operator new(std::size_t n, std::align_val_t al) {
  if (void* p = aligned(n, al, "_Znwm")) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t al) {
  if (void* p = aligned(n, al, "_Znam")) return p;
  throw std::bad_alloc();
}
