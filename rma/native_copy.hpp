// What the native paths' copies share (native_ops.cpp: mapped memory;
// native_nic.cpp: the NIC; native_dyn.cpp: dynamic windows).
#pragma once
#include <cstddef>

#include "segment/datatype.hpp"

namespace adi3::rma::native {

// A copy between two sides of which neither is one run goes through a
// bounce buffer of at most this many bytes.
inline constexpr std::size_t kBounce = 64 * 1024;

// Pointer to count elements of t at buf if they are one run, else nullptr.
inline char* run_of(const void* buf, std::size_t count, const Datatype* t) {
  if (!t->is_contiguous() && count > 0) return nullptr;
  return const_cast<char*>(static_cast<const char*>(buf)) + t->true_lb();
}

}  // namespace adi3::rma::native
