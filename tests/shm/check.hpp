// Assertions for tests that run as processes under mpiexec (no gtest: each
// rank is its own program). A failed check names the rank and the
// expression, and ends the whole job through the launcher, so the other
// ranks never wait for a rank that gave up.
#pragma once
#include <cstdio>
#include <cstdint>
#include <string>
#include <vector>

#include "adi3/device.hpp"
#include "adi3/process.hpp"

namespace shm_test {

[[noreturn]] inline void fail(adi3::Device& dev, const char* file, int line, const std::string& what) {
  char msg[1024];
  std::snprintf(msg, sizeof msg, "FAILED: rank %d at %s:%d: %s", dev.rank(), file, line, what.c_str());
  adi3::abort_process(dev, 3, msg);
}

// The byte at offset i of the test pattern `seed`.
inline unsigned char pattern_byte(std::size_t i, uint32_t seed) {
  uint32_t x = static_cast<uint32_t>(i) * 2654435761u ^ (seed * 0x9e3779b9u + static_cast<uint32_t>(i >> 16));
  x ^= x >> 15;
  return static_cast<unsigned char>(x ^ (x >> 8));
}
inline void fill_pattern(void* buf, std::size_t n, uint32_t seed) {
  auto* p = static_cast<unsigned char*>(buf);
  for (std::size_t i = 0; i < n; ++i) p[i] = pattern_byte(i, seed);
}
// "" when bytes [0, n) hold the pattern, else what differs.
inline std::string pattern_error(const void* buf, std::size_t n, uint32_t seed) {
  const auto* p = static_cast<const unsigned char*>(buf);
  for (std::size_t i = 0; i < n; ++i) {
    if (p[i] != pattern_byte(i, seed)) {
      return "byte " + std::to_string(i) + " of " + std::to_string(n) + " is " + std::to_string(p[i]) + ", want " +
             std::to_string(pattern_byte(i, seed)) + " (pattern " + std::to_string(seed) + ")";
    }
  }
  return {};
}

}  // namespace shm_test

#define SHM_CHECK(dev, cond)                                         \
  do {                                                               \
    if (!(cond)) ::shm_test::fail((dev), __FILE__, __LINE__, #cond); \
  } while (0)
#define SHM_CHECK_MSG(dev, cond, text)                                                            \
  do {                                                                                            \
    if (!(cond)) ::shm_test::fail((dev), __FILE__, __LINE__, std::string(#cond) + ": " + (text)); \
  } while (0)
// An ADI call that must return 0.
#define SHM_OK(dev, expr)                                                                          \
  do {                                                                                             \
    int shm_ok_code_ = (expr);                                                                     \
    if (shm_ok_code_)                                                                              \
      ::shm_test::fail((dev), __FILE__, __LINE__,                                                  \
                       std::string(#expr) + " returned: " + (dev).errors().message(shm_ok_code_)); \
  } while (0)
#define SHM_PATTERN(dev, buf, n, seed)                                            \
  do {                                                                            \
    std::string shm_pat_ = ::shm_test::pattern_error((buf), (n), (seed));         \
    if (!shm_pat_.empty()) ::shm_test::fail((dev), __FILE__, __LINE__, shm_pat_); \
  } while (0)
